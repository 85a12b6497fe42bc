/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: watch-model.h - the sidecar's model
 *
 * What the sidecar ("watch") knows between events: the controllers and
 * namespaces it watches, the facts it last read, and what is pending
 * (a Set Features 06h the kernel-side detection saw and not completed
 * yet, re-checks after a reset, a controller that refused its open). No
 * I/O: the event sources (watch-sources.c: udev, inotify, the fast path's
 * pipe from the kernel-side detection, kwatch.h: kprobes on nvme_core's
 * admin passthrough entry points, or the nvme tracepoints where kprobes
 * cannot be made) and the timers feed it through the vwc_model_note_*()
 * calls below, and the acting part (watch-act.c) reads what needs a look,
 * probes, applies and hands the facts back with vwc_model_learn(). What
 * the model wants done to a device when one appears or goes (open it,
 * watch its nodes) goes through &struct vwc_model_ops. One prefix,
 * vwc_model_: the sidecar's own functions (watch-act.h) are vwc_watch_,
 * its state &struct vwc_sidecar.
 */
#ifndef VWC_WATCH_MODEL_H
#define VWC_WATCH_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "topo.h"

#define VWC_MODEL_SETTLE_N	3	/* re-checks after reset/rescan */
#define VWC_MODEL_PENDING_S	2.0	/* a completion never seen */
#define VWC_MODEL_EXPIRED_N	16	/* timed-out cids still listened to */
#define VWC_MODEL_PENDING_N	16	/* Set Features 06h in flight, kept */
#define VWC_MODEL_OPEN_MIN_S	0.05	/* open retry: first delay */
#define VWC_MODEL_OPEN_MAX_S	5.0	/* open retry: longest delay */
#define VWC_MODEL_HOLD_S	1.0	/* idle descriptor: closed after */
/*
 * Namespace adds gathered into one topology scan: it runs once no add came
 * for VWC_MODEL_ADD_QUIET_S (or the last scan's own CPU time, if longer:
 * under load udevd hands the adds over one by one, each a scan's time
 * apart, and a scan after each would cost as much as the rest together;
 * at 0.1 s, adds 0.13 s apart, a connect's pace under emulation at 4,096
 * namespaces, were scanned every few adds, not once a second),
 * and at the latest VWC_MODEL_ADD_MAX_S (or four times the last scan's
 * own CPU time, if longer) after the first. A new
 * namespace starts in the kernel's mode, write back wherever a cache may
 * be on, so the wait costs speed, never safety. Controllers and paths
 * (an add, a reset or reconnect, the re-checks after them) can call for
 * write back: they are scanned at once while a namespace's write through
 * rests on a controller's cache being off (vwc_model_wt_at_stake()), and
 * gathered with the adds while none does (every namespace in write back,
 * or in write through by its own "no volatile write cache" bit, which a
 * namespace reports the same through every path: an array's controllers
 * over fabrics, a connect of a hundred subsystems; and a re-check's scan
 * is skipped when no device object changed: vwc_model_scan_skips()).
 * What the wait can cost, at most max(1 s, four times a scan): a path
 * that joins, through a controller whose cache is on, a head whose bit
 * another target answered differently (read again when the scan sees the
 * join), or a head left in write through with no path at all while the
 * sidecar started (no controller to judge it by).
 */
#define VWC_MODEL_ADD_QUIET_S	0.3
#define VWC_MODEL_ADD_MAX_S	1.0
/*
 * Close events of a device node while the kernel-side detection runs: it
 * sees every Set Features 06h at its submission, so a close only backs it
 * up, and the closes that come together (udev's probes of a new
 * namespace, a tool's many opens) make one WCE read per controller at
 * most every VWC_MODEL_CLOSE_S. Without that detection a close is read at
 * once: it is the detection then.
 */
#define VWC_MODEL_CLOSE_S	1.0

struct vwc_kw_event;
struct vwc_model;

/**
 * struct vwc_wpending - a Set Features 06h submitted, not completed
 * @cid:	its cid (tracepoints) or thread (kprobes)
 * @wce:	the WCE it sets
 * @uring:	through io_uring (kprobes): no cid, any io_uring completion
 *		on the controller may be its; it ends when WCE reads @wce
 */
