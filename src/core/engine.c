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

int vwc_run_init(struct vwc_run *r, const char *command,
		 const struct vwc_config *cfg)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->lock_wait_ms = VWC_LOCK_TIMEOUT_MS;
	r->command = command;
	r->cfg = cfg;
	r->udev = udev_new();
	if (!r->udev)
		return -ENOMEM;
	ret = vwc_topo_scan(r->udev, &r->topo);
	if (ret) {
		udev_unref(r->udev);
		r->udev = NULL;
		return ret;
	}
	vwc_quirks_fill(r->udev, &r->topo);
	return 0;
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

static enum vwc_tri tri(bool b)
{
	return b ? VWC_TRI_YES : VWC_TRI_NO;
}

static void note(struct vwc_ctrl *c, const char *what, int ret)
{
	char buf[120];
	size_t len = strlen(c->errmsg);

	vwc_nvme_strerror(ret, buf, sizeof(buf));
	snprintf(c->errmsg + len, sizeof(c->errmsg) - len, "%s%s failed: %s",
		 len ? "; " : "", what, buf);
	vwc_warn("%s: %s failed: %s", c->name, what, buf);
}

int vwc_ctrl_fd(const struct vwc_ctrl *c)
{
	return c->held_fd > 0 ? c->held_fd : vwc_nvme_open(c->devnode);
}

void vwc_ctrl_fd_put(const struct vwc_ctrl *c, int fd)
{
	if (fd >= 0 && fd != c->held_fd)
		vwc_nvme_close(fd);
}

/*
 * The namespaces a controller with peers reaches (vwc_topo_link_reach()):
 * read with every probe, since a namespace can be attached at any time.
 * A list that cannot be read leaves it reaching any (nsids_known false).
 */
static void forget_reach(struct vwc_ctrl *c)
{
	free(c->nsids);
	c->nsids = NULL;
	c->nr_nsids = 0;
	c->nsids_known = false;
}

static void probe_reach(struct vwc_run *r, struct vwc_ctrl *c, int fd)
{
	int ret;

	forget_reach(c);
	if (!vwc_topo_has_peers(&r->topo, (int)(c - r->topo.ctrls)))
		return;
	ret = vwc_nvme_active_nsids(fd, &c->nsids, &c->nr_nsids);
	if (ret)
		note(c, "Identify Active Namespace ID list", ret);
	else
		c->nsids_known = true;
}

void vwc_probe_ctrl(struct vwc_run *r, struct vwc_ctrl *c)
{
	char mn[41], sn[21], fr[9];
	uint8_t cw;
	bool wce;
	int fd, ret;

	c->probed = true;
	c->err = 0;
	c->errmsg[0] = '\0';
	forget_reach(c);
	c->facts.present = VWC_TRI_UNKNOWN;
	c->facts.wce = VWC_TRI_UNKNOWN;
	c->facts.backup_failed = VWC_TRI_UNKNOWN;
	c->facts.override = vwc_config_override(r->cfg, c);

	fd = vwc_ctrl_fd(c);
	if (fd < 0) {
		c->err = fd;
		snprintf(c->errmsg, sizeof(c->errmsg), "cannot open %.300s: %s%s",
			 c->devnode, strerror(-fd),
			 fd == -EACCES || fd == -EPERM ? " (must be root)" : "");
		vwc_err("%s: %s", c->name, c->errmsg);
		goto out;
	}
	ret = vwc_nvme_identify_ctrl(fd, &c->vwc, &c->ver, mn, sn, fr);
	if (ret) {
		note(c, "Identify Controller", ret);
		goto close;
	}
	c->facts.present = tri(c->vwc & VWC_NVME_CTRL_VWC_PRESENT);
	/* firmware activation may have changed these: trust the drive */
	snprintf(c->model, sizeof(c->model), "%s", mn);
	snprintf(c->serial, sizeof(c->serial), "%s", sn);
	snprintf(c->firmware, sizeof(c->firmware), "%s", fr);

	if (c->facts.present == VWC_TRI_YES) {
		ret = vwc_nvme_get_wce(fd, &wce);
		if (ret)
			note(c, "Get Features 06h", ret);
		else
			c->facts.wce = tri(wce);
	}
	ret = vwc_nvme_smart_warning(fd, &cw);
	if (ret) {
		note(c, "SMART log", ret);
	} else {
		c->critical_warning = cw;
		c->facts.backup_failed =
			tri(cw & VWC_NVME_SMART_CW_VOLATILE_MEMORY);
	}
	probe_reach(r, c, fd);
close:
	vwc_ctrl_fd_put(c, fd);
out:
	c->decision = vwc_policy_decide(&c->facts);
	vwc_info("%s: vwc=%s wce=%s -> %s (%s)", c->name,
		 c->facts.present == VWC_TRI_UNKNOWN ? "unknown" :
		 c->facts.present == VWC_TRI_YES ? "present" : "absent",
		 vwc_tri_wce_str(c->facts.wce), vwc_mode_str(c->decision.mode),
		 vwc_reason_str(c->decision.reason));
}

