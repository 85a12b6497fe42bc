#!/bin/sh
# timeout: 7200
#
# The reconnect storm at array scale: tests/vm/cases/fabrics-1024.sh
# (Linux's own target over nvme-loop, 64 subsystems of 16 namespaces on
# two loop ports, 1,024 namespaces and 2,048 paths, udevd and the sidecar
# running) with its storm over every subsystem: both paths of all 64
# gone and back, 10 rounds (the test command takes 8 subsystems, 2
# rounds, for time). vwc.storm_subsys=S and vwc.storm_rounds=N on the
# kernel command line (VWC_BENCH_APPEND) change them. Its INFO lines
# (the connects' and the storm's times, the sidecar's CPU, what the
# rule's run costs) and its checks (every mode right after the storm, no
# lock timeout, udevd killed no worker, the sidecar idle) as BENCH lines:
#   bench/run.sh -s -k 7.2-generic-io fabrics-storm   (about an hour)
. /vwc/guest/lib.sh
VWC_STORM_SUBSYS=$(cmdline_arg vwc.storm_subsys 64)
VWC_STORM_ROUNDS=$(cmdline_arg vwc.storm_rounds 10)
export VWC_STORM_SUBSYS VWC_STORM_ROUNDS
bench_case fabrics-1024 PASS
