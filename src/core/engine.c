// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libudev.h>

#include "aside.h"
#include "blk.h"
#include "config.h"
#include "engine.h"
#include "lock.h"
#include "log.h"
#include "nvme-io.h"
#include "quirk-db.h"
#include "resolve.h"

/* write through overtaken by another writer: how long before once more */
#define VWC_OVERTAKEN_WAIT_MS	50

/*
 * The subsystem NQNs of @args, for a scan of their subsystems alone; 0
 * when one of them cannot be resolved or has none (every controller is
 * scanned then, and vwc_run_select() says what is wrong with the name).
 */
static int args_nqns(struct udev *udev, char **args, int n,
		     char (*nqns)[VWC_NQN_LEN])
{
	int i, j, nr = 0;

	for (i = 0; i < n; i++) {
		struct vwc_target tg;
		char err[160];

		if (vwc_resolve(udev, args[i], &tg, err, sizeof(err)) ||
		    vwc_target_nqn(&tg, nqns[nr], sizeof(nqns[nr])))
			return 0;
		for (j = 0; j < nr && strcmp(nqns[j], nqns[nr]); j++)
			;
		if (j == nr)
			nr++;
	}
	return nr;
}

int vwc_run_init_for(struct vwc_run *r, const char *command,
		     const struct vwc_config *cfg, char **args, int n)
{
	const char *list[VWC_SCOPE_ARGS];
	char (*nqns)[VWC_NQN_LEN] = NULL;
	int ret, nr = 0, i;

	memset(r, 0, sizeof(*r));
	r->lock_wait_ms = VWC_LOCK_TIMEOUT_MS;
	r->command = command;
	r->cfg = cfg;
	r->udev = udev_new();
	if (!r->udev)
		return -ENOMEM;
	if (n > 0 && n <= VWC_SCOPE_ARGS)
		nqns = calloc((size_t)n, sizeof(*nqns));
	if (nqns)
		nr = args_nqns(r->udev, args, n, nqns);
	for (i = 0; i < nr; i++)
		list[i] = nqns[i];
	ret = nr ? vwc_topo_scan_nqns("/sys", &r->topo, list, nr) :
		   vwc_topo_scan(r->udev, &r->topo);
	free(nqns);
	if (ret) {
		udev_unref(r->udev);
		r->udev = NULL;
		return ret;
	}
	vwc_quirks_fill(r->udev, &r->topo);
	return 0;
}

int vwc_run_init(struct vwc_run *r, const char *command,
		 const struct vwc_config *cfg)
{
	return vwc_run_init_for(r, command, cfg, NULL, 0);
}

void vwc_run_free(struct vwc_run *r)
{
	vwc_topo_free(&r->topo);
	free(r->errs);
	if (r->udev)
		udev_unref(r->udev);
	if (r->locked)
		vwc_lock_release();
	memset(r, 0, sizeof(*r));
}

void vwc_run_add_error(struct vwc_run *r, const char *device,
		       const char *fmt, ...)
{
	struct vwc_arg_error *e;
	va_list ap;

	e = realloc(r->errs, (r->nr_errs + 1) * sizeof(*e));
	if (!e)
		return;
	r->errs = e;
	e = &e[r->nr_errs++];
	snprintf(e->device, sizeof(e->device), "%s", device);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	vwc_err("%s: %s", e->device, e->msg);
}

/*
 * A namespace's controllers, and every other controller of their
 * subsystem: one of those may reach it without a node of it yet
 * (vwc_topo_link_reach() reads which, from what they report).
 */
static void select_ns(struct vwc_run *r, struct vwc_ns *ns)
{
	struct vwc_topo *t = &r->topo;
	int i, j;

	ns->wanted = true;
	for (i = 0; i < ns->nr_ctrl; i++) {
		struct vwc_ctrl *c = &t->ctrls[ns->ctrl[i]];

		c->wanted = true;
		for (j = 0; j < t->nr_ctrls; j++)
			if (vwc_ctrl_peers(c, &t->ctrls[j]) &&
			    !t->ctrls[j].discovery)
				t->ctrls[j].wanted = true;
	}
}

