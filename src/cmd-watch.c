// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch: the sidecar. Keeps the topology it found (re-discovered only on
 * udev add/remove events) and reacts per controller: an event on nvme3
 * costs one Get Features 06h to nvme3 and the sysfs writes that differ.
 *
 * What makes a controller's cache state worth a look:
 *  - kernel side (kwatch.c): an admin Set Features seen on the nvme
 *    tracepoints, whatever path sent it (a held descriptor, /dev/ngXnY,
 *    io_uring passthrough). Feature 06h with WCE=1 puts the controller's
 *    namespaces in write back at once, before the drive has even
 *    completed the command; until the completion is seen, no evaluation
 *    of that controller may choose write through; after it, WCE is read
 *    again.
 *  - udev: controller and namespace add/remove (hotplug, rescan), change
 *    events (NVME_EVENT=connected after a reset, NVME_AEN for SMART);
 *    change events are also taken from the kernel's netlink group, as
 *    soon as the kernel sends them, without waiting for udevd's rules;
 *  - inotify IN_CLOSE on /dev/nvmeN, /dev/nvmeNnM and /dev/ngNnM: any
 *    process that sent a passthrough command closes the node afterwards
 *    (the fallback where the tracepoints cannot be used);
 *  - inotify IN_CLOSE_WRITE on reset_controller and rescan_controller,
 *    then re-checks at 0.3 s, 1.5 s and 5 s, since the kernel's scan work
 *    runs asynchronously (6.1 puts write_cache back to write back);
 *  - a safety net every --interval seconds (default 60): write_cache
 *    compared to the last decision and Get Features 06h, only to
 *    controllers that report a cache.
 *
 * Every evaluation holds the writers' lock (lock.h). The daemon sends its
 * own commands through descriptors it keeps open, so they raise no close
 * events; its own Get Features are not Set Features, and its Set Features
 * 0Bh (SMART events) is not feature 06h: it cannot wake itself in a loop.
 * No fixed limits: every controller, namespace and path the host has.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "kwatch.h"
#include "lock.h"
#include "log.h"
#include "nvme-io.h"
#include "report.h"

#define SETTLE_N		3
#define PENDING_TIMEOUT		2.0	/* s: a completion never seen */
#define LOCK_RETRY		1.0	/* s: after the lock could not be had */

static const double settle_delay[SETTLE_N] = { 0.3, 1.5, 5.0 };

struct watched_ctrl {
	char name[VWC_NAME_LEN];
	int instance;			/* N of nvmeN */
	int fd;
	bool full;			/* needs Identify, WCE and SMART */
	bool wce;			/* needs Get Features 06h */
	bool known;			/* facts below are valid */
	struct vwc_facts facts;
	uint8_t vwc, critical_warning;
	double settle[SETTLE_N];	/* pending re-checks, 0 none */
	uint16_t *pending;		/* Set Features 06h not completed */
	int nr_pending;
	double pending_since;
	bool seen;			/* in the latest topology */
};

struct watched_ns {
	char name[VWC_NAME_LEN];
	enum vwc_mode expected;
	bool seen;
};

struct wd_entry {
	int wd;
	char name[VWC_NAME_LEN];	/* nvme0, nvme0n1 (also for ng0n1) */
	bool ctl_file;			/* reset_controller/rescan_controller */
};

struct watch {
	struct vwc_run run;		/* the topology, kept between events */
	bool rescan;
	int ifd;
	struct vwc_kwatch *kw;
	struct watched_ctrl *ctrl;
	int nr_ctrl;
	struct watched_ns *ns;
	int nr_ns;
	struct wd_entry *wds;
	int nr_wds;
	bool inotify_full_warned;
	double lock_retry;		/* 0, or when to try again */
	const char *textfile;		/* node_exporter textfile, or NULL */
	bool publish;			/* something was seen: rewrite it */
	unsigned long events, evaluations, kernel_events;
};

