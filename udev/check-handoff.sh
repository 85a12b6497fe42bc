#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The mark that makes the rules leave a namespace's add to the sidecar
# (TEST!="<rundir>/sidecar-active") is tested by that rule and by no
# controller's (their events can call for write back), and is removed by the service however the
# sidecar ends: its own stop removes it, and ExecStopPost removes what a
# SIGKILL, the OOM killer or a crash left behind (a link that leads
# nowhere by then, but a link all the same). TAP.
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
mark=$(grep -o 'TEST!="[^"]*sidecar-active"' "$rules" | cut -d'"' -f2 | sort -u)
t "the rules test one mark of the sidecar ($mark)" \
	[ "$(printf '%s\n' "$mark" | grep -c .)" = 1 ]
# a namespace's add is the sidecar's while it runs; a controller's add and
# change never are (they can call for write back: never left to another
# process's health). Logical lines: a rule continued with backslashes is one.
rule_lines() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$rules" | grep -v '^#'; }
guarded() { rule_lines | grep "$1" | grep 'RUN+="[^"]* sync ' | grep -qF "TEST!=\"$mark\""; }
t "a namespace's add: the sidecar's while it runs" \
	guarded 'SUBSYSTEM=="block"'
ctrl_sync() { rule_lines | grep 'SUBSYSTEM=="nvme", KERNEL=="nvme\[0-9\]\*", ACTION=="add|change"' | grep 'RUN+="[^"]* sync '; }
always() { [ -n "$(ctrl_sync)" ] && ! ctrl_sync | grep -qF "$mark"; }
t "a controller's add and change: the rule's always" always
stop=$(sed -n 's/^ExecStopPost=-\{0,1\}//p' "$service")
removes() { [ -n "$mark" ] && printf '%s\n' "$stop" | grep -qxF "/bin/rm -f $mark"; }
t "the service's ExecStopPost removes that mark" removes
t "no ExecStopPost fails the unit (its failure is ignored)" \
	grep -q '^ExecStopPost=-/' "$service"
echo "1..$n"
exit $bad
