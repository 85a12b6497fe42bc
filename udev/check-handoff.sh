#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The marks that make the rules leave events to the sidecar. Its own mark
# (TEST!="<rundir>/sidecar-active") leaves it a namespace's add; a
# controller's add and change are left to it only where, besides, no
# <rundir>/write-through exists (the mark blk.c makes before any write of
# write through): otherwise they can call for write back, which never
# waits on another process's health. That mark, never removed, is tested
# first and alone: a sidecar that stops between two tests of its own mark
# must not make both rules pass over an event. The sidecar's mark is
# removed by the service however the sidecar ends: its own stop removes
# it, and ExecStopPost removes what a SIGKILL, the OOM killer or a crash
# left behind (a link that leads nowhere by then, but a link all the
# same). TAP.
# Usage: check-handoff.sh RULES SERVICE BLK_H (as built; blk.h: the name
# of the write-through mark)
rules=${1:?usage: check-handoff.sh RULES SERVICE BLK_H}
service=${2:?usage: check-handoff.sh RULES SERVICE BLK_H}
blk_h=${3:?usage: check-handoff.sh RULES SERVICE BLK_H}
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
wt_name=$(sed -n 's/^#define VWC_WT_MARK "\(.*\)"$/\1/p' "$blk_h")
wt_mark=${mark%/*}/$wt_name
t "blk.c's write-through mark ($wt_name) is in the rules, beside the sidecar's" \
	grep -qF "TEST==\"$wt_mark\"" "$rules"
# the tests of one rule, one a line, sorted
tests_of() { grep -o 'TEST[!=]="[^"]*"' | sort; }
# has_rule TESTS: a controller's sync rule tests exactly TESTS
has_rule() { ctrl_sync | while read -r l; do
	[ "$(printf '%s\n' "$l" | tests_of)" = "$(printf '%s\n' "$@" | sort)" ] && echo y; done | grep -q y; }
t "a controller's add and change: the rule's whenever the write-through mark exists (tested alone)" \
	has_rule "TEST==\"$wt_mark\""
t "... and whenever the sidecar does not run" \
	has_rule "TEST!=\"$wt_mark\"" "TEST!=\"$mark\""
# no other condition on them: a third rule, or a test added to one, would
# leave an event to the sidecar where write back may be at stake
only_two() { [ "$(ctrl_sync | grep -c .)" = 2 ]; }
t "no other rule runs sync for a controller" only_two
stop=$(sed -n 's/^ExecStopPost=-\{0,1\}//p' "$service")
removes() { [ -n "$mark" ] && printf '%s\n' "$stop" | grep -qxF "/bin/rm -f $mark"; }
t "the service's ExecStopPost removes that mark" removes
t "no ExecStopPost fails the unit (its failure is ignored)" \
	grep -q '^ExecStopPost=-/' "$service"
echo "1..$n"
exit $bad
