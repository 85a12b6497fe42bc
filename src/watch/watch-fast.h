/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: watch-fast.h - the sidecar's fast path
 *
 * The safe direction never waits: a thread of its own owns the
 * kernel-side detection (kwatch.h). It drains the per-CPU rings and, for
 * a Set Features 06h with WCE=1, puts the controller's namespaces in
 * write back at once, whatever the main loop is doing (a probe of a slow
 * or hung controller, a rescan, the writers' lock). It takes no lock but
 * its table's mutex (never held during a write), writes through blk.c as
 * every writer does (vwc_blk_wb_bump() first, see blk.h), and leaves
 * namespaces configured "ignore" alone; lost events (a ring overflowed)
 * put every namespace in write back. Every event is then handed to the
 * main loop through a pipe (vwc_fast_read()), which keeps the model as
 * before (pending, WCE read again).
 *
 * The main loop publishes what the thread needs: each controller's
 * instance, admin queue and namespaces (vwc_fast_publish()), and when it
 * reads a controller (vwc_fast_learn_begin() and _end(): the sidecar's own
 * Get Features 06h inside that window name the controller's admin queue,
 * which the thread sends back as VWC_FAST_LEARNED). CPU hotplug reaches
 * the thread as a command.
 */
#ifndef VWC_WATCH_FAST_H
#define VWC_WATCH_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "kwatch.h"
#include "topo.h"

struct vwc_fast;

/**
 * struct vwc_fast_ns - a namespace the fast path may write
 * @name:	nvmeXnY
 * @syspath:	its sysfs directory
 * @paths:	its hidden multipath path nodes' sysfs directories, NULL
 *		ended. In a table (vwc_watch_fast_table()) one allocation
 *		with every string of the entry, @syspath's too when there
 *		is one, and @syspath alone allocated when there is not:
 *		vwc_fast_free_table() frees them so, and a table made
 *		otherwise must be made the same way. The thread's own copies
 *		(one allocation a string) are freed by the thread.
 * @nr_paths:	how many
 */
struct vwc_fast_ns {
	char name[VWC_NAME_LEN];
	char *syspath;
	char **paths;
	int nr_paths;
};

/**
 * struct vwc_fast_ctrl - a controller of the fast path's table
 * @name:	nvmeN
 * @instance:	N
 * @q:		its admin queue (kprobes), 0 not known
 * @ns:		its namespaces, those configured "ignore" left out
 * @nr_ns:	how many
 */
struct vwc_fast_ctrl {
	char name[VWC_NAME_LEN];
	int instance;
	uint64_t q;
	struct vwc_fast_ns *ns;
	int nr_ns;
};

/**
 * enum vwc_fast_kind - what the thread tells the main loop
 * @VWC_FAST_EVENT:	a kernel event (after any write back it called for)
 * @VWC_FAST_LEARNED:	controller @instance's admin queue is @q
 * @VWC_FAST_LOST:	messages were lost (the pipe was full)
 */
enum vwc_fast_kind {
	VWC_FAST_EVENT,
	VWC_FAST_LEARNED,
	VWC_FAST_LOST,
};

/**
 * struct vwc_fast_msg - one message
 * @kind:	see &enum vwc_fast_kind
 * @ev:		VWC_FAST_EVENT: the event
 * @instance:	VWC_FAST_LEARNED: the controller; VWC_FAST_EVENT: the
 *		controller whose queue is the event's in this thread's table
 *		(-1: none), which the model learns if it has not
 * @q:		VWC_FAST_LEARNED: its admin queue
 */
struct vwc_fast_msg {
	enum vwc_fast_kind kind;
	struct vwc_kw_event ev;
	int instance;
	uint64_t q;
};

/**
 * struct vwc_fast_win - a learning window: the main loop read a
 *			 controller between @t0 and @t1
 * @instance:	the controller, N of nvmeN
 * @t0:		the start, CLOCK_MONOTONIC ns
 * @t1:		the end, CLOCK_MONOTONIC ns; 0 while open
 */
struct vwc_fast_win {
	int instance;
	uint64_t t0, t1;
};

#define VWC_FAST_WINS	64

/**
 * vwc_fast_start() - start the thread on an open kernel-side detection
 * @f:	result
 * @kw:	the detection; the thread owns it from now on
 *
 * Return: 0, or a negative errno (@kw is closed then).
 */
int vwc_fast_start(struct vwc_fast **f, struct vwc_kwatch *kw);

/**
 * vwc_fast_stop() - stop the thread, close the detection, free
 * @f:	fast path (may be NULL)
 */
void vwc_fast_stop(struct vwc_fast *f);

/**
 * vwc_fast_fd() - the descriptor the main loop polls for POLLIN
 * @f:	fast path (may be NULL: -1)
 *
 * Return: a descriptor, -1 without a fast path.
 */
int vwc_fast_fd(const struct vwc_fast *f);

/**
 * vwc_fast_how() - the detection's description (vwc_kwatch_how())
 * @f:	fast path (may be NULL)
 *
 * Return: a string.
 */
const char *vwc_fast_how(const struct vwc_fast *f);

/**
 * vwc_fast_read() - the messages waiting, without blocking
 * @f:		fast path
 * @msgs:	room for @max
 * @max:	at least 2
 *
 * Return: how many were filled (a VWC_FAST_LOST first if some were lost).
 */
int vwc_fast_read(struct vwc_fast *f, struct vwc_fast_msg *msgs, int max);

/**
 * vwc_fast_publish() - give the thread a new table
 * @f:		fast path (may be NULL: @tab is freed)
 * @tab:	the controllers, allocated; the thread owns them from now on
 * @nr:		how many
 */
void vwc_fast_publish(struct vwc_fast *f, struct vwc_fast_ctrl *tab, int nr);

/**
 * vwc_fast_free_table() - free a table vwc_fast_publish() did not take
 * @tab:	the controllers
 * @nr:		how many
 */
void vwc_fast_free_table(struct vwc_fast_ctrl *tab, int nr);

/**
 * vwc_fast_learn_begin() - the main loop is about to read a controller
 * @f:		fast path (may be NULL)
 * @instance:	its N
 */
void vwc_fast_learn_begin(struct vwc_fast *f, int instance);

/**
 * vwc_fast_learn_end() - ... and has read it
 * @f:	fast path (may be NULL)
 */
void vwc_fast_learn_end(struct vwc_fast *f);

/**
 * vwc_fast_cpu_gone() - a CPU went offline: its events are let go
 * @f:		fast path (may be NULL)
 * @cpu:	the CPU
 */
void vwc_fast_cpu_gone(struct vwc_fast *f, int cpu);

/**
 * vwc_fast_add_cpus() - attach on CPUs online since (vwc_kwatch_add_cpus())
 * @f:	fast path (may be NULL)
 */
void vwc_fast_add_cpus(struct vwc_fast *f);

/**
 * vwc_fast_window_of() - which controller was read at @t (pure)
 * @w:	windows (a ring, any order)
 * @n:	how many are in use
 * @t:	the kernel's time of the sidecar's own Get Features 06h
 *
 * Return: the instance, -1 if no window holds @t.
 */
int vwc_fast_window_of(const struct vwc_fast_win *w, int n, uint64_t t);

#endif
