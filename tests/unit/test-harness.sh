#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The test harness's own checks must be able to fail: the plan (a run that
# ran more or fewer checks than it declared, or declared none, fails),
# facts counted apart from product checks, the distinct figures, the
# liveness check on a dead or replaced process, and the skip judge under
# CI (an allowed skip passes, any other fails, a skip counted but not
# named fails). TAP.
# Usage: test-harness.sh TESTS-DIR (the repository's tests/)
D=${1:?usage: test-harness.sh TESTS-DIR}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib/qemu.sh
. "$D/lib/qemu.sh"
# shellcheck source=../lib/skips.sh
VWC_SKIPS_ALLOW=$T/allow . "$D/lib/skips.sh"
# shellcheck source=../lib/tap.sh
. "$D/lib/tap.sh"
# guest CASE-BODY: a guest run's serial log from sh with tests/lib/guest.sh
guest() { sh -c ". '$D/lib/guest.sh'; $1" >"$T/log" 2>&1; }
results() { VWC_INFO=0 vq_results "$T/log" "[k] c:" "$T/names" >"$T/out"; }

guest 'plan 2; pass a; check_eq b 1 1; finish'
results
t "plan met: no failure" [ "$VQ_FAILED/$VQ_PASSED/$VQ_PLAN" = 0/2/2 ]
guest 'plan 3; pass a; true && false && pass b; pass c; finish'
results
t "a check behind a failed && leaves the plan short: one failure" [ "$VQ_FAILED" = 1 ]
t "the failure names the plan" grep -q '^\[k\] c: FAIL plan: 3 planned, 2 ran' "$T/out"
guest 'plan 2; for x in $EMPTY; do pass "loop $x"; done; pass a; pass b; pass c; finish'
results
t "more checks than planned: one failure" grep -q 'FAIL plan: 2 planned, 3 ran' "$T/out"
guest 'pass a; finish'
results
t "no plan: one failure" grep -q 'FAIL plan: the run declared no plan' "$T/out"
guest 'plan 1; plan 2; pass a; pass b; skip c why; finish'
results
t "plans add up; a skip is a check" [ "$VQ_FAILED/$VQ_PLAN/$VQ_SKIPPED" = 0/3/1 ]
guest 'plan 2; pass a'
results
t "no DONE: the plan is not judged (the caller fails the run)" [ "$VQ_FAILED/$VQ_DONE" = 0/0 ]

: >"$T/names"
guest 'plan 6; fact pass k; fact check_eq q 1 1; pass p; pass p; check_eq "nvme0n1 r" 1 1; check_eq "nvme1n1 r" 1 1; finish'
results
t "facts apart: 2 of 6 passes" [ "$VQ_FACTS/$VQ_PASSED" = 2/6 ]
t "a failed fact is a failure" bash -c "sh -c \". '$D/lib/guest.sh'; fact check_eq k 1 2\" | grep -q '^VWC-TEST: FAIL \[fact\] k:'"
t "figures: raw and distinct (a repeated name, a number in it)" [ "$(vq_figures "$T/names" x:)" = "x: product checks 4 (2 distinct), harness facts 2 (2 distinct)" ]
guest 'facts_case; plan 2; pass a; fact pass b; finish'
t "facts_case marks every check" [ "$(grep -c 'PASS \[fact\]' "$T/log")" = 2 ]

guest 'sleep 30 & p=$!; s=$(proc_start $p); check_alive alive $p "$s"; kill $p; wait $p; check_alive dead $p "$s"; sleep 30 & q=$!; check_alive other $q 1; kill $q'
t "check_alive: a live process passes" grep -q '^VWC-TEST: PASS alive$' "$T/log"
t "check_alive: a dead one fails" grep -q '^VWC-TEST: FAIL dead: pid [0-9]* is not running' "$T/log"
t "check_alive: another start time fails" grep -q '^VWC-TEST: FAIL other: got' "$T/log"

printf '%s\n' '[*] ok: SKIP x: no loop driver*' >"$T/allow"
printf '%s\n' '[6.1] ok: SKIP x: no loop driver here' '[6.1] bad: SKIP y: valgrind not in the image' >"$T/skips.out"
CI=true skips_judge vm "$T/skips.out" 2 >"$T/out"
t "under CI: an allow-list line without a reason is an error" [ "$SKIPS_BAD" = 2 ]
printf '%s\n' 'vm: [*] ok: SKIP x: no loop driver* => cloud kernels ship no loop module' >"$T/allow"
CI=true skips_judge vm "$T/skips.out" 2 >"$T/out"
t "under CI: the allowed skip passes, the other fails" [ "$SKIPS_BAD" = 1 ]
t "under CI: the failure names the skip" grep -q 'FAIL vm: a skip under CI .*valgrind not in the image' "$T/out"
CI=true skips_judge vm "$T/skips.out" 4 >"$T/out"
t "under CI: skips counted but not named fail" [ "$SKIPS_BAD" = 3 ]
CI= skips_judge vm "$T/skips.out" 2 >"$T/out"
t "outside CI: no skip fails" [ "$SKIPS_BAD" = 0 ]
printf '%s\n' 'ok 3 - promtool: fleet serial logs # SKIP no fleet log given' >"$T/skips.out"
CI=true skips_judge fleet "$T/skips.out" 1 >"$T/out"
t "under CI: a TAP skip is judged too" [ "$SKIPS_BAD" = 1 ]
# vq_boot's figures leave the caller's settings alone: the system suite
# builds every variant's QEMU command from VQ_CPU, the -cpu model (the
# host CPU seconds in the same name made each later variant's QEMU fail
# with "unable to find CPU model '0.0'")
cpu0=$VQ_CPU
vq_boot "$T/vq.log" "$T/vq.sock" "$T" 'never' 5 5 '' -- bash -c 'sleep 0.3' x >/dev/null 2>&1
t "vq_boot keeps VQ_CPU, the -cpu model ($cpu0, got $VQ_CPU)" [ "$VQ_CPU" = "$cpu0" ]
t "vq_boot says QEMU's CPU seconds apart (VQ_CPU_S $VQ_CPU_S)" \
	bash -c '[[ $1 =~ ^[0-9]+\.[0-9]$ ]]' _ "$VQ_CPU_S"
