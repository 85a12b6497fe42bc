# SPDX-License-Identifier: GPL-2.0-or-later
# TAP for the shell unit tests (tests/unit/test-*.sh), sourced:
#   t NAME COMMAND...   one check, ok when COMMAND succeeds; on failure
#                       $T/out (the last command's output, if the test
#                       keeps it there) follows as comments
#   tap_done            the plan line, and the exit status
# Needs $T, the test's scratch directory.
n=0 failed=0
t() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		sed 's/^/# /' "$T/out" 2>/dev/null
		failed=1
	fi
}
tap_done() {
	echo "1..$n"
	exit "$failed"
}
