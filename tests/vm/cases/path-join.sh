#!/bin/sh
# vm: subsys name=s0 ctrls=2 wc=off,on shared=16
# kernels: 6.1 7.2 6.1-generic 7.2-generic
# timeout: 600
#
# A controller with its cache on that joins namespaces it shares with a
# controller whose cache is off (its PCI function bound again): every
# shared namespace is write through while only the WCE=0 controller
# reaches it, and must be write back within about the time the kernel
# takes to make the new path usable. The kernel sends no uevent for the
# hidden path nodes (nvmeXcYnZ), and the joining controller's own add and
# connected events can come before its scan has made them: the tool reads
# which namespaces a controller reaches from the controller itself
# (Identify Active Namespace ID list). With the udev rule alone, then
# with the sidecar alone, and with both while the sidecar stops as the
# controller joins. path-join-255 runs the same with 255.
. /vwc/guest/lib.sh
# (path-join-255.sh sources this file: the same 23 checks)
plan 23

ctrls=$(ls /sys/class/nvme | grep '^nvme[0-9]*$' | tr '\n' ' ')
a='' b=''
for c in $ctrls; do
	case $(cat "/sys/class/nvme/$c/cntlid") in
	0) a=$c ;;
	1) b=$c ;;
	esac
done
[ -n "$a" ] && [ -n "$b" ] && pass "path-join: controllers by cntlid: $a (0), $b (1)" ||
	fail "path-join: controllers by cntlid" "cntlid 0 '$a', cntlid 1 '$b' among $ctrls"
# heads reached through hidden path nodes nvmeXcYnZ -> nvmeXnZ
heads_of() { ls "/sys/class/nvme/$1" | sed -n 's/^nvme\([0-9]*\)c[0-9]*n\([0-9]*\)$/nvme\1n\2/p' | sort; }
# every namespace and path node the kernel will make for b comes with its
# scan: wait for all of them (the machine's shared count, from the guest's
# view of a)
want=$(heads_of "$a" | command wc -l)
all_paths() { [ "$(heads_of "$b" | grep -c -x -F "$(heads_of "$a")")" -ge "$want" ]; }
wait_for - 120 all_paths
shared=$(heads_of "$a" | grep -x -F "$(heads_of "$b")" | tr '\n' ' ')
nshared=$(echo $shared | command wc -w)
check_eq "path-join: every namespace of $a shared with $b" "$nshared" "$want"
info "path-join: $nshared shared namespaces"

nvme set-feature "/dev/$a" --feature-id=6 --value=0 >/dev/null 2>&1
check_eq "path-join: $a WCE=0" "$(get_wce "$a")" 0
check_eq "path-join: $b WCE=1 (its private namespace)" "$(get_wce "$b")" 1
pci=$(basename "$(readlink "/sys/class/nvme/$b/device")")

# count_wc MODE: how many shared heads read "write MODE"
count_wc() {
	_n=0
	for _h in $shared; do
		[ "$(cat /sys/block/$_h/queue/write_cache)" = "write $1" ] && _n=$((_n + 1))
	done
	echo "$_n"
}
all_wb() { [ "$(count_wc back)" = "$nshared" ]; }
all_wt() { [ "$(count_wc through)" = "$nshared" ]; }
b_gone() { [ ! -e "/sys/bus/pci/devices/$pci/nvme" ] && ! ls -d /sys/bus/pci/devices/$pci/nvme/nvme* >/dev/null 2>&1; }

# join MODE: bind $pci again, sample every head, check the figures
join() {
	_out=$(wc-join -a "$pci" -d "${JOIN_MS:-20000}" $shared 2>&1)
	_sum=$(echo "$_out" | grep '^WCJ ctrl=')
	info "path-join ($1): $_sum"
	echo "$_out" | grep '^WCJ head=' | sort -t= -k5 -n -r | head -n 3 |
		while read -r _l; do info "path-join ($1): slowest: $_l"; done
	_joined=$(echo "$_sum" | sed -n 's/.* joined=\([0-9]*\).*/\1/p')
	_never=$(echo "$_sum" | sed -n 's/.* never=\([0-9]*\).*/\1/p')
	_max=$(echo "$_sum" | sed -n 's/.* max_exposure_ms=\([0-9.-]*\).*/\1/p')
	check_eq "path-join ($1): every shared namespace got its path through the joining controller" "$_joined" "$nshared"
	check_eq "path-join ($1): no shared namespace left in write through with the joining WCE=1 controller behind it" "${_never:-?}" 0
	# the kernel's own time to make every path: the last path_ms
	_last=$(echo "$_out" | sed -n 's/^WCJ head=.* path_ms=\([0-9.]*\) .*/\1/p' | sort -n | tail -n 1)
	info "path-join ($1): the kernel made the last path at ${_last:-?} ms; longest exposure ${_max:-?} ms"
	# within about the time the kernel takes to make the paths, plus one
	# run of the rule (or the sidecar's reaction): 3 s under TCG
	_lim=$(awk -v l="${_last:-0}" 'BEGIN { printf "%.0f", l + 3000 }')
	if [ -n "$_max" ] && awk -v m="$_max" -v l="$_lim" 'BEGIN { exit !(m >= 0 && m <= l) }'; then
		pass "path-join ($1): longest exposure ${_max} ms (at most $_lim)"
	else
		fail "path-join ($1): longest exposure" "${_max:-none} ms (limit $_lim)"
	fi
	[ "$1" != udev ] || udevadm settle --timeout=120
	sleep 2
	check_eq "path-join ($1): all write back 2 s later" "$(count_wc back)" "$nshared"
}

