# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The one QEMU harness of the test bed, sourced by tests/vm/run-vm.sh (the
# busybox guests, also under the coverage, sanitize and valgrind suites)
# and tests/system/run.sh (booted Debian systems):
#
#   vq_boot      boot a guest, retry a boot that never reached its marker,
#                enforce the timeouts, send the guest's monitor commands
#   vq_results   read a serial log's result lines and count them
#
# The guest's side of the protocol, one line each on the serial console:
#   VWC-TEST: PASS <name> | FAIL <name>: <detail> | SKIP <name>: <why>
#                            ("[fact] " before the name: a harness or
#                            fixture fact, not the product; see
#                            tests/lib/guest.sh)
#   VWC-TEST: PLAN <n>       the checks the run declares it will print
#                            (several PLAN lines add up)
#   VWC-TEST: DONE           the guest test ran to its end
#   VWC-INFO: <text>         facts, printed by the host
#   VWC-HOST: <command>      the host sends <command> to the QEMU monitor,
#                            {dir} replaced by the run's directory

# Two QEMU 7.2 TCG problems crash guests early in boot (seen on this
# machine): with cmpxchg16b, 6.12 oopses in SLUB about one boot in three
# (-cx16 fixes it); with multi-threaded TCG, 7.2 oopses on an int3 while
# patching kernel text about one boot in five (thread=single fixes it).
# With both, 58 of 58 test boots of 6.1, 6.12 and 7.2 reached init; the
# retry in vq_boot stays as a backstop.
# The model is QEMU's own qemu64 (SSE3; no SSE4.2, no AVX), not max (every
# feature TCG emulates, AVX2 included): the same guests cost
# less QEMU CPU with it. Side by side, two runs at once: 17 VM cases 433.0
# -> 416.1 s, then 6 heavier ones (soak, faults, patched-kernel, fleet,
# t700-rebind, fabrics-tcp) 471.5 -> 449.9 s, each case of the second
# lower; every check passed on both (331 and 295). Nothing the tests
# prove depends on the CPU's features (the Hygon case sets the vendor).
VQ_CPU=qemu64,-cx16
VQ_QPID=''
VQ_ACCEL=tcg,thread=single

# vq_now: the time, SECONDS.MICROSECONDS (bash's clock: no process; the
# harness's loops below read it five times a second for each guest, and a
# date and two awk there cost 2.7% of a core a guest, as much as an idle
# guest's QEMU)
vq_now() { echo "${EPOCHREALTIME/,/.}"; }
# vq_ms T: T (seconds, decimals allowed) in milliseconds, in VQ_MS
vq_ms() {
	local i=${1%%.*} f=000
	[ "$i" != "$1" ] && f=${1#*.}000
	VQ_MS=$((10#${i:-0} * 1000 + 10#${f:0:3}))
}
# vq_pvh VMLINUZ: the file QEMU's -kernel should load for VMLINUZ: its
# uncompressed ELF image (VMLINUZ.pvh beside it, made once, by a rename:
# runs at once may race), which QEMU starts at the kernel's PVH entry,
# or VMLINUZ itself when it has none. The bzImage's decompressor under
# TCG costs a guest's boot 0.8 s of CPU (zstd, 7.2) to 3 s (xz, 6.1's
# generic kernel; measured side by side, one core each) and tells the
# tests nothing: the kernel that runs is the same. PVH has no KASLR.
# The payload (bzImage header: setup_sects at 0x1f1, payload_offset and
# payload_length at 0x248) ends in its uncompressed size, which the
# result must have, and the ELF must carry the PVH entry note.
vq_pvh() {
	local z=$1 x=$1.pvh t ss po pl off magic want dec=()
	if [ -s "$x" ] && [ ! "$x" -ot "$z" ]; then
		echo "$x"
		return 0
	fi
	ss=$(od -An -tu1 -j 497 -N1 "$z" 2>/dev/null | tr -d ' ')
	read -r po pl < <(od -An -tu4 -j 584 -N8 "$z" 2>/dev/null) || true
	[ "${ss:-0}" -gt 0 ] || ss=4
	off=$(((ss + 1) * 512 + ${po:-0}))
	magic=$(od -An -tx1 -j "$off" -N4 "$z" 2>/dev/null | tr -d ' ')
	case $magic in
	28b52ffd) dec=(zstd -dcq) ;;
	fd377a58) dec=(xz -dcq --single-stream) ;;
	02214c18) dec=(lz4 -dcq) ;;
	1f8b*) dec=(gzip -dcq) ;;
	esac
	if [ "${#dec[@]}" -eq 0 ] || [ "${pl:-0}" -le 4 ] || ! command -v "${dec[0]}" >/dev/null; then
		echo "$z"
		return 0
	fi
	want=$(od -An -tu4 -j $((off + pl - 4)) -N4 "$z" | tr -d ' ')
	t=$(mktemp "$x.XXXXXX") || { echo "$z"; return 0; }
	tail -c +$((off + 1)) "$z" | head -c "$pl" | "${dec[@]}" >"$t" 2>/dev/null || true
	if [ "$(stat -c %s "$t")" = "$want" ] &&
		readelf -n "$t" 2>/dev/null | grep -Eq 'Xen .*(\(0x00000012\)|PHYS32_ENTRY)'; then
		chmod 644 "$t"
		mv -f "$t" "$x"
		echo "$x"
	else
		rm -f "$t"
		echo "$z"
	fi
}
# vq_since T0_MS: seconds since T0_MS (milliseconds, as vq_ms gives
# them), one decimal, in VQ_T (no subshell: vq_boot's poll)
vq_since() {
	vq_ms "${EPOCHREALTIME/,/.}"
	VQ_T=$((VQ_MS - $1))
	VQ_T=$((VQ_T / 1000)).$((VQ_T % 1000 / 100))
}
# vq_elapsed T0: seconds since T0 (one decimal; T0 from vq_now)
vq_elapsed() {
	vq_ms "$1"
	vq_since "$VQ_MS"
	echo "$VQ_T"
}
# vq_over T LIMIT: true when T > LIMIT (both seconds, decimals allowed)
vq_over() {
	local t
	vq_ms "$1"
	t=$VQ_MS
	vq_ms "$2"
	[ "$t" -gt "$VQ_MS" ]
}

