#!/bin/sh
# kernels: 7.2-generic-io
# timeout: 600
#
# Linux's own NVMe target over nvme-loop in one guest (no QEMU controller):
# one subsystem exports a namespace on null_blk without a write cache and
# one on a device with a write cache; a persistent discovery controller is
# connected beside it. nvmet reports a volatile cache present and enabled
# (WCE=1) for both, refuses Set Features 06h, and (6.13+) sets the
# namespace's own "no volatile write cache" bit (NSFEAT bit 5, Identify CNS
# 08h) on the first. Proves: sync --all and audit skip the discovery
# controller (exit 0); the no-cache namespace is write through by its own
# reason and sync never tries write back on it (7.2 refuses it: EIO); the
# cached one is write back; audit names the transport and the target's NQN;
# set-cache on the loop controller fails clearly and changes nothing; the
# sidecar skips the discovery controller, keeps both modes across a reset,
# and takes namespace adds from udev's rule while it runs, and controllers'
# events while no namespace is in write through on a controller's word
# (the mark); an fsync loop on the no-cache namespace sends no flush to its
# backing device. Needs the -io kernel tag (nvme-loop, null_blk).
. /vwc/guest/lib.sh
plan 37

M=/lib/modules/$(uname -r)
NQN=nqn.2026-12.org.vwc:fab
DISC=nqn.2014-08.org.nvmexpress.discovery
setup_fail() { fail "fabrics: setup" "$1"; finish; exit 1; }

grep -q '/nvme-loop\.ko$' "$M/modules.load" 2>/dev/null &&
	grep -q '/null_blk\.ko$' "$M/modules.load" 2>/dev/null ||
	setup_fail "no nvme-loop or null_blk in $(uname -r) (boot 7.2-generic-io)"

# --- backing devices: nullb0 (null_blk's defaults, loaded by /init: no
# cache), and a null_blk device with a cache made through configfs ---
mount -t configfs none /sys/kernel/config 2>/dev/null
[ -b /dev/nullb0 ] || setup_fail "no /dev/nullb0"
NB=/sys/kernel/config/nullb/nullbwc
mkdir "$NB" && echo 256 >"$NB/size" && echo 1 >"$NB/memory_backed" &&
	echo 64 >"$NB/cache_size" && echo 1 >"$NB/power" ||
	setup_fail "null_blk with a cache (configfs) refused"
# its disk: named after the configfs directory on newer kernels, nullbN
# (N its index) on older ones
wcdev() {
	for WCDEV in nullbwc "nullb$(cat "$NB/index" 2>/dev/null)"; do
		[ -b "/dev/$WCDEV" ] && return 0
	done
	return 1
}
wait_for - 10 wcdev || setup_fail "no null_blk disk with a cache: $(ls /sys/block | tr '\n' ' ')"
wcdev
fact check_eq "null_blk without memory: the kernel says write through" \
	"$(wc nullb0)" "write through"
fact check_eq "null_blk with cache_size: the kernel says write back" \
	"$(wc "$WCDEV")" "write back"

# --- nvmet: one subsystem, two namespaces, one loop port ---
S=/sys/kernel/config/nvmet/subsystems/$NQN
PT=/sys/kernel/config/nvmet/ports/1
mkdir "$S" "$S/namespaces/1" "$S/namespaces/2" "$PT" &&
	echo 1 >"$S/attr_allow_any_host" &&
	printf /dev/nullb0 >"$S/namespaces/1/device_path" &&
	echo 1 >"$S/namespaces/1/enable" &&
	printf "/dev/%s" "$WCDEV" >"$S/namespaces/2/device_path" &&
	echo 1 >"$S/namespaces/2/enable" &&
	echo loop >"$PT/addr_trtype" && ln -s "$S" "$PT/subsystems/$NQN" ||
	setup_fail "nvmet subsystem or port refused"
