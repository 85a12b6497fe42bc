/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: blk.h - block-layer settings
 *
 * vwc_blk_apply() is the one function of the project that changes a
 * namespace's queue/write_cache; udev, the sidecar, the plugin and the
 * standalone binary all go through it. It writes only when the value
 * differs, reads it back, logs the policy's reason and records what it
 * changed under the run directory so that "restore" can undo exactly that.
 */
#ifndef VWC_BLK_H
#define VWC_BLK_H

#include <stdbool.h>

#include "policy.h"
#include "topo.h"

/* in vwc_rundir(): vwc_blk_mark_wt(); the udev rule tests it */
#define VWC_WT_MARK "write-through"

/**
 * vwc_blk_read() - read a block device's queue/write_cache
 * @syspath:	the disk's sysfs directory
 * @mode:	result
 *
 * Return: 0 or a negative errno.
 */
int vwc_blk_read(const char *syspath, enum vwc_mode *mode);

/**
 * vwc_blk_kernel_wc() - does the kernel hold a write cache for a namespace?
 * @syspath:	the disk's sysfs directory
 *
 * The kernel's own view, whatever queue/write_cache says: nvme exposes a
 * namespace's write cache and FUA together, so queue/fua reads 1 when the
 * kernel holds a volatile cache for it, 0 when it does not (no cache, or
 * a kernel that reads WCE itself and found it 0). Writing write through
 * does not change it. Where the kernel holds no cache, a write of write
 * back is refused (an error, or it reads back write through).
 *
 * Return: 1, 0, or a negative errno.
 */
int vwc_blk_kernel_wc(const char *syspath);

/**
 * vwc_blk_apply() - make a namespace's block-layer mode follow @d
 * @ns:		namespace: its node and its hidden multipath path nodes;
 *		before, after, action and errmsg are filled in
 * @d:		the policy's decision
 * @dry_run:	only report what would change
 *
 * Going to write-through, a failure part-way puts every node back to
 * write-back: never half-applied in the unsafe direction. Going to
 * write back on a namespace in write through the kernel holds no write
 * cache for (vwc_blk_kernel_wc() 0), nothing is written: the kernel would
 * refuse it, and follows WCE itself if it reads it. @ns->kernel_held is
 * set, the action is "unchanged", and it is no error here: the caller
 * decides whether it may stand (vwc_policy_kernel_may_hold()). Only a
 * write through this tool made there itself is taken back (its flag
 * would outlive the kernel's own rescan on 6.11 and later). Write through
 * read back as write back means another writer wrote after us: -EAGAIN,
 * @ns->overtaken set, logged at info level only (vwc_run_apply() reads
 * WCE again, tries once more, and says it if that fails too).
 *
 * Return: 0 or a negative errno (also reported in @ns->errmsg).
 */
int vwc_blk_apply(struct vwc_ns *ns, struct vwc_decision d, bool dry_run);

/**
 * vwc_blk_report_found() - a later vwc_blk_apply() of @ns in the same run,
 *			    reported as the run as a whole
 * @ns:		the namespace, just applied again
 * @before:	its mode as the run's first vwc_blk_apply() found it
 *
 * @ns->before becomes @before, and the action changed or unchanged from
 * it to @ns->after; a failure stays one.
 */
void vwc_blk_report_found(struct vwc_ns *ns, enum vwc_mode before);

/* Most threads vwc_blk_apply_many() writes from */
#define VWC_BLK_WRITERS	16

/**
 * vwc_blk_apply_many() - vwc_blk_apply() on several namespaces at once
 * @ns:		the namespaces
 * @d:		their decisions, in the same order
 * @n:		how many
 * @dry_run:	only report what would change
 *
 * Each namespace is handled by vwc_blk_apply(), as a whole, by one of up to
 * VWC_BLK_WRITERS threads (the caller's among them): on kernels where a
 * write of queue/write_cache freezes its queue (7.x: 13 to 29 ms each under
 * emulation, most of it waiting, not working), a subsystem's hundreds of
 * namespaces are not written one after the other. Namespaces are done in
 * the caller's thread until one takes 1 ms or more; threads are made for
 * the rest only then. A thread that cannot be made leaves its share to
 * the others.
 *
 * Return: how many namespaces failed.
 */
int vwc_blk_apply_many(struct vwc_ns *const *ns, const struct vwc_decision *d,
		       int n, bool dry_run);

/**
 * vwc_blk_wb_bump() - a write back is about to be written at once
 *
 * Called by the sidecar's fast path (watch-fast.h), a thread that writes
 * write back on a Set Features 06h with WCE=1 without the writers' lock,
 * before its writes. A writer of write through reads vwc_blk_wb_gen()
 * before it reads WCE and again after its writes: if it moved, it puts
 * back write back (the fast path's write may have come first).
 */
void vwc_blk_wb_bump(void);

/**
 * vwc_blk_wb_gen() - how many vwc_blk_wb_bump() so far
 *
 * Return: the count.
 */
unsigned long vwc_blk_wb_gen(void);

