#!/bin/bash
# The single test command: dependencies, guest kernels, meson build, unit
# tests, install into build/destdir, then every suite below.
#
#   run-all.sh                  every suite (what CI runs)
#   run-all.sh --suite NAME...  only these suites (repeat or comma-separate;
#                               the build is made either way)
#   run-all.sh --list           the suites, one a line
#
# The last lines are each suite's time, the figures of what passed
# ("checks: product N (N distinct), harness facts N (N distinct)": a
# suite that prints "NAME: product checks N (N distinct), harness facts N
# (N distinct)" says which of its passes are the product's and which are
# facts of the kernel, QEMU or the fixtures, and how many differ by name;
# the passes of any other suite count as product checks, each distinct)
# and the total: "N passed, N failed" (", N skipped" if any).
# Under CI=true (.ci/run sets it) a skip is a failure unless
# tests/skips.allow names it with its reason (tests/lib/skips.sh).
# Environment: VWC_MESON_OPTS (extra meson setup options, words),
# VWC_TIME_BUDGET (minutes, default 85: CI stops a run at 90), and what
# tests/vm/run-suite.sh reads (VWC_KERNELS, VWC_CASES, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
# shellcheck source=lib/skips.sh
. tests/lib/skips.sh

# Every suite, in the order they run.
SUITES=(unit model vm system fleet piuparts autopkgtest compat rpm analyze fuzz sanitize valgrind mutants coverage)
want=()
while [ "$#" -gt 0 ]; do
	case $1 in
	--suite) [ "$#" -ge 2 ] || { echo "run-all: --suite needs a NAME" >&2; exit 2; }
		IFS=, read -r -a w <<<"$2"; want+=("${w[@]}"); shift 2 ;;
	--suite=*) IFS=, read -r -a w <<<"${1#--suite=}"; want+=("${w[@]}"); shift ;;
	--list) printf '%s\n' "${SUITES[@]}"; exit 0 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-all: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for n in "${want[@]}"; do
	[[ " ${SUITES[*]} " == *" $n "* ]] ||
		{ echo "run-all: unknown suite '$n' (run-all.sh --list)" >&2; exit 2; }
done
# wanted NAME: the suite was asked for (or no --suite was given)
wanted() { [ "${#want[@]}" -eq 0 ] || [[ " ${want[*]} " == *" $1 "* ]]; }
[ "${#want[@]}" -eq 0 ] || echo "run-all: only ${want[*]}"

# >>> Extra `meson setup` options, e.g. -Dnvme_cli_source=PATH (set by the
# >>> plugin's build script). Words from $VWC_MESON_OPTS are appended.
MESON_OPTS=()
# shellcheck disable=SC2206 # word splitting intended
MESON_OPTS+=(${VWC_MESON_OPTS:-})

BUILD=$REPO/build
DESTDIR_OUT=$BUILD/destdir
passed=0 failed=0 skipped=0
# the figures: product checks and harness facts, raw and distinct
fig_p=0 fig_pd=0 fig_f=0 fig_fd=0
times=()
mkdir -p "$BUILD"
run_stamp=$BUILD/.run-start
touch "$run_stamp"
step() { echo; echo "=== $*"; }
broken_steps=()
broken() { # STEP: count a failed step as one failure
	echo "run-all: FAIL $1"
	broken_steps+=("$1")
	failed=$((failed + 1))
}
# timed NAME CMD...: run CMD, and note NAME's seconds for the closing lines
timed() {
	local name=$1 t0=$SECONDS rc=0
	shift
	"$@" || rc=$?
	times+=("$name $((SECONDS - t0)) s")
	return "$rc"
}

step deps
bash scripts/deps.sh

step kernels
# the -patched tags build their nvme modules (tests/vm/patched-modules.sh)
bash tests/vm/kernels.sh 6.1 6.12 7.2 7.2-generic 6.1-generic 7.2-generic-patched 6.1-generic-patched

step "nvme-cli source (Debian's, for the nvme binary with the plugin)"
MESON_OPTS+=("-Dnvme_cli_source=$(bash scripts/fetch-nvme-cli.sh)")
# The build is instrumented for line coverage: the unit tests and every
# guest of the VM suite write counters, and the coverage suite reports
# them (no guest is booted a second time for coverage).
MESON_OPTS+=(-Db_coverage=true)

