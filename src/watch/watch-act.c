// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the sidecar does (watch-act.h): probes, decisions and writes for
 * what the model marked.
 *
 * The daemon sends its own commands through descriptors it keeps open,
 * so they raise no close events of its own: a controller it cannot open
 * yet (hot-added, not live) is never probed through a fresh open and
 * close, but opened again on a timer until it is live, and held from
 * then on (a failed open raises no close event either). An open
 * /dev/nvmeN pins the nvme module, so a descriptor idle for
 * VWC_MODEL_HOLD_S is closed with the close event masked
 * (vwc_src_close_quiet()) and opened again by the next probe: an admin's
 * `rmmod nvme` is not refused because of the sidecar. Its own Get
 * Features are not Set Features, and its Set Features 0Bh (SMART events)
 * is not feature 06h: it cannot wake itself in a loop.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "config.h"
#include "lock.h"
#include "watch-fast.h"
#include "log.h"
#include "nvme-io.h"
#include "report.h"
#include "watch-act.h"
#include "watch-textfile.h"

#define LOCK_RETRY	1.0	/* s: after another writer held the lock */
#define LOCK_RETRY_MAX	30.0	/* s: the longest wait after lock errors */

double vwc_watch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct vwc_sidecar *of(struct vwc_model *w)
{
	return w->arg;
}

static void try_open(struct vwc_wctrl *c, const struct vwc_ctrl *tc)
{
	int fd = vwc_nvme_open(tc->devnode);

	if (fd < 0 && c->open_delay <= VWC_MODEL_OPEN_MIN_S)
		vwc_warn("%s: cannot open %s: %s; trying again until it opens",
			 c->name, tc->devnode, strerror(-fd));
	else if (fd >= 0 && c->open_delay > VWC_MODEL_OPEN_MIN_S)
		vwc_info("%s: %s opened", c->name, tc->devnode);
	vwc_model_open_result(c, fd, vwc_watch_now());
}

static void op_ctrl_added(struct vwc_model *w, struct vwc_wctrl *c,
			  const struct vwc_ctrl *tc)
{
	try_open(c, tc);
	vwc_src_watch_ctrl(&of(w)->src, tc);
}

static void op_ctrl_gone(struct vwc_model *w, struct vwc_wctrl *c)
{
	struct vwc_topo *t = &of(w)->run.topo;
	int ci = vwc_topo_find_ctrl(t, c->name);

	/* the watches first: our own close must not wake us */
	vwc_src_unwatch(&of(w)->src, c->name);
	if (ci >= 0 && t->ctrls[ci].held_fd == c->fd)
		t->ctrls[ci].held_fd = -1;
	vwc_nvme_close(c->fd);
}

static void op_ns_added(struct vwc_model *w, const char *name)
{
	vwc_src_watch_ns(&of(w)->src, name);
}

static void op_ns_gone(struct vwc_model *w, const char *name)
{
	vwc_src_unwatch(&of(w)->src, name);
}

/* kernfs gives every sysfs directory a new inode number (with generation):
 * a new device object, controller or disk, a new identity */
static uint64_t sysfs_ident(const char *syspath)
{
	struct stat st;

	if (stat(syspath, &st))
		return 0;
	return (uint64_t)st.st_ino;
}

/* the scan's readdir gave its class entry's: no stat per device a scan
 * (thousands at fabrics scale, at every scan) */
static uint64_t op_ident(const struct vwc_ctrl *tc)
{
	return tc->ino ? tc->ino : sysfs_ident(tc->syspath);
}

static uint64_t op_ns_ident(const struct vwc_ns *tn)
{
	return tn->ino ? tn->ino : sysfs_ident(tn->syspath);
}

const struct vwc_model_ops vwc_watch_ops = {
	.ctrl_added = op_ctrl_added,
	.ctrl_gone = op_ctrl_gone,
	.ns_added = op_ns_added,
	.ns_gone = op_ns_gone,
	.ident = op_ident,
	.ns_ident = op_ns_ident,
};