/*
 * A controller's namespaces, and those of every other controller of its
 * subsystem: a controller that has just joined (bound again, reconnected)
 * reaches namespaces the kernel has not made its path nodes for yet.
 */
void vwc_run_select_ctrl(struct vwc_run *r, int idx)
{
	struct vwc_topo *t = &r->topo;
	int i, j;

	/* no namespace, no cache, no SMART log: nothing to decide */
	if (t->ctrls[idx].discovery) {
		vwc_info("%s: a discovery controller (%s): skipped",
			 t->ctrls[idx].name, t->ctrls[idx].subsysnqn);
		return;
	}
	t->ctrls[idx].wanted = true;
	for (i = 0; i < t->nr_ctrls; i++) {
		if (i != idx && !vwc_ctrl_peers(&t->ctrls[idx], &t->ctrls[i]))
			continue;
		t->ctrls[i].wanted = true;
		for (j = 0; j < t->nr_ns; j++)
			if (vwc_ns_has_ctrl(&t->ns[j], i))
				select_ns(r, &t->ns[j]);
	}
}

int vwc_run_select(struct vwc_run *r, char **args, int n)
{
	struct vwc_topo *t = &r->topo;
	int i, bad = 0;

	if (!n) {
		/*
		 * Every controller but the discovery ones, which reach no
		 * namespace and peer with none (vwc_ctrl_is_discovery()):
		 * select_ns() would add no controller, at the cost of a walk
		 * of them all for each namespace.
		 */
		for (i = 0; i < t->nr_ctrls; i++)
			t->ctrls[i].wanted = !t->ctrls[i].discovery;
		for (i = 0; i < t->nr_ns; i++)
			t->ns[i].wanted = true;
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct vwc_target tg;
		char err[160];
		int idx;

		if (vwc_resolve(r->udev, args[i], &tg, err, sizeof(err))) {
			vwc_run_add_error(r, args[i], "%s", err);
			bad++;
			continue;
		}
		if (tg.kind == VWC_KIND_NS) {
			idx = vwc_topo_find_ns(t, tg.name);
			if (idx < 0) {
				vwc_run_add_error(r, args[i],
						  "namespace %s vanished",
						  tg.name);
				bad++;
				continue;
			}
			select_ns(r, &t->ns[idx]);
			continue;
		}
		idx = vwc_topo_find_ctrl(t, tg.name);
		if (idx < 0) {
			vwc_run_add_error(r, args[i], "controller %s vanished",
					  tg.name);
			bad++;
			continue;
		}
		vwc_run_select_ctrl(r, idx);
	}
	return bad;
}

int vwc_run_rescan(struct vwc_run *r)
{
	struct vwc_topo t;
	int ret;

	/* what a controller cannot change in its lifetime: not read again */
	ret = vwc_topo_rescan_sysfs("/sys", &r->topo, &t);
	if (ret)
		return ret;
	vwc_aside_carry(&r->topo, &t);
	vwc_topo_free(&r->topo);
	r->topo = t;
	vwc_quirks_fill(r->udev, &r->topo);
	return 0;
}

struct vwc_decision vwc_ns_decision(const struct vwc_run *r,
				    const struct vwc_ns *ns)
{
	struct vwc_facts one = { 0 }, *facts = &one;
	struct vwc_decision d;
	int i;

	if (ns->nr_ctrl > 1) {
		facts = calloc(ns->nr_ctrl, sizeof(*facts));
		if (!facts)	/* nothing known: the policy says write back */
			return vwc_policy_decide_shared(NULL, 0);
	}
	for (i = 0; i < ns->nr_ctrl; i++)
		facts[i] = r->topo.ctrls[ns->ctrl[i]].facts;
	d = vwc_policy_decide_ns(ns->no_vwc, facts, ns->nr_ctrl);
	if (facts != &one)
		free(facts);
	return d;
}