built=0
step "meson build"
if [ -f "$BUILD/build.ninja" ]; then
	# meson 1.0's setup --reconfigure drops base options such as
	# b_coverage; configure sets them
	setup=(meson configure "$BUILD" "${MESON_OPTS[@]}")
else
	setup=(meson setup "$BUILD" "${MESON_OPTS[@]}")
fi
if "${setup[@]}" && meson compile -C "$BUILD"; then
	built=1
else
	broken "meson build"
fi

unit_tests() {
	local out=$BUILD/unit-tests.out rc=0 ok xf fl up sk to
	meson test -C "$BUILD" --print-errorlogs 2>&1 | tee "$out" || rc=$?
	# meson's summary: "Ok: N", "Expected Fail: N", "Fail: N",
	# "Unexpected Pass: N", "Skipped: N", "Timeout: N".
	n() { sed -n "s/^$1:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$out" | tail -n 1; }
	ok=$(n Ok) xf=$(n 'Expected Fail') fl=$(n Fail) up=$(n 'Unexpected Pass') sk=$(n Skipped) to=$(n Timeout)
	passed=$((passed + ${ok:-0} + ${xf:-0}))
	failed=$((failed + ${fl:-0} + ${up:-0} + ${to:-0}))
	skipped=$((skipped + ${sk:-0}))
	figures unit "$out" $((${ok:-0} + ${xf:-0}))
	skips_judge unit "$out" "${sk:-0}"
	failed=$((failed + SKIPS_BAD)) skipped=$((skipped - SKIPS_BAD))
	if [ "$rc" -ne 0 ] && [ -z "$fl$up$to" ]; then broken "meson test (exit $rc, no summary)"; fi
	echo "unit: ${ok:-0} ok, $((${fl:-0} + ${up:-0} + ${to:-0})) failed, ${sk:-0} skipped"
}

if [ "$built" = 1 ]; then
	# fresh counters for this run
	find "$BUILD" -name '*.gcda' -delete
	if wanted unit; then
		step "unit tests"
		timed unit unit_tests
	fi
	step "meson install"
	rm -rf "$DESTDIR_OUT"
	if DESTDIR=$DESTDIR_OUT meson install -C "$BUILD" --quiet; then
		# the guests send their counters back (tests/coverage/guest-*.sh)
		install -D -m 644 tests/coverage/guest-env.sh "$DESTDIR_OUT/etc/vwc-test/env"
		install -D -m 755 tests/coverage/guest-after.sh "$DESTDIR_OUT/etc/vwc-test/after"
		echo "$BUILD" >"$DESTDIR_OUT/etc/vwc-test/gcov-dir"
	else
		broken "meson install"
		rm -rf "$DESTDIR_OUT"
	fi
fi

vm_suite() {
	local vm_out=$BUILD/vm-suite.out rc=0 summary vp vf vs vm_dest=()
	rm -rf "$BUILD/vm-logs" # the coverage report reads every log there
	mkdir -p "$BUILD"
	[ -d "$DESTDIR_OUT" ] && vm_dest=("$DESTDIR_OUT")
	bash tests/vm/run-suite.sh "${vm_dest[@]}" 2>&1 | tee "$vm_out" || rc=$?
	summary=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$vm_out" | tail -n 1 || true)
	if [ -n "$summary" ]; then
		read -r vp vf vs < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$summary")
		passed=$((passed + vp)) failed=$((failed + vf)) skipped=$((skipped + vs))
		figures vm "$vm_out" "$vp"
		skips_judge vm "$vm_out" "$vs"
		failed=$((failed + SKIPS_BAD)) skipped=$((skipped - SKIPS_BAD))
		if [ "$rc" -ne 0 ] && [ "$vf" -eq 0 ]; then broken "VM suite (exit $rc)"; fi
	else
		broken "VM suite (exit $rc, no summary)"
	fi
}

# suite NAME CMD...: run a host-side suite whose last count line is
# "NAME: N passed, N failed" (", N skipped" optional) and add it up (count).
suite() {
	local name=$1 rc=0
	shift
	mkdir -p "$BUILD"
	"$@" 2>&1 | tee "$BUILD/$name.out" || rc=$?
	count "$name" "$rc"
}

