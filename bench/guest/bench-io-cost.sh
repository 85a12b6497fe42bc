#!/bin/sh
# timeout: 3600
#
# The I/O-path cost of the sidecar's kernel-side detection
# (src/watch/kwatch.c), measured in three states side by side: "off" (no
# sidecar), "on" (the sidecar as installed: kprobes on the nvme admin
# passthrough entry points, nothing on the I/O path) and "tp" (the sidecar
# with VWC_KWATCH=tracepoints: perf events on nvme:nvme_setup_cmd and
# nvme:nvme_complete_rq, which fire for every NVMe command, so every I/O
# pays for the tracepoint and the filter). No QEMU controller here: a null_blk device (memory-backed, no
# completion delay) exported by nvmet and connected through nvme-loop, so
# no device emulation hides the cost, and the loop controller is the only
# one the sidecar watches (its start line is checked).
#
# fio 4k randread, O_DIRECT, libaio, time-based (5 s),
# --clocksource=clock_gettime (fio's default clock reported about 20x the
# requested runtime under TCG on a loaded host), at QD1 and QD32, in turned
# order: pair k of a QD runs off,on,tp when k % 3 is 0, on,tp,off when 1,
# tp,off,on when 2. 12 pairs per QD. The sidecar starts before its run (its
# start line, then SETTLE seconds) and gets SIGTERM after it; an "off" run
# waits the same.
#
# Prints one line per run, for the host's analysis (bench/io-cost.sh):
#   BENCH-RUN: qd=Q pair=K state=off|on|tp iops=I cpu=C ios=N wall_ms=W
#              busy=B ticks=T kev=E
# cpu: fio's usr+sys %; busy: the guest's CPUs busy % during fio
# (/proc/stat, both CPUs); ticks: the sidecar's CPU ticks during fio; kev:
# the kernel events it received in its life (its stop line).
# The kernel command line's vwc.io_pairs=N and vwc.io_seconds=S (bench/run.sh
# -a) change the 12 and the 5.
# Needs a kernel tag with nvme-loop and null_blk (7.2-generic-io,
# 6.1-generic-io: tests/vm/kernels.sh).
. /vwc/guest/lib.sh
P=12 T=5
# after the sidecar's start line (and as long in "off"): the re-checks it
# makes of a controller it has just seen (0.3, 1.5 and 5 s) and the
# release of its idle descriptor (1 s later) are over, so that the runs
# measure the detection on the I/O path, not the start's tail
SETTLE=7
for a in $(cat /proc/cmdline); do
	case $a in
	vwc.io_pairs=*) P=${a#*=} ;;
	vwc.io_seconds=*) T=${a#*=} ;;
	esac
done
M=/lib/modules/$(uname -r)

# --- null_blk -> nvmet -> nvme-loop (nvme-tcp on 127.0.0.1 without it) ---
nb=$(grep -m 1 '/null_blk\.ko$' "$M/modules.load" 2>/dev/null)
tr=
if grep -q '/nvme-loop\.ko$' "$M/modules.load" 2>/dev/null; then
	tr=loop
elif grep -q '/nvme-tcp\.ko$' "$M/modules.load" 2>/dev/null; then
	tr=tcp
fi
[ -n "$nb" ] && [ -n "$tr" ] || {
	fail "io-cost: setup" "no null_blk, nvme-loop or nvme-tcp module in $(uname -r) (boot a -io kernel tag)"
	finish
	exit 1
}
# /init loaded null_blk with its defaults (no memory, softirq completion):
# again, memory-backed, completion inline (irqmode=0), 4k blocks, 1 GiB.
rmmod null_blk
insmod "$M/$nb" nr_devices=1 queue_mode=2 irqmode=0 memory_backed=1 bs=4096 gb=1 ||
	{ fail "io-cost: setup" "insmod null_blk memory_backed=1 refused"; finish; exit 1; }
info "null_blk: nullb0 $(cat /sys/block/nullb0/size) sectors of 512 B, $(cat /sys/block/nullb0/queue/logical_block_size) B blocks, module parameters memory_backed=$(cat /sys/module/null_blk/parameters/memory_backed 2>/dev/null) irqmode=$(cat /sys/module/null_blk/parameters/irqmode 2>/dev/null) queue_mode=$(cat /sys/module/null_blk/parameters/queue_mode 2>/dev/null)"
mount -t configfs none /sys/kernel/config 2>/dev/null
S=/sys/kernel/config/nvmet/subsystems/vwc-io
PT=/sys/kernel/config/nvmet/ports/1
mkdir "$S" "$S/namespaces/1" "$PT" &&
	echo 1 >"$S/attr_allow_any_host" &&
	printf /dev/nullb0 >"$S/namespaces/1/device_path" &&
	echo 1 >"$S/namespaces/1/enable" ||
	{ fail "io-cost: setup" "nvmet namespace on nullb0 failed"; finish; exit 1; }
conn="-t loop"
if [ "$tr" = tcp ]; then
	ip link set lo up
	echo ipv4 >"$PT/addr_adrfam" && echo 127.0.0.1 >"$PT/addr_traddr" &&
		echo 4420 >"$PT/addr_trsvcid"
	conn="-t tcp -a 127.0.0.1 -s 4420"
fi
echo "$tr" >"$PT/addr_trtype" && ln -s "$S" "$PT/subsystems/vwc-io" ||
	{ fail "io-cost: setup" "nvmet $tr port failed"; finish; exit 1; }
# shellcheck disable=SC2086 # $conn: words
# (an explicit host identity: nvme-cli's derived one, with no
# /etc/nvme/hostnqn, has the kernel's default host's hostid and another
# hostnqn, which 7.2 refuses)
hid=$(cat /proc/sys/kernel/random/uuid)
nvme connect $conn -n vwc-io --hostnqn="nqn.2014-08.org.nvmexpress:uuid:$hid" --hostid="$hid" >/tmp/connect.log 2>&1 ||
	{ fail "io-cost: setup" "nvme connect $conn: $(cat /tmp/connect.log)"; finish; exit 1; }
c=
wait_for - 20 sh -c "grep -lx $tr /sys/class/nvme/nvme*/transport"
for d in /sys/class/nvme/nvme*; do
	[ "$(cat "$d/transport" 2>/dev/null)" = "$tr" ] && c=${d##*/}
done
# its namespace: the one visible nvme block device (no other controller
# here; nvmeXcYnZ are multipath's hidden paths)
nsof() {
	for b in /sys/block/nvme*n*; do
		case ${b##*/} in nvme*c*n*) ;; *) [ -e "$b" ] && echo "${b##*/}" ;; esac
	done
}
wait_for - 20 sh -c "[ -n \"\$(ls /sys/block | grep '^nvme[0-9]*n[0-9]*\$')\" ]"
ns=$(nsof | head -n 1)
[ -n "$c" ] && [ -b "/dev/$ns" ] ||
	{ fail "io-cost: setup" "no $tr controller or namespace (ctrl '$c', ns '$ns')"; finish; exit 1; }
info "transport $tr: $c (subsysnqn $(cat /sys/class/nvme/$c/subsysnqn), model $(cat /sys/class/nvme/$c/model)) namespace $ns, $(cat /sys/block/$ns/size) sectors, write_cache $(wc /dev/$ns); controllers: $(ls /sys/class/nvme | tr '\n' ' ')"
start_udev >/dev/null 2>&1
# where detection could sit instead, off the I/O path: the admin
# passthrough entry points this kernel has as symbols (kprobe targets)
info "passthrough entry points in /proc/kallsyms: $(awk '$3 ~ /^(nvme_dev_ioctl|nvme_ioctl|nvme_ns_chr_ioctl|nvme_ns_head_ioctl|nvme_ns_head_chr_ioctl|nvme_dev_uring_cmd|nvme_ns_chr_uring_cmd|nvme_ns_head_chr_uring_cmd|nvme_user_cmd|nvme_user_cmd64|nvme_submit_user_cmd|nvme_ctrl_ioctl|nvme_ns_ioctl)$/ { print $3 }' /proc/kallsyms | sort -u | tr '\n' ' ')"

# busy: "total idle" jiffies of all CPUs
busy() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; printf "%d %d\n", t, $5 + $6 }' /proc/stat; }

# fio_run QD: one run; sets R to "iops=... busy=...", or to nothing (and
# fails) when fio failed
fio_run() {
	R=
	_b0=$(busy)
	_t0=$(/usr/bin/date +%s%N)
	fio --name=rr --filename="/dev/$ns" --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth="$1" --runtime="$T" --time_based \
		--clocksource=clock_gettime --output-format=json >/tmp/fio.json 2>/tmp/fio.err ||
		{ fail "io-cost: fio QD$1" "$(head -c 300 /tmp/fio.err)"; return 1; }
	_wall=$((($(/usr/bin/date +%s%N) - _t0) / 1000000))
	_b1=$(busy)
	_busy=$(echo "$_b0 $_b1" | awk '{ t = $3 - $1; i = $4 - $2; printf "%.1f", (t > 0 ? 100 * (t - i) / t : 0) }')
	R=$(jq -r --arg w "$_wall" --arg b "$_busy" \
		'.jobs[0] | "iops=\(.read.iops) cpu=\(.usr_cpu + .sys_cpu) ios=\(.read.total_ios) wall_ms=\($w) busy=\($b)"' /tmp/fio.json)
}
# run_state S QD K: one run in state S: "off" (no sidecar), "on" (the
# sidecar as installed: kprobes on the admin passthrough), "tp" (the
# sidecar on the nvme tracepoints, VWC_KWATCH=tracepoints: the detection
# it had before, measured in the same boot for comparison)
run_state() {
	_s=$1
	if [ "$_s" = off ]; then
		sleep "$SETTLE"
		fio_run "$2"
		[ -z "$R" ] || echo "BENCH-RUN: qd=$2 pair=$3 state=off $R ticks=0 kev=0"
		return
	fi
	if [ "$_s" = tp ]; then
		VWC_KWATCH=tracepoints nvme-vwc-sync watch >/tmp/watch.log 2>&1 &
	else
		nvme-vwc-sync watch >/tmp/watch.log 2>&1 &
	fi
	pid=$!
	# its first pass done (the start line), then the same wait as "off"
	wait_for - 30 grep -q watching /tmp/watch.log
	sleep "$SETTLE"
	eval "_first=\${started_$_s:-}"
	if [ -z "$_first" ]; then
		_line=$(grep -m 1 'watching' /tmp/watch.log)
		eval "started_$_s=1"
		info "sidecar ($_s): $_line"
		case $_s:$_line in
		on:*"watching 1 controller(s), 1 namespace(s)"*"detection: kprobes on the nvme admin passthrough"* | \
		tp:*"watching 1 controller(s), 1 namespace(s)"*"detection: nvme tracepoints"*)
			pass "io-cost: state $_s: the sidecar watches the $tr controller $c with $( [ "$_s" = on ] && echo "kprobes on the admin passthrough" || echo "the nvme tracepoints")" ;;
		*)
			fail "io-cost: sidecar ($_s)" "start line is not 1 controller, 1 namespace, the expected detection: $_line"
			kill -TERM $pid
			finish
			exit 1
			;;
		esac
	fi
	t0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	fio_run "$2"
	t1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	kill -TERM $pid
	wait $pid
	kev=$(sed -n 's/.*stopping ([0-9]* events, \([0-9]*\) kernel events.*/\1/p' /tmp/watch.log | tail -n 1)
	[ -z "$R" ] || echo "BENCH-RUN: qd=$2 pair=$3 state=$_s $R ticks=$((t1 - t0)) kev=${kev:-?}"
}
fio_run 1 && fio_run 32 # warm-up, not counted
# the states' order turns each pair (off on tp, on tp off, tp off on), so
# that a drift over the run falls on each state alike
k=0
while [ "$k" -lt "$P" ]; do
	for q in 1 32; do
		case $((k % 3)) in
		0) order="off on tp" ;;
		1) order="on tp off" ;;
		*) order="tp off on" ;;
		esac
		for st in $order; do run_state "$st" "$q" "$k"; done
	done
	k=$((k + 1))
done
info "sidecar's last stop line: $(grep stopping /tmp/watch.log | tail -n 1)"
nvme disconnect -n vwc-io >/dev/null 2>&1
finish
