#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Mutants: builds of the code with the safety invariant broken on purpose,
# one way at a time (tests/mutants/*.mut), each of which the tests must
# catch. A mutant that every test passes is a hole in the tests.
#
# Usage: tests/mutants/run.sh [--all] [NAME...]
#   (default)  each mutant against the checks its "caught-by:" line names:
#              unit:TEST (a meson test) and vm:CASE@KERNEL (a VM case on
#              one kernel); it is caught when at least one of them fails,
#              and every one named must fail (so that the list says what
#              really catches it)
#   --all      each mutant against every unit test and every VM case on
#              the VM suite's kernels, for the table of what catches what
#              (bench/results/mutants.txt); slow: a VM suite per mutant
#   NAME...    only these mutants
#
# A .mut file: "# " comment lines (the first says what the mutant breaks),
# then "file: PATH", "find: LINE", "replace: LINE" (\n and \t in the
# replacement stand for a newline and a tab; find must match exactly one
# whole line of PATH, else the mutant is reported as stale and counts as
# a failure: the code moved, the mutant must follow it), optionally
# repeated, and "caught-by: CHECK...".
#
# The tracked files are copied to a work tree (uncommitted changes to them
# included), built once with the options of tests/check's build (the
# nvme binary with the plugin: Debian's nvme-cli source), and each mutant
# is applied, built (ninja recompiles what it touched), installed and
# tested, then undone; a VM case stops at its first failure (VWC_FAIL_FAST,
# tests/lib/qemu.sh). Prints a table and last
# "mutants: N passed, N failed" (passed: caught).
# Environment: VWC_MUTANT_DIR (work directory, default build/mutants).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
WORK=${VWC_MUTANT_DIR:-$REPO/build/mutants}

all=0
names=()
for a in "$@"; do
	case $a in
	--all) all=1 ;;
	-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "mutants: unknown option '$a'" >&2; exit 2 ;;
	*) names+=("$a") ;;
	esac
