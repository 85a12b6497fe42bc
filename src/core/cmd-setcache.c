// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * set-cache on|off: change the drive's volatile write cache with the
 * block layer ordered around it, so the safety invariant holds at every
 * instant:
 *   on:  every namespace to write-back first (no lock: the safe direction
 *        never waits), then WCE=1 and its verification under the writers'
 *        lock;
 *   off: under the writers' lock, WCE=0 first, verify, then the policy
 *        (write-through follows).
 * The lock, once taken, is kept until the end (vwc_run_free()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "lock.h"
#include "log.h"
#include "nvme-io.h"

static bool fabrics(const struct vwc_ctrl *c)
{
	return c->transport[0] && strcmp(c->transport, "pcie");
}

/*
 * A fabrics target that refuses Set Features 06h (Linux's nvmet always
 * does): said once, naming the device, the transport and the target.
 */
static void refused(struct vwc_run *r, const struct vwc_ctrl *c, int ret)
{
	char buf[160];

	vwc_run_add_error(r, c->name,
			  "the %s target %s refuses Set Features 06h (volatile write cache): %s; a fabrics target manages its cache itself; nothing changed",
			  c->transport, c->subsysnqn[0] ? c->subsysnqn : "?",
			  vwc_nvme_strerror(ret, buf, sizeof(buf)));
}

static int set_wce_verified(struct vwc_run *run, struct vwc_ctrl *c, bool on)
{
	char buf[160];
	bool now;
	int fd, r;

	fd = vwc_ctrl_fd(c);
	if (fd < 0) {
		vwc_err("%s: cannot open %s: %s", c->name, c->devnode,
			strerror(-fd));
		return fd;
	}
	r = vwc_nvme_set_wce(fd, on);
	if (r > 0 && fabrics(c)) {
		refused(run, c, r);
		goto out;
	}
	if (r) {
		vwc_err("%s: Set Features 06h (WCE=%d) failed: %s", c->name, on,
			vwc_nvme_strerror(r, buf, sizeof(buf)));
		goto out;
	}
	r = vwc_nvme_get_wce(fd, &now);
	if (r) {
		vwc_err("%s: Get Features 06h failed after setting WCE: %s",
			c->name, vwc_nvme_strerror(r, buf, sizeof(buf)));
		goto out;
	}
	if (now != on) {
		vwc_err("%s: WCE reads %d after setting %d", c->name, now, on);
		r = -EIO;
	} else {
		vwc_notice("%s: WCE set to %d (verified)", c->name, on);
	}
out:
	vwc_ctrl_fd_put(c, fd);
	return r;
}

/* The writers' lock before a Set Features 06h, kept to the end. */
static int lock_for(struct vwc_run *r, const struct vwc_ctrl *c)
{
	char why[160];
	int ret;

	if (r->locked || r->dry_run)
		return 0;
	ret = vwc_lock_take(VWC_LOCK_TIMEOUT_MS);
	if (ret) {
		vwc_err("%s: cannot take the writers' lock %s: %s; cache left as it is",
			c->name, vwc_lock_path(),
			vwc_lock_strerror(ret, why, sizeof(why)));
		r->nr_failed++;
		return ret;
	}
	r->locked = true;
	return 0;
}

/*
 * Every namespace @ci reaches to write back. With @first, the lockless
 * first pass: a writer holding the lock may write write through between
 * our write and its read-back, so a failure there is only noted; the pass
 * under the lock decides. Return: 0 or an errno.
 */
static int all_write_back(struct vwc_run *r, int ci, bool first)
{
	struct vwc_ctrl *c = &r->topo.ctrls[ci];
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_ENABLED };
	int i, ret;

	for (i = 0; i < r->topo.nr_ns; i++) {
		struct vwc_ns *ns = &r->topo.ns[i];

		/* no cache of its own: its mode is not the controller's */
		if (!vwc_ns_has_ctrl(ns, ci) || ns->no_vwc == VWC_TRI_YES)
			continue;
		ns->wanted = true;
		ret = vwc_blk_apply(ns, wb, r->dry_run);
		if (ret && first && !r->dry_run) {
			vwc_info("%s: %s: write back again under the writers' lock",
				 c->name, ns->name);
			continue;
		}
		if (ret) {
			vwc_err("%s: %s could not go to write back; cache left as it is",
				c->name, ns->name);
			r->nr_failed++;
			return ret;
		}
	}
	return 0;
}

/*
 * A fabrics controller: before anything is written, Set Features 06h
 * with the value WCE read, which changes nothing where it is taken,
 * tells whether the target takes the command at all. Only WCE=0 is sent
 * so (vwc_policy_probe_wce(): a stale 1 would turn a cache on under
 * namespaces another writer has put in write through since); with WCE
 * read 1 the refusal shows at step 3, after the namespaces are in write
 * back. Return: 0 to go on, or the target's refusal (reported).
 */
