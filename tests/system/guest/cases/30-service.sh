# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# The service as installed: running, its sandbox and hardening, its
# kprobes.

plan 10
# --- the service, its hardening ------------------------------------------
check_eq "service active (running)" "$(svc ActiveState)/$(svc SubState)" "active/running"
pid=$(svc MainPID)
check_eq "service: PrivateNetwork off" "$(svc PrivateNetwork)" no
check_eq "service: same network namespace as PID 1 (netlink events arrive)" \
	"$(readlink /proc/"$pid"/ns/net)" "$(readlink /proc/1/ns/net)"
check_eq "service: NoNewPrivs" "$(awk '/^NoNewPrivs/ { print $2 }' /proc/"$pid"/status)" 1
check_eq "service: capability bounding set is CAP_SYS_ADMIN and CAP_SYS_NICE only" \
	"$(awk '/^CapBnd/ { print $2 }' /proc/"$pid"/status)" 0000000000a00000
# the fast path's thread, alone, runs SCHED_FIFO (policy 1, field 41 of
# a task's stat): the unit lets it (CAP_SYS_NICE, sched_setscheduler)
check_eq "service: one thread, the fast path's, runs SCHED_FIFO" \
	"$(cat /proc/"$pid"/task/*/stat | awk '$41 == 1' | wc -l)/$(journalctl -b -u nvme-vwc-sync.service -o cat --no-pager | grep -q 'fast path: SCHED_FIFO priority 1' && echo said)" 1/said
check "service: private mount namespace (ProtectSystem=strict)" \
	test "$(readlink /proc/"$pid"/ns/mnt)" != "$(readlink /proc/1/ns/mnt)"
check_eq "service: seccomp filter on" "$(awk '/^Seccomp:/ { print $2 }' /proc/"$pid"/status)" 2
systemd-analyze security --no-pager nvme-vwc-sync.service >"$OUT/security.txt" 2>&1
info "systemd-analyze security: $(grep -i 'overall exposure' "$OUT/security.txt" | sed 's/^[^O]*//')"
# inside the unit's sandbox the sidecar makes its kprobes (the
# tracefs systemd mounted, writable /sys) and says so on its start line
start_line=$(journalctl -b -u nvme-vwc-sync.service -o cat --no-pager 2>/dev/null | grep 'watching .*Set Features detection' | tail -n 1)
info "service start line: $start_line"
case $start_line in
*"detection: kprobes on the nvme admin passthrough"*)
	pass "service: Set Features detection by kprobes on the admin passthrough" ;;
*) fail "service: Set Features detection by kprobes on the admin passthrough" "$start_line" ;;
esac
check_eq "service: its kprobes are defined (vwc_$pid/admin)" \
	"$(grep -c "vwc_$pid/admin " /sys/kernel/tracing/kprobe_events 2>/dev/null)" 1