done
if [ "${#names[@]}" -eq 0 ]; then
	for f in "$HERE"/*.mut; do names+=("$(basename "$f" .mut)"); done
fi
for n in "${names[@]}"; do
	[ -f "$HERE/$n.mut" ] || { echo "mutants: no mutant '$n' (tests/mutants/$n.mut)" >&2; exit 2; }
done

# --- the work tree and its build ---
src=$WORK/src
build=$WORK/build
mkdir -p "$src"
(cd "$REPO" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$src"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$src" -Dnvme_cli_source="$(bash "$REPO/scripts/fetch-nvme-cli.sh")" >"$WORK/setup.log" 2>&1 ||
		{ tail -n 20 "$WORK/setup.log"; echo "mutants: 0 passed, 1 failed"; exit 1; }
fi
if ! meson compile -C "$build" >"$WORK/build.log" 2>&1; then
	tail -n 20 "$WORK/build.log"
	echo "mutants: the unmodified copy does not build"
	echo "mutants: 0 passed, 1 failed"
	exit 1
fi

# mutate FILE.mut apply|undo: apply its edits to the work tree, or put the
# files back. Prints "stale: ..." and fails when a find does not match one
# line.
mutate() {
	python3 - "$1" "$2" "$src" <<'PY'
import os, shutil, sys
mut, how, src = sys.argv[1], sys.argv[2], sys.argv[3]
edits, cur = [], {}
for line in open(mut):
    line = line.rstrip('\n')
    for key in ('file', 'find', 'replace'):
        if line.startswith(key + ': '):
            cur[key] = line[len(key) + 2:]
            if key == 'replace':
                edits.append(dict(cur))
                cur = {k: v for k, v in cur.items() if k == 'file'}
files = sorted({e['file'] for e in edits})
if how == 'undo':
    for f in files:
        p = os.path.join(src, f)
        if os.path.exists(p + '.orig'):
            shutil.move(p + '.orig', p)
            os.utime(p)     # newer than the mutant's objects: rebuilt
    sys.exit(0)
if not edits:
    print('stale: no find/replace in', mut)
    sys.exit(1)
for f in files:
    p = os.path.join(src, f)
    shutil.copy2(p, p + '.orig')
for e in edits:
    p = os.path.join(src, e['file'])
    lines = open(p).read().split('\n')
    hits = [i for i, l in enumerate(lines) if l == e['find']]
    if len(hits) != 1:
        print('stale: %s: %d lines match %r' % (e['file'], len(hits), e['find']))
        sys.exit(1)
    rep = e['replace'].replace('\\n', '\n').replace('\\t', '\t')
    lines[hits[0]] = rep
    open(p, 'w').write('\n'.join(lines))
PY
}

# the VM suite's default kernels, for --all
vm_kernels="6.1 6.12 7.2"

passed=0 failed=0
table=()
for n in "${names[@]}"; do
	mut=$HERE/$n.mut
	what=$(sed -n 's/^# //p' "$mut" | head -n 1)
	checks=$(sed -n 's/^caught-by: *//p' "$mut")
	echo
	echo "=== mutant $n: $what"
	if ! out=$(mutate "$mut" apply); then
		echo "mutants: $n: $out"
		mutate "$mut" undo
		table+=("$n|stale|${out}")
		failed=$((failed + 1))
		continue
	fi
	dest=$WORK/destdir-$n
	rm -rf "$dest"
	if ! meson compile -C "$build" >"$WORK/$n.build.log" 2>&1 ||
		! DESTDIR=$dest meson install -C "$build" --quiet >>"$WORK/$n.build.log" 2>&1; then
		tail -n 15 "$WORK/$n.build.log"
		mutate "$mut" undo
		table+=("$n|does not build|see $WORK/$n.build.log")
		failed=$((failed + 1))
		continue
	fi
	caught=() missed=()
	if [ "$all" = 1 ]; then
		# every unit test, every VM case on every default kernel
		meson test -C "$build" --no-rebuild >"$WORK/$n.unit.log" 2>&1 || true
		while read -r t; do caught+=("unit:$t"); done < <(sed -n 's/^ *[0-9]*\/[0-9]* [^ ]* \/ \([^ ]*\) *FAIL.*/\1/p' "$WORK/$n.unit.log")
		VWC_LOG_DIR=$WORK/vm-$n VWC_KERNELS=$vm_kernels bash "$REPO/tests/vm/run-suite.sh" "$dest" >"$WORK/$n.vm.log" 2>&1 || true
		while read -r c; do caught+=("vm:$c"); done < <(sed -n 's/^\[\([^]]*\)\] \([^:]*\): FAIL .*/\2@\1/p' "$WORK/$n.vm.log" | sort -u)
	else
		for c in $checks; do
			case $c in
			unit:*)
				if meson test -C "$build" --no-rebuild "${c#unit:}" >"$WORK/$n.${c#unit:}.log" 2>&1; then
					missed+=("$c")
				else
					caught+=("$c")
				fi
				;;
			vm:*@*)
				k=${c##*@} case_=${c#vm:}
				case_=${case_%@*}
				VWC_LOG_DIR=$WORK/vm-$n VWC_KERNELS=$k VWC_CASES=$case_ VWC_FAIL_FAST=1 \
					bash "$REPO/tests/vm/run-suite.sh" "$dest" >"$WORK/$n.$case_.log" 2>&1 || true
				if grep -qE '^vm: [0-9]+ passed, [1-9][0-9]* failed' "$WORK/$n.$case_.log"; then
					caught+=("$c")
					grep -m 3 ': FAIL ' "$WORK/$n.$case_.log" | sed "s/^/  $n: /" || true
				else
					missed+=("$c")
				fi
				;;
			*) missed+=("$c (not a check)") ;;
			esac
		done
	fi
	mutate "$mut" undo
	if [ "${#caught[@]}" -gt 0 ] && [ "${#missed[@]}" -eq 0 ]; then
		passed=$((passed + 1))
		table+=("$n|caught|${caught[*]}")
		echo "mutants: PASS $n caught by ${caught[*]}"
	else
		failed=$((failed + 1))
		table+=("$n|${#caught[@]} caught, ${#missed[@]} missed|caught: ${caught[*]:-none}; missed: ${missed[*]:-none}")
		echo "mutants: FAIL $n: caught by ${caught[*]:-nothing}; not by ${missed[*]:--}"
	fi
done
# the copy's own build back as it was, for the next run
meson compile -C "$build" >/dev/null 2>&1 || true

echo
printf '%-30s %-22s %s\n' mutant verdict "checks that failed"
for row in "${table[@]}"; do
	IFS='|' read -r a b c <<<"$row"
	printf '%-30s %-22s %s\n' "$a" "$b" "$c"
done
echo "mutants: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
