// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vwc_run_apply(): a run's decisions written, in two steps. Write back at
 * once, without the lock (and write through by a namespace's own bit);
 * write through only under the writers' lock, on WCE read again under it,
 * then read once more after the write (recheck()), and undone where the
 * fast path wrote write back meanwhile (fast_path_raced()) or WCE came on.
 * A write of write through another writer overtook is tried once more
 * (overtaken_again()). lock.h has the argument.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aside.h"
#include "blk.h"
#include "engine.h"
#include "lock.h"
#include "log.h"

/* write through overtaken by another writer: how long before once more */
#define VWC_OVERTAKEN_WAIT_MS	50

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

/*
 * Re-read WCE of controllers whose namespaces just went write-through:
 * changed, or a node of theirs written (a head found in write through
 * with a path node that was not, or put back by overtaken_again())
 */
static void recheck(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	bool *again = calloc(t->nr_ctrls + 1, sizeof(*again));
	int i;

	if (!again)
		return;

	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];

		if ((ns->action != VWC_ACT_CHANGED && !ns->written) ||
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
		vwc_blk_report_found(ns, before);
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
	ns->written = 0;	/* nothing of this run's (recheck()) */
	ns->overtaken = false;
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
		vwc_blk_report_found(ns, before);
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
 * WCE=0 among them), or a kernel's rescan. Once, after
 * VWC_OVERTAKEN_WAIT_MS for that command to complete, decided again and
 * written again. Under the lock (@gen: the write-back count taken with
 * it), on WCE of its controllers read again, and recheck() reads it once
 * more after the write, as for any write through (lock.h); not when this
 * process's fast path wrote write back meanwhile: that was a Set Features
 * 06h with WCE=1 (fast_path_raced()). @gen NULL: step 1's own bits,
 * decided as there, with no WCE to read. @again is scratch, one bool a
 * controller, left all false when used. Return: the change to the run's
 * failures: one less for each of @nsv mended, one more for each
 * controller whose WCE cannot be read now (its namespaces stay in write
 * back, as under the lock).
 */
static int overtaken_again(struct vwc_run *r, struct vwc_ns *const *nsv,
			   struct vwc_decision *dv, int n, bool *again,
			   const unsigned long *gen)
{
	struct vwc_topo *t = &r->topo;
	int i, ret, delta = 0;
	bool any = false;

	for (i = 0; i < n && !any; i++)
		any = nsv[i]->overtaken;
	if (!any)
		return 0;
	if (gen && vwc_blk_wb_gen() != *gen) {
		for (i = 0; i < n; i++)
			if (nsv[i]->overtaken)
				vwc_notice("%s: %s: left in write back, a Set Features 06h with WCE=1 came meanwhile",
					   nsv[i]->name, nsv[i]->errmsg);
		return 0;
	}
	memset(again, 0, (t->nr_ctrls + 1) * sizeof(*again));
	for (i = 0; i < n; i++) {
		if (!nsv[i]->overtaken)
			continue;
		vwc_notice("%s: %s: %sonce more in %d ms", nsv[i]->name,
			   nsv[i]->errmsg, gen ? "WCE read again, " : "",
			   VWC_OVERTAKEN_WAIT_MS);
		mark_reachers(t, nsv[i], again);
	}
	usleep(VWC_OVERTAKEN_WAIT_MS * 1000);
	/* step 1's write through is a namespace's own bit: no WCE to read */
	if (gen) {
		for (i = 0; i < t->nr_ctrls; i++)
			if (again[i] && vwc_probe_ctrl_wce(r, &t->ctrls[i]))
				delta++;
		vwc_topo_link_reach(t);
	}
	for (i = 0; i < n; i++) {
		struct vwc_ns *ns = nsv[i];
		enum vwc_mode before = ns->before;
		bool write = true;

		if (!ns->overtaken)
			continue;
		ns->overtaken = false;
		if (gen)
			write = decide_locked(r, ns, &dv[i]);
		else
			dv[i] = decide_ns(r, ns);
		ret = write ? vwc_blk_apply(ns, dv[i], r->dry_run) : 0;
		vwc_blk_report_found(ns, before);
		if (!ret)
			delta--;
		else if (ns->overtaken)	/* said at info level */
			vwc_err("%s: %s, twice", ns->name, ns->errmsg);
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
	failed += overtaken_again(r, nsv, dv, n, again, NULL);
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
			failed += overtaken_again(r, nsv, dv, n, again,
						  &gen);
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
