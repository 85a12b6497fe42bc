#!/bin/bash
# Boot one guest test under QEMU (TCG) and record its serial console.
# Usage: run-vm.sh -i INITRD [-k TAG] [-l LOG] [-t SECONDS] [-a ARGS] [-f] CASE.sh
#   -i INITRD   initramfs from mkinitramfs.sh (required)
#   -k TAG      kernel tag in $VWC_CACHE_DIR/kernels (default 7.2)
#   -l LOG      serial log (default: in the run's temp dir, removed)
#   -t SECONDS  hard timeout (default: the case's "# timeout:" line, else 300)
#   -a ARGS     extra kernel command line
#   -f          follow: print the guest's lines (not the kernel's) as they come
#   -p SOCKET   (run-vm.sh's own, for "# vm: peer") this guest is the peer of
#               another: its network card listens on the unix socket SOCKET
# The case file's header describes the machine, one directive a line:
#   # vm: ctrl [wc=on|off] [ns=N] [size=MiB] [intel] [whole]
#         controller nvK (K counts from 0 over all controllers), serial VWCK,
#         N namespaces, each a raw image with QEMU write-cache=on|off (WCE).
#         Every namespace carries a GPT partition table, as installed
#         systems' disks do: partitions "vwc-a" (a quarter) and "vwc-b"
#         (the rest) from 8 MiB on, one "vwc-a" below; "whole" leaves the
#         disks blank (a case about whole disks). "noquirks": the nvme
#         driver holds no quirks for this controller, as for a drive its
#         table does not list (a T700): the guest's init binds it through a
#         dynamic ID with driver_data 0 (the class-wide entry's), then
#         removes the ID (7.x: /sys/class/nvme/nvmeN/quirks reads "none").
#         By default the last plain ctrl of every guest is "noquirks";
#         "quirks" on a ctrl line, or "# vm: quirks", keeps the table's
#         quirks on every controller (a case about QEMU's table entry).
#   # vm: subsys name=S ctrls=N [wc=W0,W1,...] [shared=M] [size=MiB] [whole]
#         nvme-subsys S and N controllers nvK.. sharing namespaces 1..M
#         (multipath; M 1 by default). QEMU wants one serial per subsystem:
#         all get the serial of the first, VWCK, and differ by cntlid (0, 1,
#         ...). QEMU derives WCE from a controller's namespaces (on if any is
#         on), so the shared namespaces get wc=off when any Wi is off, and a
#         controller asking for "on" then gets a private namespace (nsid
#         M+1..) with wc=on. QEMU allows 256 namespace ids a subsystem.
#   # vm: cpu hygon          -cpu qemu64,-cx16,vendor=HygonGenuine
#   # vm: rootport [n=N]     N pcie-root-ports rp0.. for hot-add (default 1)
#   # vm: spare [n=N] [size=MiB]   raw images {dir}/spareK.img for drive_add
#   # vm: append ARGS...     extra kernel command line
#   # vm: notracefs          the guest mounts neither tracefs nor debugfs
#                            (by default both, where and as systemd does)
#   # vm: icount shift=N     -icount shift=N,sleep=off: guest time runs on
#                            the instruction counter (2^N ns each), not the
#                            host's clock (benchmarks on a loaded host)
#   # vm: memory MIB         the guest's memory (default 1024 MiB)
#   # vm: fixture NAME       the module overlay tests/vm/fixture-NAME.sh made
#                            for this kernel ($VWC_CACHE_DIR/fixtures/NAME/
#                            <release>/modules.cpio.gz), after the kernel's
#                            own: its files replace those of the same path
#   # vm: peer kernel=TAG script=NAME
#         a second guest, the peer, on kernel TAG running tests/vm/guest/
#         NAME.sh, joined to this one by a virtual network with no host in
#         it: a virtio card in each, QEMU's stream netdev over a unix
#         socket in the run's directory (the peer listens, this guest
#         connects). The peer gets the same extra command line (-a and
#         "# vm: append"), its serial log is LOG.peer, and it is stopped
#         when this guest has ended (after up to 30 s for its own end).
#         The guests set their addresses themselves (lib.sh net_up).
#   # timeout: SECONDS
# A guest line "VWC-HOST: CMD" makes the host send CMD to the QEMU monitor
# ({dir} in CMD is replaced by the run's directory); replies go to
# <LOG>.monitor. Retries once when the guest never reached /init.
# Last line on stdout:
#   VWC-RUN: status=ok|timeout|noinit|error boot=S total=S attempts=N cpu=S log=LOG
# Exit status: 0 ok (guest powered off), 2 timeout, 3 init never reached,
# 4 QEMU failed (e.g. a bad device option).
set -euo pipefail

