// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's udev sources (src/watch/watch-sources.c) fed by a fake monitor:
 * libudev's receive and device calls are defined here, so that the events
 * and errors a netlink socket gives come in a set order. A receive buffer
 * that overflowed (ENOBUFS: events were lost) must not end the receive
 * loop, and must ask for every controller to be read again and the
 * topology to be discovered again; the end of the queue (EAGAIN) ends it.
 * The inotify source on real files: a close finds its own controller
 * among hundreds watched, after watches came and went.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libudev.h>

#include "tap.h"
#include "watch-sources.h"
#include "watch-model.h"

/* ---- the fake monitor: a script of devices and errors ---- */

struct udev_device {
	const char *action, *sysname, *subsystem, *aen;
	unsigned long long seq;
};

struct step {
	struct udev_device dev;
	int err;		/* NULL with this errno instead of a device */
};

static const struct step *script;
static int pos, nr_steps, received;

struct udev_device *udev_monitor_receive_device(struct udev_monitor *mon)
{
	(void)mon;
	if (pos >= nr_steps) {
		errno = EAGAIN;
		return NULL;
	}
	if (script[pos].err) {
		errno = script[pos++].err;
		return NULL;
	}
	received++;
	return (struct udev_device *)&script[pos++].dev;
}

const char *udev_device_get_action(struct udev_device *d)
{
	return d->action;
}

const char *udev_device_get_sysname(struct udev_device *d)
{
	return d->sysname;
}

const char *udev_device_get_subsystem(struct udev_device *d)
{
	return d->subsystem;
}

const char *udev_device_get_property_value(struct udev_device *d,
					   const char *key)
{
	return strcmp(key, "NVME_AEN") ? NULL : d->aen;
}

unsigned long long udev_device_get_seqnum(struct udev_device *d)
{
	return d->seq;
}

struct udev_device *udev_device_unref(struct udev_device *d)
{
	(void)d;
	return NULL;
}

/* ---- a model of two controllers ---- */

static void f_added(struct vwc_model *w, struct vwc_wctrl *c,
		    const struct vwc_ctrl *tc)
{
	(void)w;
	(void)tc;
	vwc_model_open_result(c, 10, 0);
}

static void f_gone(struct vwc_model *w, struct vwc_wctrl *c)
{
	(void)w;
	(void)c;
}

static void f_ns(struct vwc_model *w, const char *name)
{
	(void)w;
	(void)name;
}

static uint64_t f_ident(const struct vwc_ctrl *tc)
{
	return (uint64_t)tc->name[4];
}

static const struct vwc_model_ops ops = { f_added, f_gone, f_ns, f_ns, f_ident, NULL };

static void clear(struct vwc_model *w)
{
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].full = w->ctrl[i].wce = false;
	w->rescan = w->recheck = w->reshape = false;
	w->rescan_at = w->rescan_first = 0;
	w->events = w->udev_events = w->kernel_uevents = 0;
}

static void run_from(struct vwc_model *w, const struct step *s, int n,
		     bool kernel)
{
	/* one for the whole run, as the sidecar's: what it remembers of
	 * the kernel's events carries from one batch to the next */
	static struct vwc_watch_src src;

	script = s;
	nr_steps = n;
	pos = received = 0;
	vwc_src_read_udev(&src, w, NULL, kernel);
}

static void run(struct vwc_model *w, const struct step *s, int n)
{
	run_from(w, s, n, true);
}

/* a SMART event: nvme1 is read again, nothing else asked for */
#define AEN	"0x020001"

/* ---- inotify: real files standing in for device nodes ---- */

#define NI	300	/* controllers, three watches each */

static void touch_close(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT, 0600);

	if (fd >= 0)
		close(fd);
}

/* which controllers the model was asked to read, as "i:wce/full," */
static void flagged(struct vwc_model *w, char *out, size_t len)
{
	int i;

	out[0] = '\0';
	for (i = 0; i < w->nr_ctrl; i++) {
		size_t l = strlen(out);

		if (w->ctrl[i].wce || w->ctrl[i].full)
			snprintf(out + l, len - l, "%s:%s,", w->ctrl[i].name,
				 w->ctrl[i].full ? "full" : "wce");
		w->ctrl[i].wce = w->ctrl[i].full = false;
	}
}

