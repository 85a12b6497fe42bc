#!/bin/bash
# Run every guest test tests/vm/cases/*.sh on each kernel it lists, one after
# the other (each guest takes both cores).
# Usage: run-suite.sh [DESTDIR]     DESTDIR: the project's `meson install` tree
# Environment:
#   VWC_KERNELS   only these kernel tags (e.g. "6.1 7.2")
#   VWC_CASES     only these cases: names or globs (e.g. "kernel-facts multi*"),
#                 each with @KERNEL for that kernel alone, VWC_KERNELS
#                 notwithstanding (e.g. "core@7.2 t700*@6.1-generic")
#   VWC_LOG_DIR   serial logs and the initramfs (default: build/vm-logs)
#   VWC_INFO=0    do not print the guests' VWC-INFO lines
#   VWC_JOBS      guests at once (default: the number of cores)
#   VWC_JOBS_EXTRA guests beyond VWC_JOBS at once (default 0); none while a
#                 case with a "# timing:" line or a peer guest runs
# A case with a "# manual: REASON" line runs only when VWC_CASES names it
# (e.g. a test written ahead of the fix it proves).
# Prints "[<kernel>] <case>: PASS|FAIL|SKIP <name>" per result, the boot and
# total time of each guest, then the figures "vm: product checks N (N
# distinct), harness facts N (N distinct)" (tests/lib/qemu.sh vq_figures:
# a check of the same case and name counts once in the distinct figures)
# and last "vm: N passed, N failed, N skipped". Each case declares its plan
# (tests/lib/guest.sh): a run whose checks differ from it is a failure.
# Exit status 1 when anything failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/qemu.sh
. "$REPO/tests/lib/qemu.sh"
DESTDIR_IN=${1:-}
LOGDIR=${VWC_LOG_DIR:-$REPO/build/vm-logs}
DEFAULT_KERNELS="6.1 6.12 7.2"

