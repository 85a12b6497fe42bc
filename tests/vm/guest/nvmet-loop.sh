# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
#
# Linux's own NVMe target over nvme-loop at scale, in one guest (kernel tag
# 7.2-generic-io): sourced after /vwc/guest/lib.sh by the cases and
# benchmarks that connect hundreds of namespaces (fabrics-1024,
# bench-fabrics-scale). Each function fails with the reason in $NL_ERR.
#
#   nl_backing           null_blk's nullb0 (loaded by /init: no write cache)
#                        and one null_blk device with a cache, made through
#                        configfs: its name in $WCDEV
#   nl_subsystems PREFIX S K PORT...
#                        loop ports PORT... (their traddr: the number), and
#                        S subsystems nqn.2026-12.org.vwc:PREFIX1.. of K
#                        namespaces each, linked to every port: odd NSIDs
#                        on nullb0 (nvmet sets their "no volatile write
#                        cache" bit), even ones on $WCDEV (write back);
#                        several namespaces share one backing device
#                        (opened shared)
#   nl_hostnqn           /etc/nvme/hostnqn and hostid made; $HOSTNQN, $HOSTID
#   nl_size              $S and $K from vwc.fs_subsys=S and vwc.fs_ns=K on
#                        the kernel command line, if there (benchmarks)
#   nl_setup WHO PREFIX PORT...
#                        all of the above for $S subsystems of $K: the
#                        kernel's nvme-loop checked, the backing devices,
#                        the subsystems on the ports, the host NQN; on a
#                        failure "WHO: setup" fails with the reason and the
#                        guest test ends

NL_ERR=''
CFG=/sys/kernel/config

nl_backing() {
	mount -t configfs none "$CFG" 2>/dev/null
	[ -b /dev/nullb0 ] || { NL_ERR="no /dev/nullb0"; return 1; }
	_nb=$CFG/nullb/nullbwc
	mkdir "$_nb" && echo 1024 >"$_nb/size" && echo 1 >"$_nb/memory_backed" &&
		echo 16 >"$_nb/cache_size" && echo 1 >"$_nb/power" ||
		{ NL_ERR="null_blk with a cache refused"; return 1; }
	# named after the configfs directory on newer kernels, nullbN on older
	WCDEV=nullbwc
	[ -b /dev/$WCDEV ] || WCDEV=nullb$(cat "$_nb/index")
	[ -b /dev/$WCDEV ] || { NL_ERR="no null_blk disk with a cache"; return 1; }
}

nl_subsystems() {
	_pre=$1 _s_max=$2 _k_max=$3
	shift 3
	for _p in "$@"; do
		mkdir "$CFG/nvmet/ports/$_p" && echo loop >"$CFG/nvmet/ports/$_p/addr_trtype" &&
			echo "$_p" >"$CFG/nvmet/ports/$_p/addr_traddr" ||
			{ NL_ERR="nvmet port $_p"; return 1; }
	done
	_s=1
	while [ "$_s" -le "$_s_max" ]; do
		_ss=$CFG/nvmet/subsystems/nqn.2026-12.org.vwc:$_pre$_s
		mkdir "$_ss" && echo 1 >"$_ss/attr_allow_any_host" ||
			{ NL_ERR="subsystem $_pre$_s"; return 1; }
		_n=1
		while [ "$_n" -le "$_k_max" ]; do
			if [ $((_n % 2)) = 1 ]; then _dev=/dev/nullb0; else _dev=/dev/$WCDEV; fi
			mkdir "$_ss/namespaces/$_n" &&
				printf %s "$_dev" >"$_ss/namespaces/$_n/device_path" &&
				echo 1 >"$_ss/namespaces/$_n/enable" ||
				{ NL_ERR="namespace $_pre$_s/$_n on $_dev"; return 1; }
			_n=$((_n + 1))
		done
		for _p in "$@"; do
			ln -s "$_ss" "$CFG/nvmet/ports/$_p/subsystems/" ||
				{ NL_ERR="link $_pre$_s to port $_p"; return 1; }
		done
		_s=$((_s + 1))
	done
}

nl_hostnqn() {
	mkdir -p /etc/nvme
	HOSTID=$(cat /proc/sys/kernel/random/uuid)
	HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$HOSTID
	echo "$HOSTNQN" >/etc/nvme/hostnqn
	echo "$HOSTID" >/etc/nvme/hostid
}

nl_size() {
	for _a in $(cat /proc/cmdline); do
		case $_a in
		vwc.fs_subsys=*) S=${_a#*=} ;;
		vwc.fs_ns=*) K=${_a#*=} ;;
		esac
	done
}

nl_setup() {
	_who=$1 _pre=$2
	shift 2
	if ! grep -q '/nvme-loop\.ko$' "/lib/modules/$(uname -r)/modules.load" 2>/dev/null; then
		NL_ERR="no nvme-loop in $(uname -r) (boot 7.2-generic-io)"
	elif nl_backing && nl_subsystems "$_pre" "$S" "$K" "$@"; then
		nl_hostnqn
		return 0
	fi
	fail "$_who: setup" "$NL_ERR"
	finish
	exit 1
}