/* vwc_aside_held()'s second look: WCE of @ns's controllers read now */
static bool reread_wce(void *arg, const struct vwc_ns *ns)
{
	struct vwc_run *r = arg;
	bool all = true;
	int i;

	for (i = 0; i < ns->nr_ctrl; i++)
		all &= !vwc_probe_ctrl_wce(r, &r->topo.ctrls[ns->ctrl[i]]);
	return all;
}

/*
 * Mark in @again the controllers to read again for @ns: its own, and
 * their peers, one of which may have joined it since the probe.
 */
static void mark_reachers(const struct vwc_topo *t, const struct vwc_ns *ns,
			  bool *again)
{
	int i, j;

	for (i = 0; i < ns->nr_ctrl; i++) {
		const struct vwc_ctrl *c = &t->ctrls[ns->ctrl[i]];

		again[ns->ctrl[i]] = true;
		for (j = 0; j < t->nr_ctrls; j++)
			if (vwc_ctrl_peers(c, &t->ctrls[j]))
				again[j] = true;
	}
}

/* Re-read WCE of controllers whose namespaces just went write-through. */
static void recheck(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	bool *again = calloc(t->nr_ctrls + 1, sizeof(*again));
	int i;

	if (!again)
		return;

	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];

		if (ns->action != VWC_ACT_CHANGED ||
		    ns->after != VWC_MODE_WRITE_THROUGH)
			continue;
		mark_reachers(t, ns, again);
	}
	/* only WCE can have changed since the probe: read just that */
	for (i = 0; i < t->nr_ctrls; i++)
		if (again[i] && vwc_probe_ctrl_wce(r, &t->ctrls[i]))
			r->nr_failed++;
	free(again);
	vwc_topo_link_reach(t);
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		enum vwc_mode before = ns->before;
		struct vwc_decision d;

		if (ns->after != VWC_MODE_WRITE_THROUGH || !ns->wanted)
			continue;
		d = vwc_ns_decision(r, ns);
		/* a controller that joined after the write: its own run may
		 * have written write back before ours landed */
		if (d.mode == VWC_MODE_WRITE_THROUGH &&
		    !vwc_reason_ns_no_cache(d.reason) && vwc_topo_new_peer(t, ns))
			d = (struct vwc_decision){ VWC_MODE_WRITE_BACK,
						   VWC_REASON_WCE_UNKNOWN };
		if (d.mode == VWC_MODE_WRITE_THROUGH)
			continue;
		vwc_warn("%s: cache state changed during the run; back to %s",
			 ns->name, vwc_mode_str(d.mode));
		if (vwc_blk_apply(ns, d, false))
			r->nr_failed++;
		/* report the run as a whole: from what it found */
		ns->before = before;
		if (ns->action != VWC_ACT_FAILED)
			ns->action = before == ns->after ? VWC_ACT_UNCHANGED :
							   VWC_ACT_CHANGED;
	}
}

/* The decision for @ns, with restore's marks (keep_restored). */
static struct vwc_decision decide_ns(struct vwc_run *r, struct vwc_ns *ns)
{
	struct vwc_decision d = vwc_ns_decision(r, ns);

	if (r->keep_restored) {
		if (vwc_blk_hold(ns->name, VWC_HOLD_TEST) > 0)
			d = vwc_policy_restored(d);
	} else if (!r->dry_run) {
		vwc_blk_hold(ns->name, VWC_HOLD_CLEAR);
	}
	return d;
}

/*
 * The writers' lock could not be had, or (@mark) the mark of
 * vwc_blk_mark_wt() could not be made: @ns keeps its mode.
 */