struct vwc_wpending {
	uint32_t cid;
	uint8_t wce;
	bool uring;
};

/**
 * struct vwc_wctrl - one watched controller
 * @name:	nvmeN
 * @instance:	N
 * @ident:	identity of the kernel object (see &vwc_model_ops.ident):
 *		a controller that went and came back under the same name
 *		is a new one
 * @fd:		descriptor held open, -1 while it cannot be opened or
 *		while it is let go (@released)
 * @open_at:	when to try the open again (0: not pending)
 * @open_delay:	the current retry delay
 * @used_at:	when @fd last served a probe (monotonic seconds)
 * @released:	@fd was closed after VWC_MODEL_HOLD_S idle: an open
 *		descriptor of /dev/nvmeN pins the driver's module, and the
 *		sidecar must not refuse an admin's `rmmod nvme`; opened
 *		again by the next probe
 * @full:	needs Identify, WCE and SMART
 * @own_bits:	its namespaces' own "no volatile write cache" bits to read
 *		again at its next full look: set by what happened to it (an
 *		add, an open, a reset, a reconnect, an asynchronous event),
 *		not by the re-checks after it (a bit read since stays as
 *		read; one that could not be read is read again anyway)
 * @wce:	needs Get Features 06h
 * @arm_smart:	SMART critical warning events to enable again
 * @aec_refused: it answered the Asynchronous Event Configuration with an
 *		NVMe status (no SMART events to enable: not asked again)
 * @known:	@facts, @vwc and @critical_warning are valid
 * @facts:	the facts last read
 * @vwc:	Identify Controller's VWC byte last read
 * @ver:	Identify Controller's VER last read
 * @ns_indep_refused: it refused the I/O Command Set Independent Identify
 *		Namespace (not asked again)
 * @critical_warning: SMART critical warning byte last read
 * @settle:	pending re-checks (monotonic seconds, 0 none)
 * @close_at:	a WCE read asked by a close event, due then (monotonic
 *		seconds, 0 none): vwc_model_note_close()
 * @close_check: that read is due: WCE alone, and an evaluation only if it
 *		differs from what is known (vwc_model_close_read())
 * @clean:	the last evaluation it took part in left every namespace
 *		that evaluation selected in its mode (none failed, the
 *		writers' lock was had): what a close check may rest on, with
 *		the modes read again
 * @pending:	Set Features 06h submitted, not completed (the pending
 *		timeout reads WCE when none is seen)
 * @nr_pending:	how many
 * @pending_since: when the first of them was seen (monotonic seconds)
 * @expired:	those whose completion was not seen in time (ring), +1
 * @expired_next: the next slot of @expired
 * @admin_q:	the admin queue's kernel address (kprobes name the
 *		controller by it), learned from the sidecar's own Get
 *		Features; 0 not known
 * @wb_now:	vwc_model_note_kernel() says: write back now
 * @wb_since:	when the kernel saw the last Set Features 06h with WCE=1
 *		(monotonic seconds), for the reaction's figure
 * @seen:	found in the topology of the last vwc_model_sync()
 */
struct vwc_wctrl {
	char name[VWC_NAME_LEN];
	int instance;
	uint64_t ident;
	int fd;
	double open_at, open_delay;
	double used_at;
	bool released;
	bool full, own_bits, wce, arm_smart, aec_refused;
	bool known;
	struct vwc_facts facts;
	uint8_t vwc, critical_warning;
	uint32_t ver;
	bool ns_indep_refused;
	double settle[VWC_MODEL_SETTLE_N];
	double close_at;
	bool close_check, clean;
	struct vwc_wpending pending[VWC_MODEL_PENDING_N];
	int nr_pending;
	double pending_since;
	int64_t expired[VWC_MODEL_EXPIRED_N];
	int expired_next;
	double wb_since;
	uint64_t admin_q;
	bool wb_now;
	bool seen;
};

