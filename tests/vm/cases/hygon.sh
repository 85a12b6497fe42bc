#!/bin/sh
# vm: cpu hygon
# vm: ctrl wc=off
# kernels: 6.1 7.2
#
# The Hygon IRQ completion batching advisory from userspace: detection, the advisory, irq-stat under a 4 KiB
# direct read load, and the interrupt coalescing refusal path.
. /vwc/guest/lib.sh
plan 11

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
fact check_eq "guest CPU vendor" "$(sed -n 's/^vendor_id[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" HygonGenuine
nvme vwc audit >/tmp/a.out 2>&1
grep -q "^advisory: Hygon CPU" /tmp/a.out && pass "audit: Hygon advisory" || fail "audit: Hygon advisory" "$(cat /tmp/a.out)"
check_eq "audit json: one advisory" "$(nvme-vwc-sync audit -o json | jq '.host.advisories | length')" 1
nvme-vwc-sync audit -o prometheus | grep -qx "nvme_vwc_hygon_cpu 1" && pass "prometheus: hygon 1" || fail "prometheus hygon" "missing"

# 4 KiB direct reads from two readers (fio aborts on this CPU model:
# its cache-line alignment assertion fails under QEMU's Hygon vendor)
load() { while [ -e /tmp/load ]; do /usr/bin/dd if="/dev/$ns" of=/dev/null bs=4k count=2048 iflag=direct status=none; done; }
touch /tmp/load
load & l1=$!
load & l2=$!
sleep 1
nvme vwc irq-stat --interval=2 -o json >/tmp/irq.json 2>&1
nvme vwc irq-stat --interval=1 >/tmp/irq.txt 2>&1
rm -f /tmp/load
wait $l1 $l2
info "irq-stat: $(tr '\n' '|' </tmp/irq.txt)"
irqs=$(jq ".controllers[] | select(.controller==\"$c\") | .interrupts" /tmp/irq.json)
done_=$(jq ".controllers[] | select(.controller==\"$c\") | .completions" /tmp/irq.json)
ratio=$(jq ".controllers[] | select(.controller==\"$c\") | .completions_per_interrupt" /tmp/irq.json)
info "under load: $irqs interrupts, $done_ completions, $ratio completions per interrupt"
[ "${irqs:-0}" -gt 0 ] && [ "${done_:-0}" -gt 0 ] && pass "irq-stat: interrupts and completions counted under load" || fail "irq-stat" "$(cat /tmp/irq.json)"
check_eq "irq-stat: queues listed" "$(jq "[.queues[] | select(.queue | startswith(\"${c}q\"))] | length > 1" /tmp/irq.json)" true
check_eq "irq-stat json says hygon" "$(jq .hygon /tmp/irq.json)" true

# coalescing: QEMU refuses Set Features 08h (0x410e); the rest still syncs
printf 'irq-coalescing threshold=8 time=1\n' >/tmp/irqc.conf
set_wc "$ns" "write back"
out=$(nvme vwc-sync --config=/tmp/irqc.conf -o json "$c" 2>/tmp/irqc.err); rc=$?
check_eq "coalescing refused: exit 1" "$rc" 1
grep -q "interrupt coalescing threshold 8 time 1: refused by the controller: NVMe status 0x410e" /tmp/irqc.err && pass "coalescing refused: clear message with the status" || fail "coalescing message" "$(cat /tmp/irqc.err)"
check_eq "coalescing refused: write cache still synced" "$(wc "$ns")" "write through"
check_eq "coalescing refused: reported in JSON" "$(echo "$out" | jq -r ".controllers[0].irq_coalescing" | cut -c1-40)" "threshold 8 time 1: refused by the contr"
finish