static void test_inotify(void)
{
	static struct vwc_ctrl ctrls[NI];
	char dir[] = "/tmp/vwc-test-sources-XXXXXX", path[600], got[256];
	struct vwc_watch_src src;
	struct vwc_topo t;
	struct vwc_model w;
	int i, nr;

	if (!mkdtemp(dir)) {
		ok(0, "inotify: a temporary directory: %s", strerror(errno));
		return;
	}
	memset(&t, 0, sizeof(t));
	memset(&src, 0, sizeof(src));
	src.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (i = 0; i < NI; i++) {
		struct vwc_ctrl *c = &ctrls[i];

		snprintf(c->name, sizeof(c->name), "nvme%d", i);
		snprintf(c->devnode, sizeof(c->devnode), "%.100s/%.20s", dir, c->name);
		snprintf(c->syspath, sizeof(c->syspath), "%.100s/sys-%.20s", dir,
			 c->name);
		touch_close(c->devnode, O_RDONLY);
		mkdir(c->syspath, 0700);
		snprintf(path, sizeof(path), "%.200s/reset_controller", c->syspath);
		touch_close(path, O_RDONLY);
		snprintf(path, sizeof(path), "%.200s/rescan_controller", c->syspath);
		touch_close(path, O_RDONLY);
	}
	t.ctrls = ctrls;
	t.nr_ctrls = NI;
	vwc_model_init(&w, &t, &ops, NULL);
	vwc_model_sync(&w, 0);
	/* watched in an order of their own: the watch descriptors rise */
	for (i = 0; i < NI; i++)
		vwc_src_watch_ctrl(&src, &ctrls[(i * 7) % NI]);
	nr = src.nr_wds;
	flagged(&w, got, sizeof(got));
	ok(src.ifd >= 0 && nr == 3 * NI, "inotify: %d watches (%d)", 3 * NI, nr);

	touch_close(ctrls[137].devnode, O_RDONLY);
	vwc_src_read_inotify(&src, &w);
	flagged(&w, got, sizeof(got));
	ok(!strcmp(got, "nvme137:wce,"),
	   "inotify: a reader's close of one node: its controller's WCE read, no other (%s)",
	   got);

	snprintf(path, sizeof(path), "%.200s/reset_controller", ctrls[42].syspath);
	touch_close(path, O_WRONLY);
	vwc_src_read_inotify(&src, &w);
	flagged(&w, got, sizeof(got));
	ok(!strcmp(got, "nvme42:full,"),
	   "inotify: a write to reset_controller: that controller read in full (%s)",
	   got);

	vwc_src_unwatch(&src, "nvme137");
	touch_close(ctrls[137].devnode, O_RDONLY);
	touch_close(ctrls[138].devnode, O_RDONLY);
	vwc_src_read_inotify(&src, &w);
	flagged(&w, got, sizeof(got));
	ok(!strcmp(got, "nvme138:wce,") && src.nr_wds == nr - 3,
	   "inotify: an unwatched node says nothing, its neighbour still does (%s, %d watches)",
	   got, src.nr_wds);

	/* a node deleted: the kernel drops its watch (IN_IGNORED) */
	unlink(ctrls[200].devnode);
	vwc_src_read_inotify(&src, &w);
	touch_close(ctrls[0].devnode, O_RDONLY);
	touch_close(ctrls[201].devnode, O_RDONLY);
	touch_close(ctrls[NI - 1].devnode, O_RDONLY);
	vwc_src_read_inotify(&src, &w);
	flagged(&w, got, sizeof(got));
	snprintf(path, sizeof(path), "nvme0:wce,nvme201:wce,nvme%d:wce,", NI - 1);
	ok(!strcmp(got, path) && src.nr_wds == nr - 4,
	   "inotify: a deleted node's watch forgotten; the first, the last and a neighbour still found (%s, %d watches)",
	   got, src.nr_wds);
	for (i = 1; i < src.nr_wds; i++)
		if (src.wds[i - 1].wd >= src.wds[i].wd)
			break;
	ok(i >= src.nr_wds, "inotify: the watches in increasing order");

	vwc_model_free(&w);
	close(src.ifd);
	free(src.wds);
	for (i = 0; i < NI; i++) {
		unlink(ctrls[i].devnode);
		snprintf(path, sizeof(path), "%.200s/reset_controller", ctrls[i].syspath);
		unlink(path);
		snprintf(path, sizeof(path), "%.200s/rescan_controller", ctrls[i].syspath);
		unlink(path);
		rmdir(ctrls[i].syspath);
	}
	rmdir(dir);
}

