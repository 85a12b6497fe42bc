// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's event sources (watch-sources.h): udev, inotify and the
 * fast path's pipe (the kernel-side detection: kprobes, or the nvme
 * tracepoints), each turned into calls of the model (watch-model.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "watch-fast.h"
#include "log.h"
#include "nvme-io.h"
#include "watch-sources.h"
#include "watch-model.h"

/* udev sockets' receive buffer (libudev 252 and udevd take this too) */
#define VWC_SRC_RCVBUF	(128 * 1024 * 1024)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int vwc_src_open(struct vwc_watch_src *s, struct udev *udev)
{
	memset(s, 0, sizeof(*s));
	s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ifd < 0) {
		vwc_err("watch: cannot set up inotify: %s", strerror(errno));
		return -errno;
	}
	s->mon = udev_monitor_new_from_netlink(udev, "udev");
	if (!s->mon ||
	    udev_monitor_filter_add_match_subsystem_devtype(s->mon, "nvme", NULL) ||
	    udev_monitor_filter_add_match_subsystem_devtype(s->mon, "block", "disk") ||
	    /* a CPU online: the tracepoints are to be attached there */
	    udev_monitor_filter_add_match_subsystem_devtype(s->mon, "cpu", NULL) ||
	    udev_monitor_enable_receiving(s->mon)) {
		vwc_err("watch: cannot listen to udev events");
		return -EIO;
	}
	/*
	 * As udevd's own: a burst of events (thousands of namespaces
	 * attached) overflows a small one. Memory is taken only for what is
	 * queued. An overflow still seen is handled (vwc_src_read_udev()).
	 */
	udev_monitor_set_receive_buffer_size(s->mon, VWC_SRC_RCVBUF);
	/* the kernel's events too: a SMART warning is seen before udevd ran */
	s->kmon = udev_monitor_new_from_netlink(udev, "kernel");
	if (!s->kmon ||
	    udev_monitor_filter_add_match_subsystem_devtype(s->kmon, "nvme", NULL) ||
	    udev_monitor_enable_receiving(s->kmon)) {
		vwc_notice("watch: cannot listen to the kernel's uevents: waiting for udevd's");
		if (s->kmon)
			udev_monitor_unref(s->kmon);
		s->kmon = NULL;
	} else {
		udev_monitor_set_receive_buffer_size(s->kmon, VWC_SRC_RCVBUF);
	}
	return 0;
}

void vwc_src_close(struct vwc_watch_src *s)
{
	if (s->mon)
		udev_monitor_unref(s->mon);
	if (s->kmon)
		udev_monitor_unref(s->kmon);
	vwc_fast_stop(s->fast);
	if (s->ifd > 0)
		close(s->ifd);
	free(s->wds);
	memset(s, 0, sizeof(*s));
	s->ifd = -1;
}

/*
 * Where @wd is in s->wds, kept in increasing order of wd: an event finds
 * its watch in log n steps, not by a walk over every node watched (at
 * fabrics scale thousands, for each of hundreds of thousands of events).
 * Return: its index, or where it would go; *found says which.
 */