/**
 * struct vwc_wns - one watched namespace
 * @name:	nvmeXnY
 * @expected:	the mode last written or found right, VWC_MODE_NONE unknown
 * @paths:	which controllers reach it (a signature): when it changes,
 *		they all read WCE again
 * @ident:	its identity (ops->ns_ident: its sysfs directory's kernfs
 *		inode, new for every disk), 0 unknown
 * @no_vwc:	its own "no volatile write cache" bit as last read, carried
 *		to each new topology while @ident stays the same (an
 *		Identify per namespace and scan saved); read again at each
 *		safety net where it says no cache, when a path joins or
 *		leaves, and at a full look of a controller reaching it (a
 *		reset, a reconnect, a new controller)
 * @own_bit:	@expected came with the namespace's own bit saying no cache
 *		(write through whatever its controllers report): kept while
 *		@no_vwc is read again, for vwc_model_wt_at_stake()
 * @seen:	found in the topology of the last vwc_model_sync()
 */
struct vwc_wns {
	char name[VWC_NAME_LEN];
	enum vwc_mode expected;
	uint64_t paths;
	uint64_t ident;
	enum vwc_tri no_vwc;
	bool own_bit;
	bool seen;
};

/**
 * struct vwc_model_ops - effects the model asks for
 * @ctrl_added:	a controller appeared: open it (set c->fd, or leave -1),
 *		watch its nodes
 * @ctrl_gone:	a controller went: stop watching its nodes, then close
 *		c->fd
 * @ns_added:	a namespace appeared: watch its nodes
 * @ns_gone:	a namespace went: stop watching its nodes
 * @ident:	the identity of a controller of the topology (the sysfs
 *		directory's kernfs inode: new for every device object)
 * @ns_ident:	the identity of a namespace of the topology (its sysfs
 *		directory's kernfs inode), 0 unknown
 */
struct vwc_model_ops {
	void (*ctrl_added)(struct vwc_model *w, struct vwc_wctrl *c,
			   const struct vwc_ctrl *tc);
	void (*ctrl_gone)(struct vwc_model *w, struct vwc_wctrl *c);
	void (*ns_added)(struct vwc_model *w, const char *name);
	void (*ns_gone)(struct vwc_model *w, const char *name);
	uint64_t (*ident)(const struct vwc_ctrl *tc);
	uint64_t (*ns_ident)(const struct vwc_ns *tn);
};

/**
 * struct vwc_model - the model
 * @topo:	the topology it follows (owned by the caller)
 * @ops:	effects
 * @arg:	for the caller (the sources and the acting part)
 * @rescan:	the topology must be discovered again
 * @recheck:	controllers or paths may have come or changed: a rescan at
 *		once or gathered (vwc_model_timers(), vwc_model_wt_at_stake())
 * @reshape:	the next scan was asked for by an add or a remove, or
 *		events lost, not only by a re-check: it is done even if no
 *		device object under /sys/class/nvme and /sys/class/block
 *		came or went (vwc_model_scan_skips())
 * @publish:	something was seen: the textfile is to be rewritten
 * @ctrl:	the controllers watched
 * @nr_ctrl:	how many
 * @at_inst:	by instance number N of nvmeN, the index in @ctrl where
 *		vwc_model_find_ctrl() last found it: a hint, checked
 *		against the name at every use (walked on a miss), so
 *		that the finds of every event, scan and evaluation do not
 *		walk hundreds of controllers at fabrics scale
 * @nr_at_inst:	its room
 * @ns:		the namespaces watched, in the order of their names after
 *		each vwc_model_sync() (vwc_model_find_ns() bisects)
 * @nr_ns:	how many
 * @attach:	the kernel-side detection may attach more now (a controller
 *		or a CPU appeared, the safety net's round)
 * @lock_retry:	when to try the writers' lock again after it could not be
 *		had (monotonic seconds, 0 none)
 * @rescan_at:	when the namespace adds gathered so far are scanned
 *		(monotonic seconds, 0 none)
 * @rescan_first: when the first of them came
 * @rescan_cost: what the last scan cost (CPU seconds, with what follows
 *		from it: vwc_watch_rescan())
 * @rescans:	scans done, for the log
 * @rescans_skipped: re-checks' scans skipped (no device object came or
 *		went: vwc_model_scan_skips()), for the log
 * @rescan_total: their cost (CPU seconds), for the log
 * @events:	events the sources handed in (udev, inotify), for the log
 * @udev_events: of them, udev's (after its rules ran), for the log
 * @kernel_uevents: of them, the kernel's own uevents, for the log
 * @evaluations: controllers evaluated, for the log
 * @full_evaluations: of them, full looks (Identify, WCE, SMART and
 *		each namespace's own bit), for the log
 * @kernel_events: events of the kernel-side detection, for the log
 * @closes_confirmed: close checks that found WCE as known (no
 *		evaluation), for the log
 * @closes_moot: close checks that read nothing: no write through on the
 *		controller's cache (vwc_model_close_moot()), for the log
 * @eval_cpu:	CPU seconds spent evaluating, for the log
 * @close_cpu:	CPU seconds spent in close checks (Get Features 06h, the
 *		modes read), for the log
 * @read_cpu:	CPU seconds spent reading the event sources (with the
 *		write back the fast path's messages call for), for the log
 */
