#!/bin/sh
# vm: peer kernel=7.2-generic-tcp script=fabrics-target
# kernels: 6.1-generic-tcp 6.12-generic-tcp 7.2-generic-tcp
# timeout: 420
#
# A real NVMe/TCP initiator and target: this guest connects to Linux's
# nvmet in a second guest (tests/vm/guest/fabrics-target.sh) over a
# virtual network, with Debian's nvme-cli (discover, connect-all, a
# persistent discovery controller), udevd with the project's rules and
# the sidecar. vwc.subsys=N subsystems (default 4), each on two ports (two
# controllers, ANA multipath), each with a namespace whose backing device
# has no write cache (nsid 1, target device ftK) and one whose has (nsid
# 2, fcK). nvmet reports VWC present and WCE=1 on every controller; it
# sets "volatile write cache not present" (NSFEAT bit 5, I/O Command Set
# Independent Identify Namespace) on the first kind. Expected: those
# namespaces in write through and no Flush reaching the target for them
# (7.x's kernel does it itself; on 6.1 the product's rule must); the
# others in write back with every flush reaching the target's device,
# through the loss of a port and the reconnect.
. /vwc/guest/lib.sh

n=$(cmdline_arg vwc.subsys 4)
writes=8
plan $((16 + 6 * n))
CTL=http://10.0.0.1:8080/cgi-bin/ctl
# (busybox 1.35's wget -T crashes: timeout(1) bounds it instead)
ctl() { timeout 10 wget -q -O- "$CTL?$1"; }
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

net_up 10.0.0.2 10.0.1.2
mkdir -p /etc/nvme
# QEMU's DMI UUID is all zeros: a host NQN and ID of this guest's own
uuid=$(cat /proc/sys/kernel/random/uuid)
echo "nqn.2014-08.org.nvmexpress:uuid:$uuid" >/etc/nvme/hostnqn
echo "$uuid" >/etc/nvme/hostid
start_udev
sidecar_start /tmp/watch.log -v -v
uevents_start

t0=$(now)
fact wait_for "the target answers over the virtual network" 120 ctl stat
info "target ready $(since "$t0") s after the initiator asked"
info "discovery log of port 1: $(nvme discover -t tcp -a 10.0.0.1 -s 4420 2>&1 | grep -c '^subnqn') records"
t0=$(now)
fact check_cmd "connect-all through port 1 (persistent discovery controller)" \
	nvme connect-all -t tcp -a 10.0.0.1 -s 4420 --persistent --reconnect-delay=1
fact check_cmd "connect-all through port 2" \
	nvme connect-all -t tcp -a 10.0.1.1 -s 4420 --reconnect-delay=1

