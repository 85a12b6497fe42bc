#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test-nvme-cli-plugin.sh - the vwc plugin as nvme-cli dispatches it
#
# Usage: test-nvme-cli-plugin.sh NVME VERBS_H VERSION
#
# Checks, without any NVMe device, that every verb of VWC_VERBS (read from
# VERBS_H) is reachable as "nvme vwc VERB" and as "nvme vwc-VERB", that
# --help there is answered by the verb's own usage (vwc_cli_run) with exit
# status 0, and that "nvme vwc --help" lists every verb. Output is TAP.

set -u

nvme=$1
verbs_h=$2
version=$3

n=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1))
	echo "not ok $n - $*"
	sed 's/^/# /' "$out"
}

# run EXPECTED_STATUS ARGS...: run nvme, output in $out
run() {
	want=$1; shift
	"$nvme" "$@" > "$out" 2>&1
	status=$?
	[ "$status" = "$want" ] && return 0
	echo "exit status $status, expected $want" >> "$out"
	return 1
}

verbs=$(sed -n 's/^[[:space:]]*X("\([^"]*\)",.*/\1/p' "$verbs_h")
if [ -z "$verbs" ]; then
	echo "Bail out! no X(\"verb\", ...) entries found in $verbs_h"
	exit 1
fi

# The plugin's own listing, three ways nvme-cli offers it.
for args in "vwc --help" "vwc help" "vwc"; do
	# shellcheck disable=SC2086 # split on purpose
	if run 0 $args; then
		missing=
		for v in $verbs; do
			grep -q "^  $v " "$out" || missing="$missing $v"
		done
		if [ -z "$missing" ]; then
			ok "nvme $args lists every verb"
		else
			echo "missing:$missing" >> "$out"
			not_ok "nvme $args lists every verb"
		fi
	else
		not_ok "nvme $args exits 0"
	fi
done

# Each verb's --help, in both forms, comes from the verb itself.
for v in $verbs; do
	for form in "vwc $v" "vwc-$v"; do
		# shellcheck disable=SC2086
		if ! run 0 $form --help; then
			not_ok "nvme $form --help exits 0"
		elif grep -q 'The following are all implemented sub-commands' "$out"; then
			not_ok "nvme $form --help shows the verb's usage, not nvme-cli's listing"
		elif ! grep -qi 'usage' "$out" || ! grep -q -- "$v" "$out"; then
			not_ok "nvme $form --help prints a usage naming $v"
		else
			ok "nvme $form --help prints the usage of $v"
		fi
	done
done

if run 0 vwc version && grep -q "vwc version $version" "$out"; then
	ok "nvme vwc version reports $version"
else
	not_ok "nvme vwc version reports $version"
fi

if run 0 help && grep -q '^  vwc ' "$out"; then
	ok "nvme help lists the vwc plugin"
else
	not_ok "nvme help lists the vwc plugin"
fi

if run 1 vwc no-such-verb; then
	ok "nvme vwc no-such-verb fails"
else
	not_ok "nvme vwc no-such-verb fails"
fi

echo "1..$n"
[ "$failed" = 0 ]
