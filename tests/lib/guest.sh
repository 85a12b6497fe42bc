# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
#
# The checks every guest test uses, in both guest kinds: the busybox
# guests of tests/vm (as /vwc/lib/guest.sh, through tests/vm/guest/lib.sh)
# and the booted Debian systems of tests/system (as /vwc/lib/guest.sh on
# the test disk, through tests/system/guest/test.sh). POSIX sh: busybox's
# ash and bash both run it. The host side reads the lines with
# tests/lib/qemu.sh:
#   VWC-TEST: PLAN <n>             (plan: the checks this run will print)
#   VWC-TEST: PASS <name>          (PASS [fact] <name>: a harness fact)
#   VWC-TEST: FAIL <name>: <detail>
#   VWC-TEST: SKIP <name>: <why>
#   VWC-INFO: <free text>          (facts, printed by the host)
#   VWC-HOST: <monitor command>    (the host sends it to the QEMU monitor)
#   VWC-TEST: DONE                 (call finish at the end; without it the
#                                   host counts the run as a FAIL)
# VWC_TEST_PREFIX, if set, goes before every name (the system guest puts
# its suite there); VWC_HOST_PAUSE seconds are slept after each host line
# (default 0).
#
# The plan. Every case declares how many checks it prints (each PASS, FAIL
# or SKIP line is one check) with "plan N" before its first check; the
# host sums a run's PLAN lines and counts a run whose checks differ from
# its plan as one failure ("plan: N planned, M ran"), so that a check that
# never ran (behind an && that stopped, in a loop that was empty, after an
# early exit) is seen; a run that declares no plan fails the same way.
# Where the number depends on the kernel or the machine, the plan is
# computed at run time from that fact, never from the checks that ran:
#   plan 12
#   if kernel_ge 6 8; then plan 3; <three checks>; fi
#   plan $((2 * n))      # n from the case's own "# vm:" machine
# A loop whose rounds print nothing (wait_for -, silent polls) gets a check
# of its own that it ran as often as it should (check_eq on a count).
#
# Facts. A check of the kernel, QEMU, the fixtures or the harness rather
# than of the product runs as "fact CHECK ARGS...": its line carries
# "[fact] " before the name, and the summaries count it apart from the
# product's checks (facts_case: every check of the case). A failed fact is
# still a failure.
#   fact check_eq "QEMU reports WCE=0 on nv0" "$(get_wce nvme0)" 0
#
# Liveness. A check that reads a process's CPU time, descriptors or idle
# behaviour first proves the process is alive and the same one
# (check_alive, with the start time proc_start gave after it started): a
# dead process has no CPU time and no descriptors, and idles perfectly.

VWC_FAILED=0

_vwc_kind=''
plan() { echo "VWC-TEST: PLAN $1"; }
pass() { echo "VWC-TEST: PASS ${_vwc_kind}${VWC_TEST_PREFIX:-}$1"; }
fail() {
	echo "VWC-TEST: FAIL ${_vwc_kind}${VWC_TEST_PREFIX:-}$1: ${2:-}"
	VWC_FAILED=$((VWC_FAILED + 1))
}
skip() { echo "VWC-TEST: SKIP ${_vwc_kind}${VWC_TEST_PREFIX:-}$1: $2"; }
# fact CHECK ARGS...: run CHECK (pass, fail, skip, check_eq, check_cmd,
# wait_for, or a function of the case that calls them) with its lines
# marked as a harness or fixture fact; CHECK's status
fact() {
	_vwc_kind='[fact] '
	"$@"
	_vwc_fr=$?
	_vwc_kind=$_vwc_case_kind
	return $_vwc_fr
}
# facts_case: every check from here on is a fact (a case that proves the
# kernel's, QEMU's or the fixtures' behaviour the other cases build on)
_vwc_case_kind=''
facts_case() { _vwc_case_kind='[fact] ' _vwc_kind='[fact] '; }
info() { echo "VWC-INFO: ${VWC_TEST_PREFIX:-}$*"; }
finish() { echo "VWC-TEST: DONE"; }

# host CMD: ask the host to send CMD to the QEMU monitor (HMP), e.g.
#   host "qom-set /machine/peripheral/nv0 smart_critical_warning 16"
# {dir} in CMD becomes the run's host directory (spare images live there).
# The host acts asynchronously: poll for the effect with wait_for.
host() {
	echo "VWC-HOST: $*"
	[ "${VWC_HOST_PAUSE:-0}" = 0 ] || sleep "$VWC_HOST_PAUSE"
}

# check_eq NAME ACTUAL EXPECTED
check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "got '$2', expected '$3'"
		return 1
	fi
}

# check_cmd NAME CMD...: PASS when CMD exits 0; the FAIL detail is its output.
check_cmd() {
	_name=$1
	shift
	if _out=$("$@" 2>&1); then
		pass "$_name"
	else
		fail "$_name" "'$*' failed ($?): $(echo "$_out" | tail -n 3 | tr '\n' ' ')"
		return 1
	fi
}