/* Grow *arr (of *nr elements of size sz) by one zeroed element. */
static void *grow(void *arr_p, int *nr, size_t sz)
{
	void **arr = arr_p;
	char *p = realloc(*arr, (*nr + 1) * sz);

	if (!p)
		return NULL;
	*arr = p;
	memset(p + *nr * sz, 0, sz);
	return p + (*nr)++ * sz;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct watched_ctrl *find_ctrl(struct watch *w, const char *name)
{
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		if (!strcmp(w->ctrl[i].name, name))
			return &w->ctrl[i];
	return NULL;
}

static struct watched_ctrl *find_instance(struct watch *w, int instance)
{
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		if (w->ctrl[i].instance == instance)
			return &w->ctrl[i];
	return NULL;
}

static struct watched_ns *find_ns(struct watch *w, const char *name)
{
	int i;

	for (i = 0; i < w->nr_ns; i++)
		if (!strcmp(w->ns[i].name, name))
			return &w->ns[i];
	return NULL;
}

static void add_wd(struct watch *w, const char *path, const char *name,
		   bool ctl_file)
{
	uint32_t mask = ctl_file ? IN_CLOSE_WRITE :
				   IN_CLOSE_WRITE | IN_CLOSE_NOWRITE;
	struct wd_entry *e;
	int wd, i;

	wd = inotify_add_watch(w->ifd, path, mask);
	if (wd < 0) {
		if (errno == ENOSPC && !w->inotify_full_warned) {
			vwc_warn("cannot watch %s: inotify watch limit reached (fs.inotify.max_user_watches); close events of further devices are missed, the nvme tracepoints and the safety net still see them",
				 path);
			w->inotify_full_warned = true;
		} else {
			vwc_dbg("cannot watch %s: %s", path, strerror(errno));
		}
		return;
	}
	for (i = 0; i < w->nr_wds; i++)
		if (w->wds[i].wd == wd)
			return;
	e = grow(&w->wds, &w->nr_wds, sizeof(*e));
	if (!e) {
		inotify_rm_watch(w->ifd, wd);
		return;
	}
	e->wd = wd;
	e->ctl_file = ctl_file;
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static void drop_wds_of(struct watch *w, const char *name)
{
	int j;

	for (j = 0; j < w->nr_wds; j++)
		if (!strcmp(w->wds[j].name, name)) {
			inotify_rm_watch(w->ifd, w->wds[j].wd);
			w->wds[j--] = w->wds[--w->nr_wds];
		}
}

/* Re-enable SMART critical warning events (the kernel leaves them off). */
static void arm_smart_events(struct watched_ctrl *c)
{
	uint32_t aec;
	char buf[128];
	int r;

	if (c->fd <= 0)
		return;
	r = vwc_nvme_get_aec(c->fd, &aec);
	if (!r && (aec & 0xff) != 0xff)
		r = vwc_nvme_set_aec(c->fd, aec | 0xff);
	if (r)
		vwc_info("%s: cannot enable SMART critical warning events: %s",
			 c->name, vwc_nvme_strerror(r, buf, sizeof(buf)));
}

static void schedule_settle(struct watched_ctrl *c)
{
	double t = now_s();
	int i;

	for (i = 0; i < SETTLE_N; i++)
		c->settle[i] = t + settle_delay[i];
}

/* The controllers reaching namespace @ns_name need WCE read again. */
static void mark_ns_ctrls(struct watch *w, const char *ns_name)
{
	const struct vwc_topo *t = &w->run.topo;
	int i = vwc_topo_find_ns(t, ns_name), j;

	if (i < 0)
		return;
	for (j = 0; j < t->ns[i].nr_ctrl; j++) {
		struct watched_ctrl *c =
			find_ctrl(w, t->ctrls[t->ns[i].ctrl[j]].name);

		if (c)
			c->wce = true;
	}
}

static void forget_ctrl(struct watch *w, int i)
{
	struct watched_ctrl *c = &w->ctrl[i];

	if (c->fd > 0)
		close(c->fd);
	free(c->pending);
	c->pending = NULL;
	drop_wds_of(w, c->name);
	/* the last entry moves into the hole, its slot is cleared */
	w->ctrl[i] = w->ctrl[--w->nr_ctrl];
	memset(&w->ctrl[w->nr_ctrl], 0, sizeof(*w->ctrl));
}

/*
 * Bring the watch set in line with the run's topology, and hand the
 * known facts and held descriptors to the topology's controllers.
 */
static void sync_watchset(struct watch *w)
{
	struct vwc_topo *t = &w->run.topo;
	char path[VWC_PATH_LEN + 32];
	unsigned int a, b;
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].seen = false;
	for (i = 0; i < w->nr_ns; i++)
		w->ns[i].seen = false;

	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *tc = &t->ctrls[i];
		struct watched_ctrl *c = find_ctrl(w, tc->name);

		if (!c) {
			c = grow(&w->ctrl, &w->nr_ctrl, sizeof(*c));
			if (!c) {
				vwc_err("%s: out of memory: not watched", tc->name);
				continue;
			}
			snprintf(c->name, sizeof(c->name), "%s", tc->name);
			if (sscanf(c->name, "nvme%d", &c->instance) != 1)
				c->instance = -1;
			c->fd = vwc_nvme_open(tc->devnode);
			if (c->fd < 0)
				vwc_warn("%s: cannot open %s: %s", c->name,
					 tc->devnode, strerror(-c->fd));
			else
				arm_smart_events(c);
			c->full = true;
			add_wd(w, tc->devnode, tc->name, false);
			snprintf(path, sizeof(path), "%s/reset_controller",
				 tc->syspath);
			add_wd(w, path, tc->name, true);
			snprintf(path, sizeof(path), "%s/rescan_controller",
				 tc->syspath);
			add_wd(w, path, tc->name, true);
			vwc_info("%s: watching", c->name);
		}
		c->seen = true;
		tc->held_fd = c->fd;
		if (c->known) {
			tc->probed = true;
			tc->facts = c->facts;
			tc->vwc = c->vwc;
			tc->critical_warning = c->critical_warning;
			tc->decision = vwc_policy_decide(&tc->facts);
		}
	}
	for (i = 0; i < t->nr_ns; i++) {
		struct watched_ns *n = find_ns(w, t->ns[i].name);

		if (n) {
			n->seen = true;
			continue;
		}
		n = grow(&w->ns, &w->nr_ns, sizeof(*n));
		if (!n) {
			vwc_err("%s: out of memory: not watched", t->ns[i].name);
			continue;
		}
		n->seen = true;
		snprintf(n->name, sizeof(n->name), "%s", t->ns[i].name);
		snprintf(path, sizeof(path), "/dev/%s", n->name);
		add_wd(w, path, n->name, false);
		if (sscanf(n->name, "nvme%un%u", &a, &b) == 2) {
			snprintf(path, sizeof(path), "/dev/ng%un%u", a, b);
			add_wd(w, path, n->name, false);
		}
		/* a new namespace: its controllers decide for it */
		mark_ns_ctrls(w, n->name);
	}
	/* forget what is gone; inotify drops its watches by itself */
	for (i = 0; i < w->nr_ctrl; i++)
		if (!w->ctrl[i].seen) {
			vwc_info("%s: gone", w->ctrl[i].name);
			forget_ctrl(w, i--);
		}
	for (i = 0; i < w->nr_ns; i++) {
		if (w->ns[i].seen)
			continue;
		drop_wds_of(w, w->ns[i].name);
		w->ns[i--] = w->ns[--w->nr_ns];
	}
}

