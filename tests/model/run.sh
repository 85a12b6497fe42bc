#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The models of the writers' protocol (tests/model/*.pml), checked with
# SPIN: spin -a, pan compiled with gcc, an exhaustive search of every
# interleaving of each model (its bounds are in its header: how many
# processes, how many commands), one run per property.
#
#   run.sh [OUTDIR]     every check (OUTDIR: where pan is built and run,
#                       default ${TMPDIR:-/tmp}/vwc-model)
#   run.sh -l           the checks, one a line
#
# A check of the design passes when pan reports "errors: 0" over the whole
# state space (no "max search depth too small": the search was not cut).
# A check of a known bug, a mutant or a premise taken away passes when pan
# finds the violation (errors > 0) and, where the check names a marker,
# the counterexample's replay (spin -t) prints it: the checker is shown to
# fail for the reason named, not for another one.
# The last line: "model: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)

# name | model | spin -D options | claim | pan options | expect | marker
#   expect: ok (errors: 0) or fail (errors > 0)
CHECKS=(
	# writers.pml: with the sidecar's kernel-side detection, admin queues in order
	"fast|writers.pml|-DFAST -DDRIVE_IN_ORDER|p_fast||ok|"
	"fast-strong|writers.pml|-DFAST -DDRIVE_IN_ORDER|p_strong||fail|MODEL: window"
	"fast-restore|writers.pml|-DFAST -DDRIVE_IN_ORDER -DSYNCS=0 -DRESTORE=1|p_fast||ok|"
	"fast-mutant-nochecks|writers.pml|-DFAST -DDRIVE_IN_ORDER -DBUG_NORECHECK -DBUG_NOGEN|p_fast||fail|MODEL: recheck left out"
	"fast-mutant-norecheck|writers.pml|-DFAST -DDRIVE_IN_ORDER -DBUG_NORECHECK|p_fast||fail|MODEL: recheck left out"
	# ... the sidecar alone: its generation check covers it without recheck()
	"fast-sidecar-norecheck|writers.pml|-DFAST -DDRIVE_IN_ORDER -DSYNCS=0 -DBUG_NORECHECK|p_fast||ok|"
	"fast-sidecar-nochecks|writers.pml|-DFAST -DDRIVE_IN_ORDER -DSYNCS=0 -DBUG_NORECHECK -DBUG_NOGEN|p_fast||fail|MODEL: generation check left out"
	# ... a drive that takes a Set Features at any moment before completing it
	"fast-anytime|writers.pml|-DFAST|p_inflight||ok|"
	"fast-anytime-premise|writers.pml|-DFAST|p_fast||fail|"
	# the sidecar without its kernel-side detection: close events, safety net
	"nofast|writers.pml|-DNOFAST|p_weak||ok|"
	"nofast-live|writers.pml|-DNOFAST|p_live|-f|ok|"
	# udev's rule alone (no sidecar): two syncs at once and restore
	"udev|writers.pml|-DSTOPPED -DSYNCS=2 -DRESTORE=1|p_weak||ok|"
	"udev-live|writers.pml|-DSTOPPED -DSYNCS=2 -DRESTORE=1|p_live|-f|fail|"
	"udev-mutant-norecheck|writers.pml|-DSTOPPED -DSYNCS=2 -DRESTORE=1 -DBUG_NORECHECK|p_weak||fail|MODEL: recheck left out"
	# nodes.pml: write back to the head and every path node
	"nodes|nodes.pml||p_fast||ok|"
	"nodes-main-first-error|nodes.pml|-DBUG_FIRST_ERROR|p_fast||fail|MODEL: BUG-a"
	"nodes-head-wt|nodes.pml|-DHEAD_WT|p_fast||ok|"
	"nodes-head-wt-main-recheck|nodes.pml|-DHEAD_WT -DBUG_RECHECK_CHANGED|p_fast||fail|MODEL: BUG-e"
	"nodes-no-retry|nodes.pml|-DNO_OVT_RETRY|p_fast||ok|"
	"nodes-overtaken-reached|nodes.pml|-DRETRY_GHOST|p_no_retry||fail|MODEL: overtaken: once more"
	# pathjoin.pml: a WCE=1 controller joining a shared namespace
	"join|pathjoin.pml|-DRESCAN_UNDER_LOCK|p_join||ok|"
	"join-live|pathjoin.pml|-DRESCAN_UNDER_LOCK|p_live|-f|ok|"
	"join-main-scan|pathjoin.pml|-DBUG_JOIN_SCAN|p_live|-f|fail|MODEL: BUG-b"
	"join-stale-recheck|pathjoin.pml||p_join||fail|MODEL: stale topology"
	# ... while the sidecar runs, udev's rule running sync for the
	# controller's events only where the write-through mark exists
	"join-gate|pathjoin.pml|-DGATE -DRESCAN_PEERS|p_join||ok|"
	"join-gate-live|pathjoin.pml|-DGATE -DRESCAN_PEERS|p_live|-f|ok|"
	"join-gate-mark-late|pathjoin.pml|-DGATE -DRESCAN_PEERS -DBUG_MARK_LATE|p_live|-f|fail|MODEL: BUG-d"
	"join-gate-reach-only|pathjoin.pml|-DGATE -DRESCAN_UNDER_LOCK|p_live|-f|fail|MODEL: event 1 left to the sidecar"
	"join-gate-sidecar-only|pathjoin.pml|-DGATE -DRESCAN_PEERS -DBUG_GATE_SIDECAR|p_live|-f|fail|MODEL: event 1 left to the sidecar"
	# rebind.pml: every unbind followed by a bind
	"rebind|rebind.pml||p_bind|-f|ok|"
	"rebind-main-signal|rebind.pml|-DBUG_SIGNAL -DNOKILL|p_bind|-f|fail|MODEL: BUG-c"
	"rebind-noguard-sigkill|rebind.pml|-DNOGUARD|p_bind|-f|fail|MODEL: SIGKILL between unbind and bind"
)

