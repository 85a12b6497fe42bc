#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The test runner's front (tests/check -n: what would run, nothing run):
# a VM case runs on the kernel named and only on one its "# kernels:"
# line lists; a suite's name is the suite; the settings file, a local
# file and the environment, in that order of weight; a misspelt setting
# is an error; a mode takes what its suite can run and refuses the rest;
# --list names every case; and every VWC_ variable a host-side runner
# reads is a setting of tests/check.conf (or one of the two the runner
# sets itself), so that the file documents them all. TAP.
# Usage: test-check.sh TESTS-DIR (the repository's tests/)
D=$(cd "${1:?usage: test-check.sh TESTS-DIR}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# no setting of the caller's leaks in
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(VWC_[A-Z0-9_]*\)=.*/\1/p')
# shellcheck source=../lib/tap.sh
. "$D/lib/tap.sh"
# chk ARGS...: tests/check -n ARGS, its output in $T/out; its exit status
chk() { VWC_CONFIG=${CONF:-/dev/null} bash "$D/check" -n "$@" >"$T/out" 2>&1; }
# shellcheck disable=SC2317 # called through t
has() { grep -qx -- "$1" "$T/out"; }

chk core@7.2
t "core@7.2: the VM suite, that run alone" has "check:   VWC_CASES=core@7.2"
chk vm:core@7.2 watch
t "vm:core@7.2 watch: both, watch on each of its kernels" has "check:   VWC_CASES=core@7.2 watch"
chk core@6.1-generic
t "a kernel the case does not list is refused (exit 2)" [ $? = 2 ]
t "  and said why" grep -q "core does not run on 6.1-generic" "$T/out"
chk 't700*@6.12'
t "a glob no case of which runs on the kernel is refused" [ $? = 2 ]
chk nosuch
t "a name that is no suite and no case is refused" [ $? = 2 ]
chk fleet
t "fleet is the suite" has "check: would run: fleet"
chk vm:fleet@7.2
t "vm:fleet@7.2 is the case" has "check:   VWC_CASES=fleet@7.2"

printf 'kernels="7.2"\njobs=1\n' >"$T/local"
CONF=$T/local chk vm
t "a setting of the local file is exported" has "check:   VWC_KERNELS=7.2"
CONF=$T/local VWC_KERNELS=6.1 chk vm
t "the environment wins over the file" has "check:   VWC_KERNELS=6.1"
printf 'kernal=7.2\n' >"$T/bad"
CONF=$T/bad chk unit
t "a misspelt key is an error (exit 2)" [ $? = 2 ]
t "  naming it" grep -q "unknown key 'kernal'" "$T/out"
CONF=$T/nosuch chk unit
t "a VWC_CONFIG that names no file is an error (exit 2)" [ $? = 2 ]
printf 'cases=core\n' >"$T/cases"
CONF=$T/cases chk watch@7.2
t "the command line's cases win over the settings'" has "check:   VWC_CASES=watch@7.2"

chk --mode=asan unit
t "asan unit: the sanitize suite, no guest" has "check:   VWC_SAN_CASES="
chk --mode=asan core@7.2 watch@7.2
t "asan on cases: their names and kernels" bash -c "grep -qx 'check:   VWC_SAN_CASES=core watch' '$T/out' && grep -qx 'check:   VWC_SAN_KERNELS=7.2' '$T/out'"
chk --mode=asan core@7.2 t700@7.2-generic
t "asan on a case not on every kernel asked is refused" [ $? = 2 ]
chk --mode=valgrind core@7.2
t "valgrind on another case than the sidecar's is refused" [ $? = 2 ]
chk --mode=valgrind watch@7.2
t "valgrind on watch@7.2: its kernel" has "check:   VWC_VG_KERNELS=7.2"
chk --mode=coverage unit
t "coverage of the unit tests: no guest" bash -c "grep -qx 'check:   VWC_COV_CASES=' '$T/out' && grep -qx 'check:   VWC_COV_EXTRA=' '$T/out'"
chk --mode=asan analyze
t "a mode of a suite that has none is refused" [ $? = 2 ]

bash "$D/check" --list >"$T/out" 2>&1
cases=$(find "$D/vm/cases" -name '*.sh' | wc -l)
t "--list names every VM case ($cases)" [ "$(grep -cE '^  [a-z0-9-]+ +[0-9]' "$T/out")" = "$cases" ]

# every VWC_ variable a host-side runner reads, against the settings
cd "$D/.." || exit 1
keys=" $(sed -nE 's/^#?([a-z][a-z0-9_]*)=.*/\1/p' tests/check.conf | tr '\n' ' ') "
: >"$T/out"
for v in $({ find tests scripts bench -name '*.sh' \
	-not -path 'tests/vm/cases/*' -not -path 'tests/vm/guest/*' \
	-not -path 'tests/system/guest/*' -not -path 'tests/unit/*' \
	-not -path 'bench/guest/*' -not -name 'guest-*.sh' -not -path tests/lib/guest.sh \
	-print0 | xargs -0 cat; cat tests/check; } | grep -oE '\$\{?VWC_[A-Z0-9_]+' |
	sed 's/^\$[{]\{0,1\}VWC_//' | sort -u); do
	case $v in CONFIG | SYSTEM_PREPARED) continue ;; esac # set by tests/check
	k=${v,,}
	[[ $keys == *" $k "* ]] || echo "VWC_$v is read by a runner; tests/check.conf has no $k" >>"$T/out"
done
t "tests/check.conf names every setting the runners read" [ ! -s "$T/out" ]

tap_done
