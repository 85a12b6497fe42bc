# Sourced by bench-audit-scale.sh and bench-audit-fabrics.sh (after
# /vwc/guest/lib.sh): audit_profile NCTRL NNS measures `nvme-vwc-sync audit`
# over the machine's NCTRL controllers and NNS namespaces, printing BENCH:
# lines (see bench-audit-scale.sh for what).
# shellcheck shell=sh
audit_profile() {
	NCTRL=$1 NNS=$2
	B=nvme-vwc-sync
	old=''
	[ -x /usr/local/sbin/nvme-vwc-sync-old ] && old=/usr/local/sbin/nvme-vwc-sync-old

	# sanity: the report has them all
	$B audit -o json >/tmp/audit.json 2>/tmp/audit.err
	rc=$?
	check_eq "audit-profile: audit -o json lists $NCTRL controllers and $NNS namespaces (exit $rc)" \
		"$(jq -r '[(.controllers | length), (.namespaces | length)] | map(tostring) | join(" ")' /tmp/audit.json 2>&1)" "$NCTRL $NNS"
	echo "BENCH: report: $(command wc -c </tmp/audit.json) bytes; $(jq '[.namespaces[] | select(.ns_no_volatile_cache != null)] | length' /tmp/audit.json) namespaces with their own cache bit known (Identify Namespace read)"
	if [ -n "$old" ]; then
		"$old" audit -o json >/tmp/audit-old.json 2>/dev/null
		check_eq "audit-profile: this build and the previous one report the same, byte for byte" \
			"$(md5sum </tmp/audit.json | cut -d' ' -f1)" "$(md5sum </tmp/audit-old.json | cut -d' ' -f1)"
	fi

	# ticks: the shell's waited-for children's user and system time (fields 16
	# and 17 of /proc/$$/stat), read with a builtin
	ticks() { read -r _st </proc/$$/stat; set -- ${_st#*") "}; _u=${14} _s=${15}; }
	# run LABEL CMD...: append "ms user_ticks sys_ticks" to /tmp/t.LABEL (the
	# two date processes outside the CPU times, inside the wall time)
	run() {
		_l=$1
		shift
		_t0=$(/usr/bin/date +%s%N)
		ticks
		_u0=$_u _s0=$_s
		"$@" >/tmp/bench.out 2>&1
		ticks
		_t1=$(/usr/bin/date +%s%N)
		echo "$(((_t1 - _t0) / 1000000)) $((_u - _u0)) $((_s - _s0))" >>"/tmp/t.$_l"
	}
	rm -f /tmp/t.*
	i=0
	while [ "$i" -lt "$REPS" ]; do
		run json $B audit -o json
		run table $B audit
		run scan $B audit -o json nvme99
		run help $B audit --help
		[ -z "$old" ] || run oldjson "$old" audit -o json
		i=$((i + 1))
	done
	# row LABEL FILE: median wall, user, system (ms) and all wall times
	row() {
		awk -v l="$1" '{ w[NR] = $1; u[NR] = $2; s[NR] = $3; all = all " " $1 }
		function med(a, n,  i, j, t) {
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return a[int((n + 1) / 2)]
		}
		END { printf "BENCH:   %-44s %6d ms  user %5d ms  sys %5d ms   [%s ]\n", l, med(w, NR), med(u, NR) * 10, med(s, NR) * 10, all }' "$2"
	}
	echo "BENCH: audit over $NNS namespaces, $NCTRL controllers, QEMU/TCG, $REPS runs each, interleaved (median wall, user and system CPU; all wall times in ms)"
	row "nvme-vwc-sync audit -o json" /tmp/t.json
	row "nvme-vwc-sync audit (table)" /tmp/t.table
	row "audit -o json nvme99 (scan, nothing probed)" /tmp/t.scan
	row "audit --help (process start)" /tmp/t.help
	[ -z "$old" ] || row "previous build: audit -o json" /tmp/t.oldjson

	# strace_of LABEL BIN: the two strace views of one audit -o json
	strace_of() {
		strace -c -f -o /tmp/sc.txt "$2" audit -o json >/dev/null 2>&1
		echo "BENCH: $1: strace -c -f (calls, seconds under strace)"
		sed -n '1,22p' /tmp/sc.txt | sed 's/^/BENCH:   /'
		tail -n 1 /tmp/sc.txt | sed 's/^/BENCH:   /'
		strace -f -ttt -T -o /tmp/st.txt "$2" audit -o json >/dev/null 2>&1
		echo "BENCH: $1: strace -f -ttt -T: ioctl and openat, gaps between system calls by the phase they precede"
		awk '
		function cls(l) {
			if (l ~ / ioctl\(/) return "ioctl (NVMe commands)"
			if (l ~ /^[0-9]+ +[0-9.]+ write\(1,/) return "report (stdout)"
			if (l ~ /queue\//) return "block layer (queue/)"
			if (l ~ /class\/(nvme|block)|\/sys\/devices/) return "scan (sysfs)"
			return "other"
		}
		{
			pid = $1; ts = $2 + 0
			d = 0
			if (match($0, /<[0-9.]+>$/)) d = substr($0, RSTART + 1, RLENGTH - 2) + 0
			name = $3; sub(/\(.*/, "", name)
			if ($0 ~ /resumed>/) next
			n++
			if (!t0) t0 = ts
			c = cls($0)
			nc[c]++
			if (name == "ioctl") nio++
			if (name == "openat") {
				no++
				p = $0; sub(/^[^"]*"/, "", p); sub(/".*/, "", p)
				if (p ~ /queue\/write_cache/) k = "queue/write_cache"
				else if (p ~ /queue\//) k = "queue/other"
				else if (p ~ /^\/dev\/nvme/) k = "/dev/nvme*"
				else if (p ~ /^\/sys\/class\/(nvme|block)\/?$/) k = "class dirs"
				else if (p ~ /^\/sys/) k = "sysfs other"
				else k = "files other"
				op[k]++
			}
			if (lastend[pid]) {
				g = ts - lastend[pid]
				if (g > 0) {
					gap[c] += g; gaps += g
					if (g > big1) { big3 = big2; b3 = b2; big2 = big1; b2 = b1; big1 = g; b1 = prev[pid] " || " $0 }
					else if (g > big2) { big3 = big2; b3 = b2; big2 = g; b2 = prev[pid] " || " $0 }
					else if (g > big3) { big3 = g; b3 = prev[pid] " || " $0 }
				}
			}
			if (!first[c]) first[c] = ts
			last[c] = ts
			lastend[pid] = ts + d
			prev[pid] = substr($0, 1, 140)
			tend = ts + d
		}
		END {
			printf "BENCH:   %d system calls over %.0f ms under strace; ioctl %d, openat %d\n", n, (tend - t0) * 1000, nio, no
			for (k in op) printf "BENCH:   openat %-20s %6d\n", k, op[k]
			printf "BENCH:   time between system calls (the program itself): %.0f ms\n", gaps * 1000
			for (c in nc) printf "BENCH:   before %-24s %6d calls, %7.1f ms between calls, from %+.0f to %+.0f ms\n", c, nc[c], gap[c] * 1000, (first[c] - t0) * 1000, (last[c] - t0) * 1000
			printf "BENCH:   longest gaps: %.1f ms  %s\n", big1 * 1000, b1
			printf "BENCH:                 %.1f ms  %s\n", big2 * 1000, b2
			printf "BENCH:                 %.1f ms  %s\n", big3 * 1000, b3
		}' /tmp/st.txt
		echo "BENCH: $1: ioctl samples"
		grep ' ioctl(' /tmp/st.txt | sed 's/^[0-9]* *[0-9.]* //' | cut -c1-160 | awk '{ k = $0; sub(/0x[0-9a-f]+/, "", k); if (!s[substr(k, 1, 60)]++) print "BENCH:   " $0 }' | head -n 8
	}
	strace_of "this build" $B
	[ -z "$old" ] || strace_of "previous build" "$old"
}
