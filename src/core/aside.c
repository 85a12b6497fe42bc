// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stepping aside for a kernel that reads WCE itself (aside.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aside.h"
#include "blk.h"
#include "log.h"

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

bool vwc_aside_may_hold(const struct vwc_topo *t, const struct vwc_ns *ns)
{
	struct vwc_facts one = { 0 }, *facts = &one;
	bool ok;
	int i;

	if (ns->nr_ctrl > 1) {
		facts = calloc(ns->nr_ctrl, sizeof(*facts));
		if (!facts)
			return false;
	}
	for (i = 0; i < ns->nr_ctrl; i++)
		facts[i] = t->ctrls[ns->ctrl[i]].facts;
	ok = vwc_policy_kernel_may_hold(facts, ns->nr_ctrl);
	if (facts != &one)
		free(facts);
	return ok;
}

int vwc_aside_held(const struct vwc_topo *t, struct vwc_ns *const *nsv,
		   const struct vwc_decision *dv, int n, bool dry_run,
		   bool (*reread)(void *arg, const struct vwc_ns *ns),
		   void *arg)
{
	double t0 = 0;
	int i, failed = 0;

	for (i = 0; i < n; i++) {
		struct vwc_ns *ns = nsv[i];
		enum vwc_mode before = ns->before;

		if (!ns->kernel_held || vwc_aside_may_hold(t, ns))
			continue;
		if (dry_run) {
			ns->kernel_held = false;	/* drift */
			continue;
		}
		/* the kernel's rescan after a Set Features may be under way */
		if (!t0)
			t0 = mono_ms();
		while (vwc_blk_kernel_wc(ns->syspath) == 0 &&
		       mono_ms() - t0 < VWC_ASIDE_GRACE_MS)
			sleep_ms(10);
		vwc_blk_apply(ns, dv[i], false);
		if (!ns->kernel_held) {
			vwc_blk_report_found(ns, before);
			continue;
		}
		ns->before = before;
		/*
		 * a Set Features since the probe may have turned the cache
		 * off again (an admin's toggles): on WCE read now, the
		 * kernel's hold can be right
		 */
		if (reread && reread(arg, ns) && vwc_aside_may_hold(t, ns)) {
			vwc_info("%s: its controllers report the cache off again: the kernel's write through stands",
				 ns->name);
			ns->action = VWC_ACT_UNCHANGED;
			continue;
		}
		ns->kernel_held = false;
		ns->action = VWC_ACT_FAILED;
		snprintf(ns->errmsg, sizeof(ns->errmsg),
			 "the kernel holds no write cache for it while a controller reports its cache enabled or unknown");
		vwc_err("%s: %s: left in %s by the kernel, which refuses write back (a controller reset makes it read WCE again)",
			ns->name, ns->errmsg, vwc_mode_str(ns->after));
		failed++;
	}
	return failed;
}

void vwc_aside_learn(struct vwc_topo *t)
{
	int c, i;

	for (c = 0; c < t->nr_ctrls; c++) {
		struct vwc_ctrl *ctrl = &t->ctrls[c];
		int held = 0, not = 0;

		if (!ctrl->wanted || !ctrl->probed || ctrl->kernel_wce ||
		    ctrl->facts.present != VWC_TRI_YES ||
		    ctrl->facts.wce != VWC_TRI_NO)
			continue;
		for (i = 0; i < t->nr_ns; i++) {
			struct vwc_ns *ns = &t->ns[i];
			enum vwc_mode cur;

			if (!ns->wanted || !vwc_ns_has_ctrl(ns, c))
				continue;
			if (!vwc_blk_read(ns->syspath, &cur) &&
			    cur == VWC_MODE_WRITE_THROUGH &&
			    vwc_blk_kernel_wc(ns->syspath) == 0)
				held++;
			else {
				/* one is enough: a few reads a run on a kernel
				 * that does not follow WCE */
				not++;
				break;
			}
		}
		if (held && !not) {
			ctrl->kernel_wce = true;
			vwc_info("%s: the kernel reads WCE itself (WCE=0, no write cache held for its namespaces): its write through is left to the kernel",
				 ctrl->name);
		}
	}
}

bool vwc_aside_kernel_wt(struct vwc_topo *t, struct vwc_ns *ns,
			 struct vwc_decision d)
{
	enum vwc_mode first, cur;
	double t0;
	int i;

	if (d.mode != VWC_MODE_WRITE_THROUGH || !ns->nr_ctrl)
		return false;
	for (i = 0; i < ns->nr_ctrl; i++)
		if (!t->ctrls[ns->ctrl[i]].kernel_wce)
			return false;
	if (vwc_blk_read(ns->syspath, &first))
		return false;
	cur = first;
	t0 = mono_ms();
	while (cur != VWC_MODE_WRITE_THROUGH &&
	       mono_ms() - t0 < VWC_ASIDE_GRACE_MS) {
		sleep_ms(5);
		if (vwc_blk_read(ns->syspath, &cur))
			return false;
	}
	if (cur != VWC_MODE_WRITE_THROUGH) {
		for (i = 0; i < ns->nr_ctrl; i++)
			t->ctrls[ns->ctrl[i]].kernel_wce = false;
		vwc_info("%s: the kernel did not make it write through itself within %d ms: written here",
			 ns->name, VWC_ASIDE_GRACE_MS);
		return false;
	}
	ns->decision = d;
	ns->before = first;
	ns->after = cur;
	ns->action = VWC_ACT_UNCHANGED;
	ns->kernel_held = false;
	ns->written = 0;	/* nothing of this run's (recheck()) */
	ns->overtaken = false;
	ns->errmsg[0] = '\0';
	if (first != cur)
		vwc_info("%s: the kernel made it write through itself (%.0f ms): nothing written",
			 ns->name, mono_ms() - t0);
	return true;
}

void vwc_aside_carry(const struct vwc_topo *old, struct vwc_topo *t)
{
	int i, j;

	for (i = 0; i < t->nr_ctrls; i++)
		for (j = 0; j < old->nr_ctrls; j++)
			if (old->ctrls[j].kernel_wce &&
			    !strcmp(old->ctrls[j].name, t->ctrls[i].name))
				t->ctrls[i].kernel_wce = true;
}