static int fabrics_takes_set(struct vwc_run *r, struct vwc_ctrl *c)
{
	bool val;
	int fd, ret;

	if (!fabrics(c) || r->dry_run ||
	    !vwc_policy_probe_wce(c->facts.wce, &val))
		return 0;
	fd = vwc_ctrl_fd(c);
	if (fd < 0)
		return 0;	/* the steps below report it */
	ret = vwc_nvme_set_wce(fd, val);
	vwc_ctrl_fd_put(c, fd);
	if (ret > 0) {
		refused(r, c, ret);
		return ret;
	}
	return 0;
}

static int enable(struct vwc_run *r, int ci)
{
	struct vwc_ctrl *c = &r->topo.ctrls[ci];
	int ret;

	/* 0. a fabrics target that refuses the command: nothing written */
	ret = fabrics_takes_set(r, c);
	if (ret)
		return ret;
	/* 1. flushes on for every namespace this controller reaches, at
	 * once: the safe direction waits for no lock */
	ret = all_write_back(r, ci, true);
	if (ret || r->dry_run)
		return ret;
	/* 2. under the lock, again: a writer that held it may have written
	 * write through since step 1; then only the cache */
	ret = lock_for(r, c);
	if (!ret)
		ret = all_write_back(r, ci, false);
	if (ret)
		return ret;
	ret = set_wce_verified(r, c, true);
	if (ret > 0 && fabrics(c))
		return ret;	/* an argument error already */
	if (ret)
		r->nr_failed++;
	return ret;
}

static int disable(struct vwc_run *r, int ci)
{
	struct vwc_ctrl *c = &r->topo.ctrls[ci];
	int i, ret = 0;

	/* 1. the cache off, verified */
	if (!r->dry_run) {
		ret = lock_for(r, c);
		if (ret)
			return ret;
		ret = set_wce_verified(r, c, false);
		if (ret) {
			if (!(ret > 0 && fabrics(c)))
				r->nr_failed++;
			return ret;
		}
	}
	/* 2. then the policy, which now sees WCE=0 */
	for (i = 0; i < r->topo.nr_ns; i++)
		if (vwc_ns_has_ctrl(&r->topo.ns[i], ci))
			r->topo.ns[i].wanted = true;
	return 0;
}

int cmd_set_cache(int argc, char **argv)
{
	struct vwc_config cfg;
	struct vwc_opts o;
	struct vwc_run r;
	bool on;
	int i, ret;

	if (vwc_opts_parse(argc, argv, &o, "set-cache"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s set-cache on|off <device>... [--dry-run] [-o normal|json] [-q] [--config=<file>]\n\n"
		       "Enable or disable the controller's volatile write cache (Set Features 06h),\n"
		       "ordered with the block layer: 'on' puts every namespace in write back first,\n"
		       "'off' disables the cache first and then lets the policy choose write through.\n"
		       "Returns when both are done and verified.\n", vwc_prog);
		return 0;
	}
	if (o.nr_args < 2 || o.all ||
	    (strcmp(o.args[0], "on") && strcmp(o.args[0], "off"))) {
		vwc_err("set-cache: usage: set-cache on|off <device>...");
		return VWC_EXIT_USAGE;
	}
	on = !strcmp(o.args[0], "on");
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;
	/* the devices follow on|off */
	o.args++;
	o.nr_args--;
	ret = vwc_cmd_start(&r, "set-cache", &o, &cfg, VWC_SCAN_SUBSYSTEMS);
	if (ret)
		return ret;
	/* namespaces named: act on their controllers; their own cache bits
	 * read first (write back is not theirs to take) */
	vwc_run_probe(&r);
	for (i = 0; i < r.topo.nr_ns; i++)
		r.topo.ns[i].wanted = false;
	for (i = 0; i < r.topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r.topo.ctrls[i];

		if (!c->wanted || c->err)
			continue;
		if (c->facts.present == VWC_TRI_NO) {
			vwc_run_add_error(&r, c->name,
					  "no volatile write cache to %s",
					  on ? "enable" : "disable");
			continue;
		}
		if (c->facts.present != VWC_TRI_YES) {
			/* Identify Controller failed: nothing is known of it */
			vwc_run_add_error(&r, c->name,
					  "not %s: whether it has a volatile write cache is unknown (Identify Controller failed); nothing changed",
					  on ? "enabled" : "disabled");
			continue;
		}
		if (on)
			enable(&r, i);
		else
			disable(&r, i);
	}
	/* re-read what the drives say now and report it */
	vwc_run_probe(&r);
	if (!on || r.nr_failed)
		vwc_run_apply(&r);
	if (!o.quiet)
		vwc_report_print(&r, o.fmt, stdout);
	ret = vwc_run_exit_status(&r);
	vwc_run_free(&r);
	return ret;
}
