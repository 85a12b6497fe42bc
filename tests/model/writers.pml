/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The writers of one namespace's queue/write_cache, all at once, against
 * a root user's raw Set Features 06h (nvme-cli, no lock), for every
 * interleaving. One controller, one namespace (the head alone: the path
 * nodes are nodes.pml's concern).
 *
 * Processes and the code they stand for:
 *   nvmecli()      a root user's `nvme set-feature -f 6 -v 0`, then
 *                  `-v 1` (the cache starts on, the namespace in the
 *                  kernel's write back): nvme_submit_user_cmd() (the
 *                  kprobe fires),
 *                  the drive taking it, the completion (the kretprobe),
 *                  the close of /dev/nvme0 (inotify IN_CLOSE_WRITE)
 *   sync_writer()  `nvme-vwc-sync sync` from udev's rule
 *                  (udev/71-nvme-vwc-sync.rules.in, one run per event,
 *                  concurrently) or an admin: engine.c vwc_run_probe()
 *                  (no lock), then vwc_run_apply() with
 *                  VWC_LOCK_TIMEOUT_MS; SYNCS of them (default 1)
 *   restore()      cmd-restore.c cmd_restore(): the namespaces to go back
 *                  to write through, under the lock: WCE read, the record
 *                  written back (blk.c vwc_blk_restore(), only over the
 *                  value this tool set), WCE read again, write back if
 *                  it is no longer allowed; no generation check
 *                  (RESTORE=1 runs one)
 *   fastpath()     watch-fast.c on_event() -> write_back(): for a Set
 *                  Features 06h with WCE=1, vwc_blk_wb_bump() then
 *                  vwc_blk_apply(write back), no lock; every event then
 *                  to the main loop (send_msg())
 *   sidecar()      the sidecar's main loop: watch-model.c
 *                  vwc_model_note_kernel() / note_one() (pending, wb_now),
 *                  watch-act.c vwc_watch_write_back_now(), probe() (a
 *                  pending Set Features makes WCE unknown),
 *                  evaluate_ctrl() (vwc_run_apply() with lock_wait_ms 0,
 *                  lock_retry), the pending timeout (vwc_model_timers()),
 *                  close events (watch-sources.c), the safety net
 *                  (vwc_model_safety_net(), every --interval: SN_ROUNDS
 *                  rounds at any moment, and without the kernel-side
 *                  detection one more once every command is done, which
 *                  stands for "for ever" in the liveness property)
 *
 * Configurations (spin -D...):
 *   FAST           the sidecar runs with its kernel-side detection
 *                  (kprobes): fastpath() and sidecar(); its main loop
 *                  hears submissions and completions
 *   NOFAST         the sidecar runs without it (no BTF, no
 *                  CAP_SYS_ADMIN, ...): close events and the safety net
 *   STOPPED        no sidecar: udev's rule alone
 *   DRIVE_IN_ORDER the drive takes a Set Features at its submission: a
 *                  Get Features submitted after it reads the new value
 *                  (an admin queue executed in order, as QEMU's is);
 *                  without it, any moment before its completion (what
 *                  the specification allows)
 *   PENDING_TIMEOUT the pending timeout (VWC_MODEL_PENDING_S, 2 s) may
 *                  fire, after the drive took the command, or with
 *                  TIMEOUT_EARLY at any moment (a drive slower than 2 s)
 *   NOGETFAIL      Get Features never fails (by default it may: unknown)
 *   BUG_NORECHECK, BUG_NOGEN  mutants: recheck() / the generation check
 *                  removed from apply.c vwc_run_apply();
 *                  NO_OVT_RETRY: no second write after an overtaking
 *                  (main before overtaken_again())
 *
 * Properties (pan -N p_NAME):
 *   strong   never write through while WCE=1: [] !UNSAFE. Does not hold
 *            in any configuration: a Set Features submitted after a
 *            writer's read of WCE=0 under the lock meets the writer's
 *            write through until its recheck (the window); kept to show
 *            the window exists (the checker finds it)
 *   fast     write through while WCE=1 only inside one of our writers'
 *            windows or before the fast path's write back for the
 *            command has landed: [] (UNSAFE -> win || fastowed)
 *   inflight ... or while a Set Features 06h with WCE=1 is in flight
 *            (submitted, its completion not yet handled by the sidecar)
 *   weak     (what the design gives without the fast path) write through
 *            while WCE=1 only inside a writer's window or after the
 *            drive's WCE changed while the namespace was already write
 *            through (a change after our last read, that only the
 *            sidecar can see): [] (UNSAFE -> win || drift)
 *   live     every exposure ends: [] (UNSAFE -> <> !UNSAFE), with weak
 *            fairness (pan -f): the sidecar's safety net runs
 *
 * Left out (besides protocol.pml's list): several namespaces and
 * controllers (the fast path's table, its staleness after a topology
 * change, "a queue not known: every controller's"), lost kernel events
 * (VWC_KW_LOST: write back everywhere, the safe direction), the kprobe's
 * admin-queue filter and io_uring's pending entries (confirmed by a WCE
 * read), set-cache (cmd-setcache.c, Set Features under the lock), the
 * sidecar's descriptor handling, and the main loop's lock retry delay
 * (a retry may come at any moment). Bounds: two Set Features, one after
 * the other (0 then 1) from one shell; SYNCS syncs, RESTORE restores,
 * one sidecar; each process runs once (the sidecar's loop for ever).
 */
#include "processes.pml"

init {
	atomic {
		reach[0] = 1;
		wce[0] = 1;	/* the cache on, the namespace in the kernel's write back */
		run nvmecli();
		if
		:: SYNCS > 0 -> run sync_writer()
		:: else
		fi;
		if
		:: SYNCS > 1 -> run sync_writer()
		:: else
		fi;
		if
		:: RESTORE -> run restore()
		:: else
		fi;
#ifdef FAST
		run fastpath();
#endif
#ifndef STOPPED
		run sidecar();
#endif
	}
}

ltl p_strong { [] !UNSAFE }
ltl p_fast { [] (UNSAFE -> (win > 0 || fastowed > 0)) }
ltl p_inflight { [] (UNSAFE -> (win > 0 || fastowed > 0 || inflight > 0)) }
ltl p_weak { [] (UNSAFE -> (win > 0 || drift)) }
ltl p_live { [] (UNSAFE -> <> !UNSAFE) }
