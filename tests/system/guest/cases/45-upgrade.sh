# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# when: [ "$MODE" = full ]
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# An upgrade to the next version with both drives sampled every 10 ms;
# records, the dynamic ID and every binding kept (needs 43-dynid).

# --- upgrade to the next version ---------------------------------------------
if ls /vwc/debs/v2/nvme-vwc-sync_*.deb >/dev/null 2>&1; then
	cp /vwc/debs/v2/*.deb /tmp/
	v2=$(dpkg-deb -f /vwc/debs/v2/nvme-vwc-sync_*.deb Version)
	pid=$(svc MainPID)
	nh=$(ns VWCHP)
	# 11 checks, and one for the hot-added drive
	plan 11
	[ -z "$nh" ] || plan 1
	s2=''
	if [ -n "$nh" ]; then
		/vwc/bin/wc-sampler sample -n "$nh" -d 0 -p 10000 >"$OUT/upgrade-sample2.txt" 2>&1 &
		s2=$!
	fi
	# Both drives' write_cache sampled every 10 ms through the whole
	# upgrade (wc-sampler, tests/vm/tools): the WCE-off drive must read
	# write through in every sample, the WCE-on drive write back (with
	# -c, a write-through sample is checked against Get Features 06h).
	/vwc/bin/wc-sampler sample -n "$n0" -d 0 -p 10000 >"$OUT/upgrade-sample0.txt" 2>&1 &
	s0=$!
	/vwc/bin/wc-sampler sample -n "$n1" -d 0 -p 10000 -c "/dev/$c1" >"$OUT/upgrade-sample1.txt" 2>&1 &
	s1=$!
	sleep 0.2
	if apt-get install -y /tmp/nvme-vwc-sync_"$v2"_*.deb >"$OUT/upgrade.log" 2>&1; then
		pass "upgrade: apt-get install the next version"
	else
		fail "upgrade: apt-get install the next version" "$(tail -n 5 "$OUT/upgrade.log" | tr '\n' ' ')"
	fi
	rm -f /tmp/*.deb
	check_eq "upgrade: version installed" "$(dpkg-query -W -f='${Version}' nvme-vwc-sync)" "$v2"
	wait_for "upgrade: service running" 10 systemctl is-active --quiet nvme-vwc-sync.service
	# one more second of samples with the new sidecar in place
	sleep 1
	kill -TERM "$s0" "$s1" 2>/dev/null
	wait "$s0" "$s1" 2>/dev/null
	r0=$(grep '^WCS sample' "$OUT/upgrade-sample0.txt")
	r1=$(grep '^WCS sample' "$OUT/upgrade-sample1.txt")
	info "upgrade: WCE-off drive $n0: $r0"
	info "upgrade: WCE-on drive $n1: $r1"
	field() { echo "$1" | sed -n "s/.* $2=\([0-9-]*\).*/\1/p"; }
	[ -n "$r0" ] && [ "$(field "$r0" samples)" -gt 100 ] && [ "$(field "$r0" wb)" = 0 ] && [ "$(field "$r0" err)" = 0 ] &&
		pass "upgrade: $n0 (WCE=0) write through in all $(field "$r0" samples) samples, 10 ms apart" ||
		fail "upgrade: $n0 (WCE=0) write through throughout" "${r0:-no sampler output: $(cat "$OUT/upgrade-sample0.txt")}"
	[ -n "$r1" ] && [ "$(field "$r1" samples)" -gt 100 ] && [ "$(field "$r1" wt)" = 0 ] && [ "$(field "$r1" unsafe)" = 0 ] && [ "$(field "$r1" err)" = 0 ] &&
		pass "upgrade: $n1 (WCE=1) write back in all $(field "$r1" samples) samples, 10 ms apart" ||
		fail "upgrade: $n1 (WCE=1) write back throughout" "${r1:-no sampler output: $(cat "$OUT/upgrade-sample1.txt")}"
	info "upgrade: MainPID $pid -> $(svc MainPID)"
	check_eq "upgrade: records kept" "$(records)" "$before"
	check_eq "upgrade: WCE-off drive still write through" "$(wcache "$n0")" "write through"
	if [ -n "$nh" ]; then
		kill -TERM "$s2" 2>/dev/null
		wait "$s2" 2>/dev/null
		r2=$(grep '^WCS sample' "$OUT/upgrade-sample2.txt")
		info "upgrade: hot-added WCE-off drive $nh: $r2"
		[ -n "$r2" ] && [ "$(field "$r2" samples)" -gt 100 ] && [ "$(field "$r2" wb)" = 0 ] && [ "$(field "$r2" err)" = 0 ] &&
			pass "upgrade: $nh (hot-added, WCE=0) write through in all $(field "$r2" samples) samples" ||
			fail "upgrade: $nh (hot-added, WCE=0) write through throughout" "${r2:-$(cat "$OUT/upgrade-sample2.txt")}"
	fi
	check_eq "upgrade: dynamic ID record kept" "$(cat /run/nvme-vwc-sync/dynid/* 2>/dev/null | sed -n 1p)" "$dynid"
	check_eq "upgrade: Write Zeroes still off on VWC0, on on VWC1" "$(wz "$n0")/$(wz "$n1")" 0/524288
	check_eq "upgrade: nothing unbound or rebound (controllers, PCI functions, driver links)" "$(bound)" "$bound0"
	check_eq "upgrade: no controller probed again (kernel log)" "$(probes)" "$probes0"
else
	plan 1
	skip "upgrade" "no next version on the test disk"
fi
