#!/bin/bash
# Line coverage of src/ from the gcda files of a coverage build (unit
# tests ran on the host) merged with those the guests sent (serial logs
# with VWC-GCOV lines, see guest-after.sh). Prints one line per file,
# the total, and the functions never entered.
# Usage: report.sh BUILD [VM-LOG...]
# Environment: VWC_COV_GOAL (percent, default 0: report only).
# Last line: "coverage: N passed, N failed" (1 passed: the report was made
# and the total reaches the goal).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
BUILD=$(cd "${1:?usage: report.sh BUILD [VM-LOG...]}" && pwd)
shift
GOAL=${VWC_COV_GOAL:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. the host's counters (unit tests), relative to the build dir
mkdir -p "$work/acc"
(cd "$BUILD" && find . -name '*.gcda' -path './src/*' -print0 | cpio -0pdm --quiet "$work/acc")
# 2. each guest's counters, merged in
guests=0
for log in "$@"; do
	[ -f "$log" ] || continue
	grep -aq 'VWC-GCOV-END' "$log" || continue
	g=$work/g$guests
	mkdir -p "$g"
	if ! grep -a 'VWC-GCOV: ' "$log" | sed 's/.*VWC-GCOV: //; s/\r$//' |
		base64 -d 2>/dev/null | tar -xzf - -C "$g" 2>/dev/null; then
		echo "coverage: warning: $log: the guest's data did not decode, left out"
		continue
	fi
	src=$g$BUILD
	[ -d "$src/src" ] || { echo "coverage: warning: $log: no data for $BUILD"; continue; }
	if [ -z "$(find "$work/acc" -name '*.gcda' -print -quit)" ]; then
		# nothing yet (no unit tests ran): the first guest's counters
		cp -a "$src/." "$work/acc/"
	elif gcov-tool merge "$src" "$work/acc" -o "$work/acc.new" >/dev/null 2>&1; then
		rm -rf "$work/acc" && mv "$work/acc.new" "$work/acc"
	else
		echo "coverage: warning: $log: gcov-tool merge failed, left out"
		continue
	fi
	guests=$((guests + 1))
done
echo "coverage: unit tests + $guests guest(s)"

# 3. gcov per object directory of src/ (notes from the build, counters merged)
(cd "$BUILD" && find . -name '*.gcno' -path './src/*' -print0 | cpio -0pdm --quiet "$work/acc" 2>/dev/null)
out=$work/gcov.txt
: >"$out"
# one object at a time: its functions (gcov -f), then its files
for g in $(cd "$work/acc" && find . -name '*.gcno' -path './src/*' | sort); do
	echo "Object '$(basename "$g" .gcno)'" >>"$out"
	(cd "$BUILD" && gcov -n -f -o "$work/acc/$(dirname "$g")" "$work/acc/$g") >>"$out" 2>/dev/null
done
# "Function 'f'" or "File 'path'", then "Lines executed:P% of N"
awk '
	/^Object / { obj = $2; gsub(/'\''/, "", obj); next }
	/^Function / { fn = $2; gsub(/'\''/, "", fn); file = ""; next }
	/^File / { file = $2; gsub(/'\''/, "", file); fn = ""; next }
	/^Lines executed:/ {
		split($2, a, "%"); pct = substr(a[1], 10); n = $4
		if (fn != "") {
			if (pct + 0 == 0) never[obj] = never[obj] " " fn
			fn = ""
			next
		}
		if (file == "") next
		sub(".*/src/", "src/", file)
		if (file !~ /^src\/([^\/]*\/)?[^\/]*\.c$/ || seen[file]++) next
		cov = int(pct * n / 100 + 0.5)
		printf "coverage: %-34s %6.1f%% of %5d lines\n", file, pct, n
		tl += n; tc += cov
	}
	END {
		if (tl) printf "coverage: TOTAL src/ %.1f%% (%d of %d lines)\n", 100 * tc / tl, tc, tl
		for (o in never) printf "coverage: never entered in %s:%s\n", o, never[o] | "sort"
	}
' "$out" >"$work/all.txt"
grep -v -e TOTAL -e 'never entered' "$work/all.txt" | sort -k2,2 >"$work/report.txt"
total=$(grep TOTAL "$work/all.txt")
echo "$total" >>"$work/report.txt"
cat "$work/report.txt"
grep 'never entered' "$work/all.txt" | sort
cp "$work/report.txt" "$BUILD/coverage.txt" 2>/dev/null || true
pct=$(sed -n 's/.*TOTAL src\/ \([0-9.]*\)%.*/\1/p' <<<"$total")
if [ -z "$pct" ]; then
	echo "coverage: 0 passed, 1 failed"
	exit 1
fi
if awk -v p="$pct" -v g="$GOAL" 'BEGIN { exit !(p >= g) }'; then
	echo "coverage: 1 passed, 0 failed"
else
	echo "coverage: total $pct% below the goal $GOAL%"
	echo "coverage: 0 passed, 1 failed"
	exit 1
fi