selected() { # NAME KERNEL: matches VWC_CASES and VWC_KERNELS (or no filter)
	local pat
	[ -n "${VWC_CASES:-}" ] || { kernel_ok "$2"; return; }
	for pat in $VWC_CASES; do
		# shellcheck disable=SC2053 # glob match intended
		case $pat in
		*@*) [[ $1 == ${pat%%@*} && $2 == ${pat#*@} ]] && return 0 ;;
		*) [[ $1 == $pat ]] && kernel_ok "$2" && return 0 ;;
		esac
	done
	return 1
}

kernel_ok() { # KERNEL: in VWC_KERNELS (or no filter)
	[ -z "${VWC_KERNELS:-}" ] || [[ " $VWC_KERNELS " == *" $1 "* ]]
}

kernels_of() { # CASE: its "# kernels:" list
	local list
	list=$(sed -n 's/^# kernels:[[:space:]]*//p' "$1" | head -n 1)
	echo "${list:-$DEFAULT_KERNELS}"
}

# --- plan ---
runs=()
declare -A tags=()
for f in "$HERE"/cases/*.sh; do
	name=$(basename "$f" .sh)
	[ -n "${VWC_CASES:-}" ] || ! grep -q '^# manual:' "$f" || continue
	for k in $(kernels_of "$f"); do
		selected "$name" "$k" || continue
		runs+=("$k $f")
		tags[$k]=1
		# the kernel of its peer guest (# vm: peer kernel=TAG), fetched too
		k=$(sed -n 's/^# vm: *peer .*kernel=\([^ ]*\).*/\1/p' "$f" | head -n 1)
		[ -z "$k" ] || tags[$k]=1
	done
done
# Longest first, so that the last guests to end end together: each
# run's total from the last VM suite that ran it ($VWC_CACHE_DIR/vm-times,
# "KERNEL CASE SECONDS"); a run not in it (a new case, a machine whose
# cache has none) counts as half its "# timeout:" (300 s when it has
# none): a long case that starts last would end alone, its guest the
# only one left. The order changes nothing else: each guest boots alone.
# alone[i]: 1 for a case with a "# timing:" line (its checks hold the
# product to deadlines a guest short of CPU misses: the soak's samplers
# read write_cache every millisecond), 2 for one with a peer guest (two
# QEMUs; never beside a timing run, see pick), 0 for the others.
# The alone runs come first (longest first among them): one that waits
# in line behind running guests lets no other start until fewer than
# `jobs` run (pick, below), and in the middle of the suite that drain
# left cores idle: in a warm run of f2dea01 the two soaks, sixth and
# seventh in line, kept 2 to 3 guests running (1.2 to 1.9 cores' worth
# of QEMU) from 150 s to 490 s. First, they start on empty slots: the
# soaks side by side use both cores, the peer cases two QEMUs each.
TIMES=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}/vm-times
alone=()
if [ "${#runs[@]}" -gt 0 ]; then
	known=$TIMES
	[ -s "$known" ] || known=/dev/null
	mapfile -t runs < <(for r in "${runs[@]}"; do
		t=$(awk -v k="${r%% *}" -v n="$(basename "${r#* }" .sh)" '$1 == k && $2 == n { t = $3 } END { print t + 0 }' "$known")
		if [ "$t" = 0 ]; then
			t=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "${r#* }" | head -n 1)
			t=$((${t:-300} / 2))
		fi
		a=0
		! grep -qE '^[[:space:]]*# vm:[[:space:]]*peer([[:space:]]|$)' "${r#* }" || a=2
		! grep -qE '^[[:space:]]*# timing:' "${r#* }" || a=1
		printf '%s\t%s\t%s\t%s\n' "$((a > 0))" "$t" "$a" "$r"
	done | sort -t "$(printf '\t')" -k1,1rn -k2,2rn -s | cut -f3-)
	for i in "${!runs[@]}"; do
		alone[i]=${runs[i]%%$'\t'*}
		runs[i]=${runs[i]#*$'\t'}
	done
fi
if [ "${#runs[@]}" -eq 0 ]; then
	echo "vm: no case selected (VWC_CASES='${VWC_CASES:-}' VWC_KERNELS='${VWC_KERNELS:-}')"
	echo "vm: 0 passed, 0 failed, 0 skipped"
	exit 0
fi

suite_t0=$(date +%s)
mkdir -p "$LOGDIR"
bash "$HERE/kernels.sh" "${!tags[@]}"
# the fixtures the cases name ("# vm: fixture NAME"), for their kernels
declare -A fx_tags=()
for r in "${runs[@]}"; do
	for fx in $(sed -n 's/^# vm: fixture[[:space:]]*//p' "${r#* }"); do
		fx_tags[$fx]="${fx_tags[$fx]:-} ${r%% *}"
	done
done
for fx in "${!fx_tags[@]}"; do
	# not made: its cases fail alone (run-vm.sh names what is missing)
	# shellcheck disable=SC2086 # the tags, one word each
	bash "$HERE/fixture-$fx.sh" $(printf '%s\n' ${fx_tags[$fx]} | sort -u) ||
		echo "vm: fixture $fx not made: the cases that name it will fail" >&2
done
bash "$HERE/mkinitramfs.sh" "$LOGDIR/initramfs.cpio" "$DESTDIR_IN"

# one_run RUN NAMES: boot one case on one kernel; its report lines go to
# stdout, the last one "COUNT passed failed skipped"; its passed checks to
# NAMES ("product|fact CASE: NAME")
one_run() {
	local run=$1 names=$2 k f name p log rc=0 res done_seen=0
	local passed=0 failed=0 skipped=0 status boot total attempts cpu why
	k=${run%% *}
	f=${run#* }
	name=$(basename "$f" .sh)
	p="[$k] $name:"
	log="$LOGDIR/$k-$name.log"
	res=$(bash "$HERE/run-vm.sh" -i "$LOGDIR/initramfs.cpio" -k "$k" -l "$log" "$f" | tail -n 1) || rc=$?

	: >"$names.run"
	vq_results "$log" "$p" "$names.run"
	sed "s/^\([a-z]*\) /\1 $name: /" "$names.run" >"$names"
	rm -f "$names.run"
	passed=$VQ_PASSED failed=$VQ_FAILED skipped=$VQ_SKIPPED done_seen=$VQ_DONE

	status=$(sed -n 's/.*status=\([a-z]*\).*/\1/p' <<<"$res")
	boot=$(sed -n 's/.* boot=\([^ ]*\).*/\1/p' <<<"$res")
	total=$(sed -n 's/.* total=\([^ ]*\).*/\1/p' <<<"$res")
	attempts=$(sed -n 's/.* attempts=\([^ ]*\).*/\1/p' <<<"$res")
	cpu=$(sed -n 's/.* cpu=\([^ ]*\).*/\1/p' <<<"$res")
	if [ "$done_seen" -ne 1 ] || [ "$rc" -ne 0 ]; then
		case ${status:-error} in
		timeout) why="TIMEOUT after ${total}s" ;;
		noinit) why="the guest never reached init ($attempts boots)" ;;
		ok) why="the guest test ended without VWC-TEST: DONE" ;;
		*) why="QEMU failed (status ${status:-unknown}, exit $rc)" ;;
		esac
		echo "$p FAIL guest: $why; log $log"
		grep -av '^$' "$log" 2>/dev/null | tail -n 15 | sed "s/^/$p   | /" || true
		failed=$((failed + 1))
	fi
	echo "$p boot ${boot}s, total ${total}s${attempts:+, $attempts boot(s)}${cpu:+, QEMU CPU ${cpu}s}"
	echo "COUNT $passed $failed $skipped"
}

