# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 1
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# Boot 1: the kernel's own choice, then the package installed with apt;
# with root on NVMe, the T700 stand-in and the initramfs the trigger
# rebuilt. Powers off for boot 2.

# 8 checks, 10 more with root on NVMe
plan 8
[ "$MODE" != nvmeroot ] || plan 10
# --- boot 1: the kernel's own choice, then the package -------------
check_eq "before install: WCE-off drive write back (the kernel's choice)" "$(wcache "$n0")" "write back"
check_eq "before install: WCE-on drive write back" "$(wcache "$n1")" "write back"
[ "$MODE" != nvmeroot ] || check_eq "before install: root drive (WCE off) write back" "$(wcache "$nr")" "write back"
if [ "$MODE" = nvmeroot ]; then
	info "before install: write_zeroes_max_bytes $(wz_all)"
	check_eq "before install: root drive Write Zeroes on (the kernel's choice)" "$(wz "$nr")" 524288
	t700_standin
	check "T700 stand-in: depmod made its alias index" test -s "$t7/modules.builtin.alias.bin"
	if [ "$GEN" = dracut ]; then
		dracut_setup "$t7"
	else
	mkdir -p /etc/initramfs-tools/scripts/init-top /etc/initramfs-tools/hooks
	printf '#!/bin/sh\ncase "$1" in prereqs) exit 0 ;; esac\necho "export NVME_VWC_SYNC_MODULES_DIR=/vwc-t700" >>/conf/param.conf\n' \
		>/etc/initramfs-tools/scripts/init-top/vwc-t700
	printf '#!/bin/sh\ncase "$1" in prereqs) exit 0 ;; esac\nmkdir -p "$DESTDIR/vwc-t700"\ncp %s/modules.* "$DESTDIR/vwc-t700/"\n' \
		"$t7" >/etc/initramfs-tools/hooks/vwc-t700
	chmod 755 /etc/initramfs-tools/scripts/init-top/vwc-t700 /etc/initramfs-tools/hooks/vwc-t700
	# Debian's default, so that the package's trigger rebuilds it;
	# MODULES=dep (the modules this machine needs, not most of them)
	# for time: update-initramfs took 500 s under TCG on a loaded host
	# with MODULES=most. Our hook is the same either way.
	sed -i 's/^update_initramfs=.*/update_initramfs=yes/' /etc/initramfs-tools/update-initramfs.conf
	sed -i 's/^MODULES=.*/MODULES=dep/' /etc/initramfs-tools/initramfs.conf
	# ... and the test disk's driver (virtio), else the test runner
	# starts before udev in the root loads it and finds no disk
	printf 'virtio_pci\nvirtio_blk\n' >>/etc/initramfs-tools/modules
	fi
	failed_units >"$OUT/failed-units-1.txt"
	# already failed before install: said, not held against us
	for _u in $(cat "$OUT/failed-units-1.txt"); do
		unit_why "$_u"
		! debian_race "$_u" || race_restart "$_u"
	done
fi
cp /vwc/debs/v1/*.deb /tmp/
t0=$(now_ms)
if apt-get install -y --no-install-recommends /tmp/nvme-vwc-sync_*.deb >"$OUT/install.log" 2>&1; then
	pass "apt-get install ./nvme-vwc-sync_*.deb"
else
	fail "apt-get install ./nvme-vwc-sync_*.deb" "$(tail -n 5 "$OUT/install.log" | tr '\n' ' ')"
fi
info "install took $(($(now_ms) - t0)) ms"
rm -f /tmp/*.deb
check_eq "service enabled by the package" "$(systemctl is-enabled nvme-vwc-sync.service 2>&1)" enabled
wait_for "service started by the package" 10 systemctl is-active --quiet nvme-vwc-sync.service
wait_for "after install: WCE-off drive write through" 10 is_wt "$n0"
check_eq "after install: WCE-on drive write back" "$(wcache "$n1")" "write back"
[ "$MODE" != nvmeroot ] || wait_for "after install: root drive write through" 10 is_wt "$nr"
check "nvme-vwc-sync --version runs" /usr/sbin/nvme-vwc-sync --version
if [ "$MODE" = nvmeroot ]; then
	list_initrd
	check "install: the package's trigger rebuilt the initramfs with the tool" \
		grep -q 'sbin/nvme-vwc-sync$' "$OUT/initrd-list-1.txt"
	if [ "$GEN" = dracut ]; then
		check_eq "install: ... and its dracut hook (pre-trigger) and the script it runs" \
			"$(in_initrd 'hooks/pre-trigger/50-nvme-vwc-sync-quirks\.sh$')/$(in_initrd 'libexec/nvme-vwc-sync-premount$')" 1/1
	else
		check_eq "install: ... and its init-premount script" "$(in_initrd 'scripts/init-premount/nvme-vwc-sync$')" 1
	fi
	check_eq "install: ... and the test's T700 stand-in" "$(in_initrd 'vwc-t700/modules.builtin.alias.bin$')" 1
	# The real path, in this running system: 6.12's table lists
	# QEMU's ID, so quirks refuses and changes nothing.
	nvme-vwc-sync quirks >"$OUT/quirks-real.log" 2>&1
	rc=$?
	info "quirks on the real path: exit $rc: $(grep -m1 "nvme table" "$OUT/quirks-real.log")"
	check "real path (QEMU's ID in 6.12's nvme table): quirks refuses, naming the table entry" \
		sh -c "[ $rc -ne 0 ] && grep -q \"is in this kernel's nvme table\" $OUT/quirks-real.log"
	check_eq "real path: nothing changed (write_zeroes_max_bytes)" "$(wz "$n0")/$(wz "$nr")" 524288/524288
	save_initrd 2
fi
echo 2 >/vwc/state
journalctl -b --no-pager -o short-monotonic >"$OUT/journal-1.txt" 2>&1
# The reboot is a power cycle: the host starts the machine again.
info "powering off for boot 2"
sync
systemctl start poweroff.target --job-mode=replace-irreversibly --no-block
exit 0