static int wd_pos(const struct vwc_watch_src *s, int wd, bool *found)
{
	int lo = 0, hi = s->nr_wds;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->wds[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->nr_wds && s->wds[lo].wd == wd;
	return lo;
}

static void wd_remove(struct vwc_watch_src *s, int i)
{
	memmove(&s->wds[i], &s->wds[i + 1],
		(size_t)(s->nr_wds - i - 1) * sizeof(*s->wds));
	s->nr_wds--;
}

static void add_wd(struct vwc_watch_src *s, const char *path,
		   const char *name, bool ctl_file)
{
	uint32_t mask = ctl_file ? IN_CLOSE_WRITE :
				   IN_CLOSE_WRITE | IN_CLOSE_NOWRITE;
	struct vwc_wd *e;
	bool found;
	int wd, i;

	wd = inotify_add_watch(s->ifd, path, mask);
	if (wd < 0) {
		if (errno == ENOSPC && !s->inotify_full_warned) {
			vwc_warn("cannot watch %s: inotify watch limit reached (fs.inotify.max_user_watches); close events of further devices are missed, the kernel-side detection and the safety net still see them",
				 path);
			s->inotify_full_warned = true;
		} else {
			vwc_dbg("cannot watch %s: %s", path, strerror(errno));
		}
		return;
	}
	i = wd_pos(s, wd, &found);
	if (found)
		return;
	e = realloc(s->wds, (s->nr_wds + 1) * sizeof(*e));
	if (!e) {
		inotify_rm_watch(s->ifd, wd);
		return;
	}
	s->wds = e;
	memmove(&s->wds[i + 1], &s->wds[i],
		(size_t)(s->nr_wds - i) * sizeof(*s->wds));
	s->nr_wds++;
	e = &s->wds[i];
	e->wd = wd;
	e->ctl_file = ctl_file;
	snprintf(e->name, sizeof(e->name), "%s", name);
}

/* "<dir>/<file>", or false (logged) if it does not fit */
static bool join(char *out, size_t len, const char *dir, const char *file)
{
	if ((size_t)snprintf(out, len, "%s/%s", dir, file) < len)
		return true;
	vwc_warn("%s/%s: path too long: not watched (the safety net still looks)",
		 dir, file);
	return false;
}

void vwc_src_watch_ctrl(struct vwc_watch_src *s, const struct vwc_ctrl *tc)
{
	char path[VWC_PATH_LEN + 32];

	add_wd(s, tc->devnode, tc->name, false);
	if (join(path, sizeof(path), tc->syspath, "reset_controller"))
		add_wd(s, path, tc->name, true);
	if (join(path, sizeof(path), tc->syspath, "rescan_controller"))
		add_wd(s, path, tc->name, true);
}

void vwc_src_watch_ns(struct vwc_watch_src *s, const char *name)
{
	char path[VWC_NAME_LEN + 16];
	unsigned int a, b;

	snprintf(path, sizeof(path), "/dev/%s", name);
	add_wd(s, path, name, false);
	if (sscanf(name, "nvme%un%u", &a, &b) == 2) {
		snprintf(path, sizeof(path), "/dev/ng%un%u", a, b);
		add_wd(s, path, name, false);
	}
}

void vwc_src_unwatch(struct vwc_watch_src *s, const char *name)
{
	int i, n = 0;

	/* one pass, the order kept */
	for (i = 0; i < s->nr_wds; i++) {
		if (!strcmp(s->wds[i].name, name)) {
			inotify_rm_watch(s->ifd, s->wds[i].wd);
			continue;
		}
		if (n != i)
			s->wds[n] = s->wds[i];
		n++;
	}
	s->nr_wds = n;
}

void vwc_src_close_quiet(struct vwc_watch_src *s, const char *devnode,
			 int fd)
{
	/*
	 * The watch narrowed to writers' closes for our own (read-only)
	 * close, then widened again: one watch descriptor all along. A
	 * reader's close in between is missed here; the kernel-side
	 * detection and the safety net still see its Set Features.
	 */
	int wd = inotify_add_watch(s->ifd, devnode, IN_CLOSE_WRITE);

	vwc_nvme_close(fd);
	if (wd >= 0)
		inotify_add_watch(s->ifd, devnode,
				  IN_CLOSE_WRITE | IN_CLOSE_NOWRITE);
}

static void on_inotify_event(struct vwc_watch_src *s, struct vwc_model *w,
			     const struct inotify_event *ev)
{
	struct vwc_wd *e;
	bool found;
	int i;

	if (ev->mask & IN_Q_OVERFLOW) {
		vwc_warn("inotify queue overflow: discovering and reading every controller again");
		vwc_model_note_all(w);
		return;
	}
	i = wd_pos(s, ev->wd, &found);
	if (!found)
		return;
	e = &s->wds[i];
	if (ev->mask & IN_IGNORED) {
		wd_remove(s, i);
		return;
	}
	if (e->ctl_file && vwc_model_find_ctrl(w, e->name)) {
		vwc_info("%s: reset or rescan requested", e->name);
		vwc_model_note_ctrl(w, e->name, true, true, now_s());
	} else {
		/* the kernel-side detection runs: a close backs it up */
		vwc_model_note_close(w, e->name, s->fast != NULL, now_s());
	}
}

void vwc_src_read_inotify(struct vwc_watch_src *s, struct vwc_model *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	char *p;

	while ((len = read(s->ifd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			w->events++;
			on_inotify_event(s, w, ev);
		}
	}
}

/*
 * A controller's change event seen from both sources: the kernel's copy
 * first (taken at once), then udevd's once its rules ran. The second asks
 * for the same full look and re-checks again: remembered by sequence
 * number (0: none known, never matched).
 */
static bool kseq_seen(struct vwc_watch_src *s, unsigned long long seq,
		      bool kernel)
{
	int i;

	if (!seq)
		return false;
	if (kernel) {
		s->kseq[s->kseq_next] = seq;
		s->kseq_next = (s->kseq_next + 1) % VWC_SRC_KSEQ_N;
		return false;
	}
	for (i = 0; i < VWC_SRC_KSEQ_N; i++)
		if (s->kseq[i] == seq)
			return true;
	return false;
}

void vwc_src_read_udev(struct vwc_watch_src *s, struct vwc_model *w,
		       struct udev_monitor *mon, bool kernel)
{
	struct udev_device *dev;
	bool lost = false;

	for (;;) {
		const char *action, *sysname, *aen, *event;
		char name[VWC_NAME_LEN];
		enum vwc_kind kind;

		errno = 0;
		dev = udev_monitor_receive_device(mon);
		if (!dev && errno == ENOBUFS) {
			/*
			 * The socket's buffer overflowed: events were lost,
			 * and which ones is not known. Those still queued
			 * come next; everything is read again.
			 */
			if (!lost)
				vwc_warn("%s socket overflowed (ENOBUFS): events lost; discovering and reading every controller again",
					 kernel ? "kernel uevent" : "udev event");
			lost = true;
			vwc_model_note_all(w);
			continue;
		}
		if (!dev)
			break;

		w->events++;
		if (kernel)
			w->kernel_uevents++;
		else
			w->udev_events++;
		action = udev_device_get_action(dev);
		action = action ? action : "?";
		sysname = udev_device_get_sysname(dev);
		event = udev_device_get_subsystem(dev);
		if (event && !strcmp(event, "cpu")) {
			int cpu;
			bool on = !strcmp(action, "online") ||
				  !strcmp(action, "add");

			if (on || !strcmp(action, "offline")) {
				vwc_info("uevent %s %s", action, sysname);
				/* its old events are dead: opened anew */
				if (sysname && sscanf(sysname, "cpu%d", &cpu) == 1)
					vwc_fast_cpu_gone(s->fast, cpu);
				/* the poll set changes either way */
				w->attach = true;
			}
			udev_device_unref(dev);
			continue;
		}
		kind = vwc_name_classify(sysname, name, sizeof(name));
		aen = udev_device_get_property_value(dev, "NVME_AEN");
		event = udev_device_get_property_value(dev, "NVME_EVENT");
		/*
		 * The kernel's own events: changes, and a controller's
		 * removal, at once: its descriptor is closed before udevd has
		 * run its rules (or where no udevd runs), so that the removed
		 * controller is not kept alive (its instance number held, a
		 * rebind's controller given another name).
		 */
		if (kernel && strcmp(action, "change") &&
		    !(!strcmp(action, "remove") && kind == VWC_KIND_CTRL)) {
			udev_device_unref(dev);
			continue;
		}
		vwc_info("%s %s %s%s%s%s%s", kernel ? "kernel uevent" : "uevent",
			 action, sysname,
			 aen ? " NVME_AEN=" : "", aen ? aen : "",
			 event ? " NVME_EVENT=" : "", event ? event : "");

		if (!strcmp(action, "remove") && kind == VWC_KIND_CTRL) {
			/* forgotten now: the same name may come back */
			vwc_model_note_gone(w, name);
		} else if (!strcmp(action, "add") || !strcmp(action, "remove")) {
			/* topology changes come from udev: rediscover (a
			 * namespace's adds gathered: watch-model.h) */
			if (kind == VWC_KIND_NS && !strcmp(action, "add"))
				vwc_model_note_ns_added(w, now_s());
			else if (kind == VWC_KIND_NS)
				w->rescan = true;
			else if (kind == VWC_KIND_CTRL || kind == VWC_KIND_PATH)
				w->recheck = true;
			/* scanned even if the names look the same */
			w->reshape = true;
			/* a controller: nvme_core is loaded now; one known
			 * already (an add replayed by udevadm trigger) looks
			 * again in full */
			if (kind == VWC_KIND_CTRL) {
				w->attach = true;
				if (!strcmp(action, "add"))
					vwc_model_note_ctrl(w, name, true, false,
							    now_s());
			}
		} else if (kind == VWC_KIND_CTRL &&
			   kseq_seen(s, udev_device_get_seqnum(dev), kernel)) {
			vwc_info("%s: taken from the kernel's copy already",
				 sysname);
		} else if (kind == VWC_KIND_CTRL) {
			/*
			 * Identify and SMART again: firmware activation and
			 * backup failures come this way; a reset or connect
			 * (not a SMART AEN) gets the re-checks.
			 */
			if (!vwc_model_note_ctrl(w, name, true, event || !aen,
						 now_s())) {
				/* not watched yet: to be found by a scan */
				w->recheck = true;
				w->reshape = true;
			}
		} else if (kind == VWC_KIND_NS || kind == VWC_KIND_PATH) {
			vwc_model_note_ns(w, name);
		}
		udev_device_unref(dev);
	}
}

void vwc_src_read_fast(struct vwc_watch_src *s, struct vwc_model *w,
		       void (*wb)(struct vwc_model *w, struct vwc_wctrl *c))
{
	struct vwc_fast_msg m[64];
	int n, i, j;

	while ((n = vwc_fast_read(s->fast, m, 64)) > 0) {
		for (i = 0; i < n; i++) {
			struct vwc_wctrl *c;

			if (m[i].kind == VWC_FAST_LEARNED) {
				for (j = 0; j < w->nr_ctrl; j++) {
					c = &w->ctrl[j];
					if (c->instance == m[i].instance)
						vwc_model_learn_queue(w, c,
								      m[i].q);
				}
				continue;
			}
			if (m[i].kind == VWC_FAST_LOST)
				m[i].ev.kind = VWC_KW_LOST;
			/*
			 * The thread placed it by a queue the model may not
			 * have heard of (its learning message was not sent:
			 * no news to the thread's table): the model learns it
			 * now, so that both place the event alike.
			 */
			if (m[i].kind == VWC_FAST_EVENT && m[i].instance >= 0)
				for (j = 0; j < w->nr_ctrl; j++) {
					c = &w->ctrl[j];
					if (c->instance != m[i].instance ||
					    c->admin_q == m[i].ev.q)
						continue;
					vwc_info("%s: admin queue not heard of yet: learned from the fast path's table",
						 c->name);
					vwc_model_learn_queue(w, c, m[i].ev.q);
				}
			/* the fast path wrote write back already: the
			 * model's write back finds nothing to write */
			if (vwc_model_note_kernel(w, &m[i].ev, now_s()) <= 0)
				continue;
			for (j = 0; j < w->nr_ctrl; j++) {
				c = &w->ctrl[j];
				if (!c->wb_now)
					continue;
				c->wb_now = false;
				wb(w, c);
			}
		}
		if (n < 64)
			break;
	}
}