struct vwc_model {
	struct vwc_topo *topo;
	const struct vwc_model_ops *ops;
	void *arg;
	struct vwc_wctrl *ctrl;
	int nr_ctrl;
	int *at_inst;
	int nr_at_inst;
	struct vwc_wns *ns;
	int nr_ns;
	bool rescan;
	bool recheck;
	bool reshape;
	bool publish;
	bool attach;
	double lock_retry;
	double rescan_at, rescan_first, rescan_cost, rescan_total;
	unsigned long events, evaluations, kernel_events, rescans;
	unsigned long rescans_skipped, udev_events, kernel_uevents;
	unsigned long full_evaluations, closes_confirmed, closes_moot;
	double eval_cpu, read_cpu, close_cpu;
};

/**
 * vwc_model_init() - an empty model
 * @w:		model
 * @topo:	topology to follow
 * @ops:	effects
 * @arg:	stored in @w->arg
 */
void vwc_model_init(struct vwc_model *w, struct vwc_topo *topo,
		    const struct vwc_model_ops *ops, void *arg);

/**
 * vwc_model_free() - forget everything (ctrl_gone for each controller)
 * @w:	model
 */
void vwc_model_free(struct vwc_model *w);

/**
 * vwc_model_sync() - follow the topology after a (re)scan
 * @w:		model
 * @now:	monotonic seconds
 *
 * New controllers and namespaces are added (to be probed in full), those
 * gone are forgotten, a controller whose identity changed is forgotten
 * and added anew. The topology's controllers get the held descriptors and
 * the known facts.
 */
void vwc_model_sync(struct vwc_model *w, double now);

/**
 * vwc_model_find_ctrl() - a watched controller by name
 * @w:		model
 * @name:	nvmeN
 *
 * Return: it, or NULL.
 */
struct vwc_wctrl *vwc_model_find_ctrl(struct vwc_model *w, const char *name);

/**
 * vwc_model_find_ns() - a watched namespace by name
 * @w:		model
 * @name:	nvmeXnY
 *
 * Return: it, or NULL.
 */
struct vwc_wns *vwc_model_find_ns(struct vwc_model *w, const char *name);

/**
 * vwc_model_close_moot() - can a close check end with nothing read
 * @w:		model
 * @c:		the controller whose @c->close_check is due
 * @wt_marked:	vwc_blk_wt_marked(): some run of ours may have written
 *		write through this boot
 *
 * With the kernel-side detection running, a close only backs it up, and
 * what it backs up is the invariant: a Set Features 06h it missed that
 * turned a cache on under a namespace in write through. While no run of
 * ours has written write through this boot (no mark: another process's
 * sync or set-cache makes it before its write, so the model's modes are
 * not the only ones), where no namespace @c reaches is in write through
 * on its controllers' word (every one in write back, or in write through
 * by its own "no volatile write cache" bit, which no controller's cache
 * changes) and the controller is as vwc_model_close_read() would let rest
 * (facts known, WCE among them, a cache, the last evaluation clean,
 * nothing in flight), no answer could make a namespace unsafe: a cache
 * turned off under write back costs
 * speed until the safety net's round, never data. Nothing is sent: at
 * fabrics scale nvme-cli's connect opens every namespace of the host, and
 * an array's controllers (all with their cache on) were each asked once
 * per connect. Anything at stake, or anything the close check would
 * evaluate, goes on to vwc_model_close_reads(), whose check reads every
 * namespace's mode as well (a write through by another writer). What is
 * given up: a write through written by hand (not by a run of ours, so no
 * mark) under a cache that is on, which a close on the controller used
 * to find by chance, is found by the next safety-net round.
 *
 * Return: true if the close check is over (@c->close_check cleared,
 * counted in @w->closes_moot).
 */
