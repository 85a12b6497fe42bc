/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vwc-nvme.h - command table of the nvme-cli plugin "vwc"
 *
 * nvme-cli 2.x only (3.x has no cmd.h: vwc-nvme.c registers in plain C).
 * Read several times by nvme-cli's define_cmd.h/cmd_handler.h, once per
 * stage (prototypes, struct command, command list, plugin registration),
 * like every nvme-cli plugin header. The entries are not written here:
 * they are expanded from VWC_VERBS() in src/core/verbs.h, the one table that
 * the standalone nvme-vwc-sync binary dispatches through as well.
 *
 * COMMAND_LIST() takes its argument as `args...` and, since the argument
 * is not stringified or pasted, the preprocessor expands VWC_VERBS() and
 * then ENTRY() with whatever definition the current stage gave ENTRY.
 *
 * VWC_PLUGIN_DESC is defined by vwc-nvme.c, the only includer.
 *
 * Reached as "nvme vwc <verb>" and, through nvme-cli's "plugin-command"
 * form, as "nvme vwc-<verb>". The callback for verb ident is
 * vwc_<ident>_cmd(), defined in vwc-nvme.c.
 */
#undef CMD_INC_FILE
#define CMD_INC_FILE plugins/vwc/vwc-nvme

#if !defined(VWC_NVME) || defined(CMD_HEADER_MULTI_READ)
#define VWC_NVME

#include "cmd.h"
#include "src/core/verbs.h"
#include "vwc-config.h"

/* a standalone verb's line in "nvme vwc --help" says where it is served */
#define VWC_PLUGIN_ENTRY(name, ident, summary, opts, where) \
	ENTRY(name, VWC_PLUGIN_SUMMARY(summary, where), vwc_##ident##_cmd)

PLUGIN(NAME("vwc", VWC_PLUGIN_DESC, VWC_VERSION),
	COMMAND_LIST(
		VWC_VERBS(VWC_PLUGIN_ENTRY)
	)
);

#endif

#include "define_cmd.h"