static int left_alone(struct vwc_run *r, struct vwc_ns *ns, int err,
		      bool mark)
{
	char why[640];

	ns->decision = vwc_ns_decision(r, ns);
	if (vwc_blk_read(ns->syspath, &ns->before))
		ns->before = VWC_MODE_NONE;
	ns->after = ns->before;
	/*
	 * /run full or read-only: no write through unsaid, and one already
	 * there (whoever wrote it) fails the run too: udev's rule may leave
	 * its controllers' events to the sidecar while the mark is missing
	 */
	if (mark) {
		ns->action = VWC_ACT_FAILED;
		snprintf(ns->errmsg, sizeof(ns->errmsg), "%s; left in %s",
			 vwc_blk_mark_strerror(err, why, sizeof(why)),
			 vwc_mode_str(ns->before));
		vwc_err("%s: %s", ns->name, ns->errmsg);
		return 1;
	}
	if (ns->before == VWC_MODE_WRITE_THROUGH) {
		ns->action = VWC_ACT_UNCHANGED;	/* nothing to write */
		return 0;
	}
	ns->action = VWC_ACT_FAILED;
	/* held by someone else, or /run full or read-only: try again later */
	r->lock_busy = true;
	r->lock_err = err;
	snprintf(ns->errmsg, sizeof(ns->errmsg),
		 "cannot take the writers' lock %s: %s; left in %s",
		 vwc_lock_path(), vwc_lock_strerror(err, why, sizeof(why)),
		 vwc_mode_str(ns->before));
	/* only another writer's hold is routine for one that does not wait */
	if (err == -ETIMEDOUT && !r->lock_wait_ms)
		vwc_info("%s: %s", ns->name, ns->errmsg);
	else
		vwc_err("%s: %s", ns->name, ns->errmsg);
	return 1;
}

/*
 * A Set Features 06h with WCE=1 was seen while write through was being
 * written (watch-fast.h): its write back may have landed before ours.
 * Every namespace this run put in write through goes back to write back;
 * the sidecar reads WCE again once the command is done.
 */
static int fast_path_raced(struct vwc_run *r, const bool *later)
{
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_UNKNOWN };
	int i, failed = 0;

	for (i = 0; i < r->topo.nr_ns; i++) {
		struct vwc_ns *ns = &r->topo.ns[i];
		enum vwc_mode before = ns->before;

		/* no cache of its own: a controller's WCE is nothing to it;
		 * nothing written by this run: no write back of the fast
		 * path's can have been overwritten (another controller's
		 * toggle must not undo a write through that was already there) */
		if (!later[i] || ns->after != VWC_MODE_WRITE_THROUGH ||
		    ns->no_vwc == VWC_TRI_YES || !ns->written)
			continue;
		vwc_info("%s: a Set Features 06h with WCE=1 came during the write: back to write back",
			 ns->name);
		if (vwc_blk_apply(ns, wb, false))
			failed++;
		ns->before = before;
		if (ns->action != VWC_ACT_FAILED)
			ns->action = before == ns->after ? VWC_ACT_UNCHANGED :
							   VWC_ACT_CHANGED;
	}
	return failed;
}

/*
 * A namespace in write through that its own bit does not explain and
 * that the kernel holds a write cache for, whoever wrote it (an admin,
 * a run before /run was this one, an older version): the mark of
 * vwc_blk_mark_wt() made, so that udev's rule runs sync for its
 * controllers' events again. One that cannot be made fails the run.
 */
static void mark_found(struct vwc_run *r)
{
	const struct vwc_topo *t = &r->topo;
	char why[640];
	int i, ret;

	for (i = 0; i < t->nr_ns; i++) {
		const struct vwc_ns *ns = &t->ns[i];

		if (!ns->wanted || ns->after != VWC_MODE_WRITE_THROUGH ||
		    vwc_reason_ns_no_cache(ns->decision.reason))
			continue;
		/* the kernel holds no write cache for it (fua 0): a sync for
		 * a controller's event leaves it to the kernel too (blk.c
		 * kernel_held(); a namespace whose own bit could not be read
		 * while the kernel holds it by that bit) */
		if (vwc_blk_kernel_wc(ns->syspath) == 0)
			continue;
		ret = vwc_blk_mark_wt(ns->name);
		if (ret) {
			vwc_err("%s: in write through on its controllers' word: %s",
				ns->name,
				vwc_blk_mark_strerror(ret, why, sizeof(why)));
			r->nr_failed++;
		}
		return;
	}
}

