#!/bin/sh
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=off ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# vm: ctrl wc=on ns=4
# kernels: 6.1 7.2
# timeout: 900
# host-check: tests/fleet/check-prom-log.sh
#
# Fleet audits: 16 controllers (VWC0-7 WCE off, VWC8-15 WCE on),
# 64 namespaces. `nvme vwc audit` in all three formats, each parsed: the
# table row by row, JSON with jq, Prometheus with a structural lint (awk)
# here and, on the host, `promtool check metrics` on the blocks printed
# between "VWC-BEGIN prom <label>" and "VWC-END prom" (tests/fleet/
# check-prom-log.sh). Then flush-latency figures and its bad-input errors.
. /vwc/guest/lib.sh
plan 83

NCTRL=16 NNS=64 NOFF=8

# --- the machine ---------------------------------------------------------
nns() { ls -d /sys/block/nvme*n* 2>/dev/null | command wc -l; }
nctrl() { ls -d /sys/class/nvme/nvme* 2>/dev/null | command wc -l; }
all_there() { [ "$(nctrl)" -eq "$NCTRL" ] && [ "$(nns)" -eq "$NNS" ]; }
fact wait_for "all $NCTRL controllers and $NNS namespaces probed" 120 all_there
info "probed: $(nctrl) controllers, $(nns) namespaces, uptime $(cut -d' ' -f1 /proc/uptime)s"

# OFF / ON: controller names (kernel order need not follow QEMU's)
OFF='' ON=''
i=0
while [ "$i" -lt "$NCTRL" ]; do
	c=$(ctrl_by_serial "VWC$i") || { fail "controller with serial VWC$i" "not found"; i=$((i + 1)); continue; }
	if [ "$i" -lt "$NOFF" ]; then OFF="$OFF $c"; else ON="$ON $c"; fi
	i=$((i + 1))
done
OFF=${OFF# } ON=${ON# }
is_off() { case " $OFF " in *" $1 "*) return 0 ;; esac; return 1; }
info "WCE off: $OFF"
info "WCE on:  $ON"
# namespaces of controllers, sorted
ns_list() { for c in "$@"; do for n in /sys/class/nvme/"$c"/nvme*n*; do echo "${n##*/}"; done; done | sort; }
NS_OFF=$(ns_list $OFF)
NS_ON=$(ns_list $ON)
fact check_eq "4 namespaces per controller (WCE off / on)" "$(echo "$NS_OFF" | command wc -l) $(echo "$NS_ON" | command wc -l)" "32 32"
bad_wce=''
for c in $OFF; do [ "$(get_wce "$c")" = 0 ] || bad_wce="$bad_wce $c"; done
for c in $ON; do [ "$(get_wce "$c")" = 1 ] || bad_wce="$bad_wce $c"; done
fact check_eq "kernel: Get Features 06h as configured on all 16" "$bad_wce" ""
wb=0
for n in $NS_OFF $NS_ON; do [ "$(wc "$n")" = "write back" ] && wb=$((wb + 1)); done
fact check_eq "kernel: all 64 namespaces start write back (the bug on 32)" "$wb" 64

# usec CMD...: run CMD, output to /tmp/out, status to $rc, wall time (us) to $us
usec() {
	_t0=$(/usr/bin/date +%s%N)
	"$@" >/tmp/out 2>/tmp/err
	rc=$?
	_t1=$(/usr/bin/date +%s%N)
	us=$(((_t1 - _t0) / 1000))
}

# --- the table -------------------------------------------------------------
# Rows: CONTROLLER MODEL PCI/TRANS CACHE NAMESPACE CURRENT RECOMMENDED STATE, with
# spaces inside MODEL, CACHE and the modes: pick the namespace by its form
# and the state from the last field.
table_rows() { # FILE -> "ctrl ns state" per namespace row, sorted by ns
	awk '$1 ~ /^nvme[0-9]+$/ {
		ns = ""
		for (i = 2; i <= NF; i++) if ($i ~ /^nvme[0-9]+n[0-9]+$/) { ns = $i; break }
		if (ns != "") print $1, ns, $NF
	}' "$1" | sort -k2
}
check_table() { # LABEL FILE EXPECT_OFF_STATE
	rows=$(table_rows "$2")
	check_eq "$1: 64 namespace rows" "$(echo "$rows" | grep -c .)" "$NNS"
	check_eq "$1: header" "$(head -n 1 "$2" | tr -s ' ')" "CONTROLLER MODEL PCI/TRANS CACHE NAMESPACE CURRENT RECOMMENDED STATE"
	want=$(for n in $NS_OFF; do echo "$n $3"; done; for n in $NS_ON; do echo "$n ok"; done)
	got=$(echo "$rows" | awk '{ print $2, $3 }' | sort)
	check_eq "$1: state per namespace (WCE off: $3, WCE on: ok)" "$got" "$(echo "$want" | sort)"
	# each row sits under its own controller, with the right cache column
	badrow=$(echo "$rows" | while read -r c n _; do
		case $n in "$c"n*) ;; *) echo "$n under $c" ;; esac
		if is_off "$c"; then k="cache present, disabled"; else k="cache present, enabled"; fi
		grep -E "^$c +.*$k +$n " "$2" >/dev/null || echo "$n: cache column"
	done)
	check_eq "$1: rows under their controller, cache column right" "$badrow" ""
	check_eq "$1: no ERROR rows, no error lines" "$(grep -c 'ERROR\|error:' "$2")" 0
}