static void rescan(struct watch *w)
{
	int r = vwc_run_rescan(&w->run);

	if (r) {
		vwc_err("cannot scan NVMe devices: %s", strerror(-r));
		return;
	}
	w->rescan = false;
	sync_watchset(w);
	vwc_info("topology: %d controller(s), %d namespace(s)",
		 w->run.topo.nr_ctrls, w->run.topo.nr_ns);
}

static bool take_lock(struct watch *w)
{
	int r = vwc_lock_take(VWC_LOCK_TIMEOUT_MS);
	char why[160];

	if (!r)
		return true;
	vwc_err("cannot take the writers' lock %s: %s; trying again in %.0f s",
		vwc_lock_path(), vwc_lock_strerror(r, why, sizeof(why)),
		LOCK_RETRY);
	w->lock_retry = now_s() + LOCK_RETRY;
	return false;
}

static void release_lock(void)
{
	double before = vwc_lock_longest_ms();

	vwc_lock_release();
	if (vwc_lock_longest_ms() > before)
		vwc_info("longest hold of the writers' lock so far: %.1f ms",
			 vwc_lock_longest_ms());
}

/*
 * A Set Features 06h with WCE=1 was submitted to @c: the safe direction
 * at once, without waiting for the drive or the writers' lock (lock.h).
 */