# vq_forward LOG SOCK DIR PID FOLLOW MARKER: until PID ends, send LOG's
# "VWC-HOST: CMD" lines to the monitor at SOCK (replies to LOG.monitor);
# with FOLLOW non-empty, print the guest's own lines (not the kernel's)
# from MARKER on. With VWC_FAIL_FAST=1 in the environment, QEMU is told to
# quit at the guest's first FAIL line: the run ends failed without its
# DONE (tests/mutants/run.sh: a mutant is caught by one failure, and a
# mutant that breaks the controller's binding otherwise sits out every
# later check's timeout).
vq_forward() {
	local log=$1 sock=$2 dir=$3 pid=$4 follow=$5 marker=$6 line cmd started=''
	tail -n +1 -F --pid="$pid" "$log" 2>/dev/null | while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		*VWC-*) line=VWC-${line#*VWC-} ;;
		'['*']'* | *$'\e'*) continue ;; # kernel messages, escapes
		esac
		[[ $line != *"$marker"* ]] || started=1 # firmware output before
		[ -z "$follow" ] || [ -z "$started" ] || printf '%s\n' "$line"
		case $line in
		'VWC-TEST: FAIL '*)
			# VWC_FAIL_FAST=1 (the mutants: one failure is the verdict)
			[ "${VWC_FAIL_FAST:-}" != 1 ] ||
				echo quit | socat -t 2 - "UNIX-CONNECT:$sock" >/dev/null 2>&1 || true
			;;
		VWC-HOST:*)
			cmd=${line#VWC-HOST: }
			cmd=${cmd//\{dir\}/$dir}
			{
				echo "> $cmd"
				# the reply without HMP's banner, prompt and echo
				printf '%s\n' "$cmd" | socat -t 2 - "UNIX-CONNECT:$sock" 2>&1 |
					tr -d '\r' | grep -av '^QEMU .* monitor\|^(qemu)' || true
			} >>"$log.monitor"
			;;
		esac
	done
}

# vq_boot LOG SOCK DIR MARKER BOOT_TIMEOUT TIMEOUT FOLLOW -- QEMU-COMMAND...
# Runs QEMU-COMMAND with its serial console in LOG and its monitor on SOCK
# (vq_boot adds -serial and -monitor), and forwards the guest's monitor
# commands (vq_forward). A boot whose serial console never shows MARKER
# within BOOT_TIMEOUT seconds, or that ends without it, is tried once more;
# the failed attempt's log is kept as LOG.attemptN. QEMU is stopped after
# TIMEOUT seconds. Sets:
#   VQ_STATUS    ok (QEMU ended by itself after MARKER), timeout, noinit
#                (MARKER never seen, in both attempts), error (QEMU failed
#                before MARKER, e.g. a bad option: not retried)
#   VQ_BOOT      seconds to MARKER, or -
#   VQ_TOTAL     seconds of the last attempt
#   VQ_ATTEMPTS  boots made
#   VQ_RC        QEMU's exit status
#   VQ_CPU_S     host CPU seconds QEMU used in the last attempt, every
#                thread (as last read while it ran: up to 0.2 s short)
# While QEMU runs, VQ_QPID is its pid (for the caller's EXIT trap), then ''.
# QEMU's own output goes to LOG.qemu. Returns 0 when VQ_STATUS is ok.
vq_boot() {
	local log=$1 sock=$2 dir=$3 marker=$4 boot_to=$5 to=$6 follow=$7
	local wpid t0 t0_ms t st ticks f nap
	shift 7
	[ "${1:-}" = -- ] && shift
	VQ_STATUS=noinit VQ_BOOT=- VQ_ATTEMPTS=0 VQ_RC=0 VQ_TOTAL=0 VQ_CPU_S=0
	while [ "$VQ_STATUS" = noinit ] && [ "$VQ_ATTEMPTS" -lt 2 ]; do
		VQ_ATTEMPTS=$((VQ_ATTEMPTS + 1))
		if [ "$VQ_ATTEMPTS" -gt 1 ]; then
			mv "$log" "$log.attempt$((VQ_ATTEMPTS - 1))"
			echo "vq_boot: $(basename "$log"): the guest never reached '$marker'; retrying" >&2
		fi
		: >"$log"
		: >>"$log.monitor"
		rm -f "$sock"
		t0=$(vq_now)
		"$@" -serial "file:$log" -monitor "unix:$sock,server=on,wait=off" \
			</dev/null >>"$log.qemu" 2>&1 &
		VQ_QPID=$!
		vq_forward "$log" "$sock" "$dir" "$VQ_QPID" "$follow" "$marker" &
		wpid=$!
		VQ_STATUS=running VQ_BOOT=- ticks=0
		# the loop's pause: a read that times out on a pipe of our own
		# (no sleep process), opened after QEMU so that it does not
		# inherit it
		exec {nap}<> <(:)
		vq_ms "$t0"
		t0_ms=$VQ_MS
		while kill -0 "$VQ_QPID" 2>/dev/null; do
			vq_since "$t0_ms"
			t=$VQ_T
			# utime + stime (fields 14, 15; after the name's ") ")
			if read -r st <"/proc/$VQ_QPID/stat" 2>/dev/null; then
				read -r -a f <<<"${st##*) }"
				ticks=$((f[11] + f[12]))
			fi
			if [ "$VQ_BOOT" = - ]; then
				if grep -aqF -- "$marker" "$log"; then
					VQ_BOOT=$t
				elif vq_over "$t" "$boot_to"; then
					VQ_STATUS=noinit
					kill "$VQ_QPID" 2>/dev/null || true
					break
				fi
			fi
			if vq_over "$t" "$to"; then
				VQ_STATUS=timeout
				kill "$VQ_QPID" 2>/dev/null || true
				break
			fi
			read -r -t 0.2 -u "$nap" _ || true
		done
		exec {nap}<&-
		VQ_RC=0
		wait "$VQ_QPID" || VQ_RC=$?
		VQ_QPID=
		wait "$wpid" 2>/dev/null || true
		VQ_TOTAL=$(vq_elapsed "$t0")
		VQ_CPU_S=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }')
		if [ "$VQ_STATUS" = running ]; then
			if grep -aqF -- "$marker" "$log"; then
				VQ_STATUS=ok
				[ "$VQ_BOOT" != - ] || VQ_BOOT=$VQ_TOTAL
			elif [ "$VQ_RC" -ne 0 ]; then
				VQ_STATUS=error
			else
				VQ_STATUS=noinit
			fi
		fi
		[ "$VQ_STATUS" != noinit ] || VQ_BOOT=-
	done
	[ "$VQ_STATUS" = ok ]
}

