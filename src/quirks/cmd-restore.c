// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * restore: undo what this tool changed, and only that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "lock.h"
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

/*
 * Write through may be put back: the controllers, as the configuration
 * sees them, decide write through. A device configured "ignore" is still
 * restored (nvme-vwc-sync.conf(5)), as its controllers alone decide; one
 * configured "write-back" never goes back to write through.
 */
static bool allows_wt(const struct vwc_run *r, const struct vwc_ns *ns)
{
	struct vwc_facts f[8];
	int i, n = ns->nr_ctrl;
	struct vwc_decision d = vwc_ns_decision(r, ns);

	if (d.mode != VWC_MODE_NONE)
		return d.mode == VWC_MODE_WRITE_THROUGH;
	if (n < 1 || n > 8)
		return false;
	for (i = 0; i < n; i++) {
		f[i] = r->topo.ctrls[ns->ctrl[i]].facts;
		if (f[i].override == VWC_OVERRIDE_IGNORE)
			f[i].override = VWC_OVERRIDE_NONE;
	}
	return vwc_policy_decide_shared(f, n).mode == VWC_MODE_WRITE_THROUGH;
}

/* A node of @ns would go back to write through. */
static bool wants_wt(const struct vwc_ns *ns)
{
	enum vwc_mode orig;
	int j;

	for (j = 0; j <= ns->nr_paths; j++) {
		const char *sp = j < ns->nr_paths ? ns->path_syspath[j] :
						    ns->syspath;

		if (!vwc_blk_record(strrchr(sp, '/') + 1, &orig) &&
		    orig == VWC_MODE_WRITE_THROUGH)
			return true;
	}
	return false;
}

static int restore_ns(const struct vwc_ns *ns, bool dry_run, bool allow_wt,
		      bool quiet)
{
	int j, failed = 0;

	for (j = 0; j < ns->nr_paths; j++)
		if (restore_node(ns->path_syspath[j], dry_run, allow_wt, quiet))
			failed++;
	if (restore_node(ns->syspath, dry_run, allow_wt, quiet))
		failed++;
	return failed;
}

int cmd_restore(int argc, char **argv)
{
	struct vwc_config cfg;
	struct vwc_opts o;
	struct vwc_run r;
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_ENABLED };
	bool *later;
	int i, j, ret, mark = 0, failed = 0, nr_later = 0;
	char why[640];

	if (vwc_opts_parse(argc, argv, &o, "restore"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s restore [<device>...|--all] [--dry-run] [--config=<file>] [-q]\n\n"
		       "Put every namespace this tool changed back to the value it found\n"
		       "(the kernel's own choice), and remove the files it wrote (modprobe.d\n"
		       "snippet). A value changed by someone else since is left alone and\n"
		       "reported. Write through is never restored on a controller whose\n"
		       "cache is enabled or unknown, nor on one the configuration keeps in\n"
		       "write back. Until the next explicit 'sync', the\n"
		       "sidecar and udev's runs leave restored namespaces to the kernel\n"
		       "(they still switch them to write back when a cache turns on).\n", vwc_prog);
		return 0;
	}
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;
	/* write back at once; the writers' lock only for write through */
	ret = vwc_cmd_start(&r, "restore", &o, &cfg, VWC_SCAN_ALL);
	if (ret)
		return ret;
	later = calloc(r.topo.nr_ns + 1, sizeof(*later));
	if (!later) {
		vwc_run_free(&r);
		return VWC_EXIT_ERROR;
	}
	vwc_run_probe(&r);
	for (i = 0; i < r.topo.nr_ns; i++) {
		struct vwc_ns *ns = &r.topo.ns[i];
		bool allow_wt;

		if (!ns->wanted)
			continue;
		allow_wt = allows_wt(&r, ns);
		/* the sidecar and udev's runs leave it to the kernel now */
		if (!o.dry_run && vwc_blk_hold(ns->name, VWC_HOLD_SET))
			vwc_warn("%s: cannot mark it restored under %s: the sidecar may sync it again",
				 ns->name, vwc_rundir());
		if (allow_wt && !o.dry_run && wants_wt(ns)) {
			later[i] = true;
			nr_later++;
		} else {
			failed += restore_ns(ns, o.dry_run, allow_wt, o.quiet);
		}
		if (vwc_quirks_restore_runtime(ns->name, ns->syspath, o.dry_run,
					       o.quiet) < 0)
			failed++;
	}
	/* write through again: under the lock, on WCE read under it */
	if (nr_later) {
		ret = vwc_lock_take(VWC_LOCK_TIMEOUT_MS);
		/* the mark, then who reaches them (as vwc_run_apply()) */
		if (!ret) {
			mark = vwc_blk_mark_wt("restore: write through under the writers' lock");
			if (mark)
				vwc_lock_release();
			else
				vwc_topo_link_reach(&r.topo);
		}
		for (i = 0; i < r.topo.nr_ns; i++) {
			struct vwc_ns *ns = &r.topo.ns[i];

			if (!later[i])
				continue;
			if (ret) {
				vwc_err("%s: cannot take the writers' lock %s: %s; nothing changed",
					ns->name, vwc_lock_path(),
					vwc_lock_strerror(ret, why,
							  sizeof(why)));
				failed++;
				continue;
			}
			if (mark) {
				vwc_err("%s: %s; nothing changed", ns->name,
					vwc_blk_mark_strerror(mark, why,
							      sizeof(why)));
				failed++;
				continue;
			}
			/* a controller that joined since the scan: kept */
			if (vwc_topo_new_peer(&r.topo, ns)) {
				vwc_info("%s: a controller joined its subsystem during the run: kept in write back",
					 ns->name);
				failed += restore_ns(ns, false, false, o.quiet);
				continue;
			}
			/* a controller that cannot be read keeps it in write
			 * back, and the run says so in its exit status */
			for (j = 0; j < ns->nr_ctrl; j++)
				failed += !!vwc_probe_ctrl_wce(&r,
						&r.topo.ctrls[ns->ctrl[j]]);
			failed += restore_ns(ns, false, allows_wt(&r, ns),
					     o.quiet);
			/* WCE once more, and who joined, as the engine's
			 * recheck() does */
			for (j = 0; j < ns->nr_ctrl; j++)
				failed += !!vwc_probe_ctrl_wce(&r,
						&r.topo.ctrls[ns->ctrl[j]]);
			if (!allows_wt(&r, ns) ||
			    vwc_topo_new_peer(&r.topo, ns)) {
				vwc_warn("%s: cache state changed during the run; back to write back",
					 ns->name);
				if (vwc_blk_apply(ns, wb, false))
					failed++;
			}
		}
		if (!ret && !mark)
			vwc_lock_release();
	}
	free(later);
	if (!o.nr_args && vwc_quirks_remove_modprobe(o.dry_run, o.quiet) < 0)
		failed++;
	ret = failed || vwc_run_exit_status(&r) ? VWC_EXIT_ERROR : VWC_EXIT_OK;
	vwc_run_free(&r);
	return ret;
}
