#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 7.2
# manual: run by tests/compat/run.sh, whose image brings both libnvme backends and the ioctl shim
#
# The admin-command edge behaves the same on the libnvme 1.x and
# libnvme3 backends. tests/compat/ioctl-shim.c (LD_PRELOAD) logs every
# admin passthrough and makes chosen ones fail. /etc/vwc-compat/expect
# names the binaries:
#	VWC_BACKENDS	"NAME=PATH ..." standalone nvme-vwc-sync per backend
#	VWC_SHIM	the shim
# For each backend: every admin command carries the 5 s timeout; Get
# Features 06h failing (errno EIO, then NVMe status 0x4002) gives a message
# naming the controller, the command and the cause, and the namespace in
# write back (unknown means write back), also when it was in write through
# before. Then the backends' messages and exit statuses must be identical
# (which status is the engine's business, not the backend's).
. /vwc/guest/lib.sh

if [ ! -r /etc/vwc-compat/expect ]; then
	plan 1
	fail "errpath: /etc/vwc-compat/expect" "missing: not an image made by tests/compat/run.sh"
	finish
	exit 1
fi
. /etc/vwc-compat/expect
# 11 checks per backend, and one comparison per backend after the first
nb=$(echo $VWC_BACKENDS | command wc -w)
plan $((12 * nb - 1))

off=$(ctrl_by_serial VWC0)
nsoff=$(ns_of "$off")
info "WCE-off controller $off ($nsoff); backends: $VWC_BACKENDS"

for b in $VWC_BACKENDS; do
	name=${b%%=*}
	bin=${b#*=}
	[ -x "$bin" ] || { fail "errpath $name: $bin" "not in the image"; continue; }

	# Every admin command of a full probe carries 5000 ms.
	rm -f /tmp/shim.log
	VWC_SHIM_LOG=/tmp/shim.log LD_PRELOAD=$VWC_SHIM "$bin" audit "/dev/$off" >/dev/null 2>&1
	VWC_SHIM_LOG=/tmp/shim.log LD_PRELOAD=$VWC_SHIM "$bin" set-cache off "/dev/$off" >/dev/null 2>&1
	n=$(grep -c . /tmp/shim.log 2>/dev/null)
	bad=$(grep -v 'timeout_ms=5000$' /tmp/shim.log 2>/dev/null)
	info "$name admin commands: $(tr '\n' ';' </tmp/shim.log 2>/dev/null)"
	for op in 0x06 0x0a 0x02 0x09; do
		grep -q "^opcode=$op " /tmp/shim.log 2>/dev/null ||
			fail "errpath $name: admin opcode $op seen" "$(cat /tmp/shim.log 2>/dev/null)"
	done
	if [ "${n:-0}" -ge 4 ] && [ -z "$bad" ]; then
		pass "errpath $name: all $n admin commands with timeout_ms=5000"
	else
		fail "errpath $name: admin timeouts" "n=$n bad: $bad"
	fi

	for how in errno:5 status:0x4002; do
		for start in "write back" "write through"; do
			set_wc "$nsoff" "$start"
			err=$(VWC_SHIM_FAIL=0x0a:0x06:$how LD_PRELOAD=$VWC_SHIM "$bin" sync "/dev/$off" 2>&1 >/dev/null)
			rc=$?
			after=$(wc "$nsoff")
			info "$name Get Features 06h $how from $start: exit $rc, $after: $err"
			echo "$how|$start|$rc|$after|$err" >>"/tmp/errpath.$name"
			check_eq "errpath $name: Get Features $how (from $start): write back (exit $rc)" \
				"$after" "write back"
			case $err in
			*"$off"*"Get Features 06h failed"*) pass "errpath $name: $how message names $off and Get Features 06h" ;;
			*) fail "errpath $name: $how message" "$err" ;;
			esac
		done
	done
	case $(grep '^errno:5|' "/tmp/errpath.$name" | head -n 1) in
	*"Input/output error"*) pass "errpath $name: EIO named" ;;
	*) fail "errpath $name: EIO named" "$(cat "/tmp/errpath.$name")" ;;
	esac
	case $(grep '^status:0x4002|' "/tmp/errpath.$name" | head -n 1) in
	*"NVMe status 0x4002: Invalid Field in Command"*) pass "errpath $name: NVMe status named" ;;
	*) fail "errpath $name: NVMe status named" "$(cat "/tmp/errpath.$name")" ;;
	esac
done

# The same messages and statuses on every backend.
first=
for b in $VWC_BACKENDS; do
	name=${b%%=*}
	if [ -z "$first" ]; then
		first=$name
		continue
	fi
	if cmp -s "/tmp/errpath.$first" "/tmp/errpath.$name"; then
		pass "errpath: $first and $name give identical messages and exit statuses"
	else
		fail "errpath: $first and $name differ" "$(diff "/tmp/errpath.$first" "/tmp/errpath.$name" | tr '\n' ' ')"
	fi
done
finish