# count NAME RC: add up the count line of build/NAME.out, which exited
# with RC. A suite that exits non-zero without a failure in its count, or
# prints no count, is one failure.
count() {
	local name=$1 rc=$2 out=$BUILD/$1.out summary sp sf ss
	summary=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$out" | tail -n 1 || true)
	if [ -z "$summary" ]; then
		broken "$name (exit $rc, no summary)"
		return 0
	fi
	read -r sp sf ss < <(sed -E "s/^$name: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/" <<<"$summary")
	passed=$((passed + sp)) failed=$((failed + sf)) skipped=$((skipped + ${ss:-0}))
	figures "$name" "$out" "$sp"
	skips_judge "$name" "$out" "${ss:-0}"
	failed=$((failed + SKIPS_BAD)) skipped=$((skipped - SKIPS_BAD))
	if [ "$rc" -ne 0 ] && [ "$sf" -eq 0 ]; then broken "$name (exit $rc)"; fi
}

# figures NAME FILE PASSED: add suite NAME's figures line of FILE
# ("NAME: product checks N (N distinct), harness facts N (N distinct)")
# to the closing figures; without one, its PASSED passes are product
# checks, each distinct
figures() {
	local l p pd f fd
	l=$(grep -aE "^$1: product checks [0-9]+ \([0-9]+ distinct\), harness facts [0-9]+ \([0-9]+ distinct\)" "$2" 2>/dev/null | tail -n 1 || true)
	if [ -n "$l" ]; then
		read -r p pd f fd < <(sed -E 's/.*product checks ([0-9]+) \(([0-9]+) distinct\), harness facts ([0-9]+) \(([0-9]+) distinct\).*/\1 \2 \3 \4/' <<<"$l")
	else
		p=$3 pd=$3 f=0 fd=0
	fi
	fig_p=$((fig_p + p)) fig_pd=$((fig_pd + pd)) fig_f=$((fig_f + f)) fig_fd=$((fig_fd + fd))
}

# run NAME MINUTES TITLE CMD...: run suite NAME (if wanted) when it may still
# end within the run's budget: VWC_TIME_BUDGET minutes from the start,
# default 85 (CI stops a run at 90). What it may take is 1.25 times what
# it took in the last clean run of it on this machine
# ($VWC_CACHE_DIR/suite-times, "NAME SECONDS", written as each suite
# ends without a failure), plus a minute, and never more than MINUTES,
# the figure for a new machine with empty caches (a slow run, a guest
# that hung until its timeout, cannot raise it past that). A suite that
# does not fit is never left out quietly: under CI (CI=true) it is a
# failure, said by name, and the run fails; elsewhere it is one skip,
# said by name.
BUDGET_MIN=${VWC_TIME_BUDGET:-85}
SUITE_TIMES=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}/suite-times
# may NAME MINUTES: the minutes suite NAME may take (above)
may() {
	local t m
	t=$(awk -v n="$1" '$1 == n { t = $2 } END { print t + 0 }' "$SUITE_TIMES" 2>/dev/null || echo 0)
	m=$(((${t:-0} * 5 / 4 + 59) / 60 + 1))
	if [ "${t:-0}" -gt 0 ] && [ "$m" -lt "$2" ]; then
		echo "$m"
	else
		echo "$2"
	fi
}
# measured NAME SECONDS: note what suite NAME took in a clean run, for the
# next run's may; not when a knob narrows or stretches what a suite runs
# (VWC_CASES, VWC_KERNELS, VWC_JOBS, VWC_SYSTEM_SUITES, VWC_SYSTEM_JOBS)
# or the caller says MEASURE=0; the lanes write at once, one at a time
# under the file's lock; a cache that cannot be written changes nothing
measured() {
	[ "${MEASURE:-1}" = 1 ] || return 0
	[ -z "${VWC_CASES:-}${VWC_KERNELS:-}${VWC_JOBS:-}${VWC_SYSTEM_SUITES:-}${VWC_SYSTEM_JOBS:-}" ] || return 0
	{
		mkdir -p "$(dirname "$SUITE_TIMES")" &&
		(
			flock 9
			{ grep -v "^$1 " "$SUITE_TIMES"; echo "$1 $2"; } >"$SUITE_TIMES.new" &&
				mv "$SUITE_TIMES.new" "$SUITE_TIMES" || rm -f "$SUITE_TIMES.new"
		) 9>>"$SUITE_TIMES.lock"
	} 2>/dev/null || true
}
# not_run NAME USED_MIN MAY_MIN: suite NAME did not fit the budget
not_run() {
	if [ "${CI:-}" = true ]; then
		broken "$1: not run: $2 min used, it may take $3, the budget is $BUDGET_MIN min; CI never skips a suite for time: make the run faster"
	else
		echo "run-all: SKIP $1: $2 min used, it may take $3, the budget is $BUDGET_MIN (VWC_TIME_BUDGET)"
		skipped=$((skipped + 1))
	fi
	times+=("$1 not run")
}
run() {
	local name=$1 m title=$3 used t0 rc=0 f0=$failed
	m=$2
	shift 3
	wanted "$name" || return 0
	m=$(may "$name" "$m")
	step "$name ($title)"
	used=$((SECONDS / 60))
	if [ $((used + m)) -gt "$BUDGET_MIN" ]; then
		not_run "$name" "$used" "$m"
		return 0
	fi
	t0=$SECONDS
	timed "$name" "$@" || rc=$?
	[ "$rc" -ne 0 ] || [ "$failed" -ne "$f0" ] || measured "$name" $((SECONDS - t0))
	return "$rc"
}

