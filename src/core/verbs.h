/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: verbs.h - the one command table
 *
 * Every command of nvme-vwc-sync, once, with the options it takes. The
 * standalone binary dispatches through vwc_cli_run() over this table and
 * the nvme-cli plugin header expands the same list into its COMMAND_LIST,
 * so the two can never drift apart. vwc_opts_parse() refuses, naming the
 * command, an option that is not in the command's set.
 *
 * X(name, c_ident, summary, options, where)
 *
 * @where is a bare word: "both", the standalone binary and the nvme-cli
 * plugin serve the command; "standalone", nvme-vwc-sync alone does (the
 * sidecar: it links libbpf, libtracefs and libtraceevent, which nvme must
 * not; the plugin answers it with where to find it, see vwc_cli_run()).
 * VWC_WHERE() picks by it.
 */
#ifndef VWC_VERBS_H
#define VWC_VERBS_H

/* The options of the commands (commands.h, struct vwc_opts). */
#define VWC_OPT_ALL		(1u << 0)	/* -a, --all */
#define VWC_OPT_DRY_RUN		(1u << 1)	/* -n, --dry-run */
#define VWC_OPT_FORMAT		(1u << 2)	/* -o, --output-format */
#define VWC_OPT_QUIET		(1u << 3)	/* -q, --quiet */
#define VWC_OPT_CONFIG		(1u << 4)	/* -C, --config */
#define VWC_OPT_INTERVAL	(1u << 5)	/* -i, --interval */
#define VWC_OPT_COUNT		(1u << 6)	/* -c, --count */
#define VWC_OPT_KEEP_RESTORED	(1u << 7)	/* --keep-restored */
#define VWC_OPT_DEACTIVATE_LVM	(1u << 8)	/* --deactivate-lvm */
#define VWC_OPT_TEXTFILE	(1u << 9)	/* --textfile */
/* every command: -h, --help and -v, --verbose */

#define VWC_VERBS(X)							\
	X("sync", sync, "Make the block layer follow the controller's volatile write cache", \
	  VWC_OPT_ALL | VWC_OPT_DRY_RUN | VWC_OPT_FORMAT | VWC_OPT_QUIET | \
	  VWC_OPT_CONFIG | VWC_OPT_KEEP_RESTORED, both)			\
	X("audit", audit, "Read-only report: cache state, drift, quirks, advisories", \
	  VWC_OPT_ALL | VWC_OPT_FORMAT | VWC_OPT_CONFIG, both)		\
	X("set-cache", set_cache, "Enable or disable the drive's cache, safely ordered", \
	  VWC_OPT_DRY_RUN | VWC_OPT_FORMAT | VWC_OPT_QUIET | VWC_OPT_CONFIG, both) \
	X("restore", restore, "Undo what this tool changed",		\
	  VWC_OPT_ALL | VWC_OPT_DRY_RUN | VWC_OPT_QUIET | VWC_OPT_CONFIG, both) \
	X("watch", watch, "Sidecar: re-apply the policy whenever the cache state can change", \
	  VWC_OPT_INTERVAL | VWC_OPT_TEXTFILE | VWC_OPT_CONFIG, standalone)	\
	X("quirks", quirks, "Apply the quirk database's mitigations the kernel allows", \
	  VWC_OPT_DRY_RUN | VWC_OPT_QUIET | VWC_OPT_CONFIG |		\
	  VWC_OPT_KEEP_RESTORED | VWC_OPT_DEACTIVATE_LVM, both)		\
	X("flush-latency", flush_latency, "Time NVMe Flush commands sent through passthrough", \
	  VWC_OPT_COUNT | VWC_OPT_FORMAT, both)				\
	X("irq-stat", irq_stat, "Interrupts per NVMe queue and completions per interrupt", \
	  VWC_OPT_INTERVAL | VWC_OPT_FORMAT, both) \
	X("rebind-guard", rebind_guard, "Bind again a controller whose rebind was cut short", \
	  0, both)

/* VWC_WHERE(where, both_x, standalone_x): the one that @where names */
#define VWC_WHERE(where, both_x, standalone_x) \
	VWC_WHERE_##where(both_x, standalone_x)
#define VWC_WHERE_both(both_x, standalone_x)		both_x
#define VWC_WHERE_standalone(both_x, standalone_x)	standalone_x

/*
 * VWC_PLUGIN_SUMMARY(summary, where): a verb's line in "nvme vwc --help";
 * a standalone verb's names the binary that serves it.
 */
#define VWC_PLUGIN_SUMMARY(summary, where) \
	VWC_WHERE(where, summary, "(nvme-vwc-sync only) " summary)

#endif
