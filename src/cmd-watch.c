// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch: the sidecar. Re-applies the policy for a controller whenever its
 * cache state can have changed, driven by events:
 *
 *  - udev: controller and namespace add/remove (hotplug, rescan), change
 *    events (NVME_EVENT=connected after a reset, NVME_AEN for SMART);
 *  - inotify IN_CLOSE on /dev/nvmeN, /dev/nvmeNnM and /dev/ngNnM: any
 *    process that sent a passthrough command (e.g. "nvme set-feature -f 6")
 *    closes the node afterwards;
 *  - inotify IN_CLOSE_WRITE on reset_controller and rescan_controller;
 *  - after a reset or rescan, re-checks at 0.3 s, 1.5 s and 5 s, since
 *    the kernel's scan work runs asynchronously (6.1 puts write_cache
 *    back to write back when it does);
 *  - a safety net every --interval seconds (default 60): write_cache
 *    compared to the last decision (sysfs only) and Get Features 06h,
 *    only to controllers that report a cache, through held file
 *    descriptors. Nothing else is polled.
 *
 * The daemon sends its own commands through descriptors it keeps open,
 * so its accesses raise no close events and cannot wake it in a loop.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "log.h"
#include "nvme-io.h"

#define WATCH_MAX	256
#define SETTLE_N	3

static const double settle_delay[SETTLE_N] = { 0.3, 1.5, 5.0 };

struct watched_ctrl {
	char name[VWC_NAME_LEN];
	int fd;
	bool present;		/* last probe: cache present */
	int wce;		/* last known WCE, -1 unknown */
	bool dirty;
	double settle[SETTLE_N];	/* pending re-checks, 0 none */
	bool seen;		/* in the latest topology */
};

struct watched_ns {
	char name[VWC_NAME_LEN];
	enum vwc_mode expected;
	bool seen;
};

struct wd_entry {
	int wd;
	char name[VWC_NAME_LEN];	/* nvme0, nvme0n1, ng0n1 */
	bool ctl_file;			/* reset_controller/rescan_controller */
};

struct watch {
	struct udev *udev;
	const struct vwc_config *cfg;
	int ifd;
	struct watched_ctrl ctrl[WATCH_MAX];
	int nr_ctrl;
	struct watched_ns ns[WATCH_MAX];
	int nr_ns;
	struct wd_entry wds[WATCH_MAX * 4];
	int nr_wds;
	unsigned long events, evaluations;
};

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
	int wd, i;

	wd = inotify_add_watch(w->ifd, path, mask);
	if (wd < 0) {
		vwc_dbg("cannot watch %s: %s", path, strerror(errno));
		return;
	}
	for (i = 0; i < w->nr_wds; i++)
		if (w->wds[i].wd == wd)
			return;
	if (w->nr_wds == WATCH_MAX * 4)
		return;
	w->wds[w->nr_wds].wd = wd;
	w->wds[w->nr_wds].ctl_file = ctl_file;
	snprintf(w->wds[w->nr_wds].name, VWC_NAME_LEN, "%s", name);
	w->nr_wds++;
}

static void drop_wd(struct watch *w, int i)
{
	w->wds[i] = w->wds[--w->nr_wds];
}

