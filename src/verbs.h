/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: verbs.h - the one command table
 *
 * Every command of nvme-vwc-sync, once. The standalone binary dispatches
 * through vwc_cli_run() over this table and the nvme-cli plugin header
 * expands the same list into its COMMAND_LIST, so the two can never
 * drift apart.
 *
 * X(name, c_ident, summary)
 */
#ifndef VWC_VERBS_H
#define VWC_VERBS_H

#define VWC_VERBS(X)							\
	X("sync", sync, "Make the block layer follow the controller's volatile write cache") \
	X("audit", audit, "Read-only report: cache state, drift, quirks, advisories") \
	X("set-cache", set_cache, "Enable or disable the drive's cache, safely ordered") \
	X("restore", restore, "Undo what this tool changed") \
	X("watch", watch, "Sidecar: re-apply the policy whenever the cache state can change") \
	X("quirks", quirks, "Apply the quirk database's mitigations the kernel allows") \
	X("flush-latency", flush_latency, "Time NVMe Flush commands sent through passthrough") \
	X("irq-stat", irq_stat, "Interrupts per NVMe queue and completions per interrupt") \
	X("rebind-guard", rebind_guard, "Bind again a controller whose rebind was cut short")

#endif
