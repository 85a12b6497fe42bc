#!/bin/bash
# Run `promtool check metrics` on every Prometheus block a guest printed to
# its serial log between "VWC-BEGIN prom <label>" and "VWC-END prom"
# (tests/vm/cases/fleet.sh). Kernel console lines ("[ ... ]") and carriage
# returns inside a block are dropped. Output is TAP: one test per block.
# Usage: check-prom-log.sh LOG...
# Environment: PROMTOOL (a promtool binary; default: tests/fleet/promtool.sh
# fetches one). Exit 1 when a block fails, promtool is unavailable, or a log
# has no block.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$#" -ge 1 ] || { echo "usage: check-prom-log.sh LOG..." >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# extract LOG: one file per block, $tmp/<n>.prom, its label in <n>.label
nblocks=0
for log in "$@"; do
	[ -r "$log" ] || { echo "check-prom-log: $log: not readable" >&2; continue; }
	awk -v dir="$tmp" -v base="$(basename "$log" .log)" -v start="$nblocks" '
		{ sub(/\r$/, ""); line = $0; sub(/^.*VWC-/, "VWC-", line) }
		line ~ /^VWC-BEGIN prom/ {
			n = start + (++k); lab = line; sub(/^VWC-BEGIN prom */, "", lab)
			print base ": " (lab == "" ? "block " k : lab) > (dir "/" n ".label")
			close(dir "/" n ".label")
			f = dir "/" n ".prom"; printf "" > f; inb = 1; next
		}
		line ~ /^VWC-END prom/ { if (inb) close(f); inb = 0; next }
		inb && /^\[ *[0-9]+\.[0-9]+\]/ { next }   # kernel console line
		inb { print > f }
		END { if (inb) print base ": unterminated block" > (dir "/" n ".label") }
	' "$log"
	nblocks=$(find "$tmp" -name '*.prom' | wc -l)
done

plan=$((nblocks > 0 ? nblocks : 1))
if [ -z "${PROMTOOL:-}" ]; then
	PROMTOOL=$(bash "$HERE/promtool.sh" 2>"$tmp/fetch.err" | tail -n 1) || PROMTOOL=''
fi
if [ -z "$PROMTOOL" ] || ! "$PROMTOOL" --version >/dev/null 2>&1; then
	echo "1..$plan"
	echo "not ok 1 - promtool unavailable: $(tr '\n' ' ' <"$tmp/fetch.err" 2>/dev/null)"
	exit 1
fi
echo "1..$plan"
if [ "$nblocks" -eq 0 ]; then
	echo "not ok 1 - no 'VWC-BEGIN prom' block in: $*"
	exit 1
fi

bad=0
for ((i = 1; i <= nblocks; i++)); do
	label=$(cat "$tmp/$i.label")
	samples=$(grep -cv '^#' "$tmp/$i.prom")
	# promtool prints lint findings and exits 1 on problems (3 on lint
	# findings with newer versions); both count as failures.
	if out=$("$PROMTOOL" check metrics <"$tmp/$i.prom" 2>&1) && [ -z "$out" ] &&
		[[ $label != *unterminated* ]] && [ "$samples" -gt 0 ]; then
		echo "ok $i - promtool check metrics: $label ($samples samples)"
	else
		echo "not ok $i - promtool check metrics: $label ($samples samples)"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ]