/* Re-enable SMART critical warning events (the kernel leaves them off). */
static void arm_smart_events(struct watched_ctrl *c)
{
	uint32_t aec;
	char buf[128];
	int r;

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

/* Bring the watch set in line with the current topology. */
static void sync_topology(struct watch *w, struct vwc_topo *t)
{
	char path[VWC_PATH_LEN + 32], gen[VWC_NAME_LEN + 8];
	int i, j;

	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].seen = false;
	for (i = 0; i < w->nr_ns; i++)
		w->ns[i].seen = false;

	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *tc = &t->ctrls[i];
		struct watched_ctrl *c = find_ctrl(w, tc->name);

		if (!c) {
			if (w->nr_ctrl == WATCH_MAX)
				continue;
			c = &w->ctrl[w->nr_ctrl++];
			memset(c, 0, sizeof(*c));
			snprintf(c->name, sizeof(c->name), "%s", tc->name);
			c->wce = -1;
			c->fd = vwc_nvme_open(tc->devnode);
			if (c->fd < 0)
				vwc_warn("%s: cannot open %s: %s", c->name,
					 tc->devnode, strerror(-c->fd));
			else
				arm_smart_events(c);
			c->dirty = true;
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
	}
	for (i = 0; i < t->nr_ns; i++) {
		struct watched_ns *n = find_ns(w, t->ns[i].name);
		unsigned int a, b;

		if (!n) {
			if (w->nr_ns == WATCH_MAX)
				continue;
			n = &w->ns[w->nr_ns++];
			memset(n, 0, sizeof(*n));
			snprintf(n->name, sizeof(n->name), "%s", t->ns[i].name);
			snprintf(path, sizeof(path), "/dev/%s", n->name);
			add_wd(w, path, n->name, false);
			if (sscanf(n->name, "nvme%un%u", &a, &b) == 2) {
				snprintf(gen, sizeof(gen), "ng%un%u", a, b);
				snprintf(path, sizeof(path), "/dev/%s", gen);
				add_wd(w, path, n->name, false);
			}
		}
		n->seen = true;
	}
	/* forget what is gone; inotify drops its watches by itself */
	for (i = 0; i < w->nr_ctrl; i++) {
		if (w->ctrl[i].seen)
			continue;
		vwc_info("%s: gone", w->ctrl[i].name);
		if (w->ctrl[i].fd > 0)
			close(w->ctrl[i].fd);
		for (j = 0; j < w->nr_wds; j++)
			if (!strcmp(w->wds[j].name, w->ctrl[i].name)) {
				inotify_rm_watch(w->ifd, w->wds[j].wd);
				drop_wd(w, j--);
			}
		w->ctrl[i--] = w->ctrl[--w->nr_ctrl];
	}
	for (i = 0; i < w->nr_ns; i++) {
		if (w->ns[i].seen)
			continue;
		for (j = 0; j < w->nr_wds; j++)
			if (!strcmp(w->wds[j].name, w->ns[i].name)) {
				inotify_rm_watch(w->ifd, w->wds[j].wd);
				drop_wd(w, j--);
			}
		w->ns[i--] = w->ns[--w->nr_ns];
	}
}

/* Evaluate every dirty controller (and so every namespace it reaches). */
static void evaluate(struct watch *w)
{
	struct vwc_run r;
	bool any = false;
	int i, ret;

	ret = vwc_run_init(&r, "watch", w->cfg);
	if (ret) {
		vwc_err("cannot scan NVMe devices: %s", strerror(-ret));
		return;
	}
	sync_topology(w, &r.topo);
	for (i = 0; i < r.topo.nr_ctrls; i++) {
		struct watched_ctrl *c = find_ctrl(w, r.topo.ctrls[i].name);

		if (c && c->dirty) {
			vwc_run_select_ctrl(&r, i);
			c->dirty = false;
			any = true;
		}
	}
	if (any) {
		w->evaluations++;
		vwc_run_probe(&r);
		vwc_run_apply(&r);
		vwc_run_irq_coalesce(&r);
		for (i = 0; i < r.topo.nr_ctrls; i++) {
			struct vwc_ctrl *tc = &r.topo.ctrls[i];
			struct watched_ctrl *c = find_ctrl(w, tc->name);

			if (!c || !tc->probed)
				continue;
			c->present = tc->facts.present == VWC_TRI_YES;
			c->wce = tc->facts.wce == VWC_TRI_UNKNOWN ? -1 :
				 tc->facts.wce == VWC_TRI_YES;
		}
		for (i = 0; i < r.topo.nr_ns; i++) {
			struct vwc_ns *tn = &r.topo.ns[i];
			struct watched_ns *n = find_ns(w, tn->name);

			if (n && tn->wanted && tn->action != VWC_ACT_FAILED)
				n->expected = tn->decision.mode;
		}
	}
	vwc_run_free(&r);
}

/* Every watched controller reaching @ns needs a re-evaluation. */
static void mark_ctrls_of(struct watch *w, const struct vwc_topo *t,
			  const struct vwc_ns *ns)
{
	int j;

	for (j = 0; j < ns->nr_ctrl; j++) {
		struct watched_ctrl *c =
			find_ctrl(w, t->ctrls[ns->ctrl[j]].name);

		if (c)
			c->dirty = true;
	}
}

