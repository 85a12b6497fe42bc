# Helpers for guest tests (busybox sh). Source with: . /vwc/guest/lib.sh
# The output protocol is tests/lib/guest.sh's, read by tests/lib/qemu.sh.
# shellcheck shell=sh

# The checks shared with the system guests: pass fail skip info finish
# host check_eq check_cmd wait_for (tests/lib/guest.sh).
. /vwc/lib/guest.sh

_blk() { echo "${1#/dev/}"; }

# flushes DEV: completed flush requests (field 16 of /sys/block/DEV/stat).
flushes() { awk '{ print $16 }' "/sys/block/$(_blk "$1")/stat"; }

# wc DEV: queue/write_cache of a block device ("write back"/"write through").
# Anything that is not a block device falls through to the real wc command.
wc() {
	if [ "$#" -eq 1 ] && [ -e "/sys/block/$(_blk "$1")/queue/write_cache" ]; then
		cat "/sys/block/$(_blk "$1")/queue/write_cache"
	else
		command wc "$@"
	fi
}

# set_wc DEV "write through"|"write back"
set_wc() { echo "$2" >"/sys/block/$(_blk "$1")/queue/write_cache"; }

# kernel_ge MAJ MIN: the running kernel is at least MAJ.MIN.
kernel_ge() {
	_v=$(uname -r)
	_maj=${_v%%.*}
	_min=${_v#*.}
	_min=${_min%%[!0-9]*}
	[ "$_maj" -gt "$1" ] || { [ "$_maj" -eq "$1" ] && [ "$_min" -ge "$2" ]; }
}

# ctrl_by_serial SERIAL [CNTLID]: the controller name (nvmeN) with that serial
# (and controller ID). The VM harness gives controller nvK the serial VWCK;
# controllers of one subsystem share the first one's serial and differ by
# cntlid (0, 1, ...).
ctrl_by_serial() {
	for _c in /sys/class/nvme/nvme*; do
		[ "$(tr -d ' ' <"$_c/serial")" = "$1" ] || continue
		[ -z "${2:-}" ] || [ "$(cat "$_c/cntlid")" = "$2" ] || continue
		echo "${_c##*/}"
		return 0
	done
	return 1
}

# ns_of CTRL: the first namespace block device of controller CTRL (nvmeXnY:
# the multipath head when there is one, else the namespace itself).
ns_of() {
	for _n in /sys/class/nvme/"$1"/nvme*n*; do
		[ -e "$_n" ] || continue
		_n=${_n##*/}
		case $_n in
		*c*n*) _h=$(echo "$_n" | sed 's/^nvme\([0-9]*\)c[0-9]*n/nvme\1n/') ;;
		*) _h=$_n ;;
		esac
		echo "$_h"
		return 0
	done
	return 1
}

# get_wce CTRL: Volatile Write Cache feature (06h) current value, decimal.
get_wce() {
	_o=$(nvme get-feature "/dev/$1" --feature-id=6 2>&1) || return 1
	_v=$(echo "$_o" | sed -n 's/.*Current value: *\(0x\)\{0,1\}\([0-9a-fA-F]*\).*/\2/p')
	[ -n "$_v" ] || return 1
	echo $((0x$_v))
}

# ctrl_live CTRL: the controller's state is "live".
ctrl_live() { [ "$(cat "/sys/class/nvme/$1/state" 2>/dev/null)" = live ]; }

# coreutils dd (busybox dd lacks oflag=dsync). Note: this busybox runs its own
# applets before anything in PATH, so name other binaries by full path.
DD=/usr/bin/dd

# dsync_writes DEV N: N 4 KiB O_DIRECT|O_DSYNC writes of zeroes at offset 0.
dsync_writes() {
	_i=0
	while [ "$_i" -lt "$2" ]; do
		$DD if=/dev/zero of="/dev/$(_blk "$1")" bs=4k count=1 oflag=direct,dsync status=none || return 1
		_i=$((_i + 1))
	done
}

# flushes_for DEV N: flush requests counted during N dsync writes.
flushes_for() {
	_f0=$(flushes "$1")
	dsync_writes "$1" "$2" || return 1
	echo $(($(flushes "$1") - _f0))
}