double vwc_watch_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vwc_watch_rescan(struct vwc_sidecar *wr)
{
	double t0 = vwc_watch_cpu_now();
	int r;

	/* a re-check's scan is skipped if no device object came or went; a
	 * reshape (an add or a remove) is scanned whatever the names say,
	 * so they are not read twice */
	if (!wr->model.reshape &&
	    vwc_model_scan_skips(&wr->model,
				 vwc_topo_names_sig("/sys") != wr->scanned_sig))
		return;
	r = vwc_run_rescan(&wr->run);
	if (r) {
		/* asked again; the last scan's names stay the reference */
		vwc_err("cannot scan NVMe devices: %s", strerror(-r));
		return;
	}
	/* the names as the scan's own readdirs saw them: one that came
	 * after differs next time, and is scanned then */
	wr->scanned_sig = wr->run.topo.names_sig;
	wr->tf_all = true;	/* the textfile's indexes are the old topology's */
	wr->model.topo = &wr->run.topo;
	vwc_model_sync(&wr->model, vwc_watch_now());
	vwc_watch_publish_fast(wr);
	/* the scan and what follows from it: each is over everything */
	vwc_model_rescanned(&wr->model, vwc_watch_cpu_now() - t0);
	vwc_info("topology: %d controller(s), %d namespace(s)",
		 wr->run.topo.nr_ctrls, wr->run.topo.nr_ns);
}

bool vwc_watch_topo_changed(struct vwc_sidecar *wr)
{
	return vwc_topo_names_sig("/sys") != wr->scanned_sig;
}

void vwc_watch_open_retry(struct vwc_sidecar *wr)
{
	struct vwc_topo *t = &wr->run.topo;
	double now = vwc_watch_now();
	int i, ci;

	for (i = 0; i < wr->model.nr_ctrl; i++) {
		struct vwc_wctrl *c = &wr->model.ctrl[i];

		if (!vwc_model_open_due(c, now))
			continue;
		ci = vwc_topo_find_ctrl(t, c->name);
		if (ci < 0)
			continue;
		try_open(c, &t->ctrls[ci]);
		t->ctrls[ci].held_fd = c->fd;
	}
}

/*
 * Re-enable SMART critical warning events (the kernel leaves them off).
 * A controller that answers with an NVMe status has none to enable
 * (Linux's nvmet allows only namespace, ANA and discovery events): it is
 * not asked again, and said once, where every reconnect and every
 * reopen of its descriptor would ask and say it again. A path-related
 * status is not its answer (the host's own while the controller resets:
 * the first re-check after a reset can come before it is live): the
 * later re-checks ask again, and so does the kernel's change uevent with
 * NVME_EVENT=connected when the controller is live again (every reset and
 * reconnect since Linux 5.18).
 */
static void arm_smart_events(struct vwc_wctrl *c)
{
	uint32_t aec;
	char buf[128];
	int r;

	c->arm_smart = false;
	if (c->fd < 0 || c->aec_refused)
		return;
	r = vwc_nvme_get_aec(c->fd, &aec);
	if (!r && (aec & 0xff) != 0xff)
		r = vwc_nvme_set_aec(c->fd, aec | 0xff);
	if (!r)
		return;
	/* the controller's answer, not the host's while it resets */
	c->aec_refused = r > 0 && !vwc_nvme_status_path(r);
	vwc_info("%s: cannot enable SMART critical warning events: %s%s",
		 c->name, vwc_nvme_strerror(r, buf, sizeof(buf)),
		 c->aec_refused ? " (not asked again)" : "");
}

/* A new longest hold of the writers' lock (in vwc_run_apply()) is logged. */
static void note_lock_hold(double before)
{
	if (vwc_lock_longest_ms() > before)
		vwc_info("longest hold of the writers' lock so far: %.1f ms",
			 vwc_lock_longest_ms());
}

/* Does the configuration say "ignore" for a controller reaching @ns? */
static bool ns_ignored(const struct vwc_run *run, const struct vwc_ns *ns)
{
	int j;

	for (j = 0; j < ns->nr_ctrl; j++)
		if (vwc_config_override(run->cfg,
					&run->topo.ctrls[ns->ctrl[j]]) ==
		    VWC_OVERRIDE_IGNORE)
			return true;
	return false;
}