bool vwc_model_close_moot(struct vwc_model *w, struct vwc_wctrl *c,
			  bool wt_marked);

/**
 * vwc_model_close_reads() - is a close check's WCE read worth sending
 * @w:		model
 * @c:		the controller whose @c->close_check is due
 *
 * Not when the answer could not spare the evaluation (vwc_model_close_read():
 * facts not known, a backup failure reported, the last evaluation not
 * clean, a Set Features 06h in flight) or when the controller reports no
 * volatile write cache (its WCE is not read at all): then the evaluation
 * is asked for at once (@c->wce set), with no command sent for nothing.
 *
 * Return: true if the caller reads WCE and calls vwc_model_close_read().
 */
bool vwc_model_close_reads(struct vwc_model *w, struct vwc_wctrl *c);

/**
 * vwc_model_close_read() - what a close check's WCE read calls for
 * @w:		model
 * @c:		the controller whose @c->close_check was due
 * @wce:	Get Features 06h as read now (unknown: it failed)
 *
 * With the kernel-side detection running, a close of a device node only
 * backs it up (a Set Features 06h it missed), and the closes come by
 * thousands at fabrics scale: nvme-cli's connect opens every namespace
 * of the host to identify it, so every controller is asked once per
 * connect. WCE as known, with nothing in flight, the last evaluation
 * clean (@c->clean) and every namespace it reaches in the mode it left
 * (the caller passes VWC_TRI_UNKNOWN when one is not), means that nothing
 * the
 * close could have done changed the cache: no evaluation (which would
 * read every namespace's mode, take the writers' lock and read WCE twice
 * more). Anything else (a different value, a failed read, facts not
 * known or a backup failure reported: vwc_model_plan(), no cache
 * reported, a Set Features 06h in flight, a namespace its last
 * evaluation could not set) asks for the evaluation.
 *
 * Return: true if @c needs its evaluation (@c->wce set).
 */
bool vwc_model_close_read(struct vwc_model *w, struct vwc_wctrl *c,
			  enum vwc_tri wce);

/**
 * vwc_model_note_ns() - something happened on a namespace's node
 * @w:		model
 * @name:	nvmeXnY
 *
 * Every controller reaching it reads WCE again.
 */
void vwc_model_note_ns(struct vwc_model *w, const char *name);

/**
 * vwc_model_note_ctrl() - something happened on a controller
 * @w:		model
 * @name:	nvmeN
 * @full:	Identify and SMART too, not only WCE
 * @settle:	a reset or rescan: look again at 0.3, 1.5 and 5 s, with SMART
 *		events enabled again, and discover the topology again then
 *		(multipath paths send no uevents)
 * @now:	monotonic seconds
 *
 * Return: false if @name is not watched (the caller rescans).
 */
bool vwc_model_note_ctrl(struct vwc_model *w, const char *name, bool full,
			 bool settle, double now);

/**
 * vwc_model_note_close() - a close event of a device node
 * @w:		model
 * @name:	nvmeN or nvmeXnY (the node's controller or namespace)
 * @gathered:	the kernel-side detection runs: the WCE read waits up to
 *		VWC_MODEL_CLOSE_S, shared by the closes that come meanwhile;
 *		false: every controller concerned reads WCE at once
 * @now:	monotonic seconds
 */
void vwc_model_note_close(struct vwc_model *w, const char *name,
			  bool gathered, double now);

