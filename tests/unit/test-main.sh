#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The standalone binary's entry (src/main.c): usage and its exit status,
# help in its three spellings, the version, a device or an option meaning
# "sync", an unknown command. TAP.
# Usage: test-main.sh BINARY VERSION
B=${1:?usage: test-main.sh BINARY VERSION}
V=${2:?usage: test-main.sh BINARY VERSION}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export NVME_VWC_SYNC_RUNDIR="$T/run"
n=0 failed=0
t() { # NAME COMMAND...: ok when COMMAND succeeds
	_name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $_name"
	else
		echo "not ok $n - $_name"
		failed=1
	fi
}
run() { # ARGS...: exit status in $rc, output in $T/out, $T/err
	"$B" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

run
t "no arguments: exit 2 (usage)" test "$rc" = 2
t "usage on stderr, nothing on stdout" grep -q '^Usage: nvme-vwc-sync <command>' "$T/err"
t "stdout empty" test ! -s "$T/out"
t "usage lists the commands" grep -q '^  quirks ' "$T/err"
for h in --help -h help; do
	run "$h"
	t "$h: exit 0" test "$rc" = 0
	t "$h: usage on stdout" grep -q '^Usage: nvme-vwc-sync <command>' "$T/out"
done
run --version
t "--version: exit 0" test "$rc" = 0
t "--version: name and version" test "$(cat "$T/out")" = "nvme-vwc-sync $V"
run no-such-verb
t "unknown command: exit 2" test "$rc" = 2
t "unknown command named" grep -q "unknown command 'no-such-verb'" "$T/err"
run /dev/nvme-vwc-no-such
t "a device means sync: exit 1" test "$rc" = 1
t "the device and the cause named" grep -q '/dev/nvme-vwc-no-such: No such file or directory' "$T/err"
run nvme-vwc-no-such0n1
t "an nvme name means sync: exit 1" test "$rc" = 1
run audit --help
t "a command's --help: exit 0" test "$rc" = 0
t "the command's usage" grep -q '^Usage: nvme-vwc-sync audit' "$T/out"
# Options: a missing value is named as such; an option of another
# command is refused naming the command; each command's own options
# (verbs.h) are still taken (--help last: parsed up to it, then usage).
run sync -o
t "sync -o: exit 2" test "$rc" = 2
t "sync -o: the option needs a value" grep -q "sync: option '-o' needs a value" "$T/err"
run sync -q --config
t "sync --config: the long option needs a value" grep -q "sync: option '--config' needs a value" "$T/err"
run audit -vo
t "audit -vo: -o named, not the cluster" grep -q "audit: option '-o' needs a value" "$T/err"
run sync --bogus
t "an unknown option: exit 2, named" sh -c "[ $rc = 2 ] && grep -q \"sync: unknown option '--bogus'\" '$T/err'"
run sync --all=yes
t "--all=yes: takes no value" grep -q "sync: option '--all' takes no value" "$T/err"
for c in "sync --interval=5" "sync --textfile=/x" "audit --dry-run" "set-cache --all" \
	"restore --count=3" "watch --dry-run" "watch -o json" "quirks --all" \
	"flush-latency --all" "irq-stat --config=/x"; do
	# shellcheck disable=SC2086 # command and option
	run $c --help
	v=${c%% *} o=${c#* }
	o=${o%%=*}
	o=${o%% *}
	t "$c: refused, exit 2" test "$rc" = 2
	t "$c: the option and the command named" grep -q "$v: option '$o' does not apply to $v" "$T/err"
done
for c in "sync --all --dry-run -o json --quiet --config=/x --keep-restored -v" \
	"audit --all -o prometheus --config=/x" "set-cache --dry-run -o json -q --config=/x" \
	"restore --all --dry-run -q --config=/x" "watch --interval=2 --textfile=/x --config=/x -vv" \
	"quirks --dry-run --quiet --keep-restored --deactivate-lvm --verbose --config=/x" \
	"flush-latency --count=5 -o json" "irq-stat --interval=2 -o json"; do
	# shellcheck disable=SC2086
	run $c --help
	t "${c%% *}'s own options taken: $c" test "$rc" = 0
done
echo "1..$n"
exit $failed