void vwc_watch_write_back_now(struct vwc_model *w, struct vwc_wctrl *c)
{
	struct vwc_sidecar *wr = of(w);
	struct vwc_topo *t = &wr->run.topo;
	int ci = vwc_topo_find_ctrl(t, c->name), i;

	double t0 = vwc_watch_now(), t1;
	bool changed = false;

	if (ci < 0)
		return;
	vwc_run_write_back(&wr->run, ci);
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		struct vwc_wns *n;

		if (!vwc_ns_has_ctrl(ns, ci))
			continue;
		vwc_watch_textfile_stale(wr, i);
		if (ns->action == VWC_ACT_SKIPPED)
			continue;
		changed |= ns->action == VWC_ACT_CHANGED;
		n = vwc_model_find_ns(w, ns->name);
		/* the kernel's own write through (aside.h) is expected */
		if (n && ns->action != VWC_ACT_FAILED)
			n->expected = ns->kernel_held ? ns->after :
							VWC_MODE_WRITE_BACK;
	}
	w->publish = true;
	t1 = vwc_watch_now();
	/*
	 * The fast path (watch-fast.c) wrote write back and logged the
	 * reaction already; a change here is one it missed.
	 */
	if (changed && c->wb_since > 0 && c->wb_since <= t0)
		vwc_log(LOG_NOTICE, "%s: reaction %.3f ms from the Set Features 06h submission to write back (the main loop's, the fast path missed it): write_cache writes %.3f ms, the sidecar's share %.3f ms",
			 c->name, (t1 - c->wb_since) * 1e3, (t1 - t0) * 1e3,
			 (t0 - c->wb_since) * 1e3);
}

/* What a controller that cannot be read is: nothing known (write back). */
static void unknown(struct vwc_run *run, struct vwc_ctrl *tc, int err)
{
	tc->probed = true;
	tc->err = err;
	snprintf(tc->errmsg, sizeof(tc->errmsg), "cannot open %.300s: %s",
		 tc->devnode, strerror(-err));
	tc->facts.present = VWC_TRI_UNKNOWN;
	tc->facts.wce = VWC_TRI_UNKNOWN;
	tc->facts.backup_failed = VWC_TRI_UNKNOWN;
	tc->facts.override = vwc_config_override(run->cfg, tc);
	tc->decision = vwc_policy_decide(&tc->facts);
}

/*
 * A descriptor let go when idle (vwc_watch_release_idle()) is opened again
 * for the probe; one that will not open now goes to the retry timer.
 */
static void reopen(struct vwc_sidecar *wr, struct vwc_wctrl *c,
		   struct vwc_ctrl *tc)
{
	int fd = vwc_nvme_open(tc->devnode);

	(void)wr;
	if (fd >= 0) {
		c->fd = fd;
		c->released = false;
		return;
	}
	vwc_warn("%s: cannot open %s: %s; trying again until it opens",
		 c->name, tc->devnode, strerror(-fd));
	vwc_model_open_result(c, fd, vwc_watch_now());
}

void vwc_watch_release_idle(struct vwc_sidecar *wr)
{
	struct vwc_topo *t = &wr->run.topo;
	double now = vwc_watch_now();
	int i, ci;

	for (i = 0; i < wr->model.nr_ctrl; i++) {
		struct vwc_wctrl *c = &wr->model.ctrl[i];

		if (!vwc_model_release_due(c, now))
			continue;
		ci = vwc_topo_find_ctrl(t, c->name);
		if (ci < 0)
			continue;
		/* no close event of our own: it would wake us for nothing */
		vwc_src_close_quiet(&wr->src, t->ctrls[ci].devnode, c->fd);
		if (t->ctrls[ci].held_fd == c->fd)
			t->ctrls[ci].held_fd = -1;
		vwc_model_released(c);
		vwc_info("%s: idle: descriptor closed", c->name);
	}
}

/*
 * Read what the model's plan says from one selected controller. Return:
 * true if that was a full look; *@bits set if its namespaces' own bits
 * are to be read again (&vwc_wctrl.own_bits).
 */