static void write_back_now(struct watch *w, struct watched_ctrl *c)
{
	struct vwc_topo *t = &w->run.topo;
	int ci = vwc_topo_find_ctrl(t, c->name), i;

	if (ci < 0)
		return;
	vwc_run_write_back(&w->run, ci);
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		struct watched_ns *n;

		if (!vwc_ns_has_ctrl(ns, ci) || ns->action == VWC_ACT_FAILED ||
		    ns->decision.mode != VWC_MODE_WRITE_BACK)
			continue;
		n = find_ns(w, ns->name);
		if (n)
			n->expected = VWC_MODE_WRITE_BACK;
	}
	w->publish = true;
}

/*
 * The node_exporter textfile: what "audit -o prometheus" prints, from the
 * facts the sidecar holds and write_cache as it reads now, plus the time
 * of writing. Written to a temporary file in the same directory, then
 * renamed over the old one: a scrape sees the old file or the new one.
 */
static void write_textfile(struct watch *w)
{
	struct vwc_topo *t = &w->run.topo;
	char tmp[VWC_PATH_LEN + 16];
	struct timespec now;
	FILE *f;
	int i, fd;

	if (!w->textfile)
		return;
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		int j;

		/* only what the sidecar has facts for */
		ns->wanted = ns->nr_ctrl > 0;
		for (j = 0; j < ns->nr_ctrl; j++)
			ns->wanted &= t->ctrls[ns->ctrl[j]].probed;
		if (!ns->wanted)
			continue;
		ns->decision = vwc_ns_decision(&w->run, ns);
		if (vwc_blk_hold(ns->name, VWC_HOLD_TEST) > 0)
			ns->decision = vwc_policy_restored(ns->decision);
		ns->action = vwc_blk_read(ns->syspath, &ns->after) ?
			     VWC_ACT_FAILED : VWC_ACT_UNCHANGED;
		ns->before = ns->after;
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", w->textfile);
	fd = mkstemp(tmp);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		vwc_err("cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fchmod(fd, 0644);
	vwc_report_print(&w->run, VWC_FMT_PROMETHEUS, f);
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(f, "# HELP nvme_vwc_sync_textfile_timestamp_seconds When the sidecar wrote this file (at start, on every change it makes or sees, and every safety-net round).\n"
		"# TYPE nvme_vwc_sync_textfile_timestamp_seconds gauge\n"
		"nvme_vwc_sync_textfile_timestamp_seconds %.3f\n",
		(double)now.tv_sec + (double)now.tv_nsec / 1e9);
	if (fflush(f) || fsync(fd) || ferror(f)) {
		vwc_err("cannot write %s: %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		return;
	}
	fclose(f);
	if (rename(tmp, w->textfile) < 0) {
		vwc_err("cannot rename %s to %s: %s", tmp, w->textfile,
			strerror(errno));
		unlink(tmp);
	}
}

/*
 * Probe and apply for controller @ci (its namespaces, and their multipath
 * peers where those need a look too) under the writers' lock. One
 * controller a hold: udev's runs for other controllers never wait for a
 * whole host's pass.
 *
 * Return: false if the lock could not be had.
 */
static bool evaluate_ctrl(struct watch *w, int ci)
{
	struct vwc_topo *t = &w->run.topo;
	bool full = false;
	int i;

	if (!take_lock(w))
		return false;
	w->lock_retry = 0;
	w->evaluations++;
	for (i = 0; i < t->nr_ctrls; i++)
		t->ctrls[i].wanted = false;
	for (i = 0; i < t->nr_ns; i++)
		t->ns[i].wanted = false;
	vwc_run_select_ctrl(&w->run, ci);
	/* the controller, and the peers that need a look or were never probed */
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *tc = &t->ctrls[i];
		struct watched_ctrl *c = find_ctrl(w, tc->name);

		if (!tc->wanted || !c)
			continue;
		/*
		 * WCE alone only while the rest is known and clean: a backup
		 * failure clears without any event, so while one is reported
		 * (or unknown) every look reads SMART again; after an admin
		 * command failed, a full probe also clears the stale error.
		 */
		if (c->full || !c->known || tc->errmsg[0] ||
		    c->facts.present == VWC_TRI_UNKNOWN ||
		    c->facts.backup_failed != VWC_TRI_NO) {
			vwc_probe_ctrl(&w->run, tc);
			full = true;
		} else if (c->wce) {
			vwc_probe_ctrl_wce(&w->run, tc);
		}
		/* a Set Features 06h in flight: the cache may be on */
		if (c->nr_pending && tc->facts.wce != VWC_TRI_UNKNOWN) {
			tc->facts.wce = VWC_TRI_UNKNOWN;
			tc->decision = vwc_policy_decide(&tc->facts);
		}
		c->full = c->wce = false;
	}
	vwc_run_apply(&w->run);
	if (full)
		vwc_run_irq_coalesce(&w->run);
	release_lock();
	w->publish = true;

	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *tc = &t->ctrls[i];
		struct watched_ctrl *c = find_ctrl(w, tc->name);

		if (!c || !tc->wanted || !tc->probed)
			continue;
		c->known = !tc->err;
		c->facts = tc->facts;
		c->vwc = tc->vwc;
		c->critical_warning = tc->critical_warning;
	}
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *tn = &t->ns[i];
		struct watched_ns *n;

		if (!tn->wanted || tn->action == VWC_ACT_FAILED)
			continue;
		n = find_ns(w, tn->name);
		if (n)
			n->expected = tn->decision.mode;
	}
	return true;
}