# shellcheck source=../lib/qemu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/qemu.sh"
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
BOOT_TIMEOUT=${VWC_BOOT_TIMEOUT:-90}
CPU=$VQ_CPU

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 1; }

tag=7.2 initrd='' log='' timeout='' append='' follow='' peer_of=''
while getopts i:k:l:t:a:fp:h opt; do
	case $opt in
	i) initrd=$OPTARG ;;
	k) tag=$OPTARG ;;
	l) log=$OPTARG ;;
	t) timeout=$OPTARG ;;
	a) append=" $OPTARG" ;;
	f) follow=1 ;;
	p) peer_of=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ "$#" -ne 1 ] || [ -z "$initrd" ]; then usage; fi
case_file=$1
name=$(basename "$case_file" .sh)
kdir="$CACHE/kernels/$tag"
[ -s "$kdir/vmlinuz" ] || { echo "run-vm: no kernel $tag (run tests/vm/kernels.sh $tag)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vwc-vm.XXXXXX")
peer_pid=''
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -z "$VQ_QPID" ] || kill "$VQ_QPID" 2>/dev/null || true
	if [ -n "$peer_pid" ]; then
		# the peer ends by itself once this guest is done with it
		for ((k = 0; k < 150; k++)); do
			kill -0 "$peer_pid" 2>/dev/null || break
			sleep 0.2
		done
		kill "$peer_pid" 2>/dev/null || true
		wait "$peer_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
[ -n "$log" ] || log="$work/serial.log"

# --- scenario -> QEMU arguments ---
args=()
nctrl=0
# img NAME MIB [whole]: a raw image, GPT-partitioned unless "whole" (a
# template per size, copied sparse)
img() {
	local t=$work/gpt-$2.tmpl
	if [ "${3:-}" = whole ]; then
		truncate -s "${2}M" "$work/$1.img"
		return
	fi
	if [ ! -e "$t" ]; then
		truncate -s "${2}M" "$t"
		if [ "$2" -ge 8 ]; then
			printf 'label: gpt\nsize=%dMiB, name=vwc-a\nname=vwc-b\n' $(($2 / 4))
		else
			printf 'label: gpt\nname=vwc-a\n'
		fi | sfdisk -q "$t" >/dev/null
	fi
	cp --sparse=always "$t" "$work/$1.img"
}
# kv KEY DEFAULT WORDS...: value of KEY=... among WORDS.
kv() {
	local key=$1 val=$2 w
	shift 2
	for w in "$@"; do
		case $w in "$key="*) val=${w#*=} ;; esac
	done
	echo "$val"
}
has() {
	local key=$1 w
	shift
	for w in "$@"; do [ "$w" = "$key" ] && return 0; done
	return 1
}

add_ctrl() {
	local wc nns size intel='' j c whole=''
	has whole "$@" && whole=whole
	wc=$(kv wc on "$@")
	nns=$(kv ns 1 "$@")
	size=$(kv size 64 "$@")
	has intel "$@" && intel=,use-intel-id=on
	c=$nctrl
	if has noquirks "$@"; then
		append="$append vwc.noquirks=VWC$c"
		nq_set=1
	fi
	has quirks "$@" && nq_set=1
	[ -n "$intel" ] || last_plain=$c
	nctrl=$((nctrl + 1))
	args+=(-device "nvme,id=nv$c,serial=VWC$c$intel")
	for ((j = 1; j <= nns; j++)); do
		img "nv$c-n$j" "$size" "$whole"
		args+=(-drive "file=$work/nv$c-n$j.img,if=none,id=d$c-$j,format=raw"
			-device "nvme-ns,drive=d$c-$j,bus=nv$c,nsid=$j,shared=off,write-cache=$wc")
	done
}