static bool probe(struct vwc_sidecar *wr, struct vwc_ctrl *tc, bool *bits)
{
	struct vwc_wctrl *c = vwc_model_find_ctrl(&wr->model, tc->name);
	bool full = false;

	if (!c) {
		unknown(&wr->run, tc, -ENODEV);
		return false;
	}
	if (c->fd < 0 && c->released)
		reopen(wr, c, tc);
	if (c->fd < 0) {
		/* not live yet: the open retry timer takes it from here */
		unknown(&wr->run, tc, -ENXIO);
		c->full = c->wce = c->close_check = false;
		return false;
	}
	tc->held_fd = c->fd;
	if (c->arm_smart)
		arm_smart_events(c);
	/* its Get Features 06h go through its admin queue: the mark the
	 * kprobes name it by (the fast path learns it in this window) */
	vwc_fast_learn_begin(wr->src.fast, c->instance);
	if (vwc_model_plan(&wr->model, c) == VWC_MODEL_PROBE_FULL) {
		vwc_probe_ctrl(&wr->run, tc);
		full = true;
		*bits |= c->own_bits;
		c->own_bits = false;
	} else {
		vwc_probe_ctrl_wce(&wr->run, tc);
	}
	vwc_fast_learn_end(wr->src.fast);
	vwc_model_confirm(c, tc->facts.wce);
	/* a Set Features 06h in flight: the cache may be on */
	if (c->nr_pending && tc->facts.wce != VWC_TRI_UNKNOWN) {
		tc->facts.wce = VWC_TRI_UNKNOWN;
		tc->decision = vwc_policy_decide(&tc->facts);
	}
	c->full = c->wce = c->close_check = false;
	c->used_at = vwc_watch_now();
	return full;
}

/*
 * When to try the writers' lock again: LOCK_RETRY after another writer's
 * hold; after an error of the run directory (full, read-only, refused),
 * which goes only when an admin acts, LOCK_RETRY doubled at each failure
 * in a row up to LOCK_RETRY_MAX, so that the log is not flooded.
 */
static double lock_retry_in(struct vwc_sidecar *wr)
{
	double in = LOCK_RETRY;
	int i;

	if (wr->run.lock_err == -ETIMEDOUT) {
		wr->lock_fails = 0;
		return in;
	}
	for (i = 0; i < wr->lock_fails && in < LOCK_RETRY_MAX; i++)
		in *= 2;
	wr->lock_fails++;
	return in < LOCK_RETRY_MAX ? in : LOCK_RETRY_MAX;
}

/*
 * Probe and apply for controller @ci (its namespaces, and every other
 * controller reaching them). vwc_run_apply() writes write back at once,
 * with no lock, and write through under the writers' lock on WCE read
 * again under it; the sidecar never waits for that lock (lock_wait_ms 0):
 * held by someone else, the namespaces keep their mode and the controller
 * is evaluated again LOCK_RETRY later. One controller a hold: udev's runs
 * for other controllers never wait for a whole host's pass.
 */
