/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: watch-sources.h - the sidecar's event sources
 *
 * Each source has a descriptor to poll and a read function that turns
 * what it got into calls of the model (watch-model.h):
 *
 *  - udev (udevd's netlink group: add, remove, change) and the kernel's
 *    own group (change events only, before udevd ran its rules); an
 *    overflow of either socket (ENOBUFS) asks for a full rescan;
 *  - inotify: IN_CLOSE on /dev/nvmeN, /dev/nvmeNnM and /dev/ngNnM (any
 *    process that sent a passthrough command closes the node afterwards),
 *    IN_CLOSE_WRITE on reset_controller and rescan_controller; a queue
 *    overflow asks for a full rescan;
 *  - the fast path (watch-fast.h): the kernel-side detection of Set
 *    Features 06h, in a thread of its own that writes write back at once,
 *    its events handed on to the model.
 */
#ifndef VWC_WATCH_SOURCES_H
#define VWC_WATCH_SOURCES_H

#include <poll.h>
#include <stdbool.h>

#include "topo.h"

struct udev;
struct udev_monitor;
struct vwc_fast;
struct vwc_model;
struct vwc_wctrl;

#define VWC_SRC_KSEQ_N	64	/* controllers' change events remembered */

/**
 * struct vwc_wd - one inotify watch
 * @wd:		watch descriptor
 * @name:	nvme0, nvme0n1 (also for ng0n1)
 * @ctl_file:	reset_controller or rescan_controller
 */
struct vwc_wd {
	int wd;
	char name[VWC_NAME_LEN];
	bool ctl_file;
};

/**
 * struct vwc_watch_src - every event source of the sidecar
 * @ifd:	inotify descriptor
 * @wds:	its watches, in increasing order of wd (found by bisection)
 * @nr_wds:	how many
 * @inotify_full_warned: the inotify watch limit was reported once
 * @mon:	udevd's events
 * @kmon:	the kernel's events, NULL if unavailable
 * @fast:	the kernel-side detection's thread, NULL if unavailable
 * @kseq:	sequence numbers of the controllers' change events last
 *		taken from the kernel (ring): udevd's copy of one of them,
 *		the same event after its rules ran, asks for nothing more
 * @kseq_next:	the next slot of @kseq
 */
struct vwc_watch_src {
	int ifd;
	struct vwc_wd *wds;
	int nr_wds;
	bool inotify_full_warned;
	struct udev_monitor *mon, *kmon;
	struct vwc_fast *fast;
	unsigned long long kseq[VWC_SRC_KSEQ_N];
	int kseq_next;
};

/**
 * vwc_src_open() - open the inotify and udev sources
 * @s:		sources
 * @udev:	libudev context
 *
 * Return: 0, or a negative errno (logged).
 */
int vwc_src_open(struct vwc_watch_src *s, struct udev *udev);

/**
 * vwc_src_close() - close every source
 * @s:	sources
 */
void vwc_src_close(struct vwc_watch_src *s);

/**
 * vwc_src_watch_ctrl() - watch a controller's nodes (inotify)
 * @s:	sources
 * @tc:	the controller
 */
void vwc_src_watch_ctrl(struct vwc_watch_src *s, const struct vwc_ctrl *tc);

/**
 * vwc_src_watch_ns() - watch a namespace's nodes (inotify)
 * @s:		sources
 * @name:	nvmeXnY (its /dev/ngXnY too)
 */
void vwc_src_watch_ns(struct vwc_watch_src *s, const char *name);

/**
 * vwc_src_close_quiet() - close our own descriptor of a watched node
 * @s:		sources
 * @devnode:	/dev/nvmeN the descriptor is of (opened read-only)
 * @fd:		the descriptor
 *
 * Closes @fd without a close event of our own reaching the sidecar.
 */
void vwc_src_close_quiet(struct vwc_watch_src *s, const char *devnode,
			 int fd);

/**
 * vwc_src_unwatch() - stop watching what vwc_src_watch_*() added for @name
 * @s:		sources
 * @name:	controller or namespace
 */
void vwc_src_unwatch(struct vwc_watch_src *s, const char *name);

/**
 * vwc_src_read_inotify() - feed the model what inotify saw
 * @s:	sources
 * @w:	model
 */
void vwc_src_read_inotify(struct vwc_watch_src *s, struct vwc_model *w);

/**
 * vwc_src_read_udev() - feed the model a udev monitor's events
 * @s:		sources (a CPU's offline or online event lets its
 *		kernel-event ring go: see vwc_kwatch_cpu_gone())
 * @w:		model
 * @mon:	@s->mon or @s->kmon
 * @kernel:	@mon is the kernel's group: only change events are taken
 *
 * Reads until the socket is empty. A receive buffer that overflowed
 * (ENOBUFS: events were lost) does not end it: every controller is read
 * again and the topology discovered again (vwc_model_note_all()), and the
 * events still queued are read on.
 */
void vwc_src_read_udev(struct vwc_watch_src *s, struct vwc_model *w,
		       struct udev_monitor *mon, bool kernel);

/**
 * vwc_src_read_fast() - feed the model what the fast path saw
 * @s:		sources
 * @w:		model
 * @wb:		called for a controller that got a Set Features 06h with
 *		WCE=1 (the fast path wrote write back already; this keeps
 *		the model's expectations and writes what it missed)
 */
void vwc_src_read_fast(struct vwc_watch_src *s, struct vwc_model *w,
		       void (*wb)(struct vwc_model *w, struct vwc_wctrl *c));

#endif