if [ "${1:-}" = -l ]; then
	for c in "${CHECKS[@]}"; do echo "${c%%|*}"; done
	exit 0
fi
out=${1:-${TMPDIR:-/tmp}/vwc-model}
mkdir -p "$out"
command -v spin >/dev/null || { echo "model: FAIL spin not installed (scripts/deps.sh installs it)"; echo "model: 0 passed, 1 failed"; exit 1; }

passed=0 failed=0
# dir MODEL DEFS: where pan for this model and these options is built
dir_of() { echo "$out/$(printf '%s %s' "$1" "$2" | md5sum | cut -c1-12)"; }
# build MODEL DEFS: pan for them, unless built already from these models
build() {
	local model=$1 defs=$2 dir
	dir=$(dir_of "$model" "$defs")
	[ -x "$dir/pan" ] && [ -z "$(find "$here" -name '*.pml' -newer "$dir/pan")" ] && return 0
	rm -rf "$dir" && mkdir -p "$dir" && cp "$here"/*.pml "$dir"/
	# -O0: gcc takes a fifth of -O1's time on pan.c; the searches are small
	# shellcheck disable=SC2086 # the options are words
	(cd "$dir" && spin -a $defs "$model" >spin.out 2>&1 &&
		gcc -O0 -DMEMLIM=1024 -DCOLLAPSE -w -o pan pan.c >>spin.out 2>&1) ||
		{ echo "build failed" >>"$dir/spin.out"; rm -f "$dir/pan"; }
}
# every distinct build, two at a time (the machine's cores)
declare -A seen=()
n=0
for c in "${CHECKS[@]}"; do
	IFS='|' read -r name model defs _ <<<"$c"
	[ -z "${seen[$model $defs]:-}" ] || continue
	seen[$model $defs]=1
	build "$model" "$defs" &
	n=$((n + 1))
	[ $((n % 2)) -ne 0 ] || wait
done
wait

for c in "${CHECKS[@]}"; do
	IFS='|' read -r name model defs claim panopts expect marker <<<"$c"
	dir=$(dir_of "$model" "$defs")
	if [ ! -x "$dir/pan" ]; then
		echo "model: FAIL $name: spin or gcc failed:"; sed 's/^/  /' "$dir/spin.out"
		failed=$((failed + 1))
		continue
	fi
	log=$dir/$claim${panopts:+-f}.out
	t0=$SECONDS
	# shellcheck disable=SC2086
	(cd "$dir" && rm -f "$model.trail" && ./pan -a $panopts -N "$claim" -m100000 >"$log" 2>&1)
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$log" | tail -n 1)
	depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	what="$model $defs, $claim${panopts:+ $panopts}: errors ${errors:-?}, ${states:-?} states, depth ${depth:-?}, $((SECONDS - t0)) s"
	why=
	if [ -z "$errors" ]; then
		why="pan gave no result: $(tail -n 3 "$log" | tr '\n' ' ')"
	elif grep -q 'max search depth too small' "$log"; then
		why="the search was cut (max search depth too small)"
	elif grep -q 'out of memory\|aborted' "$log"; then
		why="the search did not end (memory)"
	elif [ "$expect" = ok ] && [ "$errors" -ne 0 ]; then
		why="a violation of $claim: $(grep -m1 -E 'violated|cycle' "$log")"
	elif [ "$expect" = fail ] && [ "$errors" -eq 0 ]; then
		why="no violation found: the checker did not fail where it must"
	elif [ "$expect" = fail ] && [ -n "$marker" ]; then
		# shellcheck disable=SC2086
		# the trail names its claim
		(cd "$dir" && spin -t $defs "$model" >"$log.trail.txt" 2>&1)
		grep -q "$marker" "$log.trail.txt" ||
			why="the counterexample does not show '$marker' (replay: $log.trail.txt)"
	fi
	if [ -z "$why" ]; then
		echo "model: ok $name: $what"
		passed=$((passed + 1))
	else
		echo "model: FAIL $name: $what: $why"
		failed=$((failed + 1))
	fi
done
echo "model: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
