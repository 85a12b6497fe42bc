# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What tests/check runs: its arguments (suites, VM cases on kernels,
# modes) turned into the suites it wants and the settings the suites'
# runners read. Sourced by tests/check, from the top of the tree, after
# SUITES and TITLE are set.

# The kernels of a case without a "# kernels:" line (tests/vm/run-suite.sh
# has the same list).
DEFAULT_KERNELS="6.1 6.12 7.2"
# The modes, each the suite that runs the cases that way.
declare -A MODE_SUITE=([asan]=sanitize [valgrind]=valgrind [coverage]=coverage)

# case_kernels FILE: the kernel tags of a VM case
case_kernels() {
	local list
	list=$(sed -n 's/^# kernels:[[:space:]]*//p' "$1" | head -n 1)
	echo "${list:-$DEFAULT_KERNELS}"
}

# check_list: the suites, the modes and every VM case with its kernels
check_list() {
	local s f m
	echo "suites (tests/check NAME...; none: all, in this order):"
	for s in "${SUITES[@]}"; do printf '  %-12s %s\n' "$s" "${TITLE[$s]}"; done
	echo "modes (tests/check --mode=MODE [unit] [CASE@KERNEL...]; alone: the whole suite):"
	for m in asan valgrind coverage; do
		printf '  %-12s the suite %s: %s\n' "$m" "${MODE_SUITE[$m]}" "${TITLE[${MODE_SUITE[$m]}]}"
	done
	echo "VM cases (tests/check CASE@KERNEL, or CASE or vm:CASE for each of its kernels):"
	for f in tests/vm/cases/*.sh; do
		m=$(sed -n 's/^# manual:[[:space:]]*/  (manual: /p' "$f" | head -n 1)
		printf '  %-20s %s%s\n' "$(basename "$f" .sh)" "$(case_kernels "$f")" "${m:+$m)}"
	done
}

# select_arg ARG: add a suite (to WANT) or a VM case, CASE[@KERNEL] (to
# RUNS); 1 and a message when ARG is neither. A suite's name is the suite
# (fleet is also a case: vm:fleet).
select_arg() {
	local a=${1#vm:} name k kk f hit=0
	if [ "$a" = "$1" ] && [[ " ${SUITES[*]} " == *" $a "* ]]; then
		WANT+=("$a")
		return 0
	fi
	name=${a%%@*}
	k=
	[ "$name" = "$a" ] || k=${a#*@}
	# a case (or, with globs, at least one) that runs on that kernel
	for f in tests/vm/cases/$name.sh; do
		[ -f "$f" ] || continue
		hit=1
		for kk in $(case_kernels "$f"); do
			# shellcheck disable=SC2053 # glob match intended
			if [ -z "$k" ] || [[ $kk == $k ]]; then
				RUNS+=("$a")
				return 0
			fi
		done
	done
	if [ "$hit" = 0 ]; then
		echo "check: '$1' is no suite and no VM case (tests/check --list)" >&2
	else
		echo "check: $name does not run on $k (the # kernels: line of tests/vm/cases/$name.sh; tests/check --list)" >&2
	fi
	return 1
}

# runs_split: the case names (CASES) and the explicit kernels (KERNELS)
# of RUNS, each once
runs_split() {
	local r
	CASES=() KERNELS=()
	for r in "${RUNS[@]}"; do
		[[ " ${CASES[*]} " == *" ${r%%@*} "* ]] || CASES+=("${r%%@*}")
		[ "${r%%@*}" = "$r" ] || [[ " ${KERNELS[*]} " == *" ${r#*@} "* ]] ||
			KERNELS+=("${r#*@}")
	done
}

# select_mode MODE: WANT becomes MODE's suite, narrowed to the unit tests
# or the cases asked for through its settings (exported); 1 and a
# message when MODE cannot run what was asked. A mode runs each case on
# each kernel asked for (the suites check each such pair's log).
select_mode() {
	local mode=$1 s c suite=${MODE_SUITE[$1]:-} unit=0
	[ -n "$suite" ] || { echo "check: no mode '$mode' (asan, valgrind, coverage)" >&2; return 1; }
	for s in "${WANT[@]}"; do
		case $s in
		unit) unit=1 ;;
		vm | "$suite") ;;
		*) echo "check: --mode=$mode runs the unit tests and VM cases, not the suite $s" >&2; return 1 ;;
		esac
	done
	WANT=("$suite")
	runs_split
	for c in "${CASES[@]}"; do
		for s in "${KERNELS[@]}"; do
			[[ " $(case_kernels "tests/vm/cases/$c.sh") " == *" $s "* ]] || {
				echo "check: --mode=$mode runs every case on every kernel asked for: $c does not run on $s" >&2
				return 1; }
		done
	done
	[ "$unit" = 1 ] || [ "${#RUNS[@]}" -gt 0 ] || return 0
	export MEASURE=0 # narrowed: not the suite's time
	case $mode in
	asan)
		export VWC_SAN_CASES="${CASES[*]}"
		[ "${#KERNELS[@]}" -eq 0 ] || export VWC_SAN_KERNELS="${KERNELS[*]}" ;;
	valgrind)
		[ "$unit" = 0 ] || { echo "check: --mode=valgrind runs the sidecar's case (valgrind-watch), not the unit tests" >&2; return 1; }
		for c in "${CASES[@]}"; do
			case $c in watch | valgrind-watch) ;;
			*) echo "check: --mode=valgrind runs the sidecar's case valgrind-watch (or watch), not $c" >&2; return 1 ;;
			esac
		done
		[ "${#KERNELS[@]}" -eq 0 ] || export VWC_VG_KERNELS="${KERNELS[*]}" ;;
	coverage)
		export VWC_COV_CASES="${CASES[*]}" VWC_COV_EXTRA=
		[ "${#KERNELS[@]}" -eq 0 ] || export VWC_COV_KERNELS="${KERNELS[*]}" ;;
	esac
}
