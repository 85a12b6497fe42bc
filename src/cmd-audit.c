// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * audit: read-only. What every controller reports, what the block layer
 * does, what the policy recommends, quirks and advisories.
 */
#include <stdio.h>
#include <string.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "log.h"
#include "quirks.h"

int cmd_audit(int argc, char **argv)
{
	struct vwc_config cfg;
	struct vwc_opts o;
	struct vwc_run r;
	bool drift = false;
	int i, ret;

	if (vwc_opts_parse(argc, argv, &o, "audit"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s audit [<device>...] [-o normal|json|prometheus] [--config=<file>]\n\n"
		       "Read-only report of every NVMe controller and namespace: cache present and\n"
		       "enabled, current and recommended block-layer mode, drift, quirk matches and\n"
		       "their effective state, advisories. Exit status: 0 all in sync, 3 drift\n"
		       "found, 1 error.\n", vwc_prog);
		return 0;
	}
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;
	ret = vwc_cmd_start(&r, "audit", &o, &cfg);
	if (ret)
		return ret;
	r.dry_run = true;
	vwc_run_probe(&r);
	vwc_run_apply(&r);
	for (i = 0; i < r.topo.nr_ns; i++) {
		struct vwc_ns *ns = &r.topo.ns[i];

		if (!ns->wanted)
			continue;
		/* an audit changes nothing: report what is */
		ns->after = ns->before;
		if (ns->action == VWC_ACT_WOULD_CHANGE)
			ns->action = VWC_ACT_UNCHANGED;
		if (vwc_ns_drift(ns))
			drift = true;
	}
	vwc_report_print(&r, o.fmt, stdout);
	ret = vwc_run_exit_status(&r);
	if (!ret && drift)
		ret = VWC_EXIT_DRIFT;
	vwc_run_free(&r);
	return ret;
}

int cmd_quirks(int argc, char **argv)
{
	struct vwc_opts o;
	struct vwc_run r;
	int ret;

	if (vwc_opts_parse(argc, argv, &o, "quirks"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s quirks [<device>...] [--dry-run]\n\n"
		       "For controllers the hwdb quirk database lists (Crucial T700/T705:\n"
		       "disable_write_zeroes), apply what the running kernel allows, each step\n"
		       "printed: write_zeroes_unmap_max_bytes to 0 at run time where the kernel has\n"
		       "it, and a modprobe.d snippet (merged with the admin's own quirks) where\n"
		       "nvme is a module with a quirks parameter. 'restore' removes the snippet.\n", vwc_prog);
		return 0;
	}
	ret = vwc_cmd_start(&r, "quirks", &o, NULL);
	if (ret)
		return ret;
	ret = vwc_quirks_apply(&r, o.dry_run) ? VWC_EXIT_ERROR :
						vwc_run_exit_status(&r);
	vwc_run_free(&r);
	return ret;
}
