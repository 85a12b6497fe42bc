#!/bin/bash
# Host-side fleet checks, the entry tests/check calls after
# the VM suite. Not meson tests: they need the network (ansible-core,
# promtool from Debian) and root.
#   1. tests/fleet/ansible.sh BUILD: the Ansible audit playbook on localhost
#   2. tests/fleet/promtool-rules.sh BUILD: the alert rules of
#      contrib/prometheus/ (`promtool test rules`, coverage, mutants)
#   3. tests/fleet/ansible-role.sh BUILD: the Ansible role (install tree
#      into an offline root, --check, idempotence, apply decisions)
#   4. tests/fleet/ansible-deb.sh: the role's deb method in a throwaway
#      Debian 12 root (skipped without a built .deb)
#   5. tests/fleet/check-prom-log.sh: `promtool check metrics` on the
#      Prometheus blocks of the fleet case's serial logs (LOG...), when given
# Usage: run.sh BUILD [LOG...]   LOGs that do not exist are ignored (an
#        unmatched glob such as build/vm-logs/*-fleet.log is fine).
#        run.sh BUILD --logs-from FILE [PID]: the logs are the lines of
#        FILE, read once parts 1-4 are done and FILE exists (tests/check
#        runs this suite beside the VM suite and writes FILE when that
#        suite ends); the wait ends without logs if PID is given and dies.
# Output: TAP (one stream, plan at the end), then the count line
#   "fleet: N passed, N failed" (+ ", N skipped" if any). Exit 1 on a failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${1:?usage: run.sh BUILD [LOG...]}
shift
logs=() from='' parent=''
if [ "${1:-}" = --logs-from ]; then
	from=${2:?usage: run.sh BUILD --logs-from FILE [PID]} parent=${3:-}
	set --
fi
# add_logs LOG...: those that exist
add_logs() { local l; for l in "$@"; do [ -f "$l" ] && logs+=("$l"); done; }
add_logs "$@"

n=0 passed=0 failed=0 skipped=0
# part NAME CMD...: re-emit CMD's TAP results under NAME, numbered here; a
# non-zero exit without a "not ok" line counts as one failure, and so do
# results that differ in number from CMD's plan ("1..N"), or no plan
part() {
	local name=$1 line out rc=0 bad=0 desc ran=0 planned=''
	shift
	out=$("$@" 2>&1) || rc=$?
	while IFS= read -r line; do
		case $line in
		1..[0-9]*) planned=${line#1..} ;;
		'ok '* | 'not ok '*) ran=$((ran + 1)) ;;&
		'not ok '*)
			desc=${line#not ok }; desc=${desc#* - }
			n=$((n + 1)) failed=$((failed + 1)) bad=1
			echo "not ok $n - $name: $desc"
			;;
		'ok '*)
			desc=${line#ok }; desc=${desc#* - }
			n=$((n + 1))
			if [[ $desc == *'# SKIP'* ]]; then skipped=$((skipped + 1)); else passed=$((passed + 1)); fi
			echo "ok $n - $name: $desc"
			;;
		'#'*) echo "$line" ;;
		esac
	done <<<"$out"
	if [ -z "$planned" ] || [ "$planned" != "$ran" ]; then
		n=$((n + 1)) failed=$((failed + 1)) bad=1
		echo "not ok $n - $name: plan ${planned:-missing}, $ran results"
	fi
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		n=$((n + 1)) failed=$((failed + 1))
		echo "not ok $n - $name: exit $rc"
		printf '%s\n' "$out" | tail -n 10 | sed 's/^/#   /'
	fi
}
part ansible bash "$HERE/ansible.sh" "$BUILD"
part rules bash "$HERE/promtool-rules.sh" "$BUILD"
part role bash "$HERE/ansible-role.sh" "$BUILD"
part deb bash "$HERE/ansible-deb.sh"
if [ -n "$from" ]; then
	t0=$SECONDS
	while [ ! -f "$from" ]; do
		[ -z "$parent" ] || kill -0 "$parent" 2>/dev/null || break
		sleep 2
	done
	echo "# waited $((SECONDS - t0)) s for the VM suite's logs ($from)"
	if [ -f "$from" ]; then
		mapfile -t listed <"$from"
		add_logs "${listed[@]}"
	fi
fi
if [ "${#logs[@]}" -gt 0 ]; then
	part promtool bash "$HERE/check-prom-log.sh" "${logs[@]}"
else
	n=$((n + 1)) skipped=$((skipped + 1))
	echo "ok $n - promtool: fleet serial logs # SKIP no fleet log given (the fleet VM case did not run)"
fi
echo "1..$n"
line="fleet: $passed passed, $failed failed"
[ "$skipped" -eq 0 ] || line="$line, $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ]