int vwc_probe_ctrl_wce(struct vwc_run *r, struct vwc_ctrl *c)
{
	bool wce;
	int fd, ret;

	if (!c->probed || c->err || c->facts.present != VWC_TRI_YES)
		return 0;
	c->facts.wce = VWC_TRI_UNKNOWN;
	forget_reach(c);
	fd = vwc_ctrl_fd(c);
	if (fd < 0) {
		note(c, "open", fd);
		ret = fd;
	} else {
		ret = vwc_nvme_get_wce(fd, &wce);
		if (ret)
			note(c, "Get Features 06h", ret);
		else
			c->facts.wce = tri(wce);
		probe_reach(r, c, fd);
		vwc_ctrl_fd_put(c, fd);
	}
	c->decision = vwc_policy_decide(&c->facts);
	vwc_info("%s: wce=%s -> %s (%s)", c->name,
		 vwc_tri_wce_str(c->facts.wce), vwc_mode_str(c->decision.mode),
		 vwc_reason_str(c->decision.reason));
	return ret;
}

int vwc_run_rescan(struct vwc_run *r)
{
	struct vwc_topo t;
	int ret;

	ret = vwc_topo_scan(r->udev, &t);
	if (ret)
		return ret;
	vwc_aside_carry(&r->topo, &t);
	vwc_topo_free(&r->topo);
	r->topo = t;
	vwc_quirks_fill(r->udev, &r->topo);
	return 0;
}

/*
 * For each controller, the wanted namespaces it reaches, in namespace
 * order: @idx[@start[c]] to @idx[@start[c + 1] - 1]. One pass over the
 * namespaces' controllers, not one over every namespace per controller.
 * Return: 0, or -ENOMEM.
 */
static int ns_by_ctrl(const struct vwc_topo *t, int **start, int **idx)
{
	int *st, *ix, *at, i, k, total = 0;

	st = calloc(t->nr_ctrls + 2, sizeof(*st));
	at = calloc(t->nr_ctrls + 1, sizeof(*at));
	if (!st || !at)
		goto fail;
	for (i = 0; i < t->nr_ns; i++)
		for (k = 0; t->ns[i].wanted && k < t->ns[i].nr_ctrl; k++)
			st[t->ns[i].ctrl[k] + 1]++;
	for (i = 0; i < t->nr_ctrls; i++) {
		st[i + 1] += st[i];
		at[i] = st[i];
	}
	total = st[t->nr_ctrls];
	ix = malloc((total + 1) * sizeof(*ix));
	if (!ix)
		goto fail;
	for (i = 0; i < t->nr_ns; i++)
		for (k = 0; t->ns[i].wanted && k < t->ns[i].nr_ctrl; k++)
			ix[at[t->ns[i].ctrl[k]]++] = i;
	free(at);
	*start = st;
	*idx = ix;
	return 0;
fail:
	free(st);
	free(at);
	return -ENOMEM;
}

/*
 * The namespace's own bit, read once per namespace (it is the same
 * through every path) through the first controller reaching it that
 * answers. Only controllers of NVMe 2.0 or later are asked (CNS 08h came
 * with it), and one that refused is not asked again: each refusal is an
 * entry in its error log. Unknown is no error: the controllers decide.
 */