# The host-side suites run in lanes, each lane one suite after another,
# beside other work:
#  - background: the system suite's preparation (below), then analyze
#    and fuzz (builds and libFuzzer: CPU alone, no guest) at nice 19 from
#    the start, beside the VM suite, whose guests leave the cores idle
#    30% of the time (vmstat, 2026-12-01: a guest sleeping through a
#    timed wait); nice 19 takes only what the guests leave, and is
#    lifted when the system suite starts;
#  - after the system suite, two lanes at once: A boots guests (compat,
#    sanitize, valgrind: at most two at a time, as the VM suite), B is host
#    work (fleet, the package checks), then the mutants (builds, unit
#    tests and two short guests, which may boot beside lane A's: up to
#    four guests for a minute or two), which lane A's 25 minutes in one
#    lane left last: the two lanes end closer together. fleet and the package
#    checks come after system: the fleet suite's .deb test installs what
#    system built, piuparts and autopkgtest reuse both versions it built.
# One after the other, these suites took 590 s of the run's 2662 s on
# this 2-core machine (2026-12-01, warm). Each suite's output goes to
# build/NAME.out and is printed whole, in the order of SUITES, once all
# lanes are done; the time beside each is its own wall time.
cmd_fleet() { bash tests/fleet/run.sh "$BUILD" "$BUILD"/vm-logs/*-fleet.log "$BUILD"/vm-logs/*-textfile.log; }
cmd_piuparts() { bash tests/pkg/piuparts.sh "$BUILD/piuparts"; }
cmd_autopkgtest() { bash tests/pkg/autopkgtest.sh "$BUILD/autopkgtest"; }
cmd_compat() { bash tests/compat/run.sh; }
cmd_rpm() { bash tests/pkg/rpm.sh "$BUILD/rpm"; }
cmd_analyze() { bash tests/analyze/run.sh "$BUILD/analyze"; }
cmd_fuzz() { bash tests/fuzz/run.sh "$BUILD/fuzz" 20; }
cmd_sanitize() { bash tests/sanitize/run.sh "$BUILD/sanitize" "$(bash scripts/fetch-nvme-cli.sh)"; }
cmd_valgrind() { bash tests/sanitize/valgrind.sh "$BUILD/valgrind"; }
cmd_mutants() { VWC_MUTANT_DIR=$BUILD/mutants bash tests/mutants/run.sh; }
declare -A lane_title=(
	[fleet]="ansible playbook, promtool"
	[piuparts]="install, purge, upgrade 0.1.0 -> next; bookworm, trixie"
	[autopkgtest]="debian/tests, autopkgtest-virt-unshare; bookworm, trixie"
	[compat]="nvme-cli 2.3, 2.13, 2.16, 3.x; VM on 7.2"
	[rpm]="the RPM spec built with Debian's rpmbuild, rpmlint; the release tarball's source copy"
	[analyze]="gcc -fanalyzer, clang scan-build"
	[fuzz]="libFuzzer harnesses of the parsers, 20 s each"
	[sanitize]="ASan+UBSan: unit tests; VM core and watch on 7.2"
	[valgrind]="memcheck on the sidecar over 1000 Set Features, VM 7.2"
	[mutants]="the invariant broken on purpose, one way a build: each caught"
)
# MINUTES each may take, side by side with the other lane: about 1.5
# times what it took so on this machine with warm caches
declare -A lane_may=([fleet]=5 [piuparts]=3 [autopkgtest]=3 [compat]=6 [rpm]=1
	[analyze]=3 [fuzz]=3 [sanitize]=6 [valgrind]=5 [mutants]=8)
LANE_BG=(analyze fuzz)
LANE_A=(compat sanitize valgrind)
LANE_B=(fleet piuparts autopkgtest rpm mutants)

# lane NAME...: run each wanted suite that may still end within the
# budget; writes build/NAME.out and build/NAME.lane ("ran SECONDS EXIT"
# or "over USED_MIN")
lane() {
	local name t0 rc
	for name in "$@"; do
		wanted "$name" || continue
		rm -f "$BUILD/$name.lane"
		if [ $((SECONDS / 60 + $(may "$name" "${lane_may[$name]}"))) -gt "$BUDGET_MIN" ]; then
			echo "over $((SECONDS / 60))" >"$BUILD/$name.lane"
			continue
		fi
		t0=$SECONDS rc=0
		"cmd_$name" >"$BUILD/$name.out" 2>&1 || rc=$?
		echo "ran $((SECONDS - t0)) $rc" >"$BUILD/$name.lane"
		[ "$rc" -ne 0 ] || measured "$name" $((SECONDS - t0))
	done
}

# Host packages of every lane first: two apt-get at once would fight
# over dpkg's lock.
if wanted fleet || wanted piuparts || wanted autopkgtest || wanted rpm ||
	wanted analyze || wanted fuzz || wanted sanitize || wanted valgrind; then
	step "host packages of the later suites"
	bash scripts/deps.sh ansible-core piuparts autopkgtest mmdebstrap uidmap dpkg-dev \
		rpm rpmlint gcc clang clang-tools libclang-rt-14-dev valgrind libc6-dbg ||
		broken "host packages of the later suites"
fi
# no result of an earlier run may pass for this one's
for name in "${!lane_may[@]}"; do rm -f "$BUILD/$name.lane"; done
# The system suite's packages, images and higher nvme-cli come first in
# the background (tests/system/run.sh --prepare): its variants then find
# them made (on a fresh machine, the images and build chroots are made
# there, beside the VM suite).
prepared=
if wanted system && [ "$built" = 1 ]; then
	prepared=1
	LANE_BG=(system-prepare "${LANE_BG[@]}")
	# no package of an earlier run passes for this one's; cleared here,
	# before either starts, so that neither clears what the other built
	rm -f "${VWC_SYSTEM_OUT:-$BUILD/system}"/debs-*/.built
fi
step "in the background at nice 19, beside the VM and system suites: ${LANE_BG[*]}"
(
	renice -n 19 -p "$BASHPID" >/dev/null
	for name in "${LANE_BG[@]}"; do
		if [ "$name" = system-prepare ]; then
			t0=$SECONDS
			VWC_SYSTEM_PREPARED=1 bash tests/system/run.sh --prepare >"$BUILD/system-prepare.out" 2>&1 || true
			echo "run-all: system-prepare done in $((SECONDS - t0)) s" >>"$BUILD/system-prepare.out"
		else
			lane "$name"
		fi
	done
) &
lane_bg=$!

# renice_tree PID NICE: PID and every process under it
renice_tree() {
	local k
	renice -n "$2" -p "$1" >/dev/null 2>&1 || true
	for k in $(pgrep -P "$1" 2>/dev/null); do renice_tree "$k" "$2"; done
}

run model 2 "SPIN models of the writers' protocol, tests/model" \
	suite model bash tests/model/run.sh "$BUILD/model"
run vm 35 "guest tests on five real kernels" vm_suite
# what --prepare has not made yet, the system suite's variants wait for
# (the same locks): at its priority from here
renice_tree "$lane_bg" 0
[ -z "$prepared" ] || { echo; cat "$BUILD/system-prepare.out" 2>/dev/null; }
# 30: on a new machine the packages and images are made beside the VM
# suite (system-prepare above), so what is left is the boots, about 20
# minutes here
run system 30 "the packages in booted Debian 12 and 13 systems" \
	suite system env ${prepared:+VWC_SYSTEM_PREPARED=1} bash tests/system/run.sh
# after system: the fleet suite's .deb test installs what it built
step "the later suites, two lanes at once: ${LANE_A[*]} | ${LANE_B[*]}"
lanes_t0=$SECONDS
lane "${LANE_A[@]}" &
lane_a=$!
lane "${LANE_B[@]}" &
lane_b=$!
wait "$lane_a" "$lane_b" || true
echo "run-all: both lanes done in $((SECONDS - lanes_t0)) s"
wait "$lane_bg" || true
for name in "${SUITES[@]}"; do
	[ -n "${lane_may[$name]:-}" ] && wanted "$name" || continue
	step "$name (${lane_title[$name]})"
	how=lost n=0 rc=0
	read -r how n rc <"$BUILD/$name.lane" 2>/dev/null || true
	case $how in
	ran)
		cat "$BUILD/$name.out"
		count "$name" "$rc"
		times+=("$name $n s") ;;
	over) not_run "$name" "$n" "$(may "$name" "${lane_may[$name]}")" ;;
	*) broken "$name (its lane left no result)" ;;
	esac