# the clock's arithmetic in bash (no process a poll): seconds with
# decimals, compared to the millisecond
not() { ! "$@"; }
t "vq_over: 90.1 s is over 90" vq_over 90.1 90
t "vq_over: 90 s is not over 90.0" not vq_over 90 90.0
t "vq_over: 0.05 s is over 0.049" vq_over 0.05 0.049
t "vq_over: 08.09 s is not over 8.1" not vq_over 08.09 8.1
t0=$(vq_now)
sleep 0.3
e=$(vq_elapsed "$t0")
# (a loaded host may take longer than 0.3 s: no upper bound but the form)
t "vq_elapsed: 0.3 s of sleep reads 0.3 or more, one decimal ($e)" \
	eval '[[ $e =~ ^[0-9]+\.[0-9]$ ]] && ! vq_over 0.3 "$e"'
# the poll's own deadlines: a guest that reached its marker and outlives
# its timeout is stopped at the timeout; one that never shows the marker
# is tried twice and given up after its boot timeout each time (vq_boot
# adds -serial file:LOG: the stand-in's $2)
vq_boot "$T/vq.log" "$T/vq.sock" "$T" 'VWC-INIT' 5 1 '' -- \
	bash -c 'echo VWC-INIT >"${2#file:}"; exec sleep 30' x >/dev/null 2>&1 || true
t "vq_boot: stopped at its 1 s timeout ($VQ_STATUS after $VQ_TOTAL s)" \
	eval '[ "$VQ_STATUS" = timeout ] && vq_over "$VQ_TOTAL" 0.9 && ! vq_over "$VQ_TOTAL" 15'
vq_boot "$T/vq.log" "$T/vq.sock" "$T" 'never' 0.5 30 '' -- bash -c 'exec sleep 30' >/dev/null 2>&1 || true
t "vq_boot: no marker within 0.5 s, twice: noinit ($VQ_STATUS, $VQ_ATTEMPTS attempts, last $VQ_TOTAL s)" \
	eval '[ "$VQ_STATUS" = noinit ] && [ "$VQ_ATTEMPTS" = 2 ] && ! vq_over "$VQ_TOTAL" 15'
# vq_pvh: a bzImage's payload uncompressed when it is whole and an ELF
# with the PVH entry note; the bzImage itself otherwise. A small ELF with
# that note (type 18, "Xen") in a made-up bzImage: 2 setup sectors,
# the payload at 100 bytes into the protected-mode part, its size after.
if command -v zstd >/dev/null && command -v gcc >/dev/null; then
	printf '.section .note.Xen,"a"\n.balign 4\n.long 4, 4, 18\n.asciz "Xen"\n.long 0x1000000\n' >"$T/n.s"
	gcc -c -o "$T/elf" "$T/n.s"
	# bzimage PAYLOAD-FILE SIZE-DELTA OUT: a bzImage around the payload,
	# its uncompressed size (the last 4 bytes) off by SIZE-DELTA
	bzimage() {
		local sz
		sz=$(($(stat -c %s "$1") + 4))
		head -c $((3 * 512 + 100)) /dev/zero >"$3"
		printf '\x02' | dd of="$3" bs=1 seek=497 conv=notrunc status=none
		python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<II", 100, int(sys.argv[1])))' \
			"$sz" | dd of="$3" bs=1 seek=584 conv=notrunc status=none
		cat "$1" >>"$3"
		python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<I", int(sys.argv[1])))' \
			$(($(stat -c %s "$T/elf") + $2)) >>"$3"
	}
	zstd -q -c "$T/elf" >"$T/p.zst"
	bzimage "$T/p.zst" 0 "$T/bz"
	t "vq_pvh: a zstd payload with the PVH note gives its ELF" [ "$(vq_pvh "$T/bz")" = "$T/bz.pvh" ]
	t "vq_pvh: the ELF as it was compressed" cmp -s "$T/bz.pvh" "$T/elf"
	t "vq_pvh: made once (a second call finds it)" [ "$(vq_pvh "$T/bz")" = "$T/bz.pvh" ]
	# an ELF of another size than the payload says (a stream cut short)
	bzimage "$T/p.zst" 1 "$T/bz2"
	t "vq_pvh: a size unlike the payload's gives the bzImage" [ "$(vq_pvh "$T/bz2")" = "$T/bz2" ]
	t "vq_pvh: and leaves no file behind" bash -c '! ls "$1".pvh* 2>/dev/null' _ "$T/bz2"
	# an ELF without the note
	gcc -c -x assembler -o "$T/elf" - </dev/null
	zstd -q -c "$T/elf" >"$T/p.zst"
	bzimage "$T/p.zst" 0 "$T/bz3"
	t "vq_pvh: an ELF without the PVH note gives the bzImage" [ "$(vq_pvh "$T/bz3")" = "$T/bz3" ]
	t "vq_pvh: not a bzImage gives the file itself" [ "$(vq_pvh "$T/n.s")" = "$T/n.s" ]
fi
tap_done