# nap SECONDS: sleep without starting a process: a read with a timeout
# on a FIFO that nobody writes (root's own, in /run; opened read-write
# for the read alone, so that it never sees end of file and no command
# inherits it). Under emulation a process start costs tens of
# milliseconds of the guest's CPU: a poll every 0.1 s that forked
# sleep(1) took 13% of a core, this one 3% (QEMU CPU of a 30 s poll beside
# a 30 s sleep(1), 7.2 guest). Both shells (busybox's ash, bash) read
# fractions of a second. sleep(1) it is in a shell whose read has no -t
# or no fractions (dash: the probe fails with 2, not 1 for the end of
# file), for a user other than the FIFO's owner, and from the first read
# that ends early (a trapped signal, a line written to the FIFO, anything
# but the FIFO at its path): by /proc/uptime, read without a process.
_nap_fifo=/run/vwc-test-nap
_nap_ok=
# _nap_cs SECONDS: SECONDS ("0.1", "2", "0.05") in hundredths, in _nap_n
_nap_cs() {
	case $1 in
	*.*) _nap_f=${1#*.}00 _nap_n=${1%.*}
		_nap_f=${_nap_f%"${_nap_f#??}"}
		_nap_n=$((${_nap_n:-0} * 100 + 1$_nap_f - 100)) ;;
	*) _nap_n=$(($1 * 100)) ;;
	esac
}
# uptime_cs: /proc/uptime in hundredths of a second, in UPTIME_CS (read
# without a process, for loops that run on the clock)
uptime_cs() {
	read -r UPTIME_CS _ </proc/uptime
	UPTIME_CS=$((${UPTIME_CS%.*} * 100 + 1${UPTIME_CS#*.} - 100))
}
nap() {
	if [ -z "$_nap_ok" ]; then
		_nap_ok=no _nap_r=0
		(read -r -t 0.01 _ </dev/null) 2>/dev/null || _nap_r=$?
		if [ "$_nap_r" = 1 ] && [ -r /proc/uptime ] &&
			{ [ -p "$_nap_fifo" ] || mkfifo -m 600 "$_nap_fifo" 2>/dev/null ||
				[ -p "$_nap_fifo" ]; }; then
			_nap_ok=yes
		fi
	fi
	if [ "$_nap_ok" = yes ] && [ -p "$_nap_fifo" ] && [ -O "$_nap_fifo" ]; then
		_nap_cs "$1"
		uptime_cs
		_nap_t=$((UPTIME_CS + _nap_n / 2))
		read -r -t "$1" _ <>"$_nap_fifo" 2>/dev/null || :
		uptime_cs
		[ "$UPTIME_CS" -ge "$_nap_t" ] && return 0
		_nap_ok=no
	fi
	sleep "$1"
}

# wait_for NAME TIMEOUT_S CMD...: poll CMD every 0.1 s until it succeeds.
# NAME "-" waits silently (status only); otherwise PASS or FAIL is printed.
wait_for() {
	_name=$1
	_ticks=$(($2 * 10))
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		_ticks=$((_ticks - 1))
		if [ "$_ticks" -le 0 ]; then
			[ "$_name" = - ] || fail "$_name" "timed out waiting for: $*"
			return 1
		fi
		nap 0.1
	done
	[ "$_name" = - ] || pass "$_name"
	return 0
}

# as_user USER CMD...: run CMD as USER (name or uid) with USER's group and no
# supplementary groups: the unprivileged users of the cases about
# permissions are nobody (65534) and vwcuser (1000). util-linux's setpriv
# by its path: busybox's shell prefers its own applet of the same name.
as_user() {
	_u=$1
	shift
	/usr/bin/setpriv --reuid="$(id -u "$_u")" --regid="$(id -g "$_u")" --clear-groups "$@"
}

# proc_stat PID: "STATE START" of /proc/PID/stat (fields 3 and 22: the
# state letter and the start time in clock ticks after boot); empty when
# there is no such process. The command name (field 2) may hold spaces.
proc_stat() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1, $20 }'; }
# proc_start PID: its start time (field 22), to tell it from a later
# process with the same pid
proc_start() { _ps=$(proc_stat "$1"); echo "${_ps#* }"; }
# proc_cpu PID: its user + system clock ticks (fields 14 and 15)
proc_cpu() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'; }
# proc_fds PID: its open descriptors
proc_fds() { ls "/proc/$1/fd" 2>/dev/null | command wc -l; }

# check_alive NAME PID START: PASS when PID is running (kill -0 reaches
# it, its state is neither zombie nor dead) and is the process that
# started at START (proc_start's figure after it started)
check_alive() {
	_ca=$(proc_stat "$2")
	case $_ca in
	'' | Z* | X* | x*)
		fail "$1" "pid $2 is not running (state '${_ca%% *}')"
		return 1 ;;
	esac
	if ! kill -0 "$2" 2>/dev/null; then
		fail "$1" "kill -0 $2 failed"
		return 1
	fi
	check_eq "$1" "pid $2 started at ${_ca#* }" "pid $2 started at $3"
}