static void evaluate_ctrl(struct vwc_sidecar *wr, int ci)
{
	struct vwc_topo *t = &wr->run.topo;
	double held = vwc_lock_longest_ms(), t0 = vwc_watch_cpu_now();
	bool full = false, bits = false, republish = false, clean;
	int i;

	wr->model.evaluations++;
	for (i = 0; i < t->nr_ctrls; i++)
		t->ctrls[i].wanted = false;
	for (i = 0; i < t->nr_ns; i++)
		t->ns[i].wanted = false;
	vwc_run_select_ctrl(&wr->run, ci);
	for (i = 0; i < t->nr_ctrls; i++)
		if (t->ctrls[i].wanted)
			full |= probe(wr, &t->ctrls[i], &bits);
	/* a full look for what happened (a reset, a reconnect, a new
	 * controller): each namespace's own bit read again too; otherwise,
	 * as the re-checks after it, as carried (one not read is read) */
	for (i = 0; bits && i < t->nr_ns; i++)
		if (t->ns[i].wanted)
			t->ns[i].no_vwc = VWC_TRI_UNKNOWN;
	wr->model.full_evaluations += full;
	vwc_probe_ns(&wr->run);
	wr->run.lock_wait_ms = 0;
	vwc_run_apply(&wr->run);
	note_lock_hold(held);
	if (full)
		vwc_run_irq_coalesce(&wr->run);
	wr->model.publish = true;
	if (wr->run.lock_busy) {
		double in = lock_retry_in(wr);
		char why[160];

		vwc_lock_strerror(wr->run.lock_err, why, sizeof(why));
		if (wr->run.lock_err == -ETIMEDOUT)
			vwc_warn("%s: the writers' lock %s is %s: write through waits, evaluated again in %.0f s",
				 t->ctrls[ci].name, vwc_lock_path(), why, in);
		else
			vwc_err("%s: cannot take the writers' lock %s: %s; write through waits, evaluated again in %.0f s",
				t->ctrls[ci].name, vwc_lock_path(), why, in);
		wr->model.lock_retry = vwc_watch_now() + in;
	} else {
		wr->lock_fails = 0;
		wr->model.lock_retry = 0;
	}
	clean = !wr->run.lock_busy;

	/* every namespace it reaches set (or found) as decided */
	for (i = 0; i < t->nr_ns && clean; i++)
		clean = !t->ns[i].wanted || t->ns[i].action != VWC_ACT_FAILED;
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *tc = &t->ctrls[i];
		struct vwc_wctrl *c;

		/* the few evaluated: the model's walked for those alone */
		if (!tc->wanted ||
		    !(c = vwc_model_find_ctrl(&wr->model, tc->name)))
			continue;
		c->clean = clean && tc->probed;
		if (tc->probed)
			vwc_model_learn(c, tc);
		/* write through waited for the lock: read WCE again then */
		if (wr->run.lock_busy)
			c->wce = true;
	}
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *tn = &t->ns[i];
		struct vwc_wns *n;

		if (tn->wanted)
			vwc_watch_textfile_stale(wr, i);
		if (!tn->wanted || tn->action == VWC_ACT_FAILED)
			continue;
		n = vwc_model_find_ns(&wr->model, tn->name);
		if (!n)
			continue;
		n->expected = tn->kernel_held ? tn->after : tn->decision.mode;
		n->no_vwc = tn->no_vwc;
		/* a namespace the fast path leaves alone has a cache now */
		republish |= n->own_bit && tn->no_vwc != VWC_TRI_YES;
		n->own_bit = tn->no_vwc == VWC_TRI_YES;
	}
	if (republish)
		vwc_watch_publish_fast(wr);
	wr->model.eval_cpu += vwc_watch_cpu_now() - t0;
}

/*
 * @tn's write_cache now (*@cur) against the mode the sidecar last set or
 * found right (*@np's expected). Return: 1 another, 0 that one, -1
 * nothing to compare (no such expectation, write_cache not readable).
 */
static int mode_drift(struct vwc_sidecar *wr, const struct vwc_ns *tn,
		      enum vwc_mode *cur, struct vwc_wns **np)
{
	struct vwc_wns *n = vwc_model_find_ns(&wr->model, tn->name);

	*np = n;
	if (!n || n->expected == VWC_MODE_NONE ||
	    vwc_blk_read(tn->syspath, cur))
		return -1;
	return *cur != n->expected;
}

/* Is every namespace controller @ci reaches in the mode last set? */
static bool modes_as_set(struct vwc_sidecar *wr, int ci)
{
	struct vwc_topo *t = &wr->run.topo;
	struct vwc_wns *n;
	enum vwc_mode cur;
	int i;

	for (i = 0; i < t->nr_ns; i++)
		if (vwc_ns_has_ctrl(&t->ns[i], ci) &&
		    mode_drift(wr, &t->ns[i], &cur, &n))
			return false;
	return true;
}

/*
 * A close check (watch-model.h: vwc_model_close_read()): Get Features 06h
 * alone, through the descriptor held (opened again if let go, the same
 * way a probe does), and the modes of the namespaces it reaches (sysfs
 * only: one another writer changed is set again now, not at the safety
 * net's round). Nothing is sent, and nothing read, when no write through
 * rests on the controller's cache and no run of ours has written one
 * this boot (vwc_model_close_moot()); nothing is sent when the model says
 * that an evaluation is due anyway. Return: true if the controller needs
 * its evaluation.
 */
