/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: engine.h - probe controllers, decide, apply
 *
 * One run of the tool over the devices an admin named: resolve the names,
 * probe the controllers that reach the selected namespaces (Identify VWC,
 * Get Features 06h, SMART critical warning), ask the policy, and hand the
 * decision to vwc_blk_apply(). Used by every command and by the sidecar.
 */
#ifndef VWC_ENGINE_H
#define VWC_ENGINE_H

#include <stdbool.h>

#include "topo.h"

struct udev;
struct vwc_config;

/**
 * struct vwc_arg_error - a command-line device that could not be used
 * @device:	as given
 * @msg:	why
 */
struct vwc_arg_error {
	char device[VWC_PATH_LEN];
	char msg[200];
};

/**
 * struct vwc_run - state of one run
 * @udev:		libudev context
 * @cfg:		configuration (overrides), may be NULL
 * @topo:		the host's devices, scanned by vwc_run_init()
 * @command:		command name, for reports
 * @dry_run:		decide, change nothing
 * @errs:		devices named on the command line that could not be
 *			used
 * @nr_errs:		how many
 * @nr_failed:		namespaces or controllers that failed
 * @locked:		holds the writers' lock (lock.h)
 * @lock_wait_ms:	how long vwc_run_apply() waits for the lock before
 *			write through (default VWC_LOCK_TIMEOUT_MS; 0: one
 *			try)
 * @lock_busy:		the last vwc_run_apply() left write through undone:
 *			the lock could not be had (try again later)
 * @lock_err:		why: -ETIMEDOUT (another process held it) or another
 *			negative errno (e.g. the run directory full or
 *			read-only)
 * @keep_restored:	never write through on what restore handed back;
 *			else clear those marks
 */
struct vwc_run {
	struct udev *udev;
	const struct vwc_config *cfg;
	struct vwc_topo topo;
	const char *command;
	bool dry_run;
	struct vwc_arg_error *errs;
	int nr_errs;
	int nr_failed;
	bool locked;
	int lock_wait_ms;
	bool lock_busy;
	int lock_err;
	bool keep_restored;
};

/**
 * vwc_run_init() - scan the host
 * @r:		run
 * @command:	command name for reports
 * @cfg:	configuration (overrides), may be NULL
 *
 * Return: 0 or a negative errno.
 */
int vwc_run_init(struct vwc_run *r, const char *command,
		 const struct vwc_config *cfg);

/* more device arguments than this: every controller is scanned */
#define VWC_SCOPE_ARGS	64

/**
 * vwc_run_init_for() - scan what some device arguments need
 * @r:		run
 * @command:	command name for reports
 * @cfg:	configuration (overrides), may be NULL
 * @args:	device arguments (any name vwc_resolve() accepts), may be NULL
 * @n:		how many; 0: every controller
 *
 * As vwc_run_init(), with only the NVM subsystems of @args scanned
 * (vwc_topo_scan_nqns()): the namespaces a named controller can decide
 * for, and every controller that can reach a named namespace, are all of
 * its subsystem. When an argument cannot be resolved, has no subsystem
 * NQN, or there are more than VWC_SCOPE_ARGS, every controller is
 * scanned, and vwc_run_select() reports the bad name as before.
 *
 * Return: 0 or a negative errno.
 */
int vwc_run_init_for(struct vwc_run *r, const char *command,
		     const struct vwc_config *cfg, char **args, int n);

/**
 * vwc_run_free() - release a run
 * @r:	run
 */
void vwc_run_free(struct vwc_run *r);

/**
 * vwc_run_select() - mark the devices to handle
 * @r:		run
 * @args:	device arguments (any name vwc_resolve() accepts)
 * @n:		how many; 0 selects every controller and namespace
 *
 * Unusable arguments are recorded in r->errs with a message naming the
 * device and the cause, and logged; the others are still selected.
 *
 * Return: the number of unusable arguments.
 */
int vwc_run_select(struct vwc_run *r, char **args, int n);

/**
 * vwc_run_select_ctrl() - select a controller and every namespace it reaches
 * @r:		run
 * @idx:	controller index
 */
void vwc_run_select_ctrl(struct vwc_run *r, int idx);

/**
 * vwc_run_add_error() - record an argument error
 * @r:		run
 * @device:	what the admin typed
 * @fmt:	cause
 */
