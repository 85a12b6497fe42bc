# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2154,SC2016
# (SC2154: c0, c1, n0, n1, OUT come from test.sh; SC2016: sh -c '...$(...)')
# boot: 2
# when: [ "$MODE" = full ]
#
# nvme-cli-vwc in a booted Debian system: `nvme vwc-sync` on a packaged
# system (in the plain variant of each release, for time: nothing of it
# depends on the root file system's disk or the initramfs). Sourced by test.sh in boot 2, while
# nvme-vwc-sync is installed and before it is removed; uses test.sh's
# helpers (pass, fail, skip, info, check, check_eq, wait_for, wcache, svc)
# and its variables (c0/n0: WCE off, c1/n1: WCE on, OUT, SUITE).
#
# The package's nvme-cli-vwc_V_*.deb whose V is the installed
# nvme-vwc-sync's version is taken from /vwc/debs/*/ (after the upgrade
# check that is the next version's: nvme-cli-vwc depends on exactly one
# nvme-vwc-sync). Checks, in order:
#   - before: sha256 of the distribution's /usr/sbin/nvme, its `nvme
#     version`, `dpkg --verify nvme-cli` clean, `nvme vwc-sync` unknown
#   - the .deb's Depends: nvme-cli (= the installed nvme-cli's version),
#     nvme-vwc-sync (= the installed version); the same .deb with another
#     nvme-cli version in Depends is refused by apt, nothing changed
#   - apt-get install: the diversion is listed, the distribution's binary
#     sits byte-identical in /usr/sbin/nvme.distrib, ours verifies
#   - nvme version prints what the distribution's did; nvme list, id-ctrl,
#     get-feature -f 6 print what the distribution's binary prints
#   - nvme vwc-sync / vwc audit against nvme-vwc-sync sync / audit (the
#     service stopped meanwhile): the same output and exit status, the
#     same change (WCE-off drive write back -> write through, WCE-on drive
#     left in write back)
#   - apt-get remove: /usr/sbin/nvme is the original (sha256, dpkg
#     --verify), no diversion and no nvme.distrib left, `nvme vwc-sync`
#     unknown again, nvme-vwc-sync and its service untouched; purge

# pl_out NAME CMD...: CMD's stdout and stderr in $OUT/plugin-NAME.txt,
# then "rc=N" as its last line; prints the file's path.
pl_out() {
	local f=$OUT/plugin-$1.txt
	shift
	"$@" >"$f" 2>&1
	echo "rc=$?" >>"$f"
	echo "$f"
}
pl_sha() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
pl_diversion() { dpkg-divert --list /usr/sbin/nvme; }
pl_status() { local st; st=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null); echo "${st:-not-installed}"; }