add_subsys() {
	local s n m wcs size shared=on k c nsid first=$nctrl whole=''
	has whole "$@" && whole=whole
	s=$(kv name s0 "$@")
	n=$(kv ctrls 2 "$@")
	m=$(kv shared 1 "$@")
	nsid=$((m + 1))
	wcs=$(kv wc on "$@")
	size=$(kv size 64 "$@")
	IFS=, read -r -a wcs <<<"$wcs"
	has off "${wcs[@]}" && shared=off
	args+=(-device "nvme-subsys,id=$s,nqn=$s")
	for ((k = 0; k < n; k++)); do
		c=$nctrl
		nctrl=$((nctrl + 1))
		args+=(-device "nvme,id=nv$c,serial=VWC$first,subsys=$s")
		if [ "$shared" = off ] && [ "${wcs[k]:-${wcs[0]}}" = on ]; then
			img "$s-n$nsid" "$size" "$whole"
			args+=(-drive "file=$work/$s-n$nsid.img,if=none,id=d$s-$nsid,format=raw"
				-device "nvme-ns,drive=d$s-$nsid,bus=nv$c,nsid=$nsid,shared=off,write-cache=on")
			nsid=$((nsid + 1))
		fi
	done
	for ((k = 1; k <= m; k++)); do
		img "$s-n$k" "$size" "$whole"
		args+=(-drive "file=$work/$s-n$k.img,if=none,id=d$s-$k,format=raw"
			-device "nvme-ns,drive=d$s-$k,bus=nv$((nctrl - 1)),nsid=$k,shared=on,write-cache=$shared")
	done
}

nrp=0 nq_set='' last_plain='' fixtures=() peer_kernel='' peer_script='' shared=$append
while read -r line; do
	case $line in
	'# timeout:'*) [ -n "$timeout" ] || timeout=${line#'# timeout:'} ;;
	'# vm:'*)
		read -r -a w <<<"${line#'# vm:'}"
		case ${w[0]} in
		ctrl) add_ctrl "${w[@]:1}" ;;
		subsys) add_subsys "${w[@]:1}" ;;
		cpu)
			case ${w[1]:-} in
			hygon) CPU=$CPU,vendor=HygonGenuine ;;
			*) echo "run-vm: unknown cpu '${w[1]:-}'" >&2; exit 1 ;;
			esac
			;;
		rootport)
			for ((k = 0; k < $(kv n 1 "${w[@]:1}"); k++)); do
				args+=(-device "pcie-root-port,id=rp$nrp,chassis=$((nrp + 1)),slot=$((nrp + 1))")
				nrp=$((nrp + 1))
			done
			;;
		spare)
			for ((k = 0; k < $(kv n 1 "${w[@]:1}"); k++)); do
				img "spare$k" "$(kv size 64 "${w[@]:1}")"
			done
			;;
		append) append="$append ${w[*]:1}" shared="$shared ${w[*]:1}" ;;
		peer)
			peer_kernel=$(kv kernel 7.2-generic-tcp "${w[@]:1}")
			peer_script=$(kv script '' "${w[@]:1}")
			[ -n "$peer_script" ] || { echo "run-vm: peer without script=: $line" >&2; exit 1; }
			;;
		notracefs) append="$append vwc.notracefs" ;;
		quirks) nq_set=1 ;;
		icount) args+=(-icount "shift=$(kv shift 3 "${w[@]:1}"),sleep=off") ;;
		memory) mem=${w[1]:-1024} ;;
		fixture) fixtures+=("${w[1]:-}") ;;
		*) echo "run-vm: unknown directive: $line" >&2; exit 1 ;;
		esac
		;;
	esac