void vwc_run_add_error(struct vwc_run *r, const char *device,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * vwc_probe_ctrl() - read what a controller reports
 * @r:	run
 * @c:	controller; facts, decision, err and errmsg are filled in
 *
 * A command that fails leaves its fact unknown (write-back).
 */
void vwc_probe_ctrl(struct vwc_run *r, struct vwc_ctrl *c);

/**
 * vwc_ctrl_fd() - a descriptor for a controller's admin commands
 * @c:	controller
 *
 * Return: the descriptor the caller holds (c->held_fd), or a new one to
 * give back with vwc_ctrl_fd_put(); a negative errno on failure.
 */
int vwc_ctrl_fd(const struct vwc_ctrl *c);

/**
 * vwc_ctrl_fd_put() - give back what vwc_ctrl_fd() returned
 * @c:	controller
 * @fd:	descriptor; closed unless it is the held one
 */
void vwc_ctrl_fd_put(const struct vwc_ctrl *c, int fd);

/**
 * vwc_probe_ctrl_wce() - read WCE again, keeping the other facts
 * @r:	run
 * @c:	controller probed before by vwc_probe_ctrl()
 *
 * One Get Features 06h, sent only to a controller that reported a cache;
 * a failure leaves WCE unknown (write-back). The decision is recomputed.
 *
 * Return: 0 (also when nothing was sent), or the negative error of the
 * open or the command: the caller counts it as a failure of its run.
 */
int vwc_probe_ctrl_wce(struct vwc_run *r, struct vwc_ctrl *c);

/**
 * vwc_run_rescan() - discover the topology again, keeping the run
 * @r:	run; its controllers' facts and selections are lost
 *
 * Return: 0 or a negative errno (the old topology is kept then).
 */
int vwc_run_rescan(struct vwc_run *r);

/**
 * vwc_probe_ns() - read each selected namespace's own cache bit
 * @r:	run (its controllers probed)
 *
 * For every selected namespace whose bit is still unknown, the I/O
 * Command Set Independent Identify Namespace data through the first
 * probed controller reaching it that answers (the bit is the same through
 * every path), one descriptor a controller. A failure leaves the bit
 * unknown (the controllers decide) and is no error of the run.
 */
void vwc_probe_ns(struct vwc_run *r);

/**
 * vwc_run_probe() - probe every controller reaching a selected namespace
 * @r:	run
 */
void vwc_run_probe(struct vwc_run *r);

/**
 * vwc_ns_decision() - the policy's decision for a namespace
 * @r:	run (controllers probed)
 * @ns:	namespace
 *
 * Return: the combined decision over every controller reaching @ns and
 * the namespace's own bit (vwc_policy_decide_ns()).
 */
struct vwc_decision vwc_ns_decision(const struct vwc_run *r,
				    const struct vwc_ns *ns);

/**
 * vwc_run_apply() - decide and apply for every selected namespace
 * @r:	run (controllers probed)
 *
 * Two phases. First every namespace whose decision is write back (or
 * "leave alone", or write through because the namespace reports no
 * volatile cache of its own, which no controller's state can change) is
 * written at once, without the writers' lock and
 * without waiting for anything: the safe direction never waits (lock.h).
 * Then, only if some namespace is to go write through, the lock is taken
 * (waiting at most @r->lock_wait_ms, nothing if the caller holds it
 * already); under it WCE of every controller reaching those namespaces is
 * read again and the decision made again from it, the namespaces are
 * written, and WCE is read once more (if it changed meanwhile, those
 * namespaces go back to write back at once). If the lock cannot be had,
 * those namespaces keep their mode (failed, with the holder named, unless
 * already write through), @r->lock_busy is set and @r->lock_err says
 * why; logged as an error unless it was another writer's hold and
 * @r->lock_wait_ms is 0 (the sidecar, which tries again soon).
 *
 * Return: the number of namespaces that failed.
 */
int vwc_run_apply(struct vwc_run *r);

/**
 * vwc_run_write_back() - write back on every namespace a controller reaches
 * @r:	run (its topology and configuration; the controller's facts need
 *	not be known)
 * @ci:	controller index in @r->topo
 *
 * For the sidecar, when a Set Features 06h with WCE=1 is seen in flight or
 * anything else says the cache may be on: takes no lock and waits for
 * nothing, neither the writers' lock nor an admin command (lock.h says why
 * that keeps the invariant), so call it without holding the lock too.
 * Writes only the nodes (head and hidden paths) that differ, each checked
 * by reading it back. Namespaces that a controller configured "ignore"
 * reaches, and those that report no volatile cache of their own, are left
 * alone (action VWC_ACT_SKIPPED); namespaces "restore"
 * handed back get write back too (the safe direction is always taken).
 * Each namespace's decision, before, after, action and errmsg are filled
 * in; other namespaces and every controller's facts are not touched.
 *
 * Return: the number of namespaces that could not be written.
 */
int vwc_run_write_back(struct vwc_run *r, int ci);

/**
 * vwc_run_irq_coalesce() - apply the configured interrupt coalescing
 * @r:	run (controllers probed)
 *
 * Only when the configuration enables it (irq-coalescing threshold= time=):
 * Set Features 08h on every selected controller whose current value
 * differs. A controller that refuses is reported (c->irqc, the log, exit
 * status 1); nothing else changes because of it.
 */
void vwc_run_irq_coalesce(struct vwc_run *r);

/**
 * vwc_run_exit_status() - process exit status for the run
 * @r:	run
 *
 * Return: 0, or 1 if any device failed.
 */
int vwc_run_exit_status(const struct vwc_run *r);

#endif
