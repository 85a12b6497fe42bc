# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Skips under CI. tests/check judges every suite's skips with
# skips_judge when CI=true: a skip is allowed only when a line of
# tests/skips.allow names it, with its reason; any other skip counts as a
# failure, and so does a skip a suite counted but printed no line for.
#
# tests/skips.allow: one allowed skip a line, "PATTERN => REASON" (# starts
# a comment line). PATTERN is matched against the whole skip line as
# "SUITE: LINE", e.g. "vm: [6.1] kwatch-late: SKIP kwatch-late: ...",
# "system: SKIP trixie: upgrade: ...", "compat: ok - 3.x: ... # SKIP ...";
# only * is special in it (any text). A line without its reason is an error.

SKIPS_ALLOW=${VWC_SKIPS_ALLOW:-$(dirname "${BASH_SOURCE[0]}")/../skips.allow}

# skips_lines FILE: the skip lines of a suite's output: "[k] case: SKIP",
# "system: SKIP", "NAME: SKIP", TAP "ok ... # SKIP" and meson's
# " 3/27 project / name   SKIP"
skips_lines() {
	grep -aE '^\[[^]]*\] [^:]*: SKIP |^[a-z0-9-]+: SKIP |^ok .*# SKIP|^ *[0-9]+/[0-9]+ .* SKIP ' "$1" 2>/dev/null || true
}

# skips_allowed LINE: LINE matches a pattern of the allow-list; prints the
# reason. Returns 2 when the allow-list has a line without a reason.
skips_allowed() {
	local line=$1 entry pat why glob
	[ -f "$SKIPS_ALLOW" ] || return 1
	while IFS= read -r entry || [ -n "$entry" ]; do
		case $entry in '' | '#'*) continue ;; esac
		if [[ $entry != *' => '?* ]]; then
			echo "the allow-list line '$entry' gives no reason (PATTERN => REASON)"
			return 2
		fi
		pat=${entry%% => *} why=${entry#* => }
		# only * is special: quote every other character
		glob=$(printf '%s' "$pat" | sed 's/[][?\\]/\\&/g')
		# shellcheck disable=SC2053 # glob match intended
		if [[ $line == $glob ]]; then
			echo "$why"
			return 0
		fi
	done <"$SKIPS_ALLOW"
	return 1
}

# skips_judge SUITE FILE SKIPPED: under CI=true, judge the SKIPPED skips
# SUITE counted in its output FILE. Prints "check: FAIL SUITE: ..." for
# each skip the allow-list does not name, "check: allowed skip ..." for
# the others, and sets SKIPS_BAD to the skips that count as failures
# (never more than SKIPPED); each FAIL line is also added to the array
# SKIPS_FAILS. Outside CI, SKIPS_BAD=0 and nothing is printed.
SKIPS_FAILS=()
skips_judge() {
	local suite=$1 file=$2 n=$3 line why rc found=0 bad=0
	SKIPS_BAD=0
	[ "${CI:-}" = true ] && [ "$n" -gt 0 ] || return 0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		found=$((found + 1))
		rc=0
		why=$(skips_allowed "$suite: $line") || rc=$?
		if [ "$rc" = 0 ]; then
			echo "check: allowed skip ($why): $suite: $line"
		else
			SKIPS_FAILS+=("$suite: a skip under CI that tests/skips.allow does not name: $line${why:+ ($why)}")
			echo "check: FAIL ${SKIPS_FAILS[-1]}"
			bad=$((bad + 1))
		fi
	done < <(skips_lines "$file")
	if [ "$found" -lt "$n" ]; then
		SKIPS_FAILS+=("$suite: $n skipped, only $found of them named by a skip line")
		echo "check: FAIL ${SKIPS_FAILS[-1]}"
		bad=$((bad + n - found))
	fi
	[ "$bad" -le "$n" ] || bad=$n
	SKIPS_BAD=$bad
}
