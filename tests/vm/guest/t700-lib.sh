# Helpers for the T700 (disable_write_zeroes) guest cases. Source after
# lib.sh: . /vwc/guest/t700-lib.sh
# shellcheck shell=sh

# t700_mkmods DIR PATTERN...: a module directory DIR/lib/modules/1.0 whose
# index (depmod's, read through libkmod) gives the built-in nvme these
# aliases.
t700_mkmods() {
	_m=$1/lib/modules/1.0
	shift
	mkdir -p "$_m"
	: >"$_m/modules.order"
	echo kernel/drivers/nvme/host/nvme.ko >"$_m/modules.builtin"
	for _p; do printf 'nvme.alias=%s\0' "$_p"; done >"$_m/modules.builtin.modinfo"
	ln -sf /usr/bin/kmod /tmp/depmod
	/tmp/depmod -b "${_m%/lib/modules/1.0}" 1.0
}

# t700_hwdb: QEMU's ID listed with disable_write_zeroes in an admin's hwdb
# file, compiled
t700_hwdb() {
	mkdir -p /etc/udev/hwdb.d
	printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' >/etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
	systemd-hwdb update
}

# t700_setup CTRL: t700_hwdb; where the kernel shows no quirks attribute
# (6.1, 6.12), the nvme table stand-in of t700-dynid.sh (nvme's class entry
# only, as for a T700) exported as NVME_VWC_SYNC_MODULES_DIR. Sets
# T700_MODS (empty when none is needed). Not in a subshell: it exports.
t700_setup() {
	t700_hwdb || return 1
	T700_MODS=
	[ -e "/sys/class/nvme/$1/quirks" ] && return 0
	if grep -q ' nvme$' "/lib/modules/$(uname -r)/modules.alias" 2>/dev/null; then
		T700_MODS=/usr/lib/vwc-test/t700-modules/$(uname -r)
	else
		t700_mkmods /tmp/mods 'pci:v*d*sv*sd*bc01sc08i02*' >/dev/null 2>&1
		T700_MODS=/tmp/mods/lib/modules/1.0
	fi
	export NVME_VWC_SYNC_MODULES_DIR=$T700_MODS
}