static bool close_check(struct vwc_sidecar *wr, struct vwc_wctrl *c, int ci)
{
	struct vwc_ctrl *tc = &wr->run.topo.ctrls[ci];
	enum vwc_tri wce = VWC_TRI_UNKNOWN;
	bool on;

	if (vwc_model_close_moot(&wr->model, c, vwc_blk_wt_marked()))
		return false;
	if (!vwc_model_close_reads(&wr->model, c))
		return true;
	if (c->fd < 0 && c->released)
		reopen(wr, c, tc);
	if (c->fd >= 0) {
		vwc_fast_learn_begin(wr->src.fast, c->instance);
		if (!vwc_nvme_get_wce(c->fd, &on))
			wce = on ? VWC_TRI_YES : VWC_TRI_NO;
		vwc_fast_learn_end(wr->src.fast);
		tc->held_fd = c->fd;
		c->used_at = vwc_watch_now();
	}
	if (wce != VWC_TRI_UNKNOWN && !modes_as_set(wr, ci))
		wce = VWC_TRI_UNKNOWN;	/* an evaluation, whatever WCE says */
	return vwc_model_close_read(&wr->model, c, wce);
}

void vwc_watch_evaluate(struct vwc_sidecar *wr)
{
	struct vwc_model *w = &wr->model;
	int i, ci;

	if (w->lock_retry && vwc_watch_now() < w->lock_retry)
		return;
	for (i = 0; i < w->nr_ctrl; i++) {
		struct vwc_wctrl *c = &w->ctrl[i];

		if (!c->full && !c->wce && !c->close_check)
			continue;
		ci = vwc_topo_find_ctrl(&wr->run.topo, c->name);
		if (ci < 0) {		/* gone: the next rescan forgets it */
			c->full = c->wce = c->close_check = false;
			continue;
		}
		if (!c->full && !c->wce) {
			double t0 = vwc_watch_cpu_now();
			bool due = close_check(wr, c, ci);

			w->close_cpu += vwc_watch_cpu_now() - t0;
			if (!due)
				continue;
		}
		evaluate_ctrl(wr, ci);	/* the others too if the lock is busy */
	}
}

void vwc_watch_check_modes(struct vwc_sidecar *wr)
{
	struct vwc_topo *t = &wr->run.topo;
	int i;

	/* the textfile's next write reads every mode again too: a write
	 * of another writer shows there within a round */
	wr->tf_all = true;
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *tn = &t->ns[i];
		struct vwc_wns *n;
		enum vwc_mode cur;

		if (mode_drift(wr, tn, &cur, &n) <= 0)
			continue;
		vwc_info("%s: is %s, expected %s: re-evaluating", tn->name,
			 vwc_mode_str(cur), vwc_mode_str(n->expected));
		vwc_model_note_ns(&wr->model, tn->name);
	}
}

/*
 * gcc 12's -fanalyzer loses what is stored through an array element at a
 * symbolic index and reports it as leaked (as in kmod-table.c): the
 * table goes to vwc_fast_publish(), which owns or frees it.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
/* a namespace the fast path writes back: not ignored, a cache of its own */
static bool fast_wants(const struct vwc_run *run, const struct vwc_ns *ns)
{
	return !ns_ignored(run, ns) && ns->no_vwc != VWC_TRI_YES;
}

/* the table's entry of controller index @c, -1 none (@at: each one's) */
static int entry_of(const struct vwc_topo *t, const int *at, int c)
{
	return c >= 0 && c < t->nr_ctrls ? at[c] : -1;
}

/*
 * @ns's sysfs directory and its paths' into @fn: the array of paths and
 * every string in one allocation (@fn->paths, vwc_fast_free_table()),
 * made again after every scan for each of thousands of namespaces. No
 * memory for it: the directory alone (the head is written back all the
 * same), or nothing (nowhere to write).
 */
