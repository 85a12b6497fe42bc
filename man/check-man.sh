#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The man pages against the source: every verb of src/core/verbs.h has its
# section (with both synopses) in nvme-vwc-sync.8.txt and its alias page
# nvme-vwc-<verb>.1; every option of src/core/cli.c (long and short), every exit
# status of src/core/commands.h, every JSON key and Prometheus metric of
# src/core/report.c is documented; every directive, key and write-cache value of
# src/core/config.c is in nvme-vwc-sync.conf.5.txt. TAP output.
#
# usage: check-man.sh <src dir> <man dir>
# shellcheck disable=SC2013 # words, not lines, are wanted
set -u
src=$1 man=$2
page=$man/nvme-vwc-sync.8.txt conf=$man/nvme-vwc-sync.conf.5.txt
n=0 bad=0

# result DESCRIPTION MISSING...: ok when nothing is missing
result() {
	local desc=$1
	shift
	n=$((n + 1))
	if [ $# = 0 ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		echo "#   at fault: $*"
		bad=1
	fi
}

for f in "$src/verbs.h" "$src/cli.c" "$src/commands.h" "$src/report.c" \
	 "$src/config.c" "$page" "$conf"; do
	[ -r "$f" ] || { echo "Bail out! cannot read $f"; exit 1; }
done

verbs=$(sed -n 's/^[[:space:]]*X("\([^"]*\)".*/\1/p' "$src/verbs.h")
[ -n "$verbs" ] || { echo "Bail out! no verb found in $src/verbs.h"; exit 1; }
# verbs nvme's plugin does not serve (their entry ends in "standalone")
standalone=$(sed -n '/^#define VWC_VERBS(X)/,/^$/p' "$src/verbs.h" | tr -d '\\\n' |
	sed 's/X("/\n/g' | sed -n 's/^\([^"]*\)".*,[[:space:]]*standalone)[[:space:]]*$/\1/p')

for v in $verbs; do
	miss=()
	# a COMMANDS subsection titled by the verb...
	grep -qx -- "$v" "$page" && grep -A1 -x -- "$v" "$page" | grep -q '^~~~' ||
		miss+=("section '$v'")
	# ...with the synopsis in both forms (a standalone verb: only the
	# standalone's, since nvme does not serve it)
	if grep -qx -- "$v" <<<"$standalone"; then
		grep -q -- "^\*nvme vwc $v\*" "$page" && miss+=("'*nvme vwc $v*' (standalone only)")
	else
		grep -q -- "^\*nvme vwc $v\*" "$page" || miss+=("'*nvme vwc $v*'")
	fi
	grep -q -- "^\*nvme-vwc-sync $v\*" "$page" || miss+=("'*nvme-vwc-sync $v*'")
	result "verb $v is documented in nvme-vwc-sync.8" "${miss[@]}"
done

miss=()
for v in $verbs; do
	f=$man/nvme-vwc-$v.1
	[ "$(cat "$f" 2>/dev/null)" = ".so man8/nvme-vwc-sync.8" ] || miss+=("$f")
done
result "every verb has its alias page for 'nvme vwc help <verb>'" "${miss[@]}"

miss=()
for f in "$man"/nvme-vwc-*.1; do
	[ -e "$f" ] || continue
	v=${f##*/nvme-vwc-}
	v=${v%.1}
	grep -qx -- "$v" <<<"$verbs" || miss+=("$f")
done
result "no alias page for a verb that does not exist" "${miss[@]}"

longopts=$(sed -n '/longopts\[\] = {/,/};/s/.*{ *"\([^"]*\)".*/\1/p' "$src/cli.c")
[ -n "$longopts" ] || { echo "Bail out! no longopts table in $src/cli.c"; exit 1; }
miss=()
for o in $longopts; do
	grep -Eq -- "^--$o(=<[^>]+>)?::\$" "$page" || miss+=("--$o")
done
result "every long option of src/core/cli.c has an OPTIONS entry" "${miss[@]}"

shortopts=$(sed -n 's/.*getopt_long([^"]*"\([^"]*\)".*/\1/p' "$src/cli.c" | tr -d ':' | fold -w1)
miss=()
for o in $shortopts; do
	grep -Eq -- "^-$o( <[^>]+>)?::\$" "$page" || miss+=("-$o")
done
result "every short option of src/core/cli.c has an OPTIONS entry" "${miss[@]}"

miss=()
for s in $(sed -n 's/^#define VWC_EXIT_[A-Z_]*[[:space:]]*\([0-9]*\).*/\1/p' "$src/commands.h"); do
	sed -n '/^EXIT STATUS$/,/^ENVIRONMENT$/p' "$page" | grep -qx -- "$s::" || miss+=("$s")
done
result "every exit status of src/core/commands.h is under EXIT STATUS" "${miss[@]}"

miss=()
for k in $(grep -o '\(add_str\|json_object_object_add\)([a-z]*, "[a-z_]*"' "$src/report.c" |
	   sed 's/.*"\(.*\)"/\1/' | sort -u); do
	grep -q -- "\"$k\"" "$page" || miss+=("$k")
done
result "every JSON key of src/core/report.c is documented" "${miss[@]}"

miss=()
for m in $(grep -o '"nvme_vwc_[a-z_]*"' "$src/report.c" | tr -d '"' | sort -u); do
	grep -q -- "^\`$m\`::" "$page" || miss+=("$m")
done
result "every Prometheus metric of src/core/report.c is documented" "${miss[@]}"

# config.c names its directives and keys in its error messages
miss=()
for d in $(sed -n 's/.*unknown directive (\([^)]*\)).*/\1/p' "$src/config.c" | tr -d ','); do
	grep -q -- "^$d .*::\$" "$conf" || miss+=("$d")
done
for k in $(sed -n 's/.*unknown key (\([^)]*\)).*/\1/p' "$src/config.c" | tr -d ','); do
	grep -q -- "$k=" "$conf" || miss+=("$k=")
done
for w in $(sed -n 's/.*write-cache wants \([^"]*\)".*/\1/p' "$src/config.c" | sed 's/,\| or / /g'); do
	grep -qx -- "$w;;" "$conf" || miss+=("write-cache=$w")
done
result "every directive, key and write-cache value of src/core/config.c is in nvme-vwc-sync.conf.5" "${miss[@]}"

echo "1..$n"
exit $bad