# subsystems of the target, each with its live tcp controllers
SUBNQN=nqn.2024-01.test.vwc:s
paths_ok() { # all N subsystems with 2 live tcp controllers, 2 namespaces
	_ok=0
	for _s in /sys/class/nvme-subsystem/nvme-subsys*; do
		case $(cat "$_s/subsysnqn") in "$SUBNQN"*) ;; *) continue ;; esac
		_c=0
		for _k in "$_s"/nvme[0-9]*; do
			[ -e "$_k/transport" ] || continue
			[ "$(cat "$_k/transport")" = tcp ] && [ "$(cat "$_k/state")" = live ] && _c=$((_c + 1))
		done
		_h=$(ls -d "$_s"/nvme*n* 2>/dev/null | command wc -l)
		[ "$_c" = 2 ] && [ "$_h" = 2 ] && _ok=$((_ok + 1))
	done
	[ "$_ok" = "$n" ]
}
fact wait_for "$n subsystems, 2 live tcp controllers and 2 namespaces each" 60 paths_ok
info "connected in $(since "$t0") s: $(for c in /sys/class/nvme/nvme*; do echo "${c##*/}:$(cat "$c/transport"):$(cat "$c/state"):$(sed 's/.*://' "$c/subsysnqn")"; done | tr '\n' ' ')"
disc=''
for c in /sys/class/nvme/nvme*; do
	[ "$(cat "$c/subsysnqn")" = nqn.2014-08.org.nvmexpress.discovery ] && disc=${c##*/}
done
[ -n "$disc" ] && fact pass "a persistent discovery controller: $disc" ||
	fact fail "a persistent discovery controller" "none among $(ls /sys/class/nvme | tr '\n' ' ')"

# head SUBSYS NSID: the namespace (multipath head) nsid NSID of sK
ns_head() {
	for _s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ "$(cat "$_s/subsysnqn")" = "$SUBNQN$1" ] || continue
		for _h in "$_s"/nvme*n*; do
			[ "$(cat "$_h/nsid")" = "$2" ] && { echo "${_h##*/}"; return 0; }
		done
	done
	return 1
}
# NSFEAT of the I/O Command Set Independent Identify Namespace (CNS 08h)
# of NS. nvme-cli 2.3 sends it for nsid 0 unless told (it overwrites the
# nsid it asked the kernel for with the call's status): -n given.
nsfeat() {
	nvme cmdset-ind-id-ns "/dev/$1" -n "$(cat "/sys/block/$1/nsid")" 2>/dev/null |
		sed -n 's/^nsfeat *: *//p'
}
bit5() { # NSFEAT NS: bit 5 of NS's NSFEAT (nsfeat's output)
	case $1 in
	0x* | [0-9]*) [ $(($1 & 32)) -ne 0 ] && echo set || echo clear ;;
	*) echo "unread ($(nvme cmdset-ind-id-ns "/dev/$2" -n "$(cat "/sys/block/$2/nsid")" 2>&1 | head -n 2 | tr '\n' ' '))" ;;
	esac
}
udevadm settle --timeout=30
log_quiet /tmp/watch.log 20
i=1
while [ "$i" -le "$n" ]; do
	t=$(ns_head "$i" 1) c=$(ns_head "$i" 2)
	ft=$(nsfeat "$t") fc=$(nsfeat "$c")
	info "s$i: $t (ft$i) nsfeat $ft $(wc "$t"); $c (fc$i) nsfeat $fc $(wc "$c")"
	fact check_eq "s$i: $t (no cache at the target) reports vwc not present" "$(bit5 "$ft" "$t")" set
	fact check_eq "s$i: $c (cache at the target) does not" "$(bit5 "$fc" "$c")" clear
	check_eq "s$i: $t (vwc not present) write through" "$(wc "$t")" "write through"
	check_eq "s$i: $c (WCE=1) write back" "$(wc "$c")" "write back"
	i=$((i + 1))
done

# fsync after each write on every namespace; the target counts the
# flushes that reach it
ctl stat >/tmp/stat0
i=1
while [ "$i" -le "$n" ]; do
	for nsid in 1 2; do
		h=$(ns_head "$i" "$nsid")
		k=0
		while [ "$k" -lt "$writes" ]; do
			$DD if=/dev/zero of="/dev/$h" bs=4k count=1 seek="$k" oflag=dsync status=none
			k=$((k + 1))
		done
	done
	i=$((i + 1))
done
ctl stat >/tmp/stat1
arrived() { # DEV: flushes that reached the target for DEV since stat0
	awk -v d="$1" 'FNR == NR { if ($1 == d) a = $2; next } $1 == d { print $2 - a }' /tmp/stat0 /tmp/stat1
}
at_dev() {
	awk -v d="$1" 'FNR == NR { if ($1 == d) a = $3; next } $1 == d { print $3 - a }' /tmp/stat0 /tmp/stat1
}
info "target after $writes fsync'd writes each (device arrived at-device): $(tr '\n' ';' </tmp/stat1)"
i=1
while [ "$i" -le "$n" ]; do
	check_eq "s$i: no flush reached the target for ft$i (write through)" "$(arrived "ft$i")" 0
	a=$(arrived "fc$i") d=$(at_dev "fc$i")
	[ "${a:-0}" -ge "$writes" ] && [ "${d:-0}" -ge "$writes" ] &&
		pass "s$i: every flush reached fc$i at the target" ||
		fail "s$i: every flush reached fc$i at the target" "arrived ${a:-?}, at the device ${d:-?}, $writes expected"
	i=$((i + 1))
