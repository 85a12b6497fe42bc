#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The pages built by asciidoctor, as man(1) shows them: each renders
# without a troff warning and shows every section of its asciidoc source;
# "man nvme-vwc-<verb>" (what "nvme vwc help <verb>" runs) finds
# nvme-vwc-sync(8) through its alias page. TAP output.
#
# usage: check-render.sh <man source dir> <build dir with the roff pages>
set -u
src=$1 built=$2
n=0 bad=0
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		bad=1
	fi
}

for txt in "$src"/*.txt; do
	page=$(basename "$txt" .txt)		# nvme-vwc-sync.8
	sec=${page##*.}
	name=${page%.*}
	mkdir -p "$tree/man$sec"
	if ! cp "$built/$page" "$tree/man$sec/" 2>/dev/null; then
		ok 1 "$page was built"
		continue
	fi
	MANWIDTH=80 man -M "$tree" "$sec" "$name" >"$tree/out" 2>"$tree/err"
	rc=$?
	[ $rc = 0 ] && [ ! -s "$tree/err" ]
	ok $? "$page renders without warnings"
	[ -s "$tree/err" ] && sed 's/^/#   /' "$tree/err"
	missing=
	# level-1 titles of the source: a line underlined with dashes
	while IFS= read -r title; do
		grep -qx -- "$title" "$tree/out" || missing+=" '$title'"
	done < <(awk 'prev != "" && /^-+$/ && length($0) == length(prev) { print prev } { prev = $0 }' "$txt")
	[ -z "$missing" ]
	ok $? "$page shows every section of its source"
	[ -n "$missing" ] && echo "#   not shown:$missing"
done

mkdir -p "$tree/man1"
cp "$src"/nvme-vwc-*.1 "$tree/man1/"
missing=
for f in "$src"/nvme-vwc-*.1; do
	alias=$(basename "$f" .1)
	MANWIDTH=80 man -M "$tree" 1 "$alias" 2>/dev/null |
		grep -q '^ *nvme-vwc-sync - ' || missing+=" $alias"
done
[ -z "$missing" ]
ok $? "man nvme-vwc-<verb> shows nvme-vwc-sync(8)"
[ -n "$missing" ] && echo "#   not found:$missing"

echo "1..$n"
exit $bad