static void mark_ns_ctrls(struct watch *w, const char *ns_name)
{
	struct vwc_topo t;
	int i;

	/* which controllers reach it: the topology knows */
	if (vwc_topo_scan(w->udev, &t))
		return;
	i = vwc_topo_find_ns(&t, ns_name);
	if (i >= 0)
		mark_ctrls_of(w, &t, &t.ns[i]);
	vwc_topo_free(&t);
}

static void on_inotify(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	char *p;
	int i;

	len = read(w->ifd, buf, sizeof(buf));
	for (p = buf; len > 0 && p < buf + len;) {
		struct inotify_event *ev = (struct inotify_event *)p;

		p += sizeof(*ev) + ev->len;
		w->events++;
		for (i = 0; i < w->nr_wds; i++) {
			struct watched_ctrl *c;

			if (w->wds[i].wd != ev->wd)
				continue;
			if (ev->mask & IN_IGNORED) {
				drop_wd(w, i);
				break;
			}
			c = find_ctrl(w, w->wds[i].name);
			if (c) {
				c->dirty = true;
				if (w->wds[i].ctl_file) {
					vwc_info("%s: reset or rescan requested",
						 c->name);
					schedule_settle(c);
				}
			} else {
				mark_ns_ctrls(w, w->wds[i].name);
			}
			break;
		}
	}
}

static void on_udev(struct watch *w, struct udev_monitor *mon)
{
	struct udev_device *dev = udev_monitor_receive_device(mon);
	const char *action, *sysname, *aen, *event;
	char name[VWC_NAME_LEN];
	struct watched_ctrl *c;
	enum vwc_kind kind;

	if (!dev)
		return;
	w->events++;
	action = udev_device_get_action(dev);
	sysname = udev_device_get_sysname(dev);
	kind = vwc_name_classify(sysname, name, sizeof(name));
	aen = udev_device_get_property_value(dev, "NVME_AEN");
	event = udev_device_get_property_value(dev, "NVME_EVENT");
	vwc_info("uevent %s %s%s%s%s%s", action ? action : "?", sysname,
		 aen ? " NVME_AEN=" : "", aen ? aen : "",
		 event ? " NVME_EVENT=" : "", event ? event : "");

	if (kind == VWC_KIND_CTRL) {
		/* a new controller is found (and made dirty) by the rescan */
		c = find_ctrl(w, name);
		if (c) {
			c->dirty = true;
			if (event || (action && !strcmp(action, "change") && !aen)) {
				schedule_settle(c);
				if (c->fd > 0)
					arm_smart_events(c);
			}
		}
	} else if (kind == VWC_KIND_NS || kind == VWC_KIND_PATH) {
		if (action && strcmp(action, "remove"))
			mark_ns_ctrls(w, name);
	}
	udev_device_unref(dev);
	/* add and remove: the watch set follows at the next evaluation */
}

/* The periodic safety net: sysfs compare, and Get Features 06h only. */
static void safety_net(struct watch *w)
{
	struct vwc_topo t;
	int i;

	if (vwc_topo_scan(w->udev, &t))
		return;
	for (i = 0; i < t.nr_ns; i++) {
		struct vwc_ns *tn = &t.ns[i];
		struct watched_ns *n = find_ns(w, tn->name);
		enum vwc_mode cur;

		if (!n || n->expected == VWC_MODE_NONE ||
		    vwc_blk_read(tn->syspath, &cur) || cur == n->expected)
			continue;
		vwc_info("%s: is %s, expected %s: re-evaluating", tn->name,
			 vwc_mode_str(cur), vwc_mode_str(n->expected));
		mark_ctrls_of(w, &t, tn);
	}
	vwc_topo_free(&t);
	for (i = 0; i < w->nr_ctrl; i++) {
		struct watched_ctrl *c = &w->ctrl[i];
		bool wce;

		if (!c->present || c->fd <= 0)
			continue;
		if (vwc_nvme_get_wce(c->fd, &wce) || (int)wce != c->wce)
			c->dirty = true;
	}
}