static void fast_ns_copy(struct vwc_fast_ns *fn, const struct vwc_ns *ns)
{
	size_t size = (size_t)(ns->nr_paths + 1) * sizeof(*fn->paths), len;
	char *at;
	int p;

	if (ns->syspath)
		size += strlen(ns->syspath) + 1;
	for (p = 0; p < ns->nr_paths; p++)
		size += strlen(ns->path_syspath[p]) + 1;
	fn->paths = malloc(size);
	if (!fn->paths) {
		fn->syspath = ns->syspath ? strdup(ns->syspath) : NULL;
		return;
	}
	at = (char *)(fn->paths + ns->nr_paths + 1);
	fn->syspath = NULL;
	if (ns->syspath) {
		len = strlen(ns->syspath) + 1;
		fn->syspath = memcpy(at, ns->syspath, len);
		at += len;
	}
	for (p = 0; p < ns->nr_paths; p++) {
		len = strlen(ns->path_syspath[p]) + 1;
		fn->paths[p] = memcpy(at, ns->path_syspath[p], len);
		at += len;
	}
	fn->paths[p] = NULL;
	fn->nr_paths = p;
}

/*
 * Each controller's entry gets the namespaces that reach it, in their
 * order. One pass over the namespaces and their few controllers each,
 * not one over every namespace for each controller: 256 controllers and
 * 4,096 namespaces were a million checks at each scan.
 */
struct vwc_fast_ctrl *vwc_watch_fast_table(struct vwc_sidecar *wr, int *nr_out)
{
	struct vwc_topo *t = &wr->run.topo;
	struct vwc_fast_ctrl *tab;
	int i, j, k, e, nr = 0, *at;
	bool *wants;

	*nr_out = 0;
	tab = calloc(t->nr_ctrls + 1, sizeof(*tab));
	/* each controller's entry in @tab, -1 none */
	at = calloc(t->nr_ctrls + 1, sizeof(*at));
	/* each namespace's fast_wants(), asked once (a configuration
	 * lookup for each of its controllers) */
	wants = calloc(t->nr_ns + 1, sizeof(*wants));
	if (!tab || !at || !wants) {
		free(tab);
		free(at);
		free(wants);
		return NULL;
	}
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_wctrl *c = vwc_model_find_ctrl(&wr->model,
							  t->ctrls[i].name);
		struct vwc_fast_ctrl *fc;

		at[i] = -1;
		if (!c)
			continue;
		at[i] = nr;
		fc = &tab[nr++];
		snprintf(fc->name, sizeof(fc->name), "%s", c->name);
		fc->instance = c->instance;
		fc->q = c->admin_q;
	}
	/* how many each gets (counted in nr_ns, then room made) */
	for (j = 0; j < t->nr_ns; j++) {
		struct vwc_ns *ns = &t->ns[j];

		wants[j] = fast_wants(&wr->run, ns);
		if (!wants[j])
			continue;
		for (k = 0; k < ns->nr_ctrl; k++)
			if ((e = entry_of(t, at, ns->ctrl[k])) >= 0)
				tab[e].nr_ns++;
	}
	for (i = 0; i < nr; i++) {
		tab[i].ns = calloc(tab[i].nr_ns + 1, sizeof(*tab[i].ns));
		tab[i].nr_ns = 0;	/* no memory: none, as before */
	}
	for (j = 0; j < t->nr_ns; j++) {
		struct vwc_ns *ns = &t->ns[j];

		if (!wants[j])
			continue;
		for (k = 0; k < ns->nr_ctrl; k++) {
			struct vwc_fast_ctrl *fc;
			struct vwc_fast_ns *fn;

			if ((e = entry_of(t, at, ns->ctrl[k])) < 0)
				continue;
			fc = &tab[e];
			if (!fc->ns)
				continue;
			fn = &fc->ns[fc->nr_ns++];
			/* the same size, ended within: no snprintf() for each
			 * of thousands at every scan */
			_Static_assert(sizeof(fn->name) == sizeof(ns->name),
				       "a namespace's name as the topology's");
			memcpy(fn->name, ns->name, sizeof(fn->name));
			fast_ns_copy(fn, ns);
		}
	}
	free(at);
	free(wants);
	*nr_out = nr;
	return tab;
}

void vwc_watch_publish_fast(struct vwc_sidecar *wr)
{
	struct vwc_fast_ctrl *tab;
	int nr;

	if (!wr->src.fast)
		return;
	tab = vwc_watch_fast_table(wr, &nr);
	if (tab)
		vwc_fast_publish(wr->src.fast, tab, nr);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
