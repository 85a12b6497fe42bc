# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# when: [ "$MODE" = full ]
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# A restart and a SIGKILL of the service keep its records.

plan 7
# --- restart and SIGKILL keep the records -----------------------------------
before=$(records)
info "records under /run/nvme-vwc-sync: $(echo "$before" | wc -l) file(s)"
check "records exist before restart" test -n "$before"
systemctl restart nvme-vwc-sync.service
wait_for "restart: active again" 10 systemctl is-active --quiet nvme-vwc-sync.service
check_eq "restart: records kept" "$(records)" "$before"
pid=$(svc MainPID)
n_before=$(svc NRestarts)
systemctl kill --signal=SIGKILL nvme-vwc-sync.service
newpid() { local p; p=$(svc MainPID); [ "$p" != 0 ] && [ "$p" != "$pid" ] && systemctl is-active --quiet nvme-vwc-sync.service; }
wait_for "SIGKILL: Restart=on-failure brings it back" 15 newpid
check_eq "SIGKILL: one automatic restart counted" "$(svc NRestarts)" "$((n_before + 1))"
check_eq "SIGKILL: records kept" "$(records)" "$before"
check_eq "after restarts: WCE-off drive still write through" "$(wcache "$n0")" "write through"