done
# The counters of the unit tests and of the VM suite's guests. Without the
# VM suite (--suite coverage alone), tests/coverage/run.sh boots its own.
if wanted vm; then
	run coverage 2 "src/ lines: the unit tests and every guest of the VM suite" \
		suite coverage env VWC_COV_GOAL="${VWC_COV_GOAL:-80}" \
		bash tests/coverage/report.sh "$BUILD" "$BUILD"/vm-logs/*.log
else
	# (its own guests: not the figure of the report alone)
	MEASURE=0 run coverage 15 "src/ lines: unit tests + VM cases, see tests/coverage/run.sh" \
		suite coverage bash tests/coverage/run.sh "$BUILD/coverage" "$(bash scripts/fetch-nvme-cli.sh)"
fi

# Every failure by name just above the closing lines, so that the last
# screen of a long run says what failed (each suite's own line format:
# "not ok", "[kernel] case: FAIL", "system: FAIL", "NAME: FAIL").
fails=$BUILD/failures.txt
: >"$fails"
for f in "$BUILD"/unit-tests.out "$BUILD"/vm-suite.out "${SUITES[@]/#/$BUILD/}"; do
	f=${f%.out}.out
	[ "$f" -nt "$run_stamp" ] || continue # not written by this run
	grep -E '^(not ok|\[[^]]*\] [^:]*: FAIL|[a-z0-9-]+: FAIL)|^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT) ' "$f" |
		sed "s|^|  $(basename "$f" .out): |" >>"$fails" || true
done
for b in "${broken_steps[@]}" "${SKIPS_FAILS[@]}"; do echo "  run-all: $b"; done >>"$fails"
if [ -s "$fails" ] || [ "$failed" -ne 0 ]; then
	echo
	echo "failures ($fails):"
	head -n 40 "$fails"
	[ "$(wc -l <"$fails")" -le 40 ] || echo "  ... $(($(wc -l <"$fails") - 40)) more in $fails"
fi
echo
echo "time: ${SECONDS} s in all; $(IFS=';'; echo "${times[*]}" | sed 's/;/, /g')"
echo "checks: product $fig_p ($fig_pd distinct), harness facts $fig_f ($fig_fd distinct); passed $passed in all"
total="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || total="$total, $skipped skipped"
echo "$total"
[ "$failed" -eq 0 ]