done

# the product over tcp, a discovery controller among the controllers
out=$(nvme vwc-sync -o json 2>&1); rc=$?
info "vwc-sync exit $rc: $(echo "$out" | tr '\n' ' ' | cut -c1-600)"
[ "$rc" -lt 128 ] && pass "vwc-sync over tcp runs to its end (exit $rc)" || fail "vwc-sync over tcp" "killed by signal $((rc - 128))"
check_eq "vwc-sync over tcp: exit 0" "$rc" 0
check_eq "vwc-sync: the discovery controller $disc left out (no error names it)" \
	"$(echo "$out" | grep "$disc:" | grep -vc 'skipped')" 0
out=$(nvme vwc audit -o json 2>&1); rc=$?
info "audit exit $rc: $(echo "$out" | tr '\n' ' ' | cut -c1-600)"
[ "$rc" -lt 128 ] && pass "audit over tcp runs to its end (exit $rc)" || fail "audit over tcp" "killed by signal $((rc - 128))"
echo "$out" >/tmp/audit.json
info "audit: an I/O controller: $(sed -n '/^[{[]/,$p' /tmp/audit.json | jq -c "[.controllers[] | select(.name != \"$disc\")][0]" 2>&1 | cut -c1-500)"
named() { grep -q "$1" /tmp/audit.json && echo "$2 named" || echo "$2 missing"; }
check_eq "audit names the transport and the subsystem NQN" \
	"$(named '"transport": *"tcp"' transport), $(named "\"${SUBNQN}1\"" NQN)" \
	"transport named, NQN named"

# one port lost and back: the controllers through port 2 go, the
# namespaces keep one path; then they reconnect (1 s reconnect delay)
modes_ok() { # every namespace as expected; the wrong ones in BAD
	BAD=''
	_i=1
	while [ "$_i" -le "$n" ]; do
		_t=$(ns_head "$_i" 1) _c=$(ns_head "$_i" 2)
		[ "$(wc "$_t")" = "write through" ] || BAD="$BAD $_t:$(wc "$_t" | tr ' ' _)"
		[ "$(wc "$_c")" = "write back" ] || BAD="$BAD $_c:$(wc "$_c" | tr ' ' _)"
		_i=$((_i + 1))
	done
	[ -z "$BAD" ]
}
live2() { # live controllers through 10.0.1.1
	_l=0
	for _k in /sys/class/nvme/nvme*; do
		grep -q 'traddr=10.0.1.1,' "$_k/address" 2>/dev/null && ctrl_live "${_k##*/}" && _l=$((_l + 1))
	done
	echo "$_l"
}
none2() { [ "$(live2)" = 0 ]; }
all2() { [ "$(live2)" = "$n" ]; }
info "target: $(ctl down=2)"
fact wait_for "port 2 down: no live controller through it" 60 none2
sleep 2
modes_ok
check_eq "one path lost: no-cache namespaces write through, the others write back" "${BAD:-none}" none
m=$(uevents_mark)
t0=$(now)
info "target: $(ctl up=2)"
fact wait_for "port 2 back: $n live controllers through it" 60 all2 ||
	info "initiator's kernel: $(dmesg | grep -i 'connect\|reconnect\|delet\|remov' | tail -n 6 | tr '\n' ';')"
info "reconnect: all $n controllers live $(since "$t0") s after the port came back"
udevadm settle --timeout=30
log_quiet /tmp/watch.log 20
fact check_eq "a 'connected' change uevent for each reconnected controller" \
	"$(uevents_since "$m" | grep -c 'change nvme .*NVME_EVENT=connected')" "$n"
modes_ok
check_eq "after the reconnect: no-cache namespaces write through, the others write back" "${BAD:-none}" none
sidecar_alive "the sidecar is still running"
ctl done >/dev/null
finish