done <"$case_file"
timeout=$(echo "${timeout:-300}" | tr -d ' ')
# Every guest has a controller the driver holds no quirks for, as a real
# T700 is: the last plain "ctrl" (not "intel"), unless a ctrl line says
# noquirks or quirks itself, or the case says "# vm: quirks".
[ -n "$nq_set" ] || [ -z "$last_plain" ] || append="$append vwc.noquirks=VWC$last_plain"

# The network of two guests (# vm: peer): the peer listens, this guest
# connects once the peer's QEMU has made the socket.
mac=52:54:00:76:77:02
if [ -n "$peer_of" ]; then
	args+=(-netdev "stream,id=n0,server=on,addr.type=unix,addr.path=$peer_of")
	mac=52:54:00:76:77:01
elif [ -n "$peer_script" ]; then
	HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	[ -f "$HERE/guest/$peer_script.sh" ] || { echo "run-vm: no peer script guest/$peer_script.sh" >&2; exit 1; }
	bash "$0" -p "$work/net.sock" -i "$initrd" -k "$peer_kernel" -l "$log.peer" \
		-t "$((timeout + 60))" ${shared:+-a "$shared"} "$HERE/guest/$peer_script.sh" \
		>"$log.peer.out" 2>&1 &
	peer_pid=$!
	for ((k = 0; k < 300; k++)); do
		[ -S "$work/net.sock" ] && break
		kill -0 "$peer_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$work/net.sock" ] || { echo "run-vm: the peer made no socket: $(tail -n 3 "$log.peer.out")" >&2; exit 4; }
	args+=(-netdev "stream,id=n0,server=off,addr.type=unix,addr.path=$work/net.sock")
fi
# (no option ROM: SeaBIOS would run iPXE's, seconds of its prompt a boot)
[ -z "$peer_of$peer_script" ] || args+=(-device "virtio-net-pci,netdev=n0,mac=$mac,romfile=")

# Kernels with NVMe as a module come with an overlay archive of modules.
if [ -s "$kdir/modules.cpio.gz" ]; then
	cat "$initrd" "$kdir/modules.cpio.gz" >"$work/initrd"
	initrd="$work/initrd"
fi
# A fixture's overlay last: the kernel unpacks the archives in order.
for fx in "${fixtures[@]}"; do
	fxa="$CACHE/fixtures/$fx/$(cat "$kdir/version" 2>/dev/null)/modules.cpio.gz"
	[ -s "$fxa" ] || { echo "run-vm: no fixture $fx for $tag (run tests/vm/fixture-$fx.sh $tag)" >&2; exit 1; }
	cat "$initrd" "$fxa" >"$work/initrd.fx"
	mv "$work/initrd.fx" "$work/initrd"
	initrd="$work/initrd"
done

sock="$work/monitor.sock"
qemu_cmd=(qemu-system-x86_64 -accel "$VQ_ACCEL" -machine q35 -cpu "$CPU" -m "${mem:-1024}" -smp 2
	-nographic -no-reboot -nic none -kernel "$(vq_pvh "$kdir/vmlinuz")" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 no_timer_check quiet vwc.test=$name${append}"
	"${args[@]}")

vq_boot "$log" "$sock" "$work" 'VWC-INIT: start' "$BOOT_TIMEOUT" "$timeout" "$follow" \
	-- "${qemu_cmd[@]}" || true
status=$VQ_STATUS
if [ "$status" != ok ] && [ -s "$log.qemu" ]; then
	sed 's/^/run-vm: qemu: /' "$log.qemu" >&2
fi
echo "VWC-RUN: status=$status boot=$VQ_BOOT total=$VQ_TOTAL attempts=$VQ_ATTEMPTS cpu=$VQ_CPU_S log=$log"
case $status in
ok) exit 0 ;;
timeout) exit 2 ;;
noinit) exit 3 ;;
*) exit 4 ;;
esac
