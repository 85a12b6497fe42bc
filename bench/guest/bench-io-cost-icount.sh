#!/bin/sh
# vm: icount shift=3
# timeout: 3600
#
# bench-io-cost.sh with the guest's time on QEMU's instruction
# counter (-icount shift=3,sleep=off: 8 ns a guest instruction; an idle
# guest's clock jumps to its next timer). fio's IOPS then counts I/Os per
# guest instruction, whatever the host's load: what the sidecar's
# tracepoints add to the I/O path in instructions, not what a loaded host
# adds to its wall clock. It does not model caches or branch prediction:
# a cost in cycles beyond the instructions is not seen.
. /vwc/bench/bench-io-cost.sh