/* Probe and apply for every controller that needs it, one at a time. */
static void evaluate(struct watch *w)
{
	int i, ci;

	if (w->lock_retry && now_s() < w->lock_retry)
		return;
	for (i = 0; i < w->nr_ctrl; i++) {
		struct watched_ctrl *c = &w->ctrl[i];

		if (!c->full && !c->wce)
			continue;
		ci = vwc_topo_find_ctrl(&w->run.topo, c->name);
		if (ci < 0) {		/* gone: the next rescan forgets it */
			c->full = c->wce = false;
			continue;
		}
		if (!evaluate_ctrl(w, ci))
			return;
	}
}

static void on_kernel_event(void *arg, const struct vwc_kw_event *ev)
{
	struct watch *w = arg;
	struct watched_ctrl *c;
	uint16_t *p;
	int i;

	w->kernel_events++;
	if (ev->kind == VWC_KW_LOST) {
		vwc_warn("nvme tracepoint events lost: reading every cache state again");
		for (i = 0; i < w->nr_ctrl; i++)
			w->ctrl[i].wce = true;
		return;
	}
	c = find_instance(w, ev->ctrl);
	if (!c)
		return;
	if (ev->kind == VWC_KW_SET_FEATURES) {
		if (ev->fid != 0x06)
			return;
		vwc_info("%s: Set Features 06h WCE=%u submitted (cid %u)",
			 c->name, ev->cdw11 & 1, ev->cid);
		p = realloc(c->pending, (c->nr_pending + 1) * sizeof(*p));
		if (p) {
			c->pending = p;
			c->pending[c->nr_pending++] = ev->cid;
			c->pending_since = now_s();
		}
		if (ev->cdw11 & 1)
			write_back_now(w, c);
		c->wce = true;
		return;
	}
	for (i = 0; i < c->nr_pending; i++) {
		if (c->pending[i] != ev->cid)
			continue;
		c->pending[i] = c->pending[--c->nr_pending];
		c->wce = true;
		vwc_info("%s: Set Features 06h completed (cid %u)", c->name,
			 ev->cid);
		break;
	}
}