/**
 * vwc_model_note_ns_added() - a namespace's add event
 * @w:		model
 * @now:	monotonic seconds
 *
 * The topology is scanned again once the adds pause (VWC_MODEL_ADD_QUIET_S),
 * or when the first has waited long enough: vwc_model_timers() sets
 * @w->rescan then.
 */
void vwc_model_note_ns_added(struct vwc_model *w, double now);

/**
 * vwc_model_wt_at_stake() - may a controller call a namespace back to write back
 * @w:	model
 *
 * True while a watched namespace is in write through (as last written or
 * found) other than by its own "no volatile write cache" bit (as last
 * read: the bit is read again after a path joins or leaves), or a known
 * controller's facts make write through (its namespaces are in it, or
 * about to be): a path that joins, or a controller that comes back, may
 * bring a cache that is on to such a namespace, and must be seen at once.
 *
 * Return: true if a controller or path change is to be scanned at once.
 */
bool vwc_model_wt_at_stake(const struct vwc_model *w);

/**
 * vwc_model_rescanned() - the topology was scanned again
 * @w:		model
 * @cost:	how long it took (seconds)
 *
 * The namespace adds gathered until now are in it.
 */
void vwc_model_rescanned(struct vwc_model *w, double cost);

/**
 * vwc_model_scan_skips() - is the scan asked for needless
 * @w:		model
 * @names_changed: a device object under /sys/class/nvme or
 *		/sys/class/block came or went since the last scan (its name
 *		and inode number: vwc_topo_names_sig(), against the number
 *		of what that scan's own readdirs saw, so that one coming
 *		during it is seen next time)
 *
 * The re-checks after a reset, a reconnect or a controller's add (its
 * settle timers: 0.3, 1.5 and 5 s) ask for a scan in case the kernel
 * brought multipath paths without a uevent; a path brings its node's
 * name (nvme<S>c<C>n<N>), the names say the shape (which controllers
 * reach which namespace), and a disk or controller replaced under its
 * name has a new inode number. So a scan only re-checks asked for (no
 * add or remove event, no events lost, @w->reshape false) is skipped
 * when none of them changed, as the safety net's round is (each
 * re-check cost a scan of the whole host before). What a re-check reads
 * of the controller itself (Identify, WCE, SMART) is read through its
 * descriptor either way.
 *
 * Return: true if skipped (the request is cleared, counted in
 * @w->rescans_skipped); false if the caller scans.
 */
bool vwc_model_scan_skips(struct vwc_model *w, bool names_changed);

/**
 * vwc_model_note_gone() - a controller's remove event
 * @w:		model
 * @name:	nvmeN
 *
 * It is forgotten at once (descriptor closed), so that one coming back
 * under the same name before the rescan is never taken for it.
 */
void vwc_model_note_gone(struct vwc_model *w, const char *name);

/**
 * vwc_model_note_all() - events were lost (queue overflow)
 * @w:	model
 *
 * The topology is discovered again and every controller probed in full.
 */
void vwc_model_note_all(struct vwc_model *w);

/**
 * vwc_model_note_kernel() - an event of the kernel-side detection
 * @w:		model
 * @ev:		the event
 * @now:	monotonic seconds
 *
 * The controller is @ev->ctrl (tracepoints) or the one whose admin queue
 * is @ev->q (kprobes); when none is known, the event is every
 * controller's. A Set Features 06h is pending until its completion; a
 * completion that comes after the pending timeout is still taken as a
 * WCE change.
 *
 * Such a Set Features while a gathered scan waits (@w->rescan_at) makes
 * the scan due now: a namespace added since the last one is not in the
 * fast path's table.
 *
 * Return: how many controllers to put in write back now (a Set Features
 * 06h with WCE=1 was submitted to them): those with @wb_now set.
 */
int vwc_model_note_kernel(struct vwc_model *w, const struct vwc_kw_event *ev,
			  double now);

/**
 * vwc_model_learn_queue() - the admin queue a controller's commands use
 * @w:	model
 * @c:	the controller the sidecar just read
 * @q:	its queue (vwc_kwatch_learn())
 */