# 1. udev alone (a host whose sidecar is stopped); udevd's log keeps what
# the rule's runs said
mkdir -p /run/udev
systemd-udevd --debug --resolve-names=never >/tmp/pj-udevd.log 2>&1 &
udevadm trigger --action=add --type=subsystems >/dev/null 2>&1
udevadm trigger --action=add --type=devices >/dev/null 2>&1
udevadm settle --timeout=120
wait_for "path-join (udev): shared namespaces write back while $b (WCE=1) reaches them" 30 all_wb
echo "$pci" >/sys/bus/pci/drivers/nvme/unbind
wait_for - 20 b_gone
check_cmd "path-join (udev): admin's sync with $b unbound" nvme vwc-sync --all
check_eq "path-join (udev): $a (WCE=0) alone: every shared namespace write through" "$(count_wc through)" "$nshared"
join udev
info "path-join (udev): the rule's runs: $(grep -a "nvme-vwc-sync" /tmp/pj-udevd.log | grep -a -E "nvme-vwc-sync\[|\(err\)|\(out\)|failed|returned" | tail -n 12 | tr '\n' '|')"
udevadm settle --timeout=60
udevadm control --exit >/dev/null 2>&1
for p in $(pidof systemd-udevd); do kill "$p" 2>/dev/null; done

# 2. the sidecar alone
nb=$(basename "$(ls -d /sys/bus/pci/devices/$pci/nvme/nvme* | head -n 1)")
sidecar_start /tmp/pj-watch.log -v -v
wpid=$SC_PID
started() { grep -q 'watching' /tmp/pj-watch.log; }
wait_for "path-join (sidecar): started" 30 started
echo "$pci" >/sys/bus/pci/drivers/nvme/unbind
wait_for - 20 b_gone
wait_for "path-join (sidecar): $nb unbound, $a (WCE=0) alone: write through" 30 all_wt
join sidecar
sidecar_alive "path-join (sidecar): still running"
sidecar_stop "path-join (sidecar): clean exit"
info "path-join (sidecar): log: $(grep -E 'joining|reach|write back|write through' /tmp/pj-watch.log | tail -n 8 | tr '\n' '|')"

# 3. the sidecar with udevd, the controller joining while the sidecar is
# stopped (SIGSTOP) and then ends (SIGTERM) before it read the events:
# the controller's events are not left to the sidecar while a namespace
# may be write through on a controller's word (the runs above made the
# mark, /run/nvme-vwc-sync/write-through, before their write
# through), and the sidecar's last pass reads what came before it goes:
# every shared namespace write back.
systemd-udevd --resolve-names=never >/dev/null 2>&1 &
udevadm trigger --action=add --type=subsystems >/dev/null 2>&1
udevadm trigger --action=add --type=devices >/dev/null 2>&1
udevadm settle --timeout=120
sidecar_start /tmp/pj-watch3.log -v -v
wait_for - 30 test -e /run/nvme-vwc-sync/sidecar-active
echo "$pci" >/sys/bus/pci/drivers/nvme/unbind
wait_for - 20 b_gone
wait_for - 30 all_wt
check_eq "path-join (stopping): write through on $a's word: the mark made" \
	"$(test -f /run/nvme-vwc-sync/write-through && echo made)" made
kill -STOP "$SC_PID"
echo "$pci" >/sys/bus/pci/drivers/nvme/bind
nb=''
b_back() { nb=$(basename "$(ls -d /sys/bus/pci/devices/$pci/nvme/nvme* 2>/dev/null | head -n 1)") && [ -n "$nb" ] && [ "$(heads_of "$nb" | grep -c -x -F "$(heads_of "$a")")" -ge "$want" ]; }
wait_for - 60 b_back
udevadm settle --timeout=60
info "path-join (stopping): $nb joined while the sidecar was stopped: $(count_wc through) of $nshared write through"
kill -TERM "$SC_PID"
kill -CONT "$SC_PID"
wait "$SC_PID"
rc=$?
check_eq "path-join (stopping): the sidecar ended on SIGTERM (exit 0)" "$rc" 0
udevadm settle --timeout=60
check_eq "path-join (stopping): the join written back (the rule's run, the sidecar's last pass)" "$(count_wc back)" "$nshared"
check_eq "path-join (stopping): its mark gone" "$(test -L /run/nvme-vwc-sync/sidecar-active && echo left)" ""
info "path-join (stopping): log: $(tail -n 6 /tmp/pj-watch3.log | tr '\n' '|')"
udevadm control --exit >/dev/null 2>&1
finish
