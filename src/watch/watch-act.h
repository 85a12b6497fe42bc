/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: watch-act.h - what the sidecar does about what its model says
 *
 * Probes, decisions and writes for the controllers the model (watch-model.h)
 * marked, one controller a hold of the writers' lock; the write back that
 * a Set Features 06h with WCE=1 calls for, at once and without the lock;
 * the safety net's comparison of write_cache with the last decision; the
 * node_exporter textfile.
 */
#ifndef VWC_WATCH_ACT_H
#define VWC_WATCH_ACT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "watch-sources.h"
#include "watch-model.h"

/**
 * struct vwc_tf_ns - a namespace's write_cache as the textfile last read it
 * @ino:	the namespace's sysfs inode then (&vwc_ns.ino)
 * @name:	its name then: with @ino, the entry counts only for the
 *		namespace it was read for, whoever replaced the topology
 * @mode:	write_cache as read, VWC_MODE_NONE unreadable
 * @stale:	to read again at the next write: the sidecar evaluated or
 *		wrote it since, or it was not read
 */
struct vwc_tf_ns {
	uint64_t ino;
	char name[VWC_NAME_LEN];
	enum vwc_mode mode;
	bool stale;
};

/**
 * struct vwc_sidecar - the sidecar: a run, its model and its sources
 * @run:	the topology, kept between events, and the configuration
 * @model:	what is known and pending
 * @src:	the event sources
 * @textfile:	node_exporter textfile, or NULL
 * @scanned_sig: the device objects under /sys/class/nvme and
 *		/sys/class/block (vwc_topo_names_sig()) as the last scan
 *		that succeeded read them (&vwc_topo.names_sig)
 * @lock_fails:	evaluations in a row that could not take the writers'
 *		lock for an error of its own (not another writer's hold)
 * @tf_ns:	the textfile's write_cache of each namespace of @run's
 *		topology (by index), as last read (watch-textfile.c)
 * @tf_nr:	entries of @tf_ns; when it is not the topology's count,
 *		every namespace is read again
 * @tf_all:	every namespace's write_cache to read again at the next
 *		write of the textfile (a new topology, a safety-net round)
 */
struct vwc_sidecar {
	struct vwc_run run;
	struct vwc_model model;
	struct vwc_watch_src src;
	const char *textfile;
	uint64_t scanned_sig;
	int lock_fails;
	struct vwc_tf_ns *tf_ns;
	int tf_nr;
	bool tf_all;
};

/**
 * vwc_watch_ops - the model's effects: open and hold /dev/nvmeN, watch
 * and unwatch nodes, a controller's identity (kernfs inode of its sysfs
 * directory). The model's arg is the &struct vwc_sidecar.
 */
extern const struct vwc_model_ops vwc_watch_ops;

/**
 * vwc_watch_now() - monotonic seconds
 *
 * Return: CLOCK_MONOTONIC in seconds.
 */
double vwc_watch_now(void);

/**
 * vwc_watch_cpu_now() - CPU seconds of the calling thread
 *
 * What a scan or an evaluation cost, not the time others ran meanwhile.
 *
 * Return: CLOCK_THREAD_CPUTIME_ID in seconds.
 */
double vwc_watch_cpu_now(void);

/**
 * vwc_watch_rescan() - discover the topology again and follow it
 * @wr:	sidecar
 */
void vwc_watch_rescan(struct vwc_sidecar *wr);

/**
 * vwc_watch_topo_changed() - did a controller, namespace or path come or
 *			      go since the last scan (the device objects
 *			      under /sys/class/nvme and /sys/class/block)
 * @wr:	sidecar
 *
 * One readdir of each: cheap enough for every safety-net round, for the
 * hidden multipath paths (nvmeXcYnZ) that send no uevent.
 *
 * Return: true if they changed (the caller rescans).
 */
bool vwc_watch_topo_changed(struct vwc_sidecar *wr);

/**
 * vwc_watch_release_idle() - close the descriptors idle for long enough
 * @wr:	the sidecar
 *
 * See vwc_model_release_due(): a held /dev/nvmeN pins the nvme module.
 */
void vwc_watch_release_idle(struct vwc_sidecar *wr);

/**
 * vwc_watch_open_retry() - try the opens that are due (hot-added
 *			    controllers that were not live yet)
 * @wr:	sidecar
 */
void vwc_watch_open_retry(struct vwc_sidecar *wr);

/**
 * vwc_watch_evaluate() - probe and apply for every controller that needs
 *			  it, one at a time, each under the writers' lock
 * @wr:	sidecar
 */
void vwc_watch_evaluate(struct vwc_sidecar *wr);

/**
 * vwc_watch_write_back_now() - a Set Features 06h with WCE=1 was submitted
 *				to @c: its namespaces to write back at once
 * @w:	model (its arg is the &struct vwc_sidecar)
 * @c:	controller
 *
 * The safe direction: takes no lock and waits for nothing. Namespaces an
 * admin configured "ignore" are left alone.
 */
void vwc_watch_write_back_now(struct vwc_model *w, struct vwc_wctrl *c);

/**
 * vwc_watch_check_modes() - the safety net: every namespace's write_cache
 *			     against the last decision
 * @wr:	sidecar
 *
 * A namespace that differs has its controllers read again.
 */
void vwc_watch_check_modes(struct vwc_sidecar *wr);

/**
 * vwc_watch_publish_fast() - hand the fast path the current controllers
 * @wr:	the sidecar
 *
 * Each controller's instance, admin queue and namespaces (those
 * configured "ignore" left out), for the write back it writes on its own
 * (watch-fast.h). After every change of the topology or a queue learned.
 */
void vwc_watch_publish_fast(struct vwc_sidecar *wr);

/**
 * vwc_watch_fast_table() - what vwc_watch_publish_fast() hands over
 * @wr:	the sidecar
 * @nr:	how many controllers (0 with NULL)
 *
 * Each controller of the topology the model follows, with the namespaces
 * that reach it in the topology's order: those not configured "ignore"
 * through any of their controllers and without their own "no volatile
 * write cache" bit.
 *
 * Return: the table, to free with vwc_fast_free_table(), or NULL if no
 * memory.
 */
struct vwc_fast_ctrl *vwc_watch_fast_table(struct vwc_sidecar *wr, int *nr);

#endif
