# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2154,SC2016
# (SC2154: c0, n0, n1, OUT come from test.sh; SC2016: sh -c '...$(...)')
# boot: 2
# when: [ "$MODE" = full ]
#
# Debian's next nvme-cli update on a system with nvme-cli-vwc.
# Sourced by test.sh in boot 2 of the plain suite, after plugin.sh, while
# nvme-vwc-sync is installed; uses test.sh's and plugin.sh's helpers.
# /vwc/repo (tests/system/nvme-cli-up.sh) is a local apt repository with
# one package: the suite's nvme-cli rebuilt from its own source under a
# higher version (V+vwctest1, origin "vwc-test"), as a point release or a
# security update would come. With nvme-cli-vwc installed (built for
# exactly the installed nvme-cli), in the order an admin meets them:
#   - apt update: nvme-cli-vwc's APT hook says nvme-cli V+vwctest1 is
#     held back by nvme-cli-vwc, how to rebuild, what full-upgrade does;
#     the same lines in the journal
#   - apt upgrade: nvme-cli kept back; nvme, nvme vwc-sync, the diversion
#     and the sidecar unchanged
#   - unattended-upgrades as the system runs it (apt-daily.service, then
#     apt-daily-upgrade.service, with the repository's origin allowed):
#     nvme-cli kept back (unattended-upgrades refuses an upgrade that
#     removes a package, and says so only in its own log); the hook's
#     warning in the journal from apt-daily's update
#   - apt full-upgrade: nvme-cli upgraded, nvme-cli-vwc removed, with
#     prerm's message (why, what stays, the rebuild command) on the
#     terminal and in the journal; /usr/sbin/nvme is the new nvme-cli's,
#     no diversion left, nvme vwc-sync gone, nvme-vwc-sync and its
#     service untouched (same process), every namespace in its mode
#   - the rebuild command is there (nvme-vwc-sync's), its --print plan
#     names the new nvme-cli; purge takes the APT hook's conffile away

