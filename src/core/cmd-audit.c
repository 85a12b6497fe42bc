// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * audit: read-only. What every controller reports, what the block layer
 * does, what the policy recommends, quirks and advisories. (The command
 * quirks, which changes what it finds, is quirks/cmd-quirks.c.)
 */
#include <stdio.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "log.h"

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
		printf("Usage: %s audit [<device>...|--all] [-o normal|json|prometheus] [--config=<file>]\n\n"
		       "Read-only report of every NVMe controller and namespace: cache present and\n"
		       "enabled, current and recommended block-layer mode, drift, quirk matches and\n"
		       "their effective state, advisories. Exit status: 0 all in sync, 3 drift\n"
		       "found, 1 error.\n", vwc_prog);
		return 0;
	}
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;
	ret = vwc_cmd_start(&r, "audit", &o, &cfg, VWC_SCAN_SUBSYSTEMS);
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
