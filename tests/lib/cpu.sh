# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# CPU accounting from /proc for the runners (tests/check, tests/fuzz/run.sh),
# sourced; no process started:
#   HZ          the kernel's clock ticks a second (/proc figures are in ticks)
#   kids_cpu    CPU ticks of this shell's children that have ended and were
#               waited for (theirs included), in KIDS, and of this shell
#               itself, in SELF (/proc/PID/stat fields 16 and 17, 14 and 15)
#   host_cpu    the host's busy and idle ticks since boot (all cores), in
#               HOST_BUSY and HOST_IDLE (idle and iowait count as idle)
# shellcheck disable=SC2034 # used by the scripts that source this
HZ=$(getconf CLK_TCK)
kids_cpu() {
	local st f
	read -r st <"/proc/$BASHPID/stat"
	read -r -a f <<<"${st##*) }"
	KIDS=$((f[13] + f[14])) SELF=$((f[11] + f[12]))
}
host_cpu() {
	local cpu user nice sys idle iow irq sirq steal
	read -r cpu user nice sys idle iow irq sirq steal _ </proc/stat
	HOST_BUSY=$((user + nice + sys + irq + sirq + steal)) HOST_IDLE=$((idle + iow))
}
