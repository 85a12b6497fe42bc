#!/bin/sh
# shellcheck disable=SC1091 # lib.sh lives in the guest
# The README demo (scripts/demo.sh): one drive with its volatile write cache
# off (WCE=0), one with it on; what the kernel does before and after
# nvme vwc-sync.
# vm: ctrl wc=off
# vm: ctrl wc=on
# timeout: 300
. /vwc/guest/lib.sh

N=50
wait_for - 30 test -c /dev/nvme0 -a -c /dev/nvme1
off=$(ctrl_by_serial VWC0) || off=nvme0
on=$(ctrl_by_serial VWC1) || on=nvme1
wait_for - 30 sh -c ". /vwc/guest/lib.sh; ns_of $off && ns_of $on"
nsoff=$(ns_of "$off")
nson=$(ns_of "$on")

say() { printf '\n== %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@" 2>&1; }
caches() { for n in "$nsoff" "$nson"; do echo "/sys/block/$n/queue/write_cache: $(wc "$n")"; done; }
count() {
	for n in "$nsoff" "$nson"; do
		echo "$n: $(flushes_for "$n" "$N") flush requests for $N writes (dd bs=4k oflag=direct,dsync)"
	done
}

say "kernel $(uname -r); $off has WCE off, $on has WCE on"
say "Volatile Write Cache feature (06h) as the drives report it"
show nvme get-feature "/dev/$off" --feature-id=6
show nvme get-feature "/dev/$on" --feature-id=6
say "What the kernel assumes: write_cache before"
caches
say "Flushes before"
count
say "Sync"
if ! nvme vwc-sync --help 2>&1 | grep -q 'Invalid sub-command'; then
	show nvme vwc-sync --all -v
elif command -v nvme-vwc-sync >/dev/null; then
	show nvme-vwc-sync sync --all -v
else
	echo "neither the nvme vwc-sync plugin nor nvme-vwc-sync is installed"
fi
say "write_cache after"
caches
say "Flushes after (same $N writes)"
count
finish