# the host's identity first: a QEMU guest's DMI UUID is all zeros, and the
# kernel refuses a host ID reused with another host NQN
mkdir -p /etc/nvme
hid=$(cat /proc/sys/kernel/random/uuid)
echo "nqn.2014-08.org.nvmexpress:uuid:$hid" >/etc/nvme/hostnqn
echo "$hid" >/etc/nvme/hostid
nvme connect -t loop -n "$NQN" >/tmp/connect.log 2>&1 ||
	setup_fail "nvme connect -t loop -n $NQN: $(cat /tmp/connect.log)"
# a persistent discovery controller, as connect-all's --persistent keeps
nvme connect -t loop -n "$DISC" >/tmp/connect-disc.log 2>&1 ||
	info "discovery connect: $(cat /tmp/connect-disc.log)"

C='' D=''
for d in /sys/class/nvme/nvme*; do
	[ "$(cat "$d/transport" 2>/dev/null)" = loop ] || continue
	case $(cat "$d/subsysnqn") in
	"$NQN") C=${d##*/} ;;
	"$DISC") D=${d##*/} ;;
	esac
done
[ -n "$C" ] || setup_fail "no loop controller for $NQN"
# the namespaces by id (the head nodes nvmeXnY; the one subsystem with
# namespaces here)
nsid_of() {
	for b in /sys/block/nvme*n*; do
		case ${b##*/} in nvme*c*n*) continue ;; esac
		[ "$(cat "$b/nsid" 2>/dev/null)" = "$1" ] || continue
		echo "${b##*/}"
		return 0
	done
	return 1
}
wait_for - 20 nsid_of 2 >/dev/null || setup_fail "no namespace 2 on $C"
N1=$(nsid_of 1)
N2=$(nsid_of 2)
info "loop: $C ($(cat /sys/class/nvme/$C/subsysnqn), cntrltype $(cat /sys/class/nvme/$C/cntrltype 2>/dev/null)), discovery: ${D:-none} ($(cat /sys/class/nvme/$D/cntrltype 2>/dev/null)); $N1 on nullb0 ($(wc "$N1")), $N2 on $WCDEV ($(wc "$N2")); nvme $(nvme version | head -n 1)"
fact check_cmd "a persistent discovery controller is connected" test -n "$D"
fact check_eq "nvmet: Get Features 06h answers WCE=1" \
	"$(get_wce "$C")" 1
fact check_eq "nvmet sets NSFEAT bit 5 (CNS 08h) on the null_blk namespace, not on the cached one" \
	"$(nvme admin-passthru "/dev/$C" --opcode=0x06 --namespace-id=1 \
		--cdw10=8 --data-len=4096 --read --raw-binary 2>/dev/null |
		od -An -tu1 -N1 | tr -d ' ')/$(nvme admin-passthru "/dev/$C" \
		--opcode=0x06 --namespace-id=2 --cdw10=8 --data-len=4096 --read \
		--raw-binary 2>/dev/null | od -An -tu1 -N1 | tr -d ' ')" "32/0"
fact check_eq "7.2 reads the bit itself: the kernel's own modes" \
	"$(wc "$N1")/$(wc "$N2")" "write through/write back"

# --- sync --all: the discovery controller skipped, the namespace's bit ---
nvme-vwc-sync sync --all -o json >/tmp/sync.json 2>/tmp/sync.err
rc=$?
check_eq "sync --all with a discovery controller connected: exit 0" \
	"exit $rc" "exit 0"
[ $rc = 0 ] || info "sync stderr: $(tr '\n' '|' </tmp/sync.err)"
check_cmd "sync tried no write back on the no-cache namespace (no EIO)" \
	sh -c "! grep -qi 'write back\|Input/output' /tmp/sync.err"
check_eq "the no-cache namespace: write through, by its own bit" \
	"$(wc "$N1") / $(jq -r --arg n "$N1" '.namespaces[] | select(.name == $n) | "\(.ns_no_volatile_cache) \(.reason | startswith("the namespace reports no volatile write cache"))"' /tmp/sync.json)" \
	"write through / true true"
check_eq "the cached namespace: write back (WCE=1, bit clear)" \
	"$(wc "$N2") / $(jq -r --arg n "$N2" '.namespaces[] | select(.name == $n) | .ns_no_volatile_cache' /tmp/sync.json)" \
	"write back / false"
check_eq "sync's report leaves the discovery controller out" \
	"$(jq -r --arg d "${D:-none}" '[.controllers[] | select(.name == $d)] | length' /tmp/sync.json)" 0

# --- audit ---
nvme-vwc-sync audit >/tmp/audit.txt 2>/tmp/audit.err
rc=$?
check_eq "audit with a discovery controller connected: exit 0 (in sync)" \
	"exit $rc" "exit 0"
[ $rc = 0 ] || info "audit: $(tr '\n' '|' </tmp/audit.txt) stderr: $(tr '\n' '|' </tmp/audit.err)"
check_cmd "audit names the transport and the target's subsystem NQN" \
	grep -q "^  $C: transport loop, target subsystem $NQN\$" /tmp/audit.txt
check_cmd "audit shows the namespace's own cache on its row" \
	grep -q "namespace: no volatile cache *$N1 " /tmp/audit.txt
nvme-vwc-sync audit -o json >/tmp/audit.json 2>/dev/null
check_eq "audit JSON: transport and subsysnqn of the loop controller" \
	"$(jq -r --arg c "$C" '.controllers[] | select(.name == $c) | "\(.transport) \(.subsysnqn)"' /tmp/audit.json)" \
	"loop $NQN"
nvme-vwc-sync audit -o prometheus >/tmp/audit.prom 2>/dev/null
check_eq "audit Prometheus: the namespace's bit, 1 and 0" \
	"$(grep "^nvme_vwc_namespace_cache_not_present{namespace=\"$N1\"" /tmp/audit.prom | sed 's/.* //')/$(grep "^nvme_vwc_namespace_cache_not_present{namespace=\"$N2\"" /tmp/audit.prom | sed 's/.* //')" \
	"1/0"

# --- set-cache on a target that refuses Set Features 06h ---
for v in off on; do
	b1=$(wc "$N1") b2=$(wc "$N2")
	nvme-vwc-sync set-cache "$v" "/dev/$C" >/tmp/sc.out 2>/tmp/sc.err
	rc=$?
	check_eq "set-cache $v on the loop controller: exit 1" "exit $rc" "exit 1"
	check_cmd "set-cache $v: names the device, the transport and that the target refuses" \
		grep -q "$C: the loop target $NQN refuses Set Features 06h" /tmp/sc.err
	check_eq "set-cache $v changed nothing (modes, WCE)" \
		"$(wc "$N1")/$(wc "$N2")/$(get_wce "$C")" "$b1/$b2/1"
done

# --- the sidecar: the discovery controller skipped, modes kept across a
# reset of the loop controller ---
sidecar_start /tmp/watch.log -vv
sleep 3
echo 1 >"/sys/class/nvme/$C/reset_controller"
wait_for - 20 ctrl_live "$C"
log_quiet /tmp/watch.log 30
info "the sidecar on ${D:-none}: $(grep "${D:-none}[: ]" /tmp/watch.log | head -n 5 | tr '\n' '|')"
sidecar_alive "sidecar alive with a discovery controller connected"
check_cmd "the sidecar sent the discovery controller nothing (no SMART log, no failure)" \
	sh -c "! grep -q '${D:-none}: .*failed' /tmp/watch.log"
check_cmd "the sidecar tried no write back on the no-cache namespace (no EIO)" \
	sh -c "! grep -q 'Input/output error' /tmp/watch.log"
check_eq "after the reset, with the sidecar: modes kept" \
	"$(wc "$N1")/$(wc "$N2")" "write through/write back"
# nvmet has no SMART critical warning events: it refuses them with a
# status, and the sidecar asks once (a reset, a reconnect and every
# reopen of the descriptor would ask again: 227 lines over 32 loop
# controllers of a 512-namespace connect)
check_eq "SMART events refused by the target: said once for $C, across its reset" \
	"$(grep -c "^nvme-vwc-sync: $C: cannot enable SMART critical warning events: .*(not asked again)" /tmp/watch.log) $(grep -c "$C: cannot enable SMART" /tmp/watch.log)" "1 1"
# a namespace's add is the sidecar's while it runs: the rule queues no
# process for it then, and queues one again once the sidecar stopped
q_ns() { udev_queues add "/sys/block/$N2" "nvme-vwc-sync sync --quiet --keep-restored $N2" && echo queued || echo none; }
check_eq "with the sidecar running, udev's rule leaves a namespace add to it" \
	"$(test -e /run/nvme-vwc-sync/sidecar-active && echo marked) $(q_ns)" "marked none"
# a controller's add and change too, but only while this tool has
# written no write through (no mark): here the one in write through is
# there by its own bit, held by the kernel itself (7.2)
q_ctrl() { udev_queues change "/sys/class/nvme/$C" "nvme-vwc-sync sync --quiet --keep-restored $C" && echo queued || echo none; }
WTMARK=/run/nvme-vwc-sync/write-through
check_eq "write through by the namespace's own bit alone: no write-through mark made" \
	"$(test -e $WTMARK && echo made)" "" ||
	info "who made it: $(grep -h "made $WTMARK" /tmp/*.err /tmp/*.log 2>/dev/null | head -n 3 | tr '\n' '|')"
check_eq "with the sidecar running and no mark, udev's rule leaves a controller's change to it" "$(q_ctrl)" none
touch $WTMARK
check_eq "with the sidecar running and the mark there, a controller's change is the rule's (it can call for write back)" "$(q_ctrl)" queued
rm -f $WTMARK
check_eq "the mark leads to a descriptor the sidecar holds" \
	"$(readlink /run/nvme-vwc-sync/sidecar-active | sed 's|^/proc/\([0-9]*\)/fdinfo/[0-9]*$|\1|')" "$SC_PID"
sidecar_stop "sidecar stops cleanly"
check_eq "the sidecar stopped: the rule runs sync for a namespace add again" \
	"$(test -e /run/nvme-vwc-sync/sidecar-active && echo marked) $(q_ns)" " queued"
# killed: its mark stays (no ExecStopPost here), but leads nowhere
sidecar_start /tmp/watch2.log
wait_for - 60 test -e /run/nvme-vwc-sync/sidecar-active
kill -KILL "$SC_PID"
wait "$SC_PID" 2>/dev/null
check_eq "the sidecar SIGKILLed: its mark left, leading nowhere; the rule runs sync for a namespace add and a controller change" \
	"$(test -L /run/nvme-vwc-sync/sidecar-active && echo left) $(test -e /run/nvme-vwc-sync/sidecar-active && echo live) $(q_ns) $(q_ctrl)" "left  queued queued"
rm -f /run/nvme-vwc-sync/sidecar-active

# --- flushes at the target's backing devices ---
f1=$(flushes nullb0)
dsync_writes "$N1" 50
fact check_eq "50 fsync'd writes on the no-cache namespace: no flush reaches nullb0" \
	"$(($(flushes nullb0) - f1))" 0
f2=$(flushes "$WCDEV")
dsync_writes "$N2" 50
n2=$(($(flushes "$WCDEV") - f2))
fact check_cmd "the control: 50 on the cached one reach $WCDEV as flushes ($n2)" \
	test "$n2" -ge 50

nvme disconnect -n "$NQN" >/dev/null 2>&1
[ -z "$D" ] || nvme disconnect -d "$D" >/dev/null 2>&1
finish