# log_quiet FILE [MAX]: until FILE (a sidecar's -vv log: every step) has
# not grown for 3 s, at most MAX seconds (default 30): re-checks and the
# release of idle descriptors are over. False (and said) if it still grew.
log_quiet() {
	steady "${2:-30}" stat -c %s "$1" && return 0
	info "$1 still grew after ${2:-30} s"
	return 1
}

# steady SECONDS CMD...: until CMD's output stays the same over 3 s (a
# look a second), at most SECONDS; status 1 if it never did
steady() {
	_n=0 _q=0 _s0=-1 _max=$1
	shift
	while [ $_n -lt "$_max" ]; do
		_s=$("$@")
		if [ "$_s" = "$_s0" ]; then _q=$((_q + 1)); else _q=0; fi
		[ $_q -ge 3 ] && return 0
		_s0=$_s
		nap 1
		_n=$((_n + 1))
	done
	return 1
}

# start_udev: systemd-udevd with the image's rules (the host's + the
# project's), then coldplug and settle. Tests that exercise the rules call it.
start_udev() {
	mkdir -p /run/udev
	systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 || return 1
	udevadm trigger --action=add --type=subsystems >/dev/null 2>&1
	udevadm trigger --action=add --type=devices >/dev/null 2>&1
	udevadm settle --timeout=30
}