static void on_inotify(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	char *p;
	int i;

	while ((len = read(w->ifd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			w->events++;
			for (i = 0; i < w->nr_wds; i++) {
				struct watched_ctrl *c;

				if (w->wds[i].wd != ev->wd)
					continue;
				if (ev->mask & IN_IGNORED) {
					w->wds[i] = w->wds[--w->nr_wds];
					break;
				}
				c = find_ctrl(w, w->wds[i].name);
				if (!c) {
					mark_ns_ctrls(w, w->wds[i].name);
				} else if (w->wds[i].ctl_file) {
					vwc_info("%s: reset or rescan requested",
						 c->name);
					c->full = true;
					schedule_settle(c);
				} else {
					c->wce = true;
				}
				break;
			}
		}
	}
}

/*
 * @kernel: from the kernel's own netlink group, before udevd has run its
 * rules (hundreds of milliseconds earlier under load): only change events
 * are taken from there; add and remove wait for udevd's.
 */
static void on_udev(struct watch *w, struct udev_monitor *mon, bool kernel)
{
	struct udev_device *dev;

	while ((dev = udev_monitor_receive_device(mon))) {
		const char *action, *sysname, *aen, *event;
		char name[VWC_NAME_LEN];
		struct watched_ctrl *c;
		enum vwc_kind kind;

		w->events++;
		action = udev_device_get_action(dev);
		action = action ? action : "?";
		sysname = udev_device_get_sysname(dev);
		kind = vwc_name_classify(sysname, name, sizeof(name));
		aen = udev_device_get_property_value(dev, "NVME_AEN");
		event = udev_device_get_property_value(dev, "NVME_EVENT");
		if (kernel && strcmp(action, "change")) {
			udev_device_unref(dev);
			continue;
		}
		vwc_info("%s %s %s%s%s%s%s", kernel ? "kernel uevent" : "uevent",
			 action, sysname,
			 aen ? " NVME_AEN=" : "", aen ? aen : "",
			 event ? " NVME_EVENT=" : "", event ? event : "");

		if (!strcmp(action, "add") || !strcmp(action, "remove")) {
			/* topology changes come from udev: rediscover */
			if (kind == VWC_KIND_CTRL || kind == VWC_KIND_NS ||
			    kind == VWC_KIND_PATH)
				w->rescan = true;
		} else if (kind == VWC_KIND_CTRL) {
			c = find_ctrl(w, name);
			if (c) {
				/* Identify and SMART again: firmware activation
				 * and backup failures come this way */
				c->full = true;
				if (event || !aen) {
					schedule_settle(c);
					arm_smart_events(c);
				}
			} else {
				w->rescan = true;
			}
		} else if (kind == VWC_KIND_NS || kind == VWC_KIND_PATH) {
			mark_ns_ctrls(w, name);
		}
		udev_device_unref(dev);
	}
}

/* The periodic safety net: write_cache against the last decision, and WCE. */
static void safety_net(struct watch *w)
{
	struct vwc_topo *t = &w->run.topo;
	int i;

	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *tn = &t->ns[i];
		struct watched_ns *n = find_ns(w, tn->name);
		enum vwc_mode cur;

		if (!n || n->expected == VWC_MODE_NONE ||
		    vwc_blk_read(tn->syspath, &cur) || cur == n->expected)
			continue;
		vwc_info("%s: is %s, expected %s: re-evaluating", tn->name,
			 vwc_mode_str(cur), vwc_mode_str(n->expected));
		mark_ns_ctrls(w, tn->name);
	}
	/* Get Features 06h only to controllers that report a cache */
	for (i = 0; i < w->nr_ctrl; i++) {
		struct watched_ctrl *c = &w->ctrl[i];

		if (!c->known || c->facts.present == VWC_TRI_YES)
			c->wce = true;
	}
}

