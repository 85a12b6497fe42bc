#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The mark that makes the rules leave a namespace add to the sidecar
# (TEST!="<rundir>/sidecar-active") is removed by the service however the
# sidecar ends: its own stop removes it, and ExecStopPost removes what a
# SIGKILL, the OOM killer or a crash left behind (with the service then
# stopped for good, the mark would have kept every later namespace add
# from the rule until the next boot). TAP.
# Usage: check-handoff.sh RULES SERVICE (both as built)
rules=${1:?usage: check-handoff.sh RULES SERVICE}
service=${2:?usage: check-handoff.sh RULES SERVICE}
n=0 bad=0
t() { # NAME COMMAND...
	name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		bad=1
	fi
}
mark=$(grep -o 'TEST!="[^"]*sidecar-active"' "$rules" | cut -d'"' -f2)
t "the rules test one mark of the sidecar ($mark)" \
	[ "$(printf '%s\n' "$mark" | grep -c .)" = 1 ]
stop=$(sed -n 's/^ExecStopPost=-\{0,1\}//p' "$service")
removes() { [ -n "$mark" ] && printf '%s\n' "$stop" | grep -qxF "/bin/rm -f $mark"; }
t "the service's ExecStopPost removes that mark" removes
t "no ExecStopPost fails the unit (its failure is ignored)" \
	grep -q '^ExecStopPost=-/' "$service"
echo "1..$n"
exit $bad