void vwc_probe_ns(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	int *start = NULL, *idx = NULL;
	bool walk;
	char buf[120];
	int i, k, fd, ret;

	/* no memory for the lists: every namespace for each controller */
	walk = ns_by_ctrl(t, &start, &idx) < 0;
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		bool refused = false, open = false;

		if (!c->wanted || !c->probed || c->err ||
		    c->ver < VWC_NVME_VER_2_0 || c->ns_indep_refused)
			continue;
		fd = -1;
		for (k = walk ? 0 : start[i];
		     k < (walk ? t->nr_ns : start[i + 1]) && !refused; k++) {
			struct vwc_ns *ns = &t->ns[walk ? k : idx[k]];
			bool no_vwc;

			if (!ns->wanted || ns->no_vwc != VWC_TRI_UNKNOWN ||
			    !vwc_ns_has_ctrl(ns, i))
				continue;
			if (!ns->nsid)
				ns->nsid = vwc_ns_read_nsid(ns);
			if (!ns->nsid)
				continue;
			if (!open) {
				fd = vwc_ctrl_fd(c);
				open = true;
				if (fd < 0)
					break;
			}
			ret = vwc_nvme_ns_no_vwc(fd, ns->nsid, &no_vwc);
			if (ret) {
				vwc_info("%s: %s: I/O Command Set Independent Identify Namespace failed: %s; its own cache bit unknown",
					 c->name, ns->name,
					 vwc_nvme_strerror(ret, buf,
							   sizeof(buf)));
				/* a controller that does not know CNS 08h */
				refused = c->ns_indep_refused = ret > 0;
				continue;
			}
			ns->no_vwc = no_vwc ? VWC_TRI_YES : VWC_TRI_NO;
		}
		if (open)
			vwc_ctrl_fd_put(c, fd);
	}
	free(start);
	free(idx);
}

void vwc_run_probe(struct vwc_run *r)
{
	int i;

	for (i = 0; i < r->topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r->topo.ctrls[i];

		if (c->wanted) {
			vwc_probe_ctrl(r, c);
			/* a command that failed leaves a fact unknown: the
			 * mode is safe, but the run did not do all it should */
			if (c->err || c->errmsg[0])
				r->nr_failed++;
		}
	}
	vwc_topo_link_reach(&r->topo);
	vwc_probe_ns(r);
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

/* The writers' lock could not be had: @ns keeps its mode. */
static int left_alone(struct vwc_run *r, struct vwc_ns *ns, int err)
{
	char why[160];

	ns->decision = vwc_ns_decision(r, ns);
	if (vwc_blk_read(ns->syspath, &ns->before))
		ns->before = VWC_MODE_NONE;
	ns->after = ns->before;
	if (ns->before == VWC_MODE_WRITE_THROUGH) {
		ns->action = VWC_ACT_UNCHANGED;	/* nothing to write */
		return 0;
	}
	/* held by someone else, or /run full or read-only: try again later */
	r->lock_busy = true;
	r->lock_err = err;
	ns->action = VWC_ACT_FAILED;
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

int vwc_run_apply(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_UNKNOWN }, *dv;
	bool *later, *again, any = false;
	struct vwc_ns **nsv;
	int i, j, n, ret, failed = 0;

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
	/* write back the kernel refused: may it stand? (aside.h) */
	failed += vwc_aside_held(t, nsv, dv, n, r->dry_run);
	/* 2. write through under the writers' lock, on facts read under it */
	if (any) {
		ret = vwc_lock_take(r->lock_wait_ms);
		for (i = 0; i < t->nr_ns; i++) {
			if (!later[i])
				continue;
			if (ret) {
				failed += left_alone(r, &t->ns[i], ret);
				continue;
			}
			mark_reachers(t, &t->ns[i], again);
		}
		if (!ret) {
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
				dv[n] = decide_ns(r, &t->ns[i]);
				/* a controller this run never read may reach it */
				if (dv[n].mode == VWC_MODE_WRITE_THROUGH &&
				    !vwc_reason_ns_no_cache(dv[n].reason) &&
				    vwc_topo_new_peer(t, &t->ns[i])) {
					vwc_info("%s: a controller joined its subsystem during the run: kept in write back",
						 t->ns[i].name);
					dv[n] = wb;
				}
				/* a kernel that reads WCE does it itself */
				if (vwc_aside_kernel_wt(t, &t->ns[i], dv[n]))
					continue;
				n++;
			}
			failed += vwc_blk_apply_many(nsv, dv, n, false);
			failed += vwc_aside_held(t, nsv, dv, n, false);
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
	if (!r->dry_run)
		vwc_aside_learn(t);
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