# Kernel uevents (no udevd needed): uevents_start once, then
#   m=$(uevents_mark); <action>; sleep 1; uevents_since "$m"
# prints one line per event: "ACTION SUBSYSTEM DEVPATH KEY=VALUE..." (DEVPATH
# without its /devices/pci... prefix; SEQNUM and the usual keys left out).
VWC_UEVENTS=/tmp/vwc-uevents.log
uevents_start() {
	udevadm monitor --kernel --property >"$VWC_UEVENTS" 2>&1 &
	sleep 0.5
}
uevents_mark() { command wc -l <"$VWC_UEVENTS"; }
uevents_since() {
	tail -n +"$(($1 + 1))" "$VWC_UEVENTS" | awk '
		/^KERNEL\[/ { ev = 1; a = s = d = k = ""; next }
		ev && /^ACTION=/ { a = substr($0, 8); next }
		ev && /^SUBSYSTEM=/ { s = substr($0, 11); next }
		ev && /^DEVPATH=/ { d = substr($0, 9); sub(/^\/devices\/pci[^\/]*\/[^\/]*\//, "", d); next }
		ev && /^(SEQNUM|MAJOR|MINOR|DEVNAME|DEVTYPE)=/ { next }
		ev && /=/ { k = k " " $0; next }
		ev && /^$/ { print a, s, d k; ev = 0 }
		END { if (ev) print a, s, d k }'
}

# wce-toggle's figures (tests/vm/tools/wce-toggle.c):
#   wct_summary FILE [VIA]: "n=.. p50=.. p99=.. max=.. timeouts=.." of its
#     WCE=1 summary line (VIA: ioctl or uring; default either)
#   wct_field SUMMARY KEY: one figure of it
#   wct_all_within FILE ROUNDS MS: all ROUNDS toggles caught, none timed
#     out, the slowest under MS
wct_summary() { sed -n "s/^WCT summary via=${2:-[a-z]*} wce=1 //p" "$1"; }
wct_field() { echo "$1" | sed -n "s/.*$2=\([0-9.]*\).*/\1/p"; }
wct_all_within() {
	_s=$(wct_summary "$1")
	[ "$(wct_field "$_s" n)" = "$2" ] && [ "$(wct_field "$_s" timeouts)" = 0 ] &&
		awk -v m="$(wct_field "$_s" max)" -v l="$3" 'BEGIN { exit !(m != "" && m < l) }'
}

# The sidecar of a case (liveness: tests/lib/guest.sh):
#   sidecar_start LOG [ARGS...]  nvme-vwc-sync watch ARGS in the background,
#     its output in LOG; sets SC_PID, SC_START (its start time) and SC_LOG
#   sidecar_alive NAME           one check: it is still that process
#   sidecar_stop NAME            one check: it was still that process when
#     SIGTERM was sent, and it ended on it within 5 s with exit 0 (a
#     sidecar that had ended before, even with 0, fails)
sidecar_start() {
	SC_LOG=$1
	shift
	nvme-vwc-sync watch "$@" >"$SC_LOG" 2>&1 &
	SC_PID=$!
	SC_START=$(proc_start "$SC_PID")
}
_sc_ended() { _st=$(proc_stat "$SC_PID"); [ -z "$_st" ] || [ "${_st%% *}" = Z ]; }
sidecar_alive() { check_alive "$1" "$SC_PID" "$SC_START"; }
sidecar_stop() {
	_ss=$(proc_stat "$SC_PID")
	if [ -z "$_ss" ] || [ "${_ss%% *}" = Z ] || [ "${_ss#* }" != "$SC_START" ]; then
		wait "$SC_PID"
		_rc=$?
		fail "$1" "the sidecar (pid $SC_PID) had ended before SIGTERM (exit $_rc): $(tail -n 3 "$SC_LOG" | tr '\n' '|')"
		return 1
	fi
	kill -TERM "$SC_PID"
	if ! wait_for - 5 _sc_ended; then
		fail "$1" "still running 5 s after SIGTERM"
		kill -KILL "$SC_PID"
		wait "$SC_PID"
		return 1
	fi
	wait "$SC_PID"
	_rc=$?
	check_eq "$1" "exit $_rc" "exit 0"
}

# Proof that udevd ran the rules for an event (an opt-out check that
# finds the drive unchanged proves nothing without it):
#   udev_marker_start   a rule of the test's own, read after the project's,
#                       that appends "ACTION KERNEL" to /tmp/udev-marker for
#                       every nvme, block and PCI event udevd runs the
#                       rules for (before start_udev, or with udevd running)
#   udev_marks ACTION KERNEL   how many such lines there are
#   udev_queues ACTION SYSPATH TEXT   udevadm test says the rules queue a
#                       RUN program holding TEXT for ACTION on SYSPATH
udev_marker_start() {
	mkdir -p /run/udev/rules.d
	{
		echo 'SUBSYSTEM=="nvme|block", KERNEL=="nvme*", RUN+="/bin/sh -c '\''echo $env{ACTION} $kernel >>/tmp/udev-marker'\''"'
		echo 'SUBSYSTEM=="pci", RUN+="/bin/sh -c '\''echo $env{ACTION} $kernel >>/tmp/udev-marker'\''"'
	} >/run/udev/rules.d/99-vwc-test-marker.rules
	: >>/tmp/udev-marker
	udevadm control --reload 2>/dev/null || true
}
udev_marks() { grep -c "^$1 $2\$" /tmp/udev-marker; }
udev_queues() { udevadm test --action="$1" "$2" 2>&1 | grep -F "$3" | grep -qv 'Reading\|Parsing'; }

# The run directory made unusable, as an admin's mistake or a full /run
# would (lock-error, soak): a tmpfs mounted on DIR (over what is there;
# `umount DIR` shows it again)
#   rundir_ro DIR     read-only, with a lock file: the writers' lock
#                     cannot be opened for writing (EROFS)
#   rundir_full DIR   no inode left (nr_inodes=1: the directory itself):
#                     the lock file cannot be made (ENOSPC)
rundir_ro() { mount -t tmpfs -o mode=0700 tmpfs "$1" && touch "$1/lock" && chmod 600 "$1/lock" && mount -o remount,ro "$1"; }
rundir_full() { mount -t tmpfs -o mode=0700,nr_inodes=1 tmpfs "$1"; }

# Passthrough I/O with the bytes of a Set Features 06h WCE=1 (soak; the
# io-passthru case sends them with variants of its own): Dataset Management (opcode 09h) with 7 ranges (CDW10 low byte 6)
# and Integral Dataset for Read (CDW11 bit 0), one block each from LBA
# 100000.
#   dsm_wce1_bytes WHO N DEV NSID   N commands through DEV as WHO (root,
#                                   or a user: as_user), io-pt's line
#                                   (ok=N: the drive completed them)
dsm_wce1_bytes() {
	if [ "$1" = root ]; then
		io-pt -n "$2" -o 9 -N "$4" -a 6 -b 1 -r 7 -s 100000 "$3" 2>&1
	else
		as_user "$1" io-pt -n "$2" -o 9 -N "$4" -a 6 -b 1 -r 7 -s 100000 "$3" 2>&1
	fi
}
# tf_follow CTRL NS TF N: N raw toggles of CTRL's volatile write cache
# (Set Features 06h to 1, then back to 0) with the sidecar running with
# --textfile=TF and NS, on CTRL, in write through; each times how long
# after NS's write_cache reads "write back" TF says so (wc-when, both on
# CLOCK_MONOTONIC; the samplers under SCHED_FIFO, WCW_FIFO). Sets TF_OK
# (toggles timed), TF_BACK (toggles after which TF said write through
# again within 5 s), TF_MEAN and TF_WORST (ms) and TF_ALL (each, in
# order).
tf_follow() {
	_l0=$(grep "^nvme_vwc_namespace_write_back{namespace=\"$2\"" "$3")
	_l1="${_l0% *} 1"
	TF_OK=0 TF_BACK=0 TF_WORST=0 TF_ALL='' _sum=0 _i=0
	while [ $_i -lt "$4" ]; do
		# a toggle is timed only from write through in the file: one
		# already saying write back would flip before the toggle
		if ! grep -qx "${_l0% *} 0" "$3"; then
			TF_ALL="$TF_ALL x"
			nvme set-feature "/dev/$1" --feature-id=6 --value=0 >/dev/null 2>&1
			wait_for - 5 grep -qx "${_l0% *} 0" "$3"
			_i=$((_i + 1))
			continue
		fi
		WCW_FIFO=1 wc-when "$2" back 5000 >/tmp/tf-w &
		_p1=$!
		WCW_FIFO=1 wc-when "$3" "$_l1" 5000 >/tmp/tf-f &
		_p2=$!
		sleep 0.05
		nvme set-feature "/dev/$1" --feature-id=6 --value=1 >/dev/null 2>&1
		wait "$_p1"
		wait "$_p2"
		_d=$(awk -F= '/flip/ { t[FILENAME] = $2 } END { if (t["/tmp/tf-w"] && t["/tmp/tf-f"]) printf "%.0f", (t["/tmp/tf-f"] - t["/tmp/tf-w"]) * 1000; else print "x" }' /tmp/tf-w /tmp/tf-f)
		if [ "$_d" != x ]; then
			TF_OK=$((TF_OK + 1)) _sum=$((_sum + _d))
			[ "$_d" -gt "$TF_WORST" ] && TF_WORST=$_d
		fi
		TF_ALL="$TF_ALL $_d"
		nvme set-feature "/dev/$1" --feature-id=6 --value=0 >/dev/null 2>&1
		wait_for - 5 grep -qx "${_l0% *} 0" "$3" && TF_BACK=$((TF_BACK + 1))
		_i=$((_i + 1))
	done
	TF_MEAN=$((_sum / (TF_OK > 0 ? TF_OK : 1)))
}
# ns_nsid NS: the namespace ID of block device NS
ns_nsid() { cat "/sys/block/$1/nsid" 2>/dev/null || cat "/sys/block/$1/device/nsid" 2>/dev/null || echo 1; }
# bench_case CASE KIND: run VM case CASE (/vwc/cases/CASE.sh), its lines
# as they come, each INFO line and each check of KIND (PASS or FAIL) also
# as a BENCH line (bench/run.sh saves those)
bench_case() {
	sh "/vwc/cases/$1.sh" | while IFS= read -r _l; do
		echo "$_l"
		case $_l in
		VWC-INFO:* | "VWC-TEST: $2"*) echo "BENCH: ${_l#VWC-*: }" ;;
		esac
	done
}

# Two guests joined by a virtual network (run-vm.sh "# vm: peer"):
#   cmdline_arg KEY DEFAULT   the value of KEY=... on the kernel's command
#                             line (-a and "# vm: append" reach both)
#   net_up ADDR...            the network card up with each ADDR/24, and lo
cmdline_arg() {
	_v=$2
	for _a in $(cat /proc/cmdline); do
		case $_a in "$1="*) _v=${_a#*=} ;; esac
	done
	echo "$_v"
}
net_up() {
	_if=''
	for _n in /sys/class/net/*; do
		[ "${_n##*/}" = lo ] || { _if=${_n##*/}; break; }
	done
	[ -n "$_if" ] || { info "net_up: no network card"; return 1; }
	ip link set lo up
	ip link set "$_if" up
	for _a in "$@"; do ip addr add "$_a/24" dev "$_if" || return 1; done
}
