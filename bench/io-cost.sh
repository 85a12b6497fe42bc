#!/bin/bash
# Host-side analysis of the benchmark io-cost (bench/guest/bench-io-cost.sh):
# reads its "BENCH-RUN: qd=Q pair=K state=S iops=... cpu=... ios=...
# wall_ms=... busy=... ticks=... kev=..." lines (from a serial log or a
# results file) and prints, for each state S other than "off" ("on": the
# sidecar as installed; "tp": the sidecar on the nvme tracepoints), per QD:
#   - per pair, the IOPS ratio S/off (sidecar running / stopped);
#   - the cost: 1 - the geometric mean of those ratios, with its 95%
#     confidence interval: a Student t-interval of the paired log-ratios
#     (mean +- t(0.975, n-1) * sd / sqrt(n)), turned back into a ratio;
#   - the same for fio's CPU per I/O (usr+sys % / IOPS), which grows if the
#     tracepoints cost CPU time;
#   - IOPS, fio CPU and the guest's busy % (means), the sidecar's CPU ticks
#     during its runs and the kernel events it received;
#   - a verdict: the cost is resolved at or below the limit when the
#     interval's upper bound is at most LIMIT %, resolved above it when its
#     lower bound is above LIMIT %, not resolved otherwise.
# Usage: bench/io-cost.sh [-l LIMIT] FILE   (LIMIT: 1, in %)
set -euo pipefail
limit=1
while getopts l: o; do
	case $o in
	l) limit=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "$#" -eq 1 ] || { echo "usage: bench/io-cost.sh [-l LIMIT] FILE" >&2; exit 2; }

sed -n -e 's/.*BENCH-RUN: \(qd=.*\)$/\1/p' -e t -e '/^qd=/p' "$1" | tr -d '\r' | awk -v limit="$limit" '
# t(0.975, df) for df 1..30; above 30, df 30 (a wider interval than the
# exact one: conservative)
BEGIN {
	split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
	      "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 " \
	      "2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", T, " ")
}
function tq(df) { return df > 30 ? T[30] : T[df] }
{
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		v[kv[1]] = kv[2]
	}
	q = v["qd"]; k = v["pair"]; s = v["state"]
	if (!(q in seen)) { seen[q] = 1; qs[++nq] = q }
	if (s != "off" && !(s in sseen)) { sseen[s] = 1; ss[++ns] = s }
	if (k + 1 > np[q]) np[q] = k + 1
	iops[q, k, s] = v["iops"]; cpu[q, k, s] = v["cpu"]
	busy[q, k, s] = v["busy"]; ticks[q, k, s] = v["ticks"]
	kev[q, k, s] = v["kev"]; ios[q, k, s] = v["ios"]
}
# ci NAME N: mean and 95% t-interval of x[1..N] (log-ratios), as ratios
function ci(n,    i, m, ss, sd, h) {
	m = 0
	for (i = 1; i <= n; i++) m += x[i]
	m /= n
	ss = 0
	for (i = 1; i <= n; i++) ss += (x[i] - m) ^ 2
	sd = n > 1 ? sqrt(ss / (n - 1)) : 0
	h = n > 1 ? tq(n - 1) * sd / sqrt(n) : 0
	R_m = exp(m); R_lo = exp(m - h); R_hi = exp(m + h); R_sd = sd
}
END {
	if (!nq) { print "io-cost: no BENCH-RUN lines"; exit 1 }
	for (si = 1; si <= ns; si++) {
	S = ss[si]
	printf "--- state %s (%s) against off (no sidecar)\n", S, S == "on" ? "the sidecar as installed" : S == "tp" ? "the sidecar on the nvme tracepoints" : "?"
	for (j = 1; j <= nq; j++) {
		q = qs[j]; n = 0; list = ""
		son = soff = con = coff = bon = boff = tk = ke = ion = ioff = nobusy = 0
		for (k = 0; k < np[q]; k++) {
			if (!((q, k, S) in iops) || !((q, k, "off") in iops)) continue
			if (iops[q, k, "off"] <= 0 || iops[q, k, S] <= 0) continue
			n++
			r = iops[q, k, S] / iops[q, k, "off"]
			x[n] = log(r); lr[n] = r
			y[n] = log((cpu[q, k, S] / iops[q, k, S]) / (cpu[q, k, "off"] / iops[q, k, "off"]))
			list = list sprintf(" %.3f", r)
			son += iops[q, k, S]; soff += iops[q, k, "off"]
			con += cpu[q, k, S]; coff += cpu[q, k, "off"]
			bon += busy[q, k, S]; boff += busy[q, k, "off"]
			if (busy[q, k, S] == "" || busy[q, k, "off"] == "") nobusy = 1
			ion += ios[q, k, S]; ioff += ios[q, k, "off"]
			tk += ticks[q, k, S]; ke += kev[q, k, S]
		}
		if (n < 2) { printf "QD%s: %d complete pair(s): nothing to estimate\n", q, n; continue }
		# sorted ratios and their median
		for (a = 1; a <= n; a++) s2[a] = lr[a]
		for (a = 2; a <= n; a++) for (b = a; b > 1 && s2[b - 1] > s2[b]; b--) { t = s2[b]; s2[b] = s2[b - 1]; s2[b - 1] = t }
		med = n % 2 ? s2[(n + 1) / 2] : (s2[n / 2] + s2[n / 2 + 1]) / 2
		ci(n)
		cost = 100 * (1 - R_m); clo = 100 * (1 - R_hi); chi = 100 * (1 - R_lo)
		printf "QD%s: %d pairs; IOPS ratio " S "/off per pair (in run order):%s; median %.3f\n", q, n, list, med
		gb = nobusy ? "not recorded" : sprintf("off %.1f%%, %s %.1f%%", boff / n, S, bon / n)
		printf "QD%s: IOPS mean off %.0f, " S " %.0f; fio CPU (usr+sys) mean off %.1f%%, " S " %.1f%%; guest CPUs busy mean %s; I/Os off %d, " S " %d\n", \
			q, soff / n, son / n, coff / n, con / n, gb, ioff, ion
		printf "QD%s: IOPS cost of the sidecar = 1 - geometric mean of " S "/off = %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%] (paired log-ratios, Student t, %d df; sd of log-ratio %.3f)\n", \
			q, cost, clo, chi, n - 1, R_sd
		for (a = 1; a <= n; a++) x[a] = y[a]
		ci(n)
		printf "QD%s: fio CPU per I/O " S "/off = %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%] (same method)\n", \
			q, 100 * (R_m - 1), 100 * (R_lo - 1), 100 * (R_hi - 1)
		printf "QD%s: the sidecar during its runs: %d CPU ticks in all, %d kernel events received in all (over its %d lives)\n", q, tk, ke, n
		if (chi <= limit)
			verdict = sprintf("resolved: at most %s%% (upper bound %+.2f%%)", limit, chi)
		else if (clo > limit)
			verdict = sprintf("resolved ABOVE %s%% (lower bound %+.2f%%)", limit, clo)
		else
			verdict = sprintf("NOT resolved against %s%%: the interval [%+.2f%%, %+.2f%%] contains it", limit, clo, chi)
		printf "QD%s: verdict: %s\n", q, verdict
	}
	}
}'