void vwc_model_learn_queue(struct vwc_model *w, struct vwc_wctrl *c,
			   uint64_t q);

/**
 * vwc_model_confirm() - WCE was just read from a controller
 * @c:		the controller
 * @wce:	what it read
 *
 * A Set Features 06h through io_uring, whose own completion cannot be told
 * from another io_uring command's, has taken effect once WCE reads what
 * it sets: it is no longer pending then. (Acting on that value is right
 * whenever the command completes: it sets the same.)
 */
void vwc_model_confirm(struct vwc_wctrl *c, enum vwc_tri wce);

/**
 * vwc_model_safety_net() - the periodic round
 * @w:	model
 *
 * WCE again on every controller that reports a cache or is not known;
 * the kernel-side detection tries to attach what it lacks (nvme_core
 * loaded, CPUs online since).
 */
void vwc_model_safety_net(struct vwc_model *w);

/**
 * vwc_model_timers() - fire what is due
 * @w:		model
 * @now:	monotonic seconds
 *
 * Settle re-checks, Set Features whose completion never came, opens to
 * retry and idle descriptors to let go (those are left to the caller:
 * see vwc_model_open_due() and vwc_model_release_due()).
 *
 * Return: when the next timer is due, 0 if none.
 */
double vwc_model_timers(struct vwc_model *w, double now);

/**
 * vwc_model_open_due() - is a controller's open to be tried now
 * @c:		controller
 * @now:	monotonic seconds
 *
 * Return: true if it has no descriptor and its retry time has come.
 */
bool vwc_model_open_due(const struct vwc_wctrl *c, double now);

/**
 * vwc_model_open_result() - record an open attempt
 * @c:		controller
 * @fd:		the descriptor, or a negative errno
 * @now:	monotonic seconds
 *
 * A success wants a full probe and SMART events armed; a failure is tried
 * again after a delay that doubles up to 5 s.
 */
void vwc_model_open_result(struct vwc_wctrl *c, int fd, double now);

/**
 * vwc_model_release_due() - is a held descriptor to be let go now
 * @c:		controller
 * @now:	monotonic seconds
 *
 * An open /dev/nvmeN takes a reference on the driver's module (the
 * kernel's nvme_dev_open()): a descriptor held for good makes every
 * `rmmod nvme` fail with "in use". A descriptor is let go once nothing
 * is to be read through it (no probe wanted, no Set Features pending)
 * and it served none for VWC_MODEL_HOLD_S.
 *
 * Return: true if @c's descriptor is to be closed now.
 */
bool vwc_model_release_due(const struct vwc_wctrl *c, double now);

/**
 * vwc_model_released() - record that a descriptor was let go
 * @c:		controller
 *
 * The next probe opens it again (not the retry timer).
 */
void vwc_model_released(struct vwc_wctrl *c);

/** enum vwc_model_probe - what one evaluation reads from a controller */
enum vwc_model_probe {
	VWC_MODEL_PROBE_NONE = 0,
	VWC_MODEL_PROBE_WCE,	/* Get Features 06h */
	VWC_MODEL_PROBE_FULL,	/* Identify, Get Features 06h, SMART */
};

/**
 * vwc_model_plan() - what to read from a controller of an evaluation
 * @w:	model
 * @c:	watched controller, selected (it or a namespace it shares)
 *
 * Every selected controller reads WCE at least: a write through on a
 * shared namespace is never decided from another controller's cached
 * WCE. A controller whose other facts are unknown or not clean, or
 * that was asked for, is read in full.
 *
 * Return: the probe.
 */
enum vwc_model_probe vwc_model_plan(const struct vwc_model *w,
				    const struct vwc_wctrl *c);

/**
 * vwc_model_learn() - keep what a probe found
 * @c:		watched controller
 * @tc:		the topology's controller, probed
 */
void vwc_model_learn(struct vwc_wctrl *c, const struct vwc_ctrl *tc);

/**
 * vwc_model_busy() - does any controller need a look
 * @w:	model
 *
 * Return: true if one has @full or @wce set.
 */
bool vwc_model_busy(const struct vwc_model *w);

#endif
