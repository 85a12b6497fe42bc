// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