# vq_results LOG PREFIX [NAMES]: print LOG's result and info lines in
# order, each as "PREFIX PASS|FAIL|SKIP|INFO ..." (INFO left out with
# VWC_INFO=0), and set
#   VQ_PASSED, VQ_FAILED, VQ_SKIPPED   the checks (PASS, FAIL, SKIP lines)
#   VQ_FACTS     of VQ_PASSED, the harness facts ("[fact] " names)
#   VQ_PLAN      the sum of the PLAN lines, or - when there was none
#   VQ_DONE      1 when the guest said VWC-TEST: DONE
# A run that said DONE and whose checks differ from its plan (or that
# declared none) gets one more FAIL, "PREFIX FAIL plan: ...", counted in
# VQ_FAILED. With NAMES, each passed check is appended to that file as
# "product|fact NAME", for the callers' distinct figures (vq_figures).
vq_results() {
	local log=$1 p=$2 names=${3:-/dev/null} line ran n
	VQ_PASSED=0 VQ_FAILED=0 VQ_SKIPPED=0 VQ_DONE=0 VQ_FACTS=0 VQ_PLAN=-
	while IFS= read -r line; do
		line=${line%$'\r'}
		line=VWC-${line#*VWC-}
		case $line in
		'VWC-TEST: PASS '*)
			n=${line#VWC-TEST: PASS }
			echo "$p PASS $n"
			VQ_PASSED=$((VQ_PASSED + 1))
			if [[ $n == '[fact] '* ]]; then
				VQ_FACTS=$((VQ_FACTS + 1))
				echo "fact ${n#\[fact\] }" >>"$names"
			else
				echo "product $n" >>"$names"
			fi ;;
		'VWC-TEST: FAIL '*) echo "$p FAIL ${line#VWC-TEST: FAIL }"; VQ_FAILED=$((VQ_FAILED + 1)) ;;
		'VWC-TEST: SKIP '*) echo "$p SKIP ${line#VWC-TEST: SKIP }"; VQ_SKIPPED=$((VQ_SKIPPED + 1)) ;;
		'VWC-TEST: PLAN '*)
			n=${line#VWC-TEST: PLAN }
			n=${n%% *}
			if [[ $n =~ ^[0-9]+$ ]]; then
				VQ_PLAN=$(( ${VQ_PLAN/-/0} + n ))
			else
				echo "$p FAIL plan: unreadable plan line '$line'"
				VQ_FAILED=$((VQ_FAILED + 1))
			fi ;;
		'VWC-TEST: DONE'*) VQ_DONE=1 ;;
		'VWC-INFO: '*) [ "${VWC_INFO:-1}" = 0 ] || echo "$p INFO ${line#VWC-INFO: }" ;;
		esac
	done < <(grep -a 'VWC-TEST: \|VWC-INFO: ' "$log" 2>/dev/null || true)
	ran=$((VQ_PASSED + VQ_FAILED + VQ_SKIPPED))
	[ "$VQ_DONE" = 1 ] || return 0
	if [ "$VQ_PLAN" = - ]; then
		echo "$p FAIL plan: the run declared no plan (plan N in the case; $ran checks ran)"
		VQ_FAILED=$((VQ_FAILED + 1))
	elif [ "$VQ_PLAN" -ne "$ran" ]; then
		echo "$p FAIL plan: $VQ_PLAN planned, $ran ran ($((VQ_PASSED)) passed, $((VQ_FAILED)) failed, $VQ_SKIPPED skipped)"
		VQ_FAILED=$((VQ_FAILED + 1))
	fi
}

# vq_figures NAMES LABEL: print "LABEL product checks N (N distinct),
# harness facts N (N distinct)" from a NAMES file of vq_results (each line
# "product|fact NAME"). In the distinct figures a name seen again counts
# once (the same check on another kernel, a loop's rounds), names compared
# with their numbers taken out (a device's or a round's number, a pid, a
# measured figure: "nvme0n1 write through" and "nvme1n1 write through" are
# one check).
vq_figures() {
	awk -v l="$2" '
		{ k = $1; sub(/^[a-z]+ /, ""); gsub(/[0-9]+/, "#"); n[k]++; if (!((k SUBSEP $0) in seen)) { seen[k, $0] = 1; d[k]++ } }
		END { printf "%s product checks %d (%d distinct), harness facts %d (%d distinct)\n", l, n["product"], d["product"], n["fact"], d["fact"] }' "$1"
}
