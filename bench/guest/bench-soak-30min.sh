#!/bin/sh
# vm: ctrl wc=off
# vm: subsys name=s0 ctrls=2 wc=off,on
# vm: rootport
# vm: spare
# timeout: 2400
# bench: per-kernel
#
# The fault-injection soak of tests/vm/cases/soak.sh for 30 minutes
# (VWC_SOAK_S, default 1800): its result and INFO lines as BENCH lines.
# Run on the kernels with nvme as a module, one at a time:
#   bench/run.sh -s -k 7.2-generic soak-30min
#   bench/run.sh -s -k 6.1-generic soak-30min
# (saved as bench/results/soak-30min-<kernel>.txt).
export VWC_SOAK_S=${VWC_SOAK_S:-1800}
. /vwc/guest/lib.sh
bench_case soak PASS
