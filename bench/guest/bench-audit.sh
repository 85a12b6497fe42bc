# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# timeout: 1500
#
# Benchmark (not a test): what a fleet audit costs on one host with
# 16 controllers and 64 namespaces, under QEMU/TCG.
# 1. `nvme-vwc-sync audit -o json` against the shell loop an admin writes
#    today for the same facts (nvme list; per controller nvme id-ctrl and
#    nvme get-feature --feature-id=6; per namespace queue/write_cache),
#    interleaved in one run, REPS times each: median wall times and ratio.
# 2. The audit at 4, 16, 32 and 64 namespaces (1, 4, 8, 16 controllers given
#    by name): median wall time, per namespace, and the marginal cost.
# 3. Where the fixed cost goes: the timer itself (two `date` processes
#    around a shell builtin), a static exec (/bin/true, busybox), process
#    start (`audit --help`), the scan with nothing probed (`audit nvme99`).
#    Wall times include the timer's overhead, for the loop and the audit
#    alike; the ratio net of it is printed too. The host's load moves the
#    loop (some 100 processes) more than the audit: compare figures of one
#    run. If the image has /usr/local/sbin/nvme-vwc-sync-old (a previous
#    build, put into the DESTDIR by hand), it runs interleaved too.
# Lines for the bench runner start with "BENCH:".
. /vwc/guest/lib.sh
REPS=${VWC_BENCH_REPS:-30}
NCTRL=16 NNS=64

all_there() {
	[ "$(ls -d /sys/class/nvme/nvme* 2>/dev/null | command wc -l)" -eq "$NCTRL" ] &&
		[ "$(ls -d /sys/block/nvme*n* 2>/dev/null | command wc -l)" -eq "$NNS" ]
}
wait_for - 120 all_there || { fail "bench-audit: $NCTRL controllers, $NNS namespaces" "not all probed"; finish; exit 0; }

