/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: lock.h - the writers' lock
 *
 * One exclusive flock(2) on <rundir>/lock orders the writers of this
 * project in the unsafe direction: every write of "write through" to a
 * namespace's queue/write_cache, and every Set Features 06h, happens under
 * it, together with the read of WCE that allowed it and the read after it
 * (apply.c: the probe under the lock, then recheck()). udev's runs, the
 * sidecar's evaluations, sync, set-cache (Set Features and its read-back),
 * restore. An admin's own script takes part with flock(1):
 *
 *	flock /run/nvme-vwc-sync/lock nvme set-feature /dev/nvme0 ...
 *
 * Only root can open it: the run directory is 0700 and owned by root, the
 * file 0600 and owned by root, opened without following links. A directory
 * owned by someone else is refused (with the reason logged); a lock file
 * that is not 0600 of root (an older version's 0644, flock(1)'s own
 * creation, someone else's file) may be held by anyone through a
 * descriptor opened earlier, so it is replaced by a fresh one, renamed over
 * it; a root process holding the old one is waited for first, any other
 * holder is not. A process that waited on a file since replaced notices it
 * after flock() and takes the new one.
 *
 * The safe direction never waits. Writing "write back" takes no lock and
 * waits for no one (vwc_blk_apply() with a write-back decision, the
 * engine's first phase, vwc_run_write_back()). Why this keeps the
 * invariant: a namespace is left in write through while WCE=1 only if a
 * write-through writer W wrote it and WCE became 1 after W read it. W
 * holds the lock from that read through its write to the read after it
 * (recheck()), and goes back to write back if that read sees WCE=1. A
 * WCE=1 sent under the lock (set-cache, the admin's flock(1) pattern)
 * cannot complete inside W's hold, so it completed before W's first read
 * (W saw it) or after W's last one, and then its sender (set-cache writes
 * write back at once, and again under the lock before Set Features) or
 * the sidecar (it sees every Set Features 06h, and its
 * write back waits for nothing) puts write back after W's write. A WCE=1
 * sent without the lock is seen by the sidecar the same way, with or
 * without W. A lockless write back that lands between W's read and W's
 * write is overwritten by W; W's recheck or the sidecar's evaluation after
 * the Set Features completes puts it back: the window is the sidecar's
 * reaction, as without W. One that lands between W's write and its
 * read-back is seen (overtaken, apply.c overtaken_again()): W leaves
 * write back, reads WCE again 50 ms later and writes once more, followed
 * by the same read after it; that second write is W's first one again, on
 * a newer read, inside the same argument (the Set Features in flight
 * completes before that read, and W sees it, or after, and the sidecar
 * puts write back after W's write). So the lock only keeps our writers from
 * interleaving; no holder, however long it holds, delays write back.
 *
 * The lock file holds the pid of the last holder, for diagnostics only: the
 * holder named in messages is the one /proc/locks and the holder's own
 * descriptors show (vwc_lock_holder()).
 */
#ifndef VWC_LOCK_H
#define VWC_LOCK_H

#include <stdbool.h>
#include <stddef.h>

/**
 * vwc_lock_path() - the lock file (<rundir>/lock)
 *
 * Return: a path.
 */
const char *vwc_lock_path(void);

/**
 * vwc_lock_take() - take the writers' lock, waiting at most @timeout_ms
 * @timeout_ms:	how long to wait for another holder; 0 tries once
 *
 * Creates the run directory (0700) and the lock file (0600) if needed,
 * makes them safe as the DOC above says, or refuses them (reason logged).
 * Nested calls in one process only count.
 *
 * Return: 0, -ETIMEDOUT if another process kept it for @timeout_ms, -EPERM
 * for a run directory that cannot be made safe, or another negative errno
 * (e.g. -EACCES when not root).
 */
int vwc_lock_take(int timeout_ms);

/**
 * vwc_lock_release() - release what vwc_lock_take() took
 *
 * Records how long the lock was held (see vwc_lock_longest_ms()).
 */
void vwc_lock_release(void);

/**
 * vwc_lock_held() - this process holds the writers' lock
 *
 * Return: true between vwc_lock_take() and its last vwc_lock_release().
 */
bool vwc_lock_held(void);

/**
 * vwc_lock_holder() - the process holding the writers' lock now
 *
 * The FLOCK entry of /proc/locks for the lock file's device and inode
 * names the process that called flock(); it is named only if one of its
 * own descriptors still carries that lock (its fdinfo), so never a process
 * that has gone or passed the descriptor on. Not the pid in the file.
 *
 * Return: a pid, or 0 if none or not known.
 */
int vwc_lock_holder(void);

/**
 * vwc_lock_strerror() - why vwc_lock_take() failed, for messages
 * @err:	its return value
 * @buf:	result; for -ETIMEDOUT "held by another process (pid N,
 *		COMM)", without the parenthesis when vwc_lock_holder() does
 *		not know; otherwise the errno's text ("(must be root)" added
 *		for a permission error of a process that is not root)
 * @len:	size of @buf
 *
 * Return: @buf.
 */
const char *vwc_lock_strerror(int err, char *buf, size_t len);

/**
 * vwc_lock_longest_ms() - the longest hold of this process so far
 *
 * Return: milliseconds.
 */
double vwc_lock_longest_ms(void);

/* How long a command waits for the lock before it gives up. */
#define VWC_LOCK_TIMEOUT_MS	30000

#endif
