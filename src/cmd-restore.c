// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * restore: undo what this tool changed, and only that.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "log.h"
#include "quirks.h"

static int restore_node(const char *syspath, bool dry_run, bool allow_wt,
			bool quiet)
{
	const char *name = strrchr(syspath, '/') + 1;
	char msg[200];
	int r;

	r = vwc_blk_restore(syspath, name, dry_run, allow_wt, msg, sizeof(msg));
	if (!quiet && (r || strcmp(msg, "not changed by this tool")))
		printf("%s: %s\n", name, msg);
	if (r < 0)
		vwc_err("%s: %s", name, msg);
	return r < 0 ? r : 0;
}

int cmd_restore(int argc, char **argv)
{
	struct vwc_opts o;
	struct vwc_run r;
	int i, j, ret, failed = 0;

	if (vwc_opts_parse(argc, argv, &o, "restore"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s restore [<device>...|--all] [--dry-run]\n\n"
		       "Put every namespace this tool changed back to the value it found\n"
		       "(the kernel's own choice), and remove the files it wrote (modprobe.d\n"
		       "snippet). A value changed by someone else since is left alone and\n"
		       "reported. Write through is never restored on a controller whose\n"
		       "cache is enabled or unknown. Until the next explicit 'sync', the\n"
		       "sidecar and udev's runs leave restored namespaces to the kernel\n"
		       "(they still switch them to write back when a cache turns on).\n", vwc_prog);
		return 0;
	}
	ret = vwc_cmd_start_locked(&r, "restore", &o, NULL);
	if (ret)
		return ret;
	vwc_run_probe(&r);
	for (i = 0; i < r.topo.nr_ns; i++) {
		struct vwc_ns *ns = &r.topo.ns[i];
		bool allow_wt;

		if (!ns->wanted)
			continue;
		allow_wt = vwc_ns_decision(&r, ns).mode ==
			   VWC_MODE_WRITE_THROUGH;
		/* the sidecar and udev's runs leave it to the kernel now */
		if (!o.dry_run && vwc_blk_hold(ns->name, VWC_HOLD_SET))
			vwc_warn("%s: cannot mark it restored under %s: the sidecar may sync it again",
				 ns->name, vwc_rundir());
		for (j = 0; j < ns->nr_paths; j++)
			if (restore_node(ns->path_syspath[j], o.dry_run,
					 allow_wt, o.quiet))
				failed++;
		if (restore_node(ns->syspath, o.dry_run, allow_wt, o.quiet))
			failed++;
		if (vwc_quirks_restore_runtime(ns->name, ns->syspath, o.dry_run,
					       o.quiet) < 0)
			failed++;
	}
	if (!o.nr_args && vwc_quirks_remove_modprobe(o.dry_run, o.quiet) < 0)
		failed++;
	ret = failed || vwc_run_exit_status(&r) ? VWC_EXIT_ERROR : VWC_EXIT_OK;
	vwc_run_free(&r);
	return ret;
}