CTRLS=''
i=0
while [ "$i" -lt "$NCTRL" ]; do CTRLS="$CTRLS $(ctrl_by_serial "VWC$i")"; i=$((i + 1)); done
CTRLS=${CTRLS# }

# The admin's loop: the same facts the audit reports (identity, VWC present,
# WCE, every namespace's block-layer mode), one line per namespace.
admin_loop() {
	nvme list >/dev/null
	for c in /sys/class/nvme/nvme*; do
		c=${c##*/}
		id=$(nvme id-ctrl "/dev/$c") || return 1
		facts=$(echo "$id" | awk -F' *: *' '$1 == "mn" || $1 == "sn" || $1 == "fr" || $1 == "vwc" { printf "%s=%s ", $1, $2 }')
		wce=$(nvme get-feature "/dev/$c" --feature-id=6 | sed -n 's/.*Current value: *//p')
		for n in /sys/class/nvme/"$c"/nvme*n*; do
			n=${n##*/}
			echo "$c $facts wce=$wce $n $(cat "/sys/block/$n/queue/write_cache")"
		done
	done
}
audit() { nvme-vwc-sync audit -o json "$@"; }

# us_of CMD...: wall time of CMD in microseconds (output discarded)
us_of() {
	_t0=$(/usr/bin/date +%s%N)
	"$@" >/tmp/bench.out 2>&1
	_t1=$(/usr/bin/date +%s%N)
	echo $(((_t1 - _t0) / 1000))
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }

# sanity: both see the same 64 namespaces and the same WCE
admin_loop >/tmp/loop.out
audit >/tmp/audit.json
check_eq "bench-audit: loop and audit see 64 namespaces" "$(command wc -l </tmp/loop.out) $(jq '.namespaces | length' /tmp/audit.json)" "64 64"
check_eq "bench-audit: loop and audit agree on WCE" \
	"$(grep -cE 'wce=(0x)?0+ ' /tmp/loop.out) $(jq '[.namespaces[] | select(.recommended == "write through")] | length' /tmp/audit.json)" "32 32"
info "loop line: $(head -n 1 /tmp/loop.out)"

# 1. side by side, interleaved so drift in the host's load hits both alike
# (and the timer's own cost, measured in the same rounds)
old=''
[ -x /usr/local/sbin/nvme-vwc-sync-old ] && old=/usr/local/sbin/nvme-vwc-sync-old
ta='' tl='' to='' tp=''
i=0
while [ "$i" -lt "$REPS" ]; do
	ta="$ta $(us_of audit)"
	tl="$tl $(us_of admin_loop)"
	to="$to $(us_of :)"
	[ -z "$old" ] || tp="$tp $(us_of "$old" audit -o json)"
	i=$((i + 1))
done
ma=$(echo "$ta" | median) ml=$(echo "$tl" | median) mo=$(echo "$to" | median)
list() { for t in "$@"; do printf '%s ' "$(ms "$t")"; done | sed 's/ $//'; }
fastest() { tr ' ' '\n' | grep . | sort -n | head -n 1; }
# shellcheck disable=SC2086 # one word per run
{
echo "BENCH: fleet audit, 16 controllers x 4 namespaces, QEMU/TCG, $REPS runs each, interleaved (median; all runs in ms)"
echo "BENCH:   nvme-vwc-sync audit -o json   $(ms "$ma") ms   [$(list $ta)]"
echo "BENCH:   admin shell loop              $(ms "$ml") ms   [$(list $tl)]"
echo "BENCH:   timer alone (date; :; date)   $(ms "$mo") ms   [$(list $to)]"
echo "BENCH:   ratio loop/audit              x$(awk -v a="$ma" -v l="$ml" 'BEGIN { printf "%.1f", l / a }')"
echo "BENCH:   ratio net of the timer        x$(awk -v a="$ma" -v l="$ml" -v o="$mo" 'BEGIN { printf "%.1f", (l - o) / (a - o) }')"
echo "BENCH:   fastest runs: audit $(ms "$(echo "$ta" | fastest)") ms, loop $(ms "$(echo "$tl" | fastest)") ms"
if [ -n "$old" ]; then
	mp=$(echo "$tp" | median)
	echo "BENCH:   previous build (nvme-vwc-sync-old audit -o json) $(ms "$mp") ms, fastest $(ms "$(echo "$tp" | fastest)") ms   [$(list $tp)]"
	echo "BENCH:   ratio previous/this build   x$(awk -v a="$ma" -v p="$mp" 'BEGIN { printf "%.2f", p / a }'), loop/previous x$(awk -v p="$mp" -v l="$ml" 'BEGIN { printf "%.1f", l / p }')"
fi
}

# 2. cost per namespace as the host grows
echo "BENCH: audit -o json by namespace count ($REPS runs each, median)"
echo "BENCH:   namespaces | controllers |   wall ms | per namespace ms"
prev_n='' prev_t=''
for k in 1 4 8 16; do
	sel=$(echo "$CTRLS" | tr ' ' '\n' | head -n "$k" | tr '\n' ' ')
	got=$(audit $sel | jq '.namespaces | length')
	[ "$got" -eq $((k * 4)) ] || fail "bench-audit: audit of $k controllers" "$got namespaces, expected $((k * 4))"
	t=''
	i=0
	while [ "$i" -lt "$REPS" ]; do
		# shellcheck disable=SC2086 # one word per controller
		t="$t $(us_of audit $sel)"
		i=$((i + 1))
	done
	m=$(echo "$t" | median)
	printf 'BENCH:   %10d | %11d | %9s | %s\n' "$got" "$k" "$(ms "$m")" \
		"$(awk -v u="$m" -v n="$got" 'BEGIN { printf "%.2f", u / n / 1000 }')"
	[ "$k" -ne 1 ] || { first_n=$got first_t=$m; }
	prev_n=$got prev_t=$m
done
echo "BENCH:   marginal cost 4 -> 64 namespaces: $(awk -v a="$first_t" -v b="$prev_t" -v n=$((prev_n - first_n)) 'BEGIN { printf "%.2f", (b - a) / n / 1000 }') ms per namespace (fixed start-up $(ms "$first_t") ms at 4)"

# 3. the fixed cost, step by step, interleaved
echo "BENCH: fixed cost ($REPS runs each, interleaved; median, fastest)"
tt='' tx='' th='' tn='' tq=''
i=0
while [ "$i" -lt "$REPS" ]; do
	tt="$tt $(us_of :)"
	tx="$tx $(us_of /bin/true)"
	th="$th $(us_of nvme-vwc-sync audit --help)"
	tn="$tn $(us_of nvme-vwc-sync audit -o json nvme99)"
	[ -z "$old" ] || tq="$tq $(us_of "$old" audit -o json nvme99)"
	i=$((i + 1))
done
row() { # LABEL TIMES
	printf 'BENCH:   %-58s %7s ms  %7s ms\n' "$1" "$(ms "$(echo "$2" | median)")" "$(ms "$(echo "$2" | fastest)")"
}
row "timer alone (date; :; date)" "$tt"
row "/bin/true (a static exec)" "$tx"
row "baseline: 'nvme-vwc-sync audit --help' (process start, no scan)" "$th"
row "baseline: 'nvme-vwc-sync audit nvme99' (scan, nothing probed)" "$tn"
[ -z "$old" ] || row "previous build: 'audit nvme99' (scan, nothing probed)" "$tq"
finish