int main(void)
{
	static const struct step plain[] = {
		{ { "change", "nvme1", "nvme", AEN, 0 }, 0 },
		{ { "change", "nvme1", "nvme", AEN, 0 }, 0 },
	};
	static const struct step reset[] = {
		{ { "change", "nvme1", "nvme", NULL, 0 }, 0 },
	};
	static const struct step unknown[] = {
		{ { "change", "nvme7", "nvme", NULL, 0 }, 0 },
	};
	static const struct step ctrl_add[] = {
		{ { "add", "nvme2", "nvme", NULL, 0 }, 0 },
	};
	static const struct step ns_add[] = {
		{ { "add", "nvme1n2", "block", NULL, 0 }, 0 },
	};
	static const struct step ns_remove[] = {
		{ { "remove", "nvme1n2", "block", NULL, 0 }, 0 },
	};
	static const struct step connected_k[] = {
		{ { "change", "nvme1", "nvme", NULL, 41 }, 0 },
	};
	static const struct step connected_u[] = {
		{ { "change", "nvme1", "nvme", NULL, 41 }, 0 },
	};
	static const struct step connected_u2[] = {
		{ { "change", "nvme1", "nvme", NULL, 42 }, 0 },
	};
	static const struct step lost[] = {
		{ { "change", "nvme1", "nvme", AEN, 0 }, 0 },
		{ { NULL, NULL, NULL, NULL, 0 }, ENOBUFS },
		{ { "change", "nvme1", "nvme", AEN, 0 }, 0 },
		{ { NULL, NULL, NULL, NULL, 0 }, ENOBUFS },
		{ { "change", "nvme1", "nvme", AEN, 0 }, 0 },
	};
	struct vwc_ctrl ctrls[2];
	struct vwc_topo t;
	struct vwc_model w;
	struct vwc_wctrl *c0, *c1;

	memset(ctrls, 0, sizeof(ctrls));
	memset(&t, 0, sizeof(t));
	snprintf(ctrls[0].name, sizeof(ctrls[0].name), "nvme0");
	snprintf(ctrls[1].name, sizeof(ctrls[1].name), "nvme1");
	t.ctrls = ctrls;
	t.nr_ctrls = 2;
	vwc_model_init(&w, &t, &ops, NULL);
	vwc_model_sync(&w, 0);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	c1 = vwc_model_find_ctrl(&w, "nvme1");
	ok(c0 && c1, "model: two controllers");
	if (!c0 || !c1)
		return tap_done();

	clear(&w);
	run(&w, plain, 2);
	ok(received == 2 && w.events == 2 && w.kernel_uevents == 2 &&
	   !w.udev_events, "plain: both events read, counted as the kernel's (%d)",
	   received);
	clear(&w);
	run_from(&w, plain, 2, false);
	ok(w.events == 2 && w.udev_events == 2 && !w.kernel_uevents,
	   "plain through udev: counted as udev's");
	ok(c1->full && !c0->full && !w.rescan,
	   "plain (SMART events): only nvme1 read again, no rescan");

	/* which events may be skipped when the names are the same */
	clear(&w);
	run(&w, reset, 1);
	ok(c1->full && w.recheck && !w.reshape,
	   "a reset or reconnect: re-checks, a scan skipped if no name changed");
	clear(&w);
	run(&w, unknown, 1);
	ok(w.recheck && w.reshape,
	   "a change of a controller not watched yet: scanned though the names look the same");
	clear(&w);
	run_from(&w, ctrl_add, 1, false);
	ok(w.recheck && w.reshape,
	   "a controller's add: scanned though the names look the same");
	clear(&w);
	run_from(&w, ns_add, 1, false);
	ok(w.rescan_at && w.reshape,
	   "a namespace's add: gathered, scanned though the names look the same");
	clear(&w);
	run_from(&w, ns_remove, 1, false);
	ok(w.rescan && w.reshape,
	   "a namespace's remove: scanned though the names look the same");

	/* a reconnect seen from the kernel, then udevd's copy of it */
	clear(&w);
	run(&w, connected_k, 1);
	ok(c1->full, "a controller's change from the kernel: a full look");
	clear(&w);
	run_from(&w, connected_u, 1, false);
	ok(!c1->full && !w.recheck,
	   "udevd's copy of the same change (its sequence number): nothing asked again");
	clear(&w);
	run_from(&w, connected_u2, 1, false);
	ok(c1->full && w.recheck,
	   "udevd's copy of another change (a number the kernel's source did not give): a full look");
	clear(&w);
	run_from(&w, plain, 2, false);
	ok(c1->full, "udevd's event with no sequence number: taken as it comes");

	clear(&w);
	run(&w, lost, 5);
	ok(received == 3 && pos == 5,
	   "ENOBUFS: the loop goes on, the events queued after it read (%d of 3)",
	   received);
	ok(c0->full && c1->full,
	   "ENOBUFS: every controller read again (nvme0 had no event)");
	ok(w.rescan && w.reshape, "ENOBUFS: the topology discovered again");

	vwc_model_free(&w);
	test_inotify();
	return tap_done();
}