/* Timers: settle re-checks and Set Features whose completion never came. */
static double run_timers(struct watch *w, double t)
{
	double due = 0;
	int i, j;

	for (i = 0; i < w->nr_ctrl; i++) {
		struct watched_ctrl *c = &w->ctrl[i];

		for (j = 0; j < SETTLE_N; j++) {
			if (!c->settle[j])
				continue;
			if (c->settle[j] <= t) {
				c->settle[j] = 0;
				c->full = true;
				/* the kernel rewrites 0Bh when it resets */
				arm_smart_events(c);
			} else if (!due || c->settle[j] < due) {
				due = c->settle[j];
			}
		}
		if (!c->nr_pending)
			continue;
		if (c->pending_since + PENDING_TIMEOUT <= t) {
			vwc_info("%s: no completion seen for %d Set Features 06h: reading WCE",
				 c->name, c->nr_pending);
			c->nr_pending = 0;
			c->wce = true;
		} else if (!due || c->pending_since + PENDING_TIMEOUT < due) {
			due = c->pending_since + PENDING_TIMEOUT;
		}
	}
	if (w->lock_retry && (!due || w->lock_retry < due))
		due = w->lock_retry;
	return due;
}

/*
 * sd_notify(3)'s protocol, which systemd documents as stable for programs
 * that do not link libsystemd: one datagram to $NOTIFY_SOCKET, a path or
 * ('@') an abstract name. Nothing to do when not started by systemd.
 */
static void notify_systemd(const char *state)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	size_t n;
	int fd;

	if (!e || (e[0] != '/' && e[0] != '@'))
		return;
	n = strlen(e);
	if (n >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, e, n);
	if (e[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + n;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, len) < 0)
		vwc_notice("watch: cannot notify systemd (%s): %s", e,
			   strerror(errno));
	close(fd);
}

static void watch_free(struct watch *w)
{
	while (w->nr_ctrl)
		forget_ctrl(w, 0);
	free(w->ctrl);
	free(w->ns);
	free(w->wds);
	vwc_kwatch_close(w->kw);
	if (w->ifd >= 0)
		close(w->ifd);
	vwc_run_free(&w->run);
}

