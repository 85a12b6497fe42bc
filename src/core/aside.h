/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: aside.h - step aside for a kernel that already does the job
 *
 * Some kernels carry the fix this tool stands in for (the kernel patch
 * "nvme: honor the volatile write cache enable state"): they read WCE
 * themselves, expose a namespace without a write cache while it is 0, and
 * rescan after a Set Features 06h from userspace. On such a kernel the
 * tool must not fight the kernel: no write of write back it refuses, no
 * write of write through it is about to make itself, no error for what
 * its rescan resolves. Everything here is decided from what the kernel
 * shows (queue/fua, queue/write_cache against the controller's WCE),
 * never from a version string. Used by vwc_run_apply().
 */
#ifndef VWC_ASIDE_H
#define VWC_ASIDE_H

#include <stdbool.h>

#include "policy.h"
#include "topo.h"

/* How long the kernel's own rescan may take to settle a namespace */
#define VWC_ASIDE_GRACE_MS	5000

/**
 * vwc_aside_may_hold() - may the kernel keep @ns in write through?
 * @t:	the topology (the facts of the controllers reaching @ns)
 * @ns:	a namespace the kernel holds no write cache for
 *
 * vwc_policy_kernel_may_hold() over the controllers reaching @ns.
 *
 * Return: true if the kernel's write through is acceptable.
 */
bool vwc_aside_may_hold(const struct vwc_topo *t, const struct vwc_ns *ns);

/**
 * vwc_aside_held() - judge the namespaces vwc_blk_apply() left to the kernel
 * @t:		the topology
 * @nsv:	namespaces just applied (write back decided on some)
 * @dv:		their decisions, in the same order
 * @n:		how many
 * @dry_run:	judge only; no waiting, no writing
 * @reread:	reads WCE of @ns's controllers again into the topology
 *		(true if all were read), or NULL
 * @arg:	for @reread
 *
 * A namespace the kernel holds no write cache for (@ns->kernel_held) may
 * stay so when vwc_aside_may_hold() says so. Otherwise a controller
 * reports its cache enabled or unknown: the kernel's rescan after a Set
 * Features may still be under way, so it gets VWC_ASIDE_GRACE_MS to
 * expose the cache, and the decision is applied again. What still has no
 * write cache then is judged again on WCE read now (@reread: a Set
 * Features during the wait may have turned the cache off again), and
 * fails unless that allows the hold, with an error naming the kernel
 * (only a controller reset makes such a kernel read WCE again). In a dry
 * run it is reported as drift (@ns->kernel_held cleared).
 *
 * Return: how many namespaces failed.
 */
int vwc_aside_held(const struct vwc_topo *t, struct vwc_ns *const *nsv,
		   const struct vwc_decision *dv, int n, bool dry_run,
		   bool (*reread)(void *arg, const struct vwc_ns *ns),
		   void *arg);

/**
 * vwc_aside_learn() - note controllers whose kernel honours WCE
 * @t:	the topology, after a run's writes
 *
 * A wanted, probed controller with VWC present and WCE=0 whose every
 * wanted namespace reads write through with no write cache held by the
 * kernel (queue/fua 0) is one the kernel handles itself: its
 * @kernel_wce is set.
 */
void vwc_aside_learn(struct vwc_topo *t);

/**
 * vwc_aside_kernel_wt() - leave write through to a kernel that does it
 * @t:	the topology
 * @ns:	a namespace the policy puts in write through (under the writers'
 *	lock, on WCE read under it)
 * @d:	that decision
 *
 * When every controller reaching @ns has @kernel_wce, the kernel makes
 * the namespace write through itself (its rescan after the Set Features
 * that turned the cache off): wait for it, at most VWC_ASIDE_GRACE_MS.
 * Nothing is written. If the kernel did not, those controllers lose
 * @kernel_wce and the caller writes as on any kernel.
 *
 * Return: true if @ns is in write through by the kernel's doing (@ns's
 * decision, before, after and action are filled in), false if the
 * caller is to write it.
 */
bool vwc_aside_kernel_wt(struct vwc_topo *t, struct vwc_ns *ns,
			 struct vwc_decision d);

/**
 * vwc_aside_carry() - keep what was learned across a rescan
 * @old:	the topology before
 * @t:		the new one: @kernel_wce of the controllers of @old, by name
 */
void vwc_aside_carry(const struct vwc_topo *old, struct vwc_topo *t);

#endif