# Guests run with single-threaded TCG, one host core each: VWC_JOBS of
# them at once (default: the number of cores). Each run's report is
# printed whole when it ends.
jobs=${VWC_JOBS:-$(nproc)}
# (decimal: "08" is not an octal error in the arithmetic below)
[[ $jobs =~ ^[0-9]+$ ]] && jobs=$((10#$jobs)) && [ "$jobs" -ge 1 ] || jobs=1
# Many guests sleep much of their time (a timer, a settle, a safety net):
# two of them can leave a core idle (6.1's idle case used 8% of one in
# 76 s, t700-rebind 12 to 15% in 110 s). VWC_JOBS_EXTRA guests more may
# run, but none while a run marked alone (above) runs, and that one
# starts only while fewer than `jobs` run: while it is the first waiting
# run in the order, no guest beyond `jobs` starts, so that it starts at
# the next guest's end (not after all the others); otherwise the first
# waiting run in the order that may start does.
extra=${VWC_JOBS_EXTRA:-0}
[[ $extra =~ ^[0-9]+$ ]] && extra=$((10#$extra)) || extra=0
resdir=$(mktemp -d "${TMPDIR:-/tmp}/vwc-suite.XXXXXX")
trap 'rm -rf "$resdir"' EXIT
passed=0 failed=0 skipped=0
report() { # IDX: print a finished run's report and add its counts
	local c
	grep -v '^COUNT ' "$resdir/$1" || true
	c=$(grep '^COUNT ' "$resdir/$1" | tail -n 1 || true)
	if [ -z "$c" ]; then
		echo "vm: run $1 (${runs[$1]}) left no count"
		failed=$((failed + 1))
		return
	fi
	read -r _ cp cf cs <<<"$c"
	passed=$((passed + cp)) failed=$((failed + cf)) skipped=$((skipped + cs))
}
declare -A running=()
started=() # 1: run i started
left=${#runs[@]}
# pick: prints the index of the run to start now; fails when none may
pick() {
	local i pid a lim=$((jobs + extra)) timing=0 peer=0
	[ "$left" -gt 0 ] || return 1
	for pid in "${!running[@]}"; do
		a=${alone[${running[$pid]}]}
		[ "$a" = 0 ] || lim=$jobs
		[ "$a" != 1 ] || timing=1
		[ "$a" != 2 ] || peer=1
	done
	for i in "${!runs[@]}"; do
		[ -z "${started[i]:-}" ] || continue
		# a run counts as one slot, a peer run is two QEMUs: a timing
		# run and a peer run never run side by side (a peer run that
		# started as one soak ended kept the other soak's last seconds
		# at three QEMUs on two cores). The first waiting one of them
		# holds the line until the other kind is done, so that no run
		# behind it takes the slot it waits for (the peer runs then
		# start two at a time, as the soaks do).
		if { [ "${alone[i]}" = 1 ] && [ "$peer" = 1 ]; } ||
			{ [ "${alone[i]}" = 2 ] && [ "$timing" = 1 ]; }; then
			return 1
		fi
		if [ "${#running[@]}" -lt "$jobs" ] ||
			{ [ "${alone[i]}" = 0 ] && [ "${#running[@]}" -lt "$lim" ]; }; then
			echo "$i"
			return 0
		fi
		# an alone run first in line: it waits for the next free slot
		[ "${alone[i]}" = 0 ] || lim=$jobs
	done
	return 1
}
while [ "$left" -gt 0 ] || [ "${#running[@]}" -gt 0 ]; do
	while i=$(pick); do
		one_run "${runs[$i]}" "$resdir/names.$i" >"$resdir/$i" 2>&1 &
		running[$!]=$i
		started[i]=1
		left=$((left - 1))
	done
	if [ "${#running[@]}" -eq 0 ]; then
		# (pick always starts one when none runs: it failed)
		echo "vm: no run could be started ($left left); stopping"
		failed=$((failed + left))
		break
	fi
	wait -n || true
	for pid in "${!running[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null || true
			report "${running[$pid]}"
			unset "running[$pid]"
		fi
	done
done

# each run's total for the next suite's order (runs of this one replace
# their earlier lines); not from a run whose logs go elsewhere than
# build/vm-logs: sanitize, valgrind, compat, coverage and the mutants
# boot other builds (ASan, valgrind, a guest stopped at its first
# failure)
new=
[ "$(realpath -m "$LOGDIR")" != "$(realpath -m "$REPO/build/vm-logs")" ] ||
	new=$(cat "$resdir"/[0-9]* 2>/dev/null | sed -n 's/^\[\([^]]*\)\] \([^:]*\): boot [^,]*, total \([0-9.]*\)s.*/\1 \2 \3/p' || true)
# (one at a time under the file's lock)
if [ -n "$new" ] && mkdir -p "$(dirname "$TIMES")" 2>/dev/null; then
	(
		flock 9
		if { [ ! -s "$TIMES" ] || awk 'NR == FNR { seen[$1 " " $2] = 1; next } !(($1 " " $2) in seen)' <(echo "$new") "$TIMES"
			echo "$new"; } >"$TIMES.new" 2>/dev/null; then
			mv "$TIMES.new" "$TIMES"
		fi
	) 9>>"$TIMES.lock" 2>/dev/null || true
fi
echo "vm: suite took $(($(date +%s) - suite_t0))s; logs in $LOGDIR"
cat "$resdir"/names.* 2>/dev/null >"$LOGDIR/checks.txt" || true
vq_figures "$LOGDIR/checks.txt" "vm:"
echo "vm: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
