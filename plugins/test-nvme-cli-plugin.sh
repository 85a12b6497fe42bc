#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test-nvme-cli-plugin.sh - the vwc plugin as nvme-cli dispatches it
#
# Usage: test-nvme-cli-plugin.sh NVME VERBS_H VERSION
#
# Checks, without any NVMe device, that every verb of VWC_VERBS (read from
# VERBS_H) is reachable as "nvme vwc VERB" and as "nvme vwc-VERB", and by
# its shortest unambiguous abbreviation, that --help there is answered by
# the verb's own usage (vwc_cli_run) with exit status 0, that exit
# statuses 0, 1 and 2 come through nvme-cli as documented, and that
# "nvme vwc --help" lists every verb. A verb VERBS_H marks "standalone"
# (the sidecar, which nvme does not link) answers, in every form, with
# exit status 2 and the nvme-vwc-sync command that serves it. Works with
# nvme-cli 2.3 to 3.x.
# Output is TAP.

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
# the verbs whose entry ends in "standalone" (its last field)
standalone=$(sed -n '/^#define VWC_VERBS(X)/,/^$/p' "$verbs_h" | tr -d '\\\n' |
	sed 's/X("/\n/g' | sed -n 's/^\([^"]*\)".*,[[:space:]]*standalone)[[:space:]]*$/\1/p' |
	tr '\n' ' ')
is_standalone() { case " $standalone " in *" $1 "*) return 0 ;; esac; return 1; }
[ -n "$standalone" ] || echo "# no standalone verb in $verbs_h"

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

# Each verb's --help, in both forms, comes from the verb itself; a
# standalone verb says where it is instead.
for v in $verbs; do
	for form in "vwc $v" "vwc-$v"; do
		if is_standalone "$v"; then
			# shellcheck disable=SC2086
			if run 2 $form --help && grep -q "nvme-vwc-sync $v" "$out"; then
				ok "nvme $form exits 2 naming nvme-vwc-sync $v (standalone only)"
			else
				not_ok "nvme $form exits 2 naming nvme-vwc-sync $v (standalone only)"
			fi
			continue
		fi
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

# Unambiguous abbreviations, both forms: the shortest prefix of each verb
# that no other verb starts with reaches that verb (nvme-cli's prefix
# match), and messages name the canonical verb.
for v in $verbs; do
	i=1
	while :; do
		p=$(printf '%s' "$v" | cut -c1-$i)
		clash=0
		for o in $verbs; do
			[ "$o" = "$v" ] && continue
			case $o in "$p"*) clash=1 ;; esac
		done
		[ "$clash" = 0 ] || [ "$p" = "$v" ] && break
		i=$((i + 1))
	done
	[ "$p" = "$v" ] && continue
	want=0
	is_standalone "$v" && want=2
	for form in "vwc $p" "vwc-$p"; do
		# shellcheck disable=SC2086
		if run $want $form --help && grep -q -- "vwc $v" "$out"; then
			ok "nvme $form --help is the usage of $v"
		else
			not_ok "nvme $form --help is the usage of $v"
		fi
	done
done

# Exit statuses of nvme-vwc-sync(8), through nvme-cli: 0 success (a dry
# run: nothing is changed even where NVMe drives exist), 1 a device that
# cannot be used, 2 a bad command line (nvme-cli alone would turn every
# failure into 1). Status 3 (audit drift) needs a drive: tests/vm.
for form in "vwc sync" "vwc-sync"; do
	# shellcheck disable=SC2086
	if run 0 $form --dry-run; then
		ok "nvme $form --dry-run exits 0"
	else
		not_ok "nvme $form --dry-run exits 0"
	fi
	# shellcheck disable=SC2086
	if run 1 $form /dev/null && grep -q '/dev/null' "$out"; then
		ok "nvme $form /dev/null exits 1 naming /dev/null"
	else
		not_ok "nvme $form /dev/null exits 1 naming /dev/null"
	fi
	# shellcheck disable=SC2086
	if run 2 $form --no-such-option && grep -q -- '--no-such-option' "$out"; then
		ok "nvme $form --no-such-option exits 2 naming it"
	else
		not_ok "nvme $form --no-such-option exits 2 naming it"
	fi
done
if run 2 vwc audit --output-format=nonsense || run 2 vwc audit -o nonsense; then
	ok "nvme vwc audit with a bad output format exits 2"
else
	not_ok "nvme vwc audit with a bad output format exits 2"
fi

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