usec nvme vwc audit
info "nvme vwc audit (table), 64 namespaces: ${us} us wall under TCG"
check_eq "audit table before sync: exit 3 (drift)" "$rc" 3
cp /tmp/out /tmp/table1
check_table "audit table before sync" /tmp/table1 DRIFT
check_eq "audit table before sync: 32 DRIFT" "$(grep -c ' DRIFT$' /tmp/table1)" 32

# --- JSON ----------------------------------------------------------------------
jqr() { jq -r "$1" /tmp/json 2>&1; }
check_json() { # LABEL DRIFTING
	check_eq "$1: parses, schema_version 1, command audit" "$(jqr '[.schema_version, .command, .dry_run] | map(tostring) | join(" ")')" "1 audit true"
	check_eq "$1: 16 controllers, 64 namespaces, no errors" "$(jqr '[(.controllers | length), (.namespaces | length), (.errors | length)] | map(tostring) | join(" ")')" "16 64 0"
	check_eq "$1: controllers' wce" "$(jqr '[.controllers[] | .wce] | group_by(.) | map("\(.[0])=\(length)") | join(" ")')" "disabled=8 enabled=8"
	check_eq "$1: WCE-off controllers by name" "$(jqr '[.controllers[] | select(.wce == "disabled") | .name] | sort | join(" ")')" "$(echo $OFF | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
	check_eq "$1: every controller present, recommended follows wce" "$(jqr '[.controllers[] | select(.vwc_present != true or .recommended != (if .wce == "enabled" then "write back" else "write through" end) or .error != null)] | length')" 0
	check_eq "$1: 4 namespaces per controller" "$(jqr '[.namespaces[] | .controllers[0]] | group_by(.) | map(length) | unique | map(tostring) | join(",")')" 4
	check_eq "$1: drift count" "$(jqr '[.namespaces[] | select(.drift)] | length')" "$2"
	check_eq "$1: drift field is boolean on all 64" "$(jqr '[.namespaces[] | .drift | type] | unique | join(",")')" boolean
	check_eq "$1: drift == (current != recommended)" "$(jqr '[.namespaces[] | select(.drift != (.write_cache_after != .recommended))] | length')" 0
	check_eq "$1: recommended per namespace follows its controller" "$(jqr '(.controllers | map({(.name): .recommended}) | add) as $r | [.namespaces[] | select(.recommended != $r[.controllers[0]])] | length')" 0
	if [ "$2" -gt 0 ]; then
		check_eq "$1: drifting namespaces are exactly the WCE-off ones" "$(jqr '[.namespaces[] | select(.drift) | .name] | sort | join(" ")')" "$(echo $NS_OFF)"
		check_eq "$1: drifting ones are write back, recommended write through" "$(jqr '[.namespaces[] | select(.drift) | "\(.write_cache_after)>\(.recommended)"] | unique | join(",")')" "write back>write through"
	fi
}
usec nvme vwc audit -o json
info "nvme vwc audit -o json, 64 namespaces: ${us} us wall under TCG"
check_eq "audit json before sync: exit 3" "$rc" 3
cp /tmp/out /tmp/json
check_json "audit json before sync" 32