int cmd_watch(int argc, char **argv)
{
	struct udev_monitor *mon = NULL, *kmon = NULL;
	struct pollfd *pfd = NULL;
	struct vwc_config cfg;
	struct watch w;
	struct vwc_opts o;
	sigset_t mask;
	double next_net, period;
	char why[300];
	int sfd = -1, ret = VWC_EXIT_ERROR, npfd, r;

	if (vwc_opts_parse(argc, argv, &o, "watch"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s watch [--interval=<seconds>] [--textfile=<file>] [--config=<file>] [-v]\n\n"
		       "Sidecar: keep every NVMe namespace's write cache mode right when the\n"
		       "controller's cache state can change (Set Features 06h by any process,\n"
		       "seen on the nvme tracepoints where the kernel allows, controller reset,\n"
		       "namespace rescan, hotplug, SMART events). Event driven; a safety net\n"
		       "every --interval seconds (default 60) compares write_cache and sends\n"
		       "only Get Features 06h to controllers that report a cache.\n"
		       "--textfile: keep a node_exporter textfile (audit -o prometheus) up to\n"
		       "date at start, on every change and every safety-net round.\n"
		       "Stops on SIGTERM or SIGINT.\n", vwc_prog);
		return 0;
	}
	period = o.interval_set ? o.interval : 60.0;
	if (!o.verbose)
		vwc_log_level = LOG_NOTICE;
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;

	memset(&w, 0, sizeof(w));
	w.ifd = -1;
	w.textfile = o.textfile;
	r = vwc_run_init(&w.run, "watch", &cfg);
	if (r) {
		vwc_err("watch: cannot scan NVMe devices: %s", strerror(-r));
		return VWC_EXIT_ERROR;
	}
	w.run.keep_restored = true;
	w.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w.ifd < 0 || sfd < 0) {
		vwc_err("watch: cannot set up: %s", strerror(errno));
		goto out;
	}
	mon = udev_monitor_new_from_netlink(w.run.udev, "udev");
	if (!mon ||
	    udev_monitor_filter_add_match_subsystem_devtype(mon, "nvme", NULL) ||
	    udev_monitor_filter_add_match_subsystem_devtype(mon, "block", "disk") ||
	    udev_monitor_enable_receiving(mon)) {
		vwc_err("watch: cannot listen to udev events");
		goto out;
	}
	udev_monitor_set_receive_buffer_size(mon, 4 * 1024 * 1024);
	/* the kernel's events too: a SMART warning is seen before udevd ran */
	kmon = udev_monitor_new_from_netlink(w.run.udev, "kernel");
	if (!kmon ||
	    udev_monitor_filter_add_match_subsystem_devtype(kmon, "nvme", NULL) ||
	    udev_monitor_enable_receiving(kmon)) {
		vwc_notice("watch: cannot listen to the kernel's uevents: waiting for udevd's");
		if (kmon)
			udev_monitor_unref(kmon);
		kmon = NULL;
	}
	r = vwc_kwatch_open(&w.kw, why, sizeof(why));
	if (r)
		vwc_notice("kernel-side Set Features detection unavailable (%s): relying on close events, udev and the safety net",
			   why);
	npfd = 4 + vwc_kwatch_nr_fds(w.kw);
	pfd = calloc(npfd, sizeof(*pfd));
	if (!pfd) {
		vwc_err("watch: out of memory");
		goto out;
	}
	pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = udev_monitor_get_fd(mon), .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = w.ifd, .events = POLLIN };
	/* poll ignores a negative descriptor */
	pfd[3] = (struct pollfd){ .fd = kmon ? udev_monitor_get_fd(kmon) : -1,
				  .events = POLLIN };
	vwc_kwatch_pollfds(w.kw, pfd + 4, npfd - 4);

	/* everything present now is new: evaluated once at start */
	sync_watchset(&w);
	evaluate(&w);
	write_textfile(&w);
	w.publish = false;
	vwc_notice("watching %d controller(s), %d namespace(s)%s, safety net every %.0f s",
		   w.nr_ctrl, w.nr_ns,
		   w.kw ? ", Set Features seen on the nvme tracepoints" : "",
		   period);
	next_net = now_s() + period;
	/*
	 * Type=notify: the service is started, and multi-user.target can be
	 * reached, only once every namespace present has its mode.
	 */
	notify_systemd("READY=1\nSTATUS=first pass done: watching");

	for (;;) {
		double t = now_s(), due;
		int timeout, i;

		due = run_timers(&w, t);
		if (!due || next_net < due)
			due = next_net;
		timeout = due <= t ? 0 : (int)((due - t) * 1000) + 1;
		if (poll(pfd, npfd, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) > 0) {
				vwc_notice("signal %u: stopping (%lu events, %lu kernel events, %lu evaluations, longest hold of the writers' lock %.1f ms)",
					   si.ssi_signo, w.events,
					   w.kernel_events, w.evaluations,
					   vwc_lock_longest_ms());
				notify_systemd("STOPPING=1");
				ret = VWC_EXIT_OK;
				break;
			}
		}
		/* the kernel's word first: it may call for write back now */
		for (i = 4; i < npfd; i++)
			if (pfd[i].revents & POLLIN) {
				vwc_kwatch_read(w.kw, on_kernel_event, &w);
				break;
			}
		if (pfd[3].revents & POLLIN)
			on_udev(&w, kmon, true);
		if (pfd[1].revents & POLLIN)
			on_udev(&w, mon, false);
		if (pfd[2].revents & POLLIN)
			on_inotify(&w);
		if (w.rescan)
			rescan(&w);
		t = now_s();
		run_timers(&w, t);
		if (t >= next_net) {
			safety_net(&w);
			next_net = t + period;
			w.publish = true;	/* also the heartbeat */
		}
		evaluate(&w);
		if (w.publish) {
			write_textfile(&w);
			w.publish = false;
		}
	}
out:
	free(pfd);
	if (mon)
		udev_monitor_unref(mon);
	if (kmon)
		udev_monitor_unref(kmon);
	if (sfd >= 0)
		close(sfd);
	watch_free(&w);
	return ret;
}