/*
 * Step 2's decision for @ns, on WCE read under the lock, in @d. Return:
 * false when the kernel, which reads WCE itself, does it (nothing to
 * write).
 */
static bool decide_locked(struct vwc_run *r, struct vwc_ns *ns,
			  struct vwc_decision *d)
{
	*d = decide_ns(r, ns);
	/* a controller this run never read may reach it */
	if (d->mode == VWC_MODE_WRITE_THROUGH &&
	    !vwc_reason_ns_no_cache(d->reason) &&
	    vwc_topo_new_peer(&r->topo, ns)) {
		vwc_info("%s: a controller joined its subsystem during the run: kept in write back",
			 ns->name);
		*d = (struct vwc_decision){ VWC_MODE_WRITE_BACK,
					    VWC_REASON_WCE_UNKNOWN };
	}
	return !vwc_aside_kernel_wt(&r->topo, ns, *d);
}

/*
 * Write through read back as write back (@ns->overtaken): another writer
 * wrote after us, most often the sidecar, which writes write back without
 * the lock while a Set Features 06h is in flight (set-cache off's own
 * WCE=0 among them). Once, after VWC_OVERTAKEN_WAIT_MS for that command to
 * complete: WCE of its controllers read again, decided again, written
 * again. @again is scratch, one bool a controller, left all false when
 * used. Return: the change to
 * the run's failures: one less for each of @nsv mended, one more for each
 * controller whose WCE cannot be read now (its namespaces stay in write
 * back, as under the lock).
 */
static int overtaken_again(struct vwc_run *r, struct vwc_ns *const *nsv,
			   struct vwc_decision *dv, int n, bool *again)
{
	struct vwc_topo *t = &r->topo;
	int i, ret, delta = 0;
	bool any = false;

	for (i = 0; i < n && !any; i++)
		any = nsv[i]->overtaken;
	if (!any)
		return 0;
	memset(again, 0, (t->nr_ctrls + 1) * sizeof(*again));
	for (i = 0; i < n; i++) {
		if (!nsv[i]->overtaken)
			continue;
		vwc_notice("%s: %s: WCE read again, once more in %d ms",
			 nsv[i]->name, nsv[i]->errmsg, VWC_OVERTAKEN_WAIT_MS);
		mark_reachers(t, nsv[i], again);
	}
	usleep(VWC_OVERTAKEN_WAIT_MS * 1000);
	for (i = 0; i < t->nr_ctrls; i++)
		if (again[i] && vwc_probe_ctrl_wce(r, &t->ctrls[i]))
			delta++;
	vwc_topo_link_reach(t);
	for (i = 0; i < n; i++) {
		struct vwc_ns *ns = nsv[i];
		enum vwc_mode before = ns->before;

		if (!ns->overtaken)
			continue;
		ns->overtaken = false;
		ret = decide_locked(r, ns, &dv[i]) ?
		      vwc_blk_apply(ns, dv[i], false) : 0;
		/* report the run as a whole: from what it found */
		ns->before = before;
		if (ret) {
			if (ns->overtaken)	/* said at info level */
				vwc_err("%s: %s, twice", ns->name, ns->errmsg);
			continue;
		}
		ns->action = before == ns->after ? VWC_ACT_UNCHANGED :
						   VWC_ACT_CHANGED;
		delta--;
	}
	memset(again, 0, (t->nr_ctrls + 1) * sizeof(*again));
	return delta;
}