# --- Prometheus -----------------------------------------------------------
# promlint FILE: the structural checks promtool makes (see the comments);
# prints problems and a summary line, exit 1 on a problem.
promlint() {
	awk '
	function bad(msg) { printf "promlint: line %d: %s: %s\n", NR, msg, $0; errs++ }
	function family(n, b) {
		if (n in type) return n
		b = n; if (sub(/_(total|created)$/, "", b) && type[b] == "counter") return b
		b = n; if (sub(/_(bucket|sum|count|created)$/, "", b) && type[b] == "histogram") return b
		b = n; if (sub(/_(sum|count|created)$/, "", b) && type[b] == "summary") return b
		return ""
	}
	function open_family(n) {
		if (n == cur) return
		if (n in closed) bad("family " n " reopened")
		if (cur != "") closed[cur] = 1
		cur = n; nfam++
	}
	BEGIN { NAME = "^[a-zA-Z_:][a-zA-Z0-9_:]*"; LNAME = "[a-zA-Z_][a-zA-Z0-9_]*"
		LPAIR = LNAME "=\"([^\"\\\\]|\\\\.)*\"" }
	{ sub(/\r$/, "") }
	/^# HELP / {
		n = $3
		if (n !~ (NAME "$")) { bad("bad metric name in HELP"); next }
		if (n in help) bad("second HELP for " n)
		help[n] = 1; open_family(n); next
	}
	/^# TYPE / {
		n = $3
		if (n !~ (NAME "$")) { bad("bad metric name in TYPE"); next }
		if (NF != 4 || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/) bad("bad TYPE")
		if (n in type) bad("second TYPE for " n)
		if (n in sampled) bad("TYPE after samples of " n)
		type[n] = $4; open_family(n); next
	}
	/^#/ || /^[ \t]*$/ { next }
	{
		if (!match($0, NAME)) { bad("bad metric name"); next }
		name = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
		f = family(name)
		if (f == "" || !(f in help)) { bad("sample without HELP and TYPE before it"); next }
		if (f != cur) bad("sample outside its family block (" f ")")
		sampled[f] = 1
		labels = ""
		if (substr(rest, 1, 1) == "{") {
			if (!match(rest, "^[{](" LPAIR "(," LPAIR ")*)?[}]")) { bad("malformed label set"); next }
			labels = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
			split("", seenl); l = substr(labels, 2)
			while (match(l, "^" LPAIR ",?")) {
				pair = substr(l, 1, RLENGTH); ln = substr(pair, 1, index(pair, "=") - 1)
				if (ln in seenl) bad("label " ln " repeated")
				seenl[ln] = 1; l = substr(l, RLENGTH + 1)
			}
		}
		if (rest !~ /^ [-+]?(([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?|NaN|Inf)( -?[0-9]+)?$/) bad("bad value")
		if ((name labels) in series) bad("duplicate series")
		series[name labels] = 1; samples++
	}
	END { printf "promlint: %d samples, %d families, %d problems\n", samples, nfam, errs; exit errs > 0 }' "$1"
}
# psum FILE METRIC: "<samples> <sum of values>" of one metric
psum() { awk -v m="$2" 'index($0, m "{") == 1 || index($0, m " ") == 1 { n++; s += $NF } END { print n + 0, s + 0 }' "$1"; }
# pval FILE METRIC LABEL VALUE: values of the samples whose LABEL is VALUE
pval() { grep "^$2{" "$1" | grep "[{,]$3=\"$4\"[,}]" | awk '{ print $NF }' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# prom_block LABEL FILE: the block the host hands to promtool
prom_block() {
	echo "VWC-BEGIN prom $1"
	cat "$2"
	echo "VWC-END prom"
}
check_prom() { # LABEL FILE DRIFT_SUM
	out=$(promlint "$2") && pass "$1: lint ($(echo "$out" | tail -n 1))" || fail "$1: lint" "$(echo "$out" | head -n 5 | tr '\n' ' ')"
	check_eq "$1: every family a gauge with HELP" "$(grep -c '^# TYPE .* gauge$' "$2") $(grep -c '^# HELP ' "$2")" "14 14"
	check_eq "$1: controller_info x16" "$(psum "$2" nvme_vwc_controller_info)" "16 16"
	check_eq "$1: cache_present x16, all 1" "$(psum "$2" nvme_vwc_cache_present)" "16 16"
	check_eq "$1: cache_enabled x16, 8 on" "$(psum "$2" nvme_vwc_cache_enabled)" "16 8"
	check_eq "$1: namespace_write_back x64" "$(psum "$2" nvme_vwc_namespace_write_back | cut -d' ' -f1)" 64
	check_eq "$1: recommended write back x64, 32 of them" "$(psum "$2" nvme_vwc_namespace_recommended_write_back)" "64 32"
	check_eq "$1: namespace_drift x64, sum" "$(psum "$2" nvme_vwc_namespace_drift)" "64 $3"
	check_eq "$1: audit_errors 0" "$(psum "$2" nvme_vwc_audit_errors)" "1 0"
	c=${OFF%% *}
	check_eq "$1: cache_enabled of WCE-off $c" "$(pval "$2" nvme_vwc_cache_enabled controller "$c")" 0
	n=$(echo "$NS_OFF" | head -n 1)
	check_eq "$1: drift of $n" "$(pval "$2" nvme_vwc_namespace_drift namespace "$n")" "$([ "$3" -gt 0 ] && echo 1 || echo 0)"
	check_eq "$1: info labels" "$(grep "^nvme_vwc_controller_info{controller=\"$c\"," "$2" | sed 's/ 1$//; s/^[^{]*{//; s/}$//; s/="[^"]*"//g')" "controller,model,serial,firmware,transport,pci_id,subsysnqn"
}
usec nvme vwc audit -o prometheus
info "nvme vwc audit -o prometheus, 64 namespaces: ${us} us wall under TCG"
check_eq "audit prometheus before sync: exit 3" "$rc" 3
cp /tmp/out /tmp/prom1
check_prom "audit prometheus before sync" /tmp/prom1 32
prom_block before-sync /tmp/prom1

# --- sync, then everything in sync ------------------------------------------
usec nvme vwc-sync --all
info "nvme vwc-sync --all, 64 namespaces: ${us} us wall under TCG"
check_eq "vwc-sync --all: exit 0" "$rc" 0
wt=0
for n in $NS_OFF; do [ "$(wc "$n")" = "write through" ] && wt=$((wt + 1)); done
wb=0
for n in $NS_ON; do [ "$(wc "$n")" = "write back" ] && wb=$((wb + 1)); done
check_eq "vwc-sync --all: 32 write through, 32 write back" "$wt $wb" "32 32"

usec nvme vwc audit
check_eq "audit table after sync: exit 0" "$rc" 0
cp /tmp/out /tmp/table2
check_table "audit table after sync" /tmp/table2 ok
usec nvme vwc audit -o json
check_eq "audit json after sync: exit 0" "$rc" 0
cp /tmp/out /tmp/json
check_json "audit json after sync" 0
usec nvme vwc audit -o prometheus
check_eq "audit prometheus after sync: exit 0" "$rc" 0
cp /tmp/out /tmp/prom2
check_prom "audit prometheus after sync" /tmp/prom2 0
prom_block after-sync /tmp/prom2

# the same through the standalone binary, subset selection by controller
usec nvme-vwc-sync audit -o json $OFF
check_eq "standalone audit of the 8 WCE-off controllers: exit 0" "$rc" 0
cp /tmp/out /tmp/json
check_eq "standalone audit subset: 8 controllers, 32 namespaces" "$(jqr '[(.controllers | length), (.namespaces | length)] | map(tostring) | join(" ")')" "8 32"

# --- flush-latency ------------------------------------------------------------
non=$(echo "$NS_ON" | head -n 1)
noff=$(echo "$NS_OFF" | head -n 1)
for n in "$non" "$noff"; do
	c=$(echo "$n" | sed 's/n[0-9]*$//')
	kind=on; is_off "$c" && kind=off
	usec nvme vwc flush-latency "/dev/$n" --count 200 -o json
	if [ "$rc" -eq 0 ] && [ "$(jq -r '[.device, .count] | map(tostring) | join(" ")' /tmp/out 2>&1)" = "$n 200" ]; then
		pass "flush-latency WCE $kind ($n), --count 200: exit 0, JSON"
		info "flush-latency WCE $kind $n: $(jq -r '"avg \(.avg_us) us, p50 \(.p50_us) us, p99 \(.p99_us) us, max \(.max_us) us"' /tmp/out) (200 flushes, TCG, ${us} us wall)"
		check_eq "flush-latency WCE $kind: p50 <= p99 <= max" "$(jq '.p50_us <= .p99_us and .p99_us <= .max_us and .p50_us > 0' /tmp/out)" true
	else
		fail "flush-latency WCE $kind ($n)" "rc=$rc $(cat /tmp/out /tmp/err | head -n 3 | tr '\n' ' ')"
	fi
done
usec nvme vwc flush-latency "$non" --count 200
case $(cat /tmp/out) in
"$non: 200 flushes: avg "*" us, p50 "*" us, p99 "*" us, max "*" us") pass "flush-latency normal output" ;;
*) fail "flush-latency normal output" "rc=$rc $(cat /tmp/out /tmp/err)" ;;
esac

# bad input: non-zero exit, a message naming the cause
ctl=${ON%% *}
flush_bad() { # LABEL EXPECTED-FRAGMENT ARGS...
	_l=$1 _w=$2
	shift 2
	err=$(nvme vwc flush-latency "$@" 2>&1 >/dev/null); rc=$?
	info "flush-latency $* -> exit $rc: $err"
	if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -qF -- "$_w"; then
		pass "flush-latency bad input, $_l: exit $rc, says '$_w'"
	else
		fail "flush-latency bad input, $_l" "rc=$rc err=$err"
	fi
}
flush_bad "non-NVMe path" "/dev/null: not an NVMe device" /dev/null
flush_bad "missing device node" "/dev/nvme99n1: No such file or directory" /dev/nvme99n1
flush_bad "missing namespace name" "nvme99n1: no such NVMe namespace" nvme99n1
flush_bad "a controller" "/dev/$ctl: is a controller" "/dev/$ctl"
flush_bad "--count 0" "invalid count '0'" "/dev/$non" --count 0
flush_bad "--count 100000000" "invalid count '100000000'" "/dev/$non" --count 100000000
flush_bad "no namespace" "give exactly one namespace"
finish