int cmd_watch(int argc, char **argv)
{
	struct udev_monitor *mon = NULL;
	struct vwc_config cfg;
	struct watch w;
	struct vwc_opts o;
	sigset_t mask;
	double next_net, period;
	int sfd = -1, ret = VWC_EXIT_ERROR, i;

	if (vwc_opts_parse(argc, argv, &o, "watch"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s watch [--interval=<seconds>] [--config=<file>] [-v]\n\n"
		       "Sidecar: keep every NVMe namespace's write cache mode right when the\n"
		       "controller's cache state can change (Set Features 06h by any process,\n"
		       "controller reset, namespace rescan, hotplug, SMART events). Event driven;\n"
		       "a safety net every --interval seconds (default 60) compares write_cache\n"
		       "and sends only Get Features 06h to controllers that report a cache.\n"
		       "Stops on SIGTERM or SIGINT.\n", vwc_prog);
		return 0;
	}
	period = o.interval_set ? o.interval : 60.0;
	if (!o.verbose)
		vwc_log_level = LOG_NOTICE;
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;

	memset(&w, 0, sizeof(w));
	w.cfg = &cfg;
	w.udev = udev_new();
	w.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (!w.udev || w.ifd < 0 || sfd < 0) {
		vwc_err("watch: cannot set up: %s", strerror(errno));
		goto out;
	}
	mon = udev_monitor_new_from_netlink(w.udev, "udev");
	if (!mon ||
	    udev_monitor_filter_add_match_subsystem_devtype(mon, "nvme", NULL) ||
	    udev_monitor_filter_add_match_subsystem_devtype(mon, "block", "disk") ||
	    udev_monitor_enable_receiving(mon)) {
		vwc_err("watch: cannot listen to udev events");
		goto out;
	}
	udev_monitor_set_receive_buffer_size(mon, 4 * 1024 * 1024);

	/* everything present now is dirty: evaluate once at start */
	evaluate(&w);
	vwc_notice("watching %d controller(s), safety net every %.0f s",
		   w.nr_ctrl, period);
	next_net = now_s() + period;

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = udev_monitor_get_fd(mon), .events = POLLIN },
			{ .fd = w.ifd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		double t = now_s(), due = next_net;
		bool dirty = false, udev_seen;
		int timeout, j;

		for (i = 0; i < w.nr_ctrl; i++)
			for (j = 0; j < SETTLE_N; j++)
				if (w.ctrl[i].settle[j] && w.ctrl[i].settle[j] < due)
					due = w.ctrl[i].settle[j];
		timeout = due <= t ? 0 : (int)((due - t) * 1000) + 1;
		if (poll(pfd, 3, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[2].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) > 0) {
				vwc_notice("signal %u: stopping (%lu events, %lu evaluations)",
					   si.ssi_signo, w.events, w.evaluations);
				ret = VWC_EXIT_OK;
				break;
			}
		}
		/* let a burst of events coalesce into one evaluation */
		if (pfd[0].revents & POLLIN || pfd[1].revents & POLLIN)
			usleep(20000);
		udev_seen = false;
		while (poll(pfd, 2, 0) > 0) {
			if (pfd[0].revents & POLLIN) {
				on_udev(&w, mon);
				udev_seen = true;
			}
			if (pfd[1].revents & POLLIN)
				on_inotify(&w);
		}
		t = now_s();
		for (i = 0; i < w.nr_ctrl; i++)
			for (j = 0; j < SETTLE_N; j++)
				if (w.ctrl[i].settle[j] && w.ctrl[i].settle[j] <= t) {
					w.ctrl[i].settle[j] = 0;
					w.ctrl[i].dirty = true;
					/* the kernel rewrites 0Bh when it resets */
					if (w.ctrl[i].fd > 0)
						arm_smart_events(&w.ctrl[i]);
				}
		if (t >= next_net) {
			safety_net(&w);
			next_net = t + period;
		}
		for (i = 0; i < w.nr_ctrl; i++)
			dirty |= w.ctrl[i].dirty;
		/* a hotplugged controller or namespace: rescan finds it */
		if (dirty || udev_seen)
			evaluate(&w);
	}
out:
	for (i = 0; i < w.nr_ctrl; i++)
		if (w.ctrl[i].fd > 0)
			close(w.ctrl[i].fd);
	if (mon)
		udev_monitor_unref(mon);
	if (w.udev)
		udev_unref(w.udev);
	if (w.ifd >= 0)
		close(w.ifd);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