plugin_checks() {
	local v deb cliv sha0 ver0 f a b mm rc cmd
	v=$(dpkg-query -W -f='${Version}' nvme-vwc-sync 2>/dev/null)
	deb=$(find /vwc/debs -name "nvme-cli-vwc_${v}_*.deb" 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		plan 1
		skip "nvme-cli-vwc" "no nvme-cli-vwc_${v}_*.deb on the test disk (build-debs.sh --no-plugin?)"
		return 0
	fi
	cp "$deb" /tmp/
	deb=/tmp/${deb##*/}

	# --- before: the distribution's nvme -----------------------------------
	cliv=$(dpkg-query -W -f='${Version}' nvme-cli)
	sha0=$(pl_sha /usr/sbin/nvme)
	ver0=$(nvme version 2>&1)
	info "nvme-cli-vwc: distribution's nvme-cli $cliv, /usr/sbin/nvme sha256 $sha0, '$(echo "$ver0" | tr '\n' ' ')'"
	plan 48
	check_eq "nvme-cli-vwc: before: no diversion of /usr/sbin/nvme" "$(pl_diversion)" ""
	check "nvme-cli-vwc: before: dpkg --verify nvme-cli clean" sh -c '[ -z "$(dpkg --verify nvme-cli)" ]'
	nvme vwc-sync "/dev/$c0" --dry-run >/dev/null 2>&1
	rc=$?
	check "nvme-cli-vwc: before: the distribution's nvme has no vwc-sync (exit $rc)" test "$rc" -ne 0

	# --- the exact versions in Depends, and apt's refusal of another ---------
	check_eq "nvme-cli-vwc: Depends has nvme-cli (= the installed $cliv)" \
		"$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -n 's/^ *\(nvme-cli (.*)\) *$/\1/p')" \
		"nvme-cli (= $cliv)"
	check_eq "nvme-cli-vwc: Depends has nvme-vwc-sync (= $v)" \
		"$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -n 's/^ *\(nvme-vwc-sync (.*)\) *$/\1/p')" \
		"nvme-vwc-sync (= $v)"
	# As if built from an older nvme-cli than the installed one.
	mm=/tmp/vwc-mismatch
	rm -rf "$mm"
	mkdir -p "$mm"
	dpkg-deb -R "$deb" "$mm/root" &&
		sed -i "s/nvme-cli (= [^)]*)/nvme-cli (= $cliv~older)/" "$mm/root/DEBIAN/control" &&
		dpkg-deb -b "$mm/root" "$mm/nvme-cli-vwc_${v}_mismatch.deb" >/dev/null
	check_eq "nvme-cli-vwc: the same .deb repacked with nvme-cli (= $cliv~older)" \
		"$(dpkg-deb -f "$mm/nvme-cli-vwc_${v}_mismatch.deb" Package Version 2>&1 | tr '\n' ' ')$(dpkg-deb -f "$mm/nvme-cli-vwc_${v}_mismatch.deb" Depends 2>&1 | grep -o 'nvme-cli (= [^)]*)')" \
		"Package: nvme-cli-vwc Version: $v nvme-cli (= $cliv~older)"
	f=$(pl_out apt-mismatch apt-get install -y "$mm/nvme-cli-vwc_${v}_mismatch.deb")
	check "nvme-cli-vwc: apt refuses it with nvme-cli (= $cliv~older) in Depends" \
		sh -c "! grep -qx 'rc=0' '$f' && grep -q 'Depends: nvme-cli (= $cliv~older)' '$f'"
	info "nvme-cli-vwc: apt said: $(grep -m1 'Depends: nvme-cli' "$f")"
	check_eq "nvme-cli-vwc: refused: /usr/sbin/nvme untouched (sha256)" "$(pl_sha /usr/sbin/nvme)" "$sha0"
	check_eq "nvme-cli-vwc: refused: no diversion" "$(pl_diversion)" ""
	check_eq "nvme-cli-vwc: refused: not installed" "$(pl_status nvme-cli-vwc)" not-installed
	rm -rf "$mm"

	# --- install -----------------------------------------------------------
	f=$(pl_out install apt-get install -y --no-install-recommends "$deb")
	if grep -qx 'rc=0' "$f"; then
		pass "nvme-cli-vwc: apt-get install ./${deb##*/}"
	else
		fail "nvme-cli-vwc: apt-get install ./${deb##*/}" "$(tail -n 5 "$f" | tr '\n' ' ')"
		return 1
	fi
	info "nvme-cli-vwc: $(pl_diversion)"
	check_eq "nvme-cli-vwc: dpkg-divert --list shows the diversion" "$(pl_diversion)" \
		"diversion of /usr/sbin/nvme to /usr/sbin/nvme.distrib by nvme-cli-vwc"
	check_eq "nvme-cli-vwc: the distribution's binary kept byte-identical in nvme.distrib" \
		"$(pl_sha /usr/sbin/nvme.distrib)" "$sha0"
	check "nvme-cli-vwc: /usr/sbin/nvme is ours (another file)" test "$(pl_sha /usr/sbin/nvme)" != "$sha0"
	check "nvme-cli-vwc: dpkg --verify nvme-cli-vwc clean" sh -c '[ -z "$(dpkg --verify nvme-cli-vwc)" ]'

	# --- every other nvme-cli command as the distribution's ----------------
	a=$(nvme version 2>&1)
	info "nvme-cli-vwc: nvme version: $(echo "$a" | tr '\n' ' ')"
	check_eq "nvme-cli-vwc: nvme version prints the distribution's (nvme-cli $cliv)" "$a" "$ver0"
	for cmd in "list" "list -o json" "id-ctrl /dev/$c0" "id-ctrl /dev/$c1 -o json" \
		"get-feature /dev/$c0 -f 6" "get-feature /dev/$c1 -f 6" "id-ns /dev/$n0"; do
		# shellcheck disable=SC2086 # one word per argument
		a=$(nvme $cmd 2>&1; echo "rc=$?")
		# shellcheck disable=SC2086
		b=$(/usr/sbin/nvme.distrib $cmd 2>&1; echo "rc=$?")
		if [ "$a" = "$b" ] && [ "${a##*rc=}" = 0 ]; then
			pass "nvme-cli-vwc: nvme $cmd works, as the distribution's"
		else
			fail "nvme-cli-vwc: nvme $cmd works, as the distribution's" \
				"ours: $(echo "$a" | tail -n 3 | tr '\n' ' ') / distribution's: $(echo "$b" | tail -n 3 | tr '\n' ' ')"
		fi
	done
	info "nvme-cli-vwc: nvme get-feature -f 6: $c0 '$(nvme get-feature "/dev/$c0" -f 6 2>&1 | tr '\n' ' ')', $c1 '$(nvme get-feature "/dev/$c1" -f 6 2>&1 | tr '\n' ' ')'"
	check "nvme-cli-vwc: nvme list names the drives" sh -c "nvme list | grep -q VWC0 && nvme list | grep -q VWC1"

	# --- nvme vwc-sync does what nvme-vwc-sync does -------------------------
	# The service stopped, so that only the two commands change anything.
	systemctl stop nvme-vwc-sync.service
	echo "write back" >"/sys/block/$n0/queue/write_cache"
	check_eq "nvme-cli-vwc: $n0 put back to write back for the comparison" "$(wcache "$n0")" "write back"
	a=$(cat "$(pl_out plugin-dry nvme vwc-sync --dry-run -o json "/dev/$c0")")
	b=$(cat "$(pl_out standalone-dry nvme-vwc-sync sync --dry-run -o json "/dev/$c0")")
	check_eq "nvme-cli-vwc: nvme vwc-sync --dry-run -o json = nvme-vwc-sync sync's (output and exit)" "$a" "$b"
	check "nvme-cli-vwc: the dry run recommends write through for $n0" \
		grep -q '"recommended": *"write through"' "$OUT/plugin-plugin-dry.txt"
	check_eq "nvme-cli-vwc: dry run changed nothing" "$(wcache "$n0")" "write back"
	f=$(pl_out plugin-sync nvme vwc-sync "/dev/$c0")
	info "nvme-cli-vwc: nvme vwc-sync /dev/$c0: $(tr '\n' ' ' <"$f")"
	check_eq "nvme-cli-vwc: nvme vwc-sync /dev/$c0 exits 0" "$(tail -n 1 "$f")" "rc=0"
	check_eq "nvme-cli-vwc: nvme vwc-sync: $n0 (WCE off) write through" "$(wcache "$n0")" "write through"
	a=$(cat "$f")
	echo "write back" >"/sys/block/$n0/queue/write_cache"
	f=$(pl_out standalone-sync nvme-vwc-sync sync "/dev/$c0")
	check_eq "nvme-cli-vwc: nvme-vwc-sync sync /dev/$c0 says the same" "$(cat "$f")" "$a"
	check_eq "nvme-cli-vwc: nvme-vwc-sync sync: $n0 write through" "$(wcache "$n0")" "write through"
	a=$(cat "$(pl_out plugin-sync1 nvme vwc-sync "/dev/$c1")")
	b=$(cat "$(pl_out standalone-sync1 nvme-vwc-sync sync "/dev/$c1")")
	check_eq "nvme-cli-vwc: nvme vwc-sync /dev/$c1 (WCE on) = nvme-vwc-sync sync's" "$a" "$b"
	check_eq "nvme-cli-vwc: $n1 (WCE on) stays write back" "$(wcache "$n1")" "write back"
	a=$(cat "$(pl_out plugin-audit nvme vwc audit -o json)")
	b=$(cat "$(pl_out standalone-audit nvme-vwc-sync audit -o json)")
	check_eq "nvme-cli-vwc: nvme vwc audit -o json = nvme-vwc-sync audit's" "$a" "$b"
	check_eq "nvme-cli-vwc: audit: in sync (exit 0)" "${a##*rc=}" 0
	systemctl start nvme-vwc-sync.service
	wait_for "nvme-cli-vwc: service running again" 10 systemctl is-active --quiet nvme-vwc-sync.service

	# --- remove: the distribution's nvme back, byte-identical ---------------
	f=$(pl_out remove apt-get remove -y nvme-cli-vwc)
	if grep -qx 'rc=0' "$f"; then
		pass "nvme-cli-vwc: apt-get remove nvme-cli-vwc"
	else
		fail "nvme-cli-vwc: apt-get remove nvme-cli-vwc" "$(tail -n 5 "$f" | tr '\n' ' ')"
	fi
	check_eq "nvme-cli-vwc: removed: /usr/sbin/nvme sha256 is the original" "$(pl_sha /usr/sbin/nvme)" "$sha0"
	check "nvme-cli-vwc: removed: dpkg --verify nvme-cli clean" sh -c '[ -z "$(dpkg --verify nvme-cli)" ]'
	check_eq "nvme-cli-vwc: removed: no diversion left" "$(pl_diversion)" ""
	check "nvme-cli-vwc: removed: no /usr/sbin/nvme.distrib left" test ! -e /usr/sbin/nvme.distrib
	nvme vwc-sync "/dev/$c0" --dry-run >/dev/null 2>&1
	rc=$?
	check "nvme-cli-vwc: removed: nvme vwc-sync gone (exit $rc)" test "$rc" -ne 0
	check_eq "nvme-cli-vwc: removed: nvme version as before" "$(nvme version 2>&1)" "$ver0"
	check "nvme-cli-vwc: removed: nvme list works" nvme list
	check_eq "nvme-cli-vwc: removed: nvme-vwc-sync still installed" "$(pl_status nvme-vwc-sync)" installed
	check "nvme-cli-vwc: removed: service still running" systemctl is-active --quiet nvme-vwc-sync.service
	f=$(pl_out purge apt-get purge -y nvme-cli-vwc)
	check_eq "nvme-cli-vwc: purge: dpkg forgot it (exit 0)" \
		"$(tail -n 1 "$f")/$(pl_status nvme-cli-vwc)" "rc=0/not-installed"
	rm -f "$deb"
}

plugin_checks
