#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Source the bash completion in a clean bash and check COMPREPLY for a few
# command lines, against a fake /dev and /sys tree. The verbs must be those
# of src/core/verbs.h and every long option of src/core/cli.c must be offered by some
# verb. TAP output.
#
# usage: test-completion.sh <completion file> <src/core/verbs.h> <src/core/cli.c>
# shellcheck disable=SC2013,SC2207,SC2317
set -u
comp=$1 verbs_h=$2 cli_c=$3
n=0 bad=0

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/dev" "$root/sys/class/nvme" "$root/sys/block" "$root"/sys/class/nvme-generic/{ng0n1,ng1n1}
touch "$root"/dev/{nvme0,nvme0n1,nvme0n1p1,nvme1,nvme1n1,ng0n1,ng1n1,nvme-fabrics}
mkdir -p "$root"/sys/class/nvme/{nvme0,nvme1} \
	 "$root"/sys/block/{nvme0n1,nvme1n1,nvme1c1n1} "$root"/sys/block/sda
export NVME_VWC_SYNC_COMP_ROOT=$root

# shellcheck source=/dev/null
. "$comp" || { echo "Bail out! cannot source $comp"; exit 1; }

# run FUNC WORD...: complete the last WORD (COMP_CWORD is the last index)
run() {
	local fn=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]-}"
	printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# check DESCRIPTION EXPECTED ACTUAL
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		echo "#   expected: '$2'"
		echo "#   got:      '$3'"
		bad=1
	fi
}

sorted() { printf '%s\n' "$@" | sort -u | tr '\n' ' ' | sed 's/ $//'; }

src_verbs=$(sed -n 's/^[[:space:]]*X("\([^"]*\)".*/\1/p' "$verbs_h")
# the verbs "nvme vwc" serves: each X( entry's last word (its where) "both"
plugin_verbs=$(awk '/^[[:space:]]*X\("/ { v = $0; sub(/^[[:space:]]*X\("/, "", v); sub(/".*/, "", v) }
	v != "" && /(both|standalone)\)/ { if ($0 ~ /both\)/) print v; v = "" }' "$verbs_h")
# shellcheck disable=SC2086
check "verbs are those of src/core/verbs.h" \
	"$(sorted $src_verbs --help --version)" \
	"$(run _nvme_vwc_sync nvme-vwc-sync '')"
check "'se' completes to set-cache" "set-cache" \
	"$(run _nvme_vwc_sync nvme-vwc-sync se)"
check "audit -o offers normal, json, prometheus" "json normal prometheus" \
	"$(run _nvme_vwc_sync nvme-vwc-sync audit -o '')"
check "sync --output-format=j (split at =) completes json" "json" \
	"$(run _nvme_vwc_sync nvme-vwc-sync sync --output-format = j)"
check "sync -o does not offer prometheus" "json normal" \
	"$(run _nvme_vwc_sync nvme-vwc-sync sync -o '')"
check "set-cache's first argument is on or off" "off on" \
	"$(run _nvme_vwc_sync nvme-vwc-sync set-cache '')"
check "set-cache off /dev/nv: controllers and namespaces, no partition" \
	"/dev/nvme0 /dev/nvme0n1 /dev/nvme1 /dev/nvme1n1" \
	"$(run _nvme_vwc_sync nvme-vwc-sync set-cache off /dev/nv)"
check "sync -o json /dev/ng: generic nodes after an option value" \
	"/dev/ng0n1 /dev/ng1n1" \
	"$(run _nvme_vwc_sync nvme-vwc-sync sync -o json /dev/ng)"
check "sync nvme: kernel names, no hidden path node" \
	"nvme0 nvme0n1 nvme1 nvme1n1" \
	"$(run _nvme_vwc_sync nvme-vwc-sync sync nvme)"
check "flush-latency offers namespaces only" \
	"/dev/ng0n1 /dev/ng1n1 /dev/nvme0n1 /dev/nvme1n1 ng0n1 ng1n1 nvme0n1 nvme1n1" \
	"$(run _nvme_vwc_sync nvme-vwc-sync flush-latency '')"
check "restore --d completes --dry-run" "--dry-run" \
	"$(run _nvme_vwc_sync nvme-vwc-sync restore --d)"
check "watch takes no device" "" \
	"$(run _nvme_vwc_sync nvme-vwc-sync watch /dev/nv)"
check "device shortcut: nvme-vwc-sync /dev/nvme0n" "/dev/nvme0n1" \
	"$(run _nvme_vwc_sync nvme-vwc-sync /dev/nvme0n)"

# every long option of cli.c is offered by at least one verb
all_opts=
for v in $src_verbs; do
	all_opts+=" $(run _nvme_vwc_sync nvme-vwc-sync "$v" --)"
done
missing=
for o in $(sed -n '/longopts\[\] = {/,/};/s/.*{ *"\([^"]*\)".*/\1/p' "$cli_c"); do
	[[ " $all_opts " == *" --$o "* ]] || missing+=" --$o"
done
check "every long option of src/core/cli.c is offered" "" "${missing# }"

# each verb's options are exactly those src/core/verbs.h gives it (VWC_OPT_X is
# --x in lower case, FORMAT is --output-format), plus --verbose and --help
verbs_table=$(sed -n '/^#define VWC_VERBS(X)/,/^$/p' "$verbs_h" | tr -d '\\\n' | sed 's/X("/\n/g')
for v in $src_verbs; do
	want=$(grep "^$v\"," <<<"$verbs_table" | sed 's/^[^"]*"[^"]*"//' |
		grep -o 'VWC_OPT_[A-Z_]*' | sed 's/^VWC_OPT_//; s/^FORMAT$/OUTPUT_FORMAT/' |
		tr 'A-Z_' 'a-z-' | sed 's/^/--/')
	got=$(run _nvme_vwc_sync nvme-vwc-sync "$v" --)
	# shellcheck disable=SC2086
	check "$v: the options of src/core/verbs.h" "$(sorted $want --verbose --help)" "$got"
done

# the nvme-cli hook: a stand-in for nvme-cli's own completion function
_fake_nvme_cli() { COMPREPLY=($(compgen -W "id-ctrl id-ns list" -- "$2")); }
complete -o default -F _fake_nvme_cli nvme
_nvme_vwc_sync_hook_nvme
_nvme_vwc_sync_hook_nvme	# twice: still one wrapper
check "hook keeps nvme-cli's complete options" \
	"complete -o default -F _nvme_vwc_sync_nvme nvme" "$(complete -p nvme)"
check "nvme id-: nvme-cli's completion still answers" "id-ctrl id-ns" \
	"$(run _nvme_vwc_sync_nvme nvme id-)"
check "nvme vwc-s: plugin-command forms" "vwc-set-cache vwc-sync" \
	"$(run _nvme_vwc_sync_nvme nvme vwc-s)"
# shellcheck disable=SC2086
check "nvme vwc: the verbs it serves and help" "$(sorted $plugin_verbs help --help)" \
	"$(run _nvme_vwc_sync_nvme nvme vwc '')"
check "nvme vwc help se: verbs" "set-cache" \
	"$(run _nvme_vwc_sync_nvme nvme vwc help se)"
check "nvme vwc audit --output-format p" "prometheus" \
	"$(run _nvme_vwc_sync_nvme nvme vwc audit --output-format p)"
check "nvme vwc-set-cache o" "off on" \
	"$(run _nvme_vwc_sync_nvme nvme vwc-set-cache o)"

echo "1..$n"
exit $bad
