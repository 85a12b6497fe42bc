/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A controller with its cache on joining a shared namespace. The
 * namespace is reached by controller 0 (WCE=0) alone and is rightly write
 * through; controller 1 (WCE=1: its PCI function bound again, an nvme-tcp
 * port reconnected) comes back and the kernel makes its path live. Its
 * path node sends no uevent; udev's rule runs `sync nvme1` for the
 * controller's add/change event, concurrently with any other writer.
 * udev's rule alone: no sidecar (its settle re-checks and safety net
 * would be further reactions; the design must not need them).
 *
 * Processes and the code they stand for:
 *   join()       the kernel: nvme_mpath_set_live() for controller 1's
 *                path (reach[1])
 *   udev_sync()  `nvme-vwc-sync sync --keep-restored nvme1` from
 *                udev/71-nvme-vwc-sync.rules.in: engine.c vwc_run_init()
 *                (topo.c vwc_topo_scan(): which namespaces controller 1
 *                reaches), vwc_run_select() -> vwc_run_select_ctrl()
 *                (the namespace and every controller reaching it),
 *                vwc_run_probe(), vwc_run_apply()
 *   other()      another writer of the namespace whose topology may have
 *                been scanned before the join: `sync` for controller 0's
 *                event, an admin's `sync`, the sidecar's evaluation
 *                (apply.c vwc_run_apply() and recheck() on the
 *                controllers its scan found)
 *
 * Designs (spin -D...):
 *   BUG_JOIN_SCAN       main today: the sync scans at its start, which
 *                       may be before the path is live; then it finds
 *                       no namespace of controller 1 and does nothing
 *   (default)           the intended design for the join: the sync for a
 *                       controller's event reads the topology once the
 *                       kernel's scan of that controller's namespaces is
 *                       done (its paths live), so its read comes after
 *                       the join. INTENDED DESIGN: not the code on main;
 *                       how the sync knows the scan is done is left to
 *                       the fix (this model only needs "after")
 *   RESCAN_UNDER_LOCK   the intended design for every write through:
 *                       under the lock, after its write, the writer reads
 *                       again which controllers reach the namespace (not
 *                       only their WCE); one it had not seen makes it
 *                       write back. INTENDED DESIGN: on main, recheck()
 *                       reads WCE of the controllers its first scan found
 *
 *   GATE                the sidecar runs (and never acts here: stopped,
 *                       or busy on another controller for the whole
 *                       search), so udev's rule runs sync for the
 *                       controller's add (tested once it is in sysfs)
 *                       and its connected change (once identified) only
 *                       where <rundir>/write-through exists
 *                       (wtmark). The namespace starts in write back,
 *                       no mark made; other() puts it in write through
 *                       on controller 0's WCE=0, making the mark under
 *                       the lock before its look at who reaches it
 *                       (apply.c vwc_run_apply()). With RESCAN_PEERS.
 *                       With RESCAN_UNDER_LOCK instead (a controller
 *                       counted once its path is live) the premise is
 *                       gone: a writer that looks between the connected
 *                       event and the path's join writes write through
 *                       that nothing undoes (join-gate-reach-only).
 *   BUG_MARK_LATE       (with GATE) the mark made only when the run
 *                       finds write through at its end
 *   BUG_GATE_SIDECAR    (with GATE) the rule leaves a controller's
 *                       events to a running sidecar whatever the marks
 *
 * Properties:
 *   p_join  write through while a controller with WCE=1 reaches the
 *           namespace only inside a writer's window or while the join's
 *           own reaction (the sync for the controller's event) has not
 *           ended: [] (UNSAFE -> win || owed)
 *   p_live  every exposure ends: [] (UNSAFE -> <> !UNSAFE) (pan -f)
 *
 * Left out: many namespaces (each is this model again), the path node's
 * own queue (the kernel sets it from the controller's VWC; the head's is
 * the one this tool holds in write through), a controller leaving, the
 * sidecar, Get Features failing (NOGETFAIL: unknown is write back, shown
 * in writers.pml).
 */
#define NOGETFAIL
#include "protocol.pml"

#ifdef GATE
byte tested;	/* the controller's two events, their marks tested */
byte running;	/* the rule's syncs for them that have not ended */
/* the join happened and a reaction to it may still come */
#define owed	(reach[1] && (tested < 2 || running > 0))

proctype join()
{
	ident[1] = 1;	/* its add event before: rule_event(0) */
	reach[1] = 1
}

/* stage 0: the add (the controller in sysfs: before it is identified);
 * 1: the connected change (nvme_start_ctrl(), once identified) */
proctype rule_event(byte stage)
{
	byte f0, f1, ok, gen, before, after, inw, err, i, n;
	bool s0, s1, busy, gate;

	if
	:: stage == 1 -> ident[1]
	:: else
	fi;
	atomic {
#ifdef BUG_GATE_SIDECAR
		gate = 0;
#else
		gate = wtmark;
#endif
		if
		:: gate -> running++
		:: else -> printf("MODEL: event %d left to the sidecar\n", stage)
		fi;
		tested++
	}
	if
	:: gate ->
		reach[1];	/* as udev_sync(): it reads after the join */
		atomic { s1 = reach[1]; s0 = s1 };
		get_wce(0, f0);
		get_wce(1, f1);
		run_apply(1, busy);
		running--
	:: else
	fi
}
#else
bool owed;	/* the join happened and its reaction has not ended */

proctype join()
{
	atomic { reach[1] = 1; owed = 1 }
}
#endif

#ifndef GATE
proctype udev_sync()
{
	byte f0, f1, ok, gen, before, after, inw, err, i, n;
	bool s0, s1, busy;

#ifndef BUG_JOIN_SCAN
	reach[1];	/* the controller's namespaces scanned: its path is live */
#endif
	atomic { s1 = reach[1]; s0 = s1 };	/* vwc_topo_scan(), vwc_run_select() */
	if
	:: !s1 ->
		printf("MODEL: BUG-b sync nvme1 scanned before its path joined: nothing selected\n")
	:: else ->
		get_wce(0, f0);
		get_wce(1, f1);
		run_apply(1, busy)
	fi;
	atomic {
		if
		:: reach[1] -> owed = 0
		:: else
		fi
	}
}

#endif

proctype other()
{
	byte f0, f1, ok, gen, before, after, inw, err, i, n;
	bool s0 = 1, s1, busy;

	s1 = reach[1];	/* its scan: before or after the join */
	get_wce(0, f0);
	if
	:: s1 -> get_wce(1, f1)
	:: else
	fi;
	run_apply(1, busy);
	if
	:: reach[1] && !s1 ->
		printf("MODEL: stale topology: the write through was decided without controller 1\n")
	:: else
	fi
}

init {
	atomic {
		reach[0] = 1;
		ident[0] = 1;
		wce[0] = 0;
		wce[1] = 1;
#ifdef GATE
		wc[0] = WB;
		run join();
		run rule_event(0);
		run rule_event(1);
#else
		wc[0] = WT;
		run join();
		run udev_sync();
#endif
		run other()
	}
}

ltl p_join { [] (UNSAFE -> (win > 0 || owed)) }
ltl p_live { [] (UNSAFE -> <> !UNSAFE) }
