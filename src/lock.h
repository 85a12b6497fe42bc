/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: lock.h - the writers' lock
 *
 * Every process of this project that writes a namespace's queue/write_cache
 * or a controller's WCE (Set Features 06h) holds one exclusive flock(2) on
 * <rundir>/lock around its whole probe, decide and write sequence: udev's
 * runs, the sidecar's evaluations, sync, set-cache (across its whole
 * sequence), restore. So no evaluation that read WCE=0 can write
 * "write through" after set-cache put write back in place and enabled the
 * cache. An admin's own script takes part with flock(1):
 *
 *	flock /run/nvme-vwc-sync/lock nvme set-feature /dev/nvme0 ...
 *
 * The lock file holds the pid of the last holder, for diagnostics.
 */
#ifndef VWC_LOCK_H
#define VWC_LOCK_H

/**
 * vwc_lock_path() - the lock file (<rundir>/lock)
 *
 * Return: a path.
 */
const char *vwc_lock_path(void);

/**
 * vwc_lock_take() - take the writers' lock, waiting at most @timeout_ms
 * @timeout_ms:	how long to wait for another holder
 *
 * Creates the run directory and the lock file if needed. Nested calls in
 * one process only count.
 *
 * Return: 0, -ETIMEDOUT if another process kept it for @timeout_ms, or
 * another negative errno (e.g. -EACCES when not root).
 */
int vwc_lock_take(int timeout_ms);

/**
 * vwc_lock_release() - release what vwc_lock_take() took
 *
 * Records how long the lock was held (see vwc_lock_longest_ms()).
 */
void vwc_lock_release(void);

/**
 * vwc_lock_holder() - the pid written by the last holder
 *
 * Return: a pid, or 0 if unknown.
 */
int vwc_lock_holder(void);

/**
 * vwc_lock_longest_ms() - the longest hold of this process so far
 *
 * Return: milliseconds.
 */
double vwc_lock_longest_ms(void);

/* How long a command waits for the lock before it gives up. */
#define VWC_LOCK_TIMEOUT_MS	30000

#endif
