#!/bin/sh
# vm: ctrl wc=off
# vm: notracefs
# kernels: 7.2
#
# A guest without tracefs or debugfs mounted (# vm: notracefs), as on a
# host whose admin masked sys-kernel-tracing.mount: the fixture itself.
# The sidecar's own behaviour there is the watch cases' concern.
. /vwc/guest/lib.sh
plan 3

fact check_eq "no tracefs mounted" "$(awk '$3 == "tracefs" || $3 == "debugfs"' /proc/mounts)" ""
c0=$(ctrl_by_serial VWC0)
check_cmd "sync --all without tracefs" nvme-vwc-sync sync --all
check_eq "$(ns_of "$c0"): write through" "$(wc "$(ns_of "$c0")")" "write through"
finish