int vwc_run_apply(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_UNKNOWN }, *dv;
	bool *later, *again, any = false;
	struct vwc_ns **nsv;
	int i, j, n, ret, mark = 0, failed = 0;

	later = calloc(t->nr_ns + 1, sizeof(*later));
	again = calloc(t->nr_ctrls + 1, sizeof(*again));
	nsv = calloc(t->nr_ns + 1, sizeof(*nsv));
	dv = calloc(t->nr_ns + 1, sizeof(*dv));
	if (!later || !again || !nsv || !dv) {
		free(later);
		free(again);
		free(nsv);
		free(dv);
		/* nothing decided: write back is what unknown calls for */
		for (i = 0; i < t->nr_ns && !r->dry_run; i++)
			if (t->ns[i].wanted)
				vwc_blk_apply(&t->ns[i], wb, false);
		return ++r->nr_failed;
	}
	r->lock_busy = false;
	r->lock_err = 0;
	/* what the probes read of joining controllers (already, after
	 * vwc_run_probe(); the sidecar probes controllers one by one) */
	vwc_topo_link_reach(t);
	/* 1. write back (and "leave alone") at once: no lock, no wait */
	for (i = 0, n = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		struct vwc_decision d;

		if (!ns->wanted)
			continue;
		d = decide_ns(r, ns);
		/*
		 * Write through waits for the lock, but not on a namespace
		 * with no cache of its own: no controller's state can change
		 * that decision, and nothing writes write back there.
		 */
		if (d.mode == VWC_MODE_WRITE_THROUGH && !r->dry_run &&
		    !vwc_reason_ns_no_cache(d.reason)) {
			later[i] = any = true;
			continue;
		}
		nsv[n] = ns;
		dv[n++] = d;
	}
	failed += vwc_blk_apply_many(nsv, dv, n, r->dry_run);
	/* write through by a namespace's own bit */
	failed += overtaken_again(r, nsv, dv, n, again);
	/* write back the kernel refused: may it stand? (aside.h) */
	failed += vwc_aside_held(t, nsv, dv, n, r->dry_run, reread_wce, r);
	/* 2. write through under the writers' lock, on facts read under it */
	if (any) {
		ret = vwc_lock_take(r->lock_wait_ms);
		/* before the look below at who reaches them: a controller
		 * whose event udev's rule left to the sidecar is in sysfs */
		if (!ret) {
			mark = vwc_blk_mark_wt("write through under the writers' lock");
			if (mark)
				vwc_lock_release();
		}
		for (i = 0; i < t->nr_ns; i++) {
			if (!later[i])
				continue;
			if (ret || mark) {
				failed += left_alone(r, &t->ns[i],
						     ret ? ret : mark, !ret);
				continue;
			}
			mark_reachers(t, &t->ns[i], again);
		}
		if (!ret && !mark) {
			unsigned long gen = vwc_blk_wb_gen();

			/* only WCE can have changed since the probe */
			/* one that cannot be read stays write back, and the
			 * run says that it did not do all it should */
			for (j = 0; j < t->nr_ctrls; j++)
				if (again[j] &&
				    vwc_probe_ctrl_wce(r, &t->ctrls[j]))
					failed++;
			vwc_topo_link_reach(t);
			for (i = 0, n = 0; i < t->nr_ns; i++) {
				if (!later[i])
					continue;
				nsv[n] = &t->ns[i];
				if (decide_locked(r, nsv[n], &dv[n]))
					n++;
			}
			failed += vwc_blk_apply_many(nsv, dv, n, false);
			failed += overtaken_again(r, nsv, dv, n, again);
			failed += vwc_aside_held(t, nsv, dv, n, false,
						 reread_wce, r);
			recheck(r);
			/* the sidecar's fast path wrote write back meanwhile */
			if (vwc_blk_wb_gen() != gen)
				failed += fast_path_raced(r, later);
			vwc_lock_release();
		}
	}
	free(later);
	free(again);
	free(nsv);
	free(dv);
	if (!r->dry_run) {
		vwc_aside_learn(t);
		mark_found(r);
	}
	r->nr_failed += failed;
	return failed;
}