/**
 * vwc_blk_restore() - put a node back to what it was before this tool
 * @syspath:	the disk's sysfs directory
 * @name:	its kernel name (key of the record)
 * @dry_run:	only report
 * @allow_wt:	the policy allows write-through now; if not, a recorded
 *		write-through original is not restored (unsafe direction)
 * @msg:	what was done or why not
 * @len:	size of @msg
 *
 * Only acts if the node still holds the value this tool set; a value
 * changed by someone else since is left alone and reported.
 *
 * Return: 1 if restored (or would be), 0 if nothing to do or left alone,
 * negative errno on failure.
 */
int vwc_blk_restore(const char *syspath, const char *name, bool dry_run,
		    bool allow_wt, char *msg, size_t len);

/**
 * vwc_blk_record() - the original value recorded for a node
 * @name:	its kernel name
 * @orig:	result: what the node had before this tool changed it
 *
 * Return: 0, -ENOENT if this tool did not change it, or a negative errno.
 */
int vwc_blk_record(const char *name, enum vwc_mode *orig);

/**
 * enum vwc_hold_op - what vwc_blk_hold() does
 * @VWC_HOLD_TEST:	tell whether the mark is there
 * @VWC_HOLD_SET:	set it (restore)
 * @VWC_HOLD_CLEAR:	clear it (an explicit sync)
 */
enum vwc_hold_op { VWC_HOLD_TEST, VWC_HOLD_SET, VWC_HOLD_CLEAR };

/**
 * vwc_blk_hold() - mark, unmark or test "handed back to the kernel"
 * @name:	namespace block name
 * @op:		VWC_HOLD_SET (restore), VWC_HOLD_CLEAR (an explicit sync),
 *		VWC_HOLD_TEST
 *
 * The marks live in <rundir>/restored/ and are forgotten at reboot.
 *
 * Return: for VWC_HOLD_TEST 1 if marked, 0 if not; otherwise 0 or a
 * negative errno.
 */
int vwc_blk_hold(const char *name, enum vwc_hold_op op);

/**
 * vwc_blk_any_hold() - is any namespace marked "handed back to the kernel"
 *
 * One look at <rundir>/restored/ for a caller that would otherwise test
 * the mark of every namespace (vwc_blk_hold(), VWC_HOLD_TEST), one system
 * call each: with no mark there, none of them can be marked.
 *
 * Return: true if the directory has an entry, or cannot be read (test
 * each then); false if it is empty or absent.
 */
bool vwc_blk_any_hold(void);

/**
 * vwc_blk_mark_wt() - say that a namespace may be in write through that a
 *		       controller's event can call back to write back
 * @why:	what calls for it, for the log (a namespace's name)
 *
 * Makes <rundir>/write-through (VWC_WT_MARK), which nothing removes until
 * the next boot (/run is a tmpfs). While the sidecar runs, the udev rule
 * runs sync for a controller's add and change only where this mark
 * exists: with no mark, every namespace in write through is held there
 * by the kernel itself on the namespace's own "no volatile write cache"
 * bit (6.13 and later), which the kernel itself reads again when it
 * revalidates the namespace, so no controller that comes or comes back
 * can call for a write back that must not wait for the sidecar. Made by
 * vwc_blk_apply() and vwc_blk_restore() before any write of write
 * through (whatever the reason: on a kernel that ignores the bit, a
 * target may drop it later), by apply.c under the writers' lock before
 * its last look at which controllers reach a namespace it puts in write
 * through on their word (a controller whose event the rule left to the
 * sidecar is in sysfs by then), and by any run that finds a namespace in
 * write through that its own bit does not explain, whoever wrote it.
 * Opened under vwc_rundir_open()'s checks, never through a link; its
 * making logged (a notice naming @why).
 *
 * Return: 0 (also if it exists), or a negative errno: the caller then
 * writes no write through.
 */
int vwc_blk_mark_wt(const char *why);

/**
 * vwc_blk_wt_marked() - has vwc_blk_mark_wt() been called this boot
 *
 * Return: true if <rundir>/write-through is there, or cannot be told
 * absent (any error but ENOENT): some run of ours may have written write
 * through, or found one it did not explain.
 */
bool vwc_blk_wt_marked(void);

/**
 * vwc_blk_mark_strerror() - why vwc_blk_mark_wt() failed, in words
 * @err:	its return (a negative errno)
 * @buf:	where "cannot make <rundir>/write-through: <cause>" goes
 * @len:	its size
 *
 * Return: @buf.
 */
const char *vwc_blk_mark_strerror(int err, char *buf, size_t len);

/**
 * vwc_rundir_open() - the run directory, made safe
 *
 * Created 0700 (and its parents), a real directory (no symbolic link),
 * owned by this user, group and other bits cleared.
 *
 * Return: a descriptor of it, or a negative errno with the reason logged.
 */
int vwc_rundir_open(void);

/**
 * vwc_rundir() - where records live (NVME_VWC_SYNC_RUNDIR overrides)
 *
 * Return: a path.
 */
const char *vwc_rundir(void);

/**
 * vwc_mkdir_p() - create a directory and its parents (mode 0700: the
 *		   run directory and the records are root's alone)
 * @dir:	path
 *
 * Return: 0 (also if it exists) or a negative errno.
 */
int vwc_mkdir_p(const char *dir);

#endif
