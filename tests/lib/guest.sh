# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
#
# The checks every guest test uses, in both guest kinds: the busybox
# guests of tests/vm (as /vwc/lib/guest.sh, through tests/vm/guest/lib.sh)
# and the booted Debian systems of tests/system (as /vwc/lib/guest.sh on
# the test disk, through tests/system/guest/test.sh). POSIX sh: busybox's
# ash and bash both run it. The host side reads the lines with
# tests/lib/qemu.sh:
#   VWC-TEST: PASS <name>
#   VWC-TEST: FAIL <name>: <detail>
#   VWC-TEST: SKIP <name>: <why>
#   VWC-INFO: <free text>          (facts, printed by the host)
#   VWC-HOST: <monitor command>    (the host sends it to the QEMU monitor)
#   VWC-TEST: DONE                 (call finish at the end; without it the
#                                   host counts the run as a FAIL)
# VWC_TEST_PREFIX, if set, goes before every name (the system guest puts
# its suite there); VWC_HOST_PAUSE seconds are slept after each host line
# (default 0).

VWC_FAILED=0

pass() { echo "VWC-TEST: PASS ${VWC_TEST_PREFIX:-}$1"; }
fail() {
	echo "VWC-TEST: FAIL ${VWC_TEST_PREFIX:-}$1: ${2:-}"
	VWC_FAILED=$((VWC_FAILED + 1))
}
skip() { echo "VWC-TEST: SKIP ${VWC_TEST_PREFIX:-}$1: $2"; }
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
		sleep 0.1
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