aptup_checks() {
	local v deb cliv newv f t0 pid sha_ours j u ta
	ta=$(now_ms)
	if [ ! -s /vwc/repo/Packages ]; then
		plan 1
		skip "nvme-cli update" "no local repository on the test disk (nvme-cli-up.sh)"
		return 0
	fi
	newv=$(cat /vwc/repo/version)
	v=$(dpkg-query -W -f='${Version}' nvme-vwc-sync 2>/dev/null)
	deb=$(find /vwc/debs -name "nvme-cli-vwc_${v}_*.deb" 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		plan 1
		skip "nvme-cli update" "no nvme-cli-vwc_${v}_*.deb on the test disk"
		return 0
	fi
	cp "$deb" /tmp/
	deb=/tmp/${deb##*/}
	cliv=$(dpkg-query -W -f='${Version}' nvme-cli)
	f=$(pl_out au-install apt-get install -y --no-install-recommends "$deb")
	# 29 checks, and the unattended-upgrades part's
	plan 29
	check_eq "nvme-cli update: nvme-cli-vwc $v installed (for nvme-cli $cliv)" \
		"$(tail -n 1 "$f")/$(pl_status nvme-cli-vwc)" "rc=0/installed"
	rm -f "$deb"
	sha_ours=$(pl_sha /usr/sbin/nvme)
	pid=$(svc MainPID)
	check "nvme-cli update: the APT hook is in place" test -s /etc/apt/apt.conf.d/50nvme-cli-vwc

	# --- apt update: the hook says it is held -------------------------------
	echo 'deb [trusted=yes] file:/vwc/repo ./' >/etc/apt/sources.list.d/vwc-test.list
	t0=$(date +%s)
	f=$(pl_out au-update apt-get update)
	info "nvme-cli update: apt-get update: $(grep -v '^rc=' "$f" | tr '\n' ' ' | cut -c1-600)"
	check_eq "apt update: nvme-cli $newv is the candidate" \
		"$(apt-cache policy nvme-cli | sed -n 's/^ *Candidate: *//p')" "$newv"
	check "apt update: the hook says nvme-cli $newv is held back by nvme-cli-vwc" \
		grep -q "nvme-cli-vwc: nvme-cli $newv is available, but nvme-cli-vwc $v (nvme vwc-sync) is built for exactly nvme-cli $cliv" "$f"
	check "apt update: ... and names the rebuild command and full-upgrade's effect" \
		sh -c "grep -q 'rebuild-nvme-cli-vwc SOURCE-DIR' '$f' && grep -q 'apt full-upgrade, which upgrades nvme-cli and removes nvme-cli-vwc' '$f'"
	sleep 0.5
	check "apt update: ... and in the journal (tag nvme-cli-vwc)" \
		sh -c "journalctl -b --no-pager -o cat -t nvme-cli-vwc --since @$t0 | grep -q 'nvme-cli $newv is available'"

	# --- apt upgrade: kept back -----------------------------------------
	f=$(pl_out au-upgrade apt upgrade -y)
	# (apt 2.6: "have been kept back:"; apt 3.0: "Not upgrading:")
	info "apt upgrade: $(grep -iA1 'kept back\|not upgrading\|upgraded,' "$f" | tr '\n' ' ' | tr -s ' ')"
	check "apt upgrade: exits 0 and says nvme-cli is kept back" \
		sh -c "grep -qx 'rc=0' '$f' && grep -A1 -i 'kept back:\|not upgrading:' '$f' | grep -q nvme-cli"
	au_same "apt upgrade"

	# --- unattended-upgrades, as the system runs it -------------------------
	if command -v unattended-upgrade >/dev/null; then
		plan 7
		cat >/etc/apt/apt.conf.d/51vwc-test-unattended <<-'EOF'
		APT::Periodic::Update-Package-Lists "1";
		APT::Periodic::Unattended-Upgrade "1";
		APT::Periodic::RandomSleep "0";
		Unattended-Upgrade::Origins-Pattern { "origin=vwc-test"; };
		EOF
		t0=$(date +%s)
		systemctl start apt-daily.service
		info "apt-daily.service: $(systemctl show -P Result apt-daily.service); its journal: $(journalctl -b --no-pager -o cat -u apt-daily.service --since "@$t0" | tr '\n' ' ' | cut -c1-600)"
		check "unattended: the daily update's hook warns in the journal (nvme-cli $newv held back)" \
			sh -c "journalctl -b --no-pager -o cat -t nvme-cli-vwc --since @$t0 | grep -q 'nvme-cli $newv is available'"
		systemctl start apt-daily-upgrade.service
		u=/var/log/unattended-upgrades/unattended-upgrades.log
		cp "$u" "$OUT/unattended-upgrades.log" 2>/dev/null
		info "apt-daily-upgrade.service: $(systemctl show -P Result apt-daily-upgrade.service); unattended-upgrades.log: $(grep -v 'battery\|metered\|blacklist\|whitelist' "$u" 2>/dev/null | sed 's/^[0-9-]* [0-9:,]* //' | tr '\n' ' ' | cut -c1-900)"
		# It refuses an upgrade that removes a package, and its log
		# gives another reason; nothing on a terminal, no mail unless
		# configured: the hook's journal lines above are the warning.
		check "unattended: its log says nvme-cli is kept back" \
			grep -q 'Package nvme-cli is kept back' "$u"
		check_eq "unattended: nvme-cli kept at $cliv" "$(dpkg-query -W -f='${Version}' nvme-cli)" "$cliv"
		au_same "unattended-upgrades"
		rm -f /etc/apt/apt.conf.d/51vwc-test-unattended
	else
		plan 1
		skip "unattended-upgrades" "not in the image"
	fi

	# --- apt full-upgrade: nvme-cli upgraded, nvme-cli-vwc removed ---------
	t0=$(date +%s)
	f=$(pl_out au-full-upgrade apt full-upgrade -y)
	info "apt full-upgrade: $(grep 'nvme-cli-vwc:\|REMOVED\|upgraded,' -A1 "$f" | tr '\n' ' ' | tr -s ' ' | cut -c1-900)"
	check_eq "full-upgrade: exit 0, nvme-cli $newv, nvme-cli-vwc removed" \
		"$(tail -n 1 "$f")/$(dpkg-query -W -f='${Version}' nvme-cli)/$(pl_status nvme-cli-vwc)" \
		"rc=0/$newv/config-files"
	check "full-upgrade: prerm says what goes (nvme vwc-sync) and for which nvme-cli" \
		grep -q "nvme-cli-vwc: removing nvme-cli-vwc $v, built for nvme-cli $cliv: /usr/sbin/nvme is nvme-cli's own again" "$f"
	check "full-upgrade: ... the cause (nvme-cli $newv)" grep -q "nvme-cli-vwc: the cause is nvme-cli $newv" "$f"
	check "full-upgrade: ... that the sidecar stays" grep -q "nvme-cli-vwc: nvme-vwc-sync and its service stay" "$f"
	check "full-upgrade: ... and the rebuild command" \
		grep -q "nvme-cli-vwc: to get nvme vwc-sync back, for the nvme-cli installed then: /usr/libexec/nvme-vwc-sync/rebuild-nvme-cli-vwc SOURCE-DIR" "$f"
	sleep 0.5
	j=$(journalctl -b --no-pager -o cat -t nvme-cli-vwc --since "@$t0")
	check "full-upgrade: the same message in the journal" \
		sh -c "echo \"\$1\" | grep -q 'removing nvme-cli-vwc $v' && echo \"\$1\" | grep -q 'rebuild-nvme-cli-vwc'" sh "$j"
	check "full-upgrade: /usr/sbin/nvme is the new nvme-cli's (dpkg --verify nvme-cli clean)" \
		sh -c '[ -z "$(dpkg --verify nvme-cli)" ]'
	check "full-upgrade: ... another file than ours" test "$(pl_sha /usr/sbin/nvme)" != "$sha_ours"
	check_eq "full-upgrade: no diversion left" "$(pl_diversion)" ""
	check "full-upgrade: no /usr/sbin/nvme.distrib left" test ! -e /usr/sbin/nvme.distrib
	nvme vwc-sync "/dev/$c0" --dry-run >/dev/null 2>&1
	check "full-upgrade: nvme vwc-sync gone (exit $?)" test "$?" -ne 0
	check "full-upgrade: nvme list works" sh -c 'nvme list | grep -q VWC0'
	check_eq "full-upgrade: the sidecar untouched (same process)" \
		"$(systemctl is-active nvme-vwc-sync.service) $(svc MainPID)" "active $pid"
	check_eq "full-upgrade: nvme-vwc-sync still installed" "$(pl_status nvme-vwc-sync)" installed
	check_eq "full-upgrade: $n0 (WCE off) write through, $n1 (WCE on) write back" \
		"$(wcache "$n0")/$(wcache "$n1")" "write through/write back"
	check "full-upgrade: nvme-vwc-sync audit: in sync (exit 0)" nvme-vwc-sync audit
	f=$(pl_out au-rebuild /usr/libexec/nvme-vwc-sync/rebuild-nvme-cli-vwc --print /vwc/src)
	info "rebuild-nvme-cli-vwc --print: $(tr '\n' ' ' <"$f")"
	check "rebuild command: its plan is for the new nvme-cli $newv" \
		sh -c "grep -qx 'rc=0' '$f' && grep -q ' for nvme-cli $newv, from ' '$f'"
	f=$(pl_out au-purge apt-get purge -y nvme-cli-vwc)
	check_eq "purge nvme-cli-vwc: gone, the APT hook's conffile too" \
		"$(tail -n 1 "$f")/$(pl_status nvme-cli-vwc)/$(test -e /etc/apt/apt.conf.d/50nvme-cli-vwc && echo left || echo gone)" \
		"rc=0/not-installed/gone"
	rm -f /etc/apt/sources.list.d/vwc-test.list
	info "nvme-cli update checks took $(($(now_ms) - ta)) ms"
}

# au_same WHEN: after an upgrade that kept nvme-cli back, nothing changed.
au_same() {
	check_eq "$1: nvme-cli still $cliv, nvme-cli-vwc installed" \
		"$(dpkg-query -W -f='${Version}' nvme-cli)/$(pl_status nvme-cli-vwc)" "$cliv/installed"
	check_eq "$1: /usr/sbin/nvme still ours, the diversion in place" \
		"$(pl_sha /usr/sbin/nvme) $(pl_diversion)" \
		"$sha_ours diversion of /usr/sbin/nvme to /usr/sbin/nvme.distrib by nvme-cli-vwc"
	check "$1: nvme vwc-sync --dry-run works" nvme vwc-sync --dry-run "/dev/$c0"
	check_eq "$1: the sidecar untouched (same process)" \
		"$(systemctl is-active nvme-vwc-sync.service) $(svc MainPID)" "active $pid"
}

aptup_checks
