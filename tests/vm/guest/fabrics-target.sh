#!/bin/sh
# The target guest of the cases over NVMe/TCP ("# vm: peer
# script=fabrics-target"): Linux's nvmet from configfs. vwc.subsys=N
# subsystems (default 4) nqn.2024-01.test.vwc:sK, each with two namespaces
# backed by null_blk devices: nsid 1 by ftK, with no write cache (null_blk
# reports write through: 7.x's nvmet then sets "volatile write cache not
# present", NSFEAT bit 5 of the I/O Command Set Independent Identify
# Namespace), nsid 2 by fcK, memory backed with a 4 MiB cache (write back).
# Each subsystem on two ports, 10.0.0.1 (port 1) and 10.0.1.1 (port 2),
# TCP 4420: two controllers a subsystem on the initiator, ANA multipath.
#
# The initiator drives it over HTTP (busybox httpd, port 8080):
#   /cgi-bin/ctl?stat      per backing device "DEV flushes-arrived
#                          flushes-at-device": Flush commands nvmet took for
#                          it (its nvmet_req_init trace event, filtered to
#                          opcode 0 on I/O queues) and completed flushes in
#                          /sys/block/DEV/stat
#   /cgi-bin/ctl?down=P    port P's subsystem links removed (its
#                          controllers go; the initiator reconnects)
#   /cgi-bin/ctl?up=P      and put back (no connect answered while
#                          the links change: see shut())
#   /cgi-bin/ctl?done      the target powers off
. /vwc/guest/lib.sh

n=$(cmdline_arg vwc.subsys 4)
cfg=/sys/kernel/config
T=/sys/kernel/tracing
t0=$(cut -d' ' -f1 /proc/uptime)
mountpoint -q $cfg || mount -t configfs none $cfg
net_up 10.0.0.1 10.0.1.1

i=1
while [ "$i" -le "$n" ]; do
	for kind in t c; do
		d=$cfg/nullb/f$kind$i
		mkdir "$d"
		echo 16 >"$d/size"
		echo 1 >"$d/memory_backed"
		[ $kind = t ] || echo 4 >"$d/cache_size"
		echo 1 >"$d/power"
	done
	s=$cfg/nvmet/subsystems/nqn.2024-01.test.vwc:s$i
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	for nsid in 1 2; do
		kind=t
		[ "$nsid" = 1 ] || kind=c
		mkdir "$s/namespaces/$nsid"
		echo "/dev/f$kind$i" >"$s/namespaces/$nsid/device_path"
		echo 1 >"$s/namespaces/$nsid/enable"
	done
	i=$((i + 1))
done
for p in 1 2; do
	d=$cfg/nvmet/ports/$p
	mkdir "$d"
	echo tcp >"$d/addr_trtype"
	echo ipv4 >"$d/addr_adrfam"
	echo "10.0.$((p - 1)).1" >"$d/addr_traddr"
	echo 4420 >"$d/addr_trsvcid"
	for s in $cfg/nvmet/subsystems/*; do ln -s "$s" "$d/subsystems/${s##*/}"; done
done

# Flushes as they arrive, per backing device (opcode 0 is Flush on an I/O
# queue; on the admin queue it is Delete I/O Submission Queue)
echo 'opcode == 0 && qid != 0' >$T/events/nvmet/nvmet_req_init/filter
echo 1 >$T/events/nvmet/nvmet_req_init/enable

mkdir -p /tmp/www/cgi-bin
cat >/tmp/www/cgi-bin/ctl <<'CGI'
#!/bin/sh
cfg=/sys/kernel/config/nvmet
echo "Content-Type: text/plain"
echo
# While a port's links change, the port answers no connect: nvmet listens
# from its first link to its last, and a Connect to a subsystem not (or no
# longer) linked fails with Do Not Retry, after which a 6.10 or later
# initiator deletes the controller instead of reconnecting. The initiator's
# SYN goes unanswered (a prohibit route to it) and is sent again in 1 s.
shut() { ip route add prohibit "10.0.$(($1 - 1)).2"; }
open_() { ip route del prohibit "10.0.$(($1 - 1)).2"; }
case $QUERY_STRING in
stat)
	for b in /sys/block/f[tc]*; do
		b=${b##*/}
		echo "$b $(grep -c "disk=/dev/$b," /sys/kernel/tracing/trace) $(awk '{ print $16 }' /sys/block/$b/stat) $(cat /sys/block/$b/queue/write_cache | tr ' ' _)"
	done ;;
down=[12])
	p=${QUERY_STRING#down=}
	shut "$p"
	rm -f $cfg/ports/$p/subsystems/*
	open_ "$p"
	echo "port $p: $(ls $cfg/ports/$p/subsystems | wc -l) subsystems" ;;
up=[12])
	p=${QUERY_STRING#up=}
	shut "$p"
	for s in $cfg/subsystems/*; do ln -s "$s" "$cfg/ports/$p/subsystems/${s##*/}"; done
	open_ "$p"
	echo "port $p: $(ls $cfg/ports/$p/subsystems | wc -l) subsystems" ;;
done) touch /tmp/done; echo bye ;;
*) echo "unknown: $QUERY_STRING" ;;
esac
CGI
chmod 755 /tmp/www/cgi-bin/ctl
httpd -p 8080 -h /tmp/www
info "target: $n subsystem(s), $(ls -d /sys/block/f[tc]* | command wc -l) backing devices, ports $(cat $cfg/nvmet/ports/*/addr_traddr | tr '\n' ' '), ready $(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime) s after its script started"
for b in /sys/block/f[tc]*; do info "target: ${b##*/} $(cat $b/queue/write_cache)"; done

# until the initiator says it is done (its guest stops this one anyway)
while [ ! -e /tmp/done ]; do nap 0.5; done
info "target: flushes seen (device arrived at-device): $(timeout 10 wget -qO- http://127.0.0.1:8080/cgi-bin/ctl?stat | tr '\n' ';')"
finish
