#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
#
# The fsync table of the kernel patch "nvme: honor the volatile write cache
# enable state" on emulated drives: fio 4k randwrite with fsync=1, before
# and after `nvme vwc-sync`, on a WCE-off drive (the fix) and a WCE-on drive
# (nothing may change). Flush counts are the kernel's (stat field 16);
# fl/fsync divides them by the fsyncs fio completed.
. /vwc/guest/lib.sh
RUNTIME=${VWC_BENCH_RUNTIME:-10}

off=$(ctrl_by_serial VWC0)
on=$(ctrl_by_serial VWC1)

# job NAME DEV -> "iops fsync_avg_us flushes fsyncs"
job() {
	case $1 in
	psync) args="--ioengine=psync --direct=0 --iodepth=1" ;;
	uring1) args="--ioengine=io_uring --direct=1 --iodepth=1" ;;
	uring32) args="--ioengine=io_uring --direct=1 --iodepth=32" ;;
	esac
	f0=$(flushes "$2")
	# shellcheck disable=SC2086
	fio --name=b --filename="/dev/$2" --rw=randwrite --bs=4k --fsync=1 \
		$args --size=32M --time_based --runtime="$RUNTIME" \
		--output-format=json --output=/tmp/fio.json >/dev/null 2>&1
	f1=$(flushes "$2")
	iops=$(jq '.jobs[0].write.iops | floor' /tmp/fio.json)
	lat=$(jq '(.jobs[0].sync.lat_ns.mean // 0) / 1000 | . * 10 | floor / 10' /tmp/fio.json)
	syncs=$(jq '.jobs[0].sync.total_ios // 0' /tmp/fio.json)
	echo "$iops $lat $((f1 - f0)) $syncs"
}

table() {
	ctrl=$1 ns=$(ns_of "$1")
	echo "BENCH: drive $ctrl (WCE=$(get_wce "$ctrl")), fio 4k randwrite fsync=1, ${RUNTIME}s per run"
	echo "BENCH:   job                   | cache         |   IOPS | fsync avg | flushes | fl/fsync |  gain"
	echo "BENCH:   ----------------------+---------------+--------+-----------+---------+----------+------"
	for j in psync uring1 uring32; do
		case $j in psync) label="psync buffered, QD1  " ;; uring1) label="io_uring direct, QD1 " ;; uring32) label="io_uring direct, QD32" ;; esac
		set_wc "$ns" "write back"
		nvme vwc restore "$ctrl" >/dev/null 2>&1
		set -- $(job $j "$ns")
		b_iops=$1 b_lat=$2 b_fl=$3 b_sy=$4
		b_mode=$(wc "$ns")
		t0=$(/usr/bin/date +%s%N)
		nvme vwc-sync "/dev/$ctrl" >/dev/null 2>&1
		t1=$(/usr/bin/date +%s%N)
		echo "BENCH:   (nvme vwc-sync /dev/$ctrl took $(((t1 - t0) / 1000)) us wall under TCG)"
		set -- $(job $j "$ns")
		a_iops=$1 a_lat=$2 a_fl=$3 a_sy=$4
		a_mode=$(wc "$ns")
		printf 'BENCH:   %s | %-13s | %6s | %7sus | %7s | %8s |\n' "$label" "$b_mode" "$b_iops" "$b_lat" "$b_fl" \
			"$(awk -v f="$b_fl" -v n="$b_sy" 'BEGIN { printf "%.2f", n ? f / n : 0 }')"
		printf 'BENCH:                         | %-13s | %6s | %7sus | %7s | %8s | x%s\n' "$a_mode" "$a_iops" "$a_lat" "$a_fl" \
			"$(awk -v f="$a_fl" -v n="$a_sy" 'BEGIN { printf "%.2f", n ? f / n : 0 }')" \
			"$(awk -v a="$a_iops" -v b="$b_iops" 'BEGIN { printf "%.1f", b ? a / b : 0 }')"
	done
}
table "$off"
table "$on"
finish
