#!/bin/sh
# vm: ctrl wc=off whole
# vm: ctrl wc=on whole
# vm: quirks
# timeout: 14400
# bench: per-kernel
#
# The fault injection of tests/vm/cases/faults.sh at every step of every
# command, each with the next of the nine fault kinds in turn
# (VWC_FAULTS=all; VWC_FAULTS=every gives every step every kind, nine
# times as long), one kernel a run:
#   bench/run.sh -s -k 7.2 faults-all
#   bench/run.sh -s -k 6.1-generic faults-all
# (saved as bench/results/faults-all-<kernel>.txt): its table and any
# failed run, as BENCH lines.
export VWC_FAULTS=all
. /vwc/guest/lib.sh
bench_case faults FAIL