/* The controller's namespaces where any reaching controller is ignored. */
static bool ns_ignored(const struct vwc_run *r, const struct vwc_ns *ns)
{
	int j;

	for (j = 0; j < ns->nr_ctrl; j++) {
		const struct vwc_ctrl *c = &r->topo.ctrls[ns->ctrl[j]];
		enum vwc_override o = c->probed ? c->facts.override :
				      vwc_config_override(r->cfg, c);

		if (o == VWC_OVERRIDE_IGNORE)
			return true;
	}
	return false;
}

int vwc_run_write_back(struct vwc_run *r, int ci)
{
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_ENABLED };
	struct vwc_decision ignore = { VWC_MODE_NONE, VWC_REASON_IGNORED };
	struct vwc_decision own = { VWC_MODE_NONE, VWC_REASON_NS_NO_CACHE };
	struct vwc_topo *t = &r->topo;
	struct vwc_decision *dv;
	struct vwc_ns **nsv;
	int i, n = 0, failed = 0;

	if (ci < 0 || ci >= t->nr_ctrls)
		return 0;
	nsv = calloc(t->nr_ns + 1, sizeof(*nsv));
	dv = calloc(t->nr_ns + 1, sizeof(*dv));
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		struct vwc_decision d;

		if (!vwc_ns_has_ctrl(ns, ci))
			continue;
		d = ns_ignored(r, ns) ? ignore :
		    ns->no_vwc == VWC_TRI_YES ? own : wb;
		if (nsv && dv) {
			nsv[n] = ns;
			dv[n++] = d;
		} else if (vwc_blk_apply(ns, d, false)) {
			failed++;	/* no memory: one after the other */
		}
	}
	failed += vwc_blk_apply_many(nsv, dv, n, false);
	free(nsv);
	free(dv);
	return failed;
}

void vwc_run_irq_coalesce(struct vwc_run *r)
{
	const struct vwc_config *cfg = r->cfg;
	int i;

	if (!cfg || !cfg->irqc_enable)
		return;
	for (i = 0; i < r->topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r->topo.ctrls[i];
		uint8_t thr, time;
		char buf[120];
		int fd, ret;

		if (!c->wanted || c->err)
			continue;
		fd = vwc_ctrl_fd(c);
		if (fd < 0)
			continue;
		ret = vwc_nvme_get_irq_coalesce(fd, &thr, &time);
		if (!ret && thr == cfg->irqc_threshold && time == cfg->irqc_time) {
			snprintf(c->irqc, sizeof(c->irqc),
				 "threshold %u time %u: already set", thr, time);
		} else if (r->dry_run) {
			snprintf(c->irqc, sizeof(c->irqc),
				 "threshold %u time %u: would set",
				 cfg->irqc_threshold, cfg->irqc_time);
		} else {
			ret = vwc_nvme_set_irq_coalesce(fd, cfg->irqc_threshold,
							cfg->irqc_time);
			if (ret) {
				snprintf(c->irqc, sizeof(c->irqc),
					 "threshold %u time %u: refused by the controller: %s",
					 cfg->irqc_threshold, cfg->irqc_time,
					 vwc_nvme_strerror(ret, buf, sizeof(buf)));
				vwc_err("%s: interrupt coalescing %s", c->name,
					c->irqc);
				r->nr_failed++;
			} else {
				snprintf(c->irqc, sizeof(c->irqc),
					 "threshold %u time %u: set",
					 cfg->irqc_threshold, cfg->irqc_time);
				vwc_notice("%s: interrupt coalescing %s",
					   c->name, c->irqc);
			}
		}
		vwc_ctrl_fd_put(c, fd);
	}
}

int vwc_run_exit_status(const struct vwc_run *r)
{
	return r->nr_errs || r->nr_failed ? 1 : 0;
}
