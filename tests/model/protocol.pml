/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The writers' protocol of nvme-vwc-sync, the part every model here
 * shares (writers.pml, nodes.pml, pathjoin.pml include it; rebind.pml is
 * apart). What each piece stands for, in the code:
 *
 *   wce[c]           the controller's Volatile Write Cache Enable as the
 *                    drive has it (what a Get Features 06h returns)
 *   reach[c]         the kernel routes the namespace's I/O through
 *                    controller c (its path is live)
 *   ident[c]         controller c is in sysfs with its subsystem NQN
 *                    readable (identified), path live or not
 *                    (pathjoin.pml -DGATE)
 *   wtmark           <rundir>/write-through (blk.c
 *                    vwc_blk_mark_wt()), which udev's rule tests
 *                    (pathjoin.pml -DGATE)
 *   wc[i]            queue/write_cache of node i: 0 the namespace's own
 *                    node (the multipath head, the one I/O is submitted
 *                    to), 1.. its path nodes (blk.c)
 *   stuck[i]         writes to node i fail (blk_write() returns an error)
 *   ovt[p]           process p's last write of write through read back
 *                    as write back: another writer's write came after it
 *                    (blk_write() -EAGAIN, vwc_ns.overtaken)
 *   wrote[p]         process p's last blk_apply() wrote a node
 *                    (vwc_ns.written)
 *   orig[p]          the head as process p's first blk_apply() of phase
 *                    2 found it (vwc_ns.before, as the run reports it
 *                    after a second write)
 *   lock             the writers' lock, one flock(2) (lock.c
 *                    vwc_lock_take(), vwc_lock_release())
 *   wbgen            blk.c wb_gen (vwc_blk_wb_bump(), vwc_blk_wb_gen()):
 *                    a count of the process's own, so only the sidecar's
 *                    main loop sees its fast path's bumps; a command is
 *                    another process, whose count never moves
 *
 *   get_wce()        nvme-io.c vwc_nvme_get_wce() through engine.c
 *                    vwc_probe_ctrl() / vwc_probe_ctrl_wce(); a failed
 *                    command leaves the fact unknown (UNK)
 *   DECIDE()         policy.c vwc_policy_decide_shared() over the
 *                    controllers the writer knows reach the namespace
 *   write_nodes()    blk.c write_nodes() with node_at(); a write of
 *                    write through and its read-back are two steps
 *   blk_apply()      blk.c vwc_blk_apply(): the rollback to write back
 *                    when a write through fails
 *   run_apply()      apply.c vwc_run_apply(): phase 1 (write back at
 *                    once, no lock), phase 2 (the lock, WCE read again,
 *                    write through, once more if overtaken:
 *                    overtaken_again()), recheck(), the generation check
 *                    and fast_path_raced()
 *
 * Ghost variables (not in the code; they only say what a property may
 * excuse):
 *   win       our writers between their write of write through and the
 *             end of their checks after it (recheck(), the generation
 *             check, restore's second read): the window in which a
 *             Set Features submitted after their read of WCE=0 can meet
 *             their write through
 *   fastowed  Set Features 06h with WCE=1 submitted whose fast-path
 *             write back has not landed yet
 *   inflight  Set Features 06h with WCE=1 submitted whose completion the
 *             sidecar has not handled yet (read WCE, applied)
 *   drift     the drive's WCE became 1 while the namespace was write
 *             through: a change made after our last read (cleared when
 *             the namespace is write back again)
 *   retried   a writer wrote once more after an overtaking (shows that
 *             the search reaches it; with RETRY_GHOST only)
 *
 * Left out here (each model's header adds its own): time (every timeout
 * is a choice the checker may take at any moment, within the premise
 * each model states), configuration overrides ("ignore", "write-back"),
 * restore's marks (they only turn a write through into "leave alone"),
 * SMART and the backup-failed bit (only ever write back), VWC absent,
 * the lock file's replacement dance (lock.c take_once(): modelled as one
 * mutex), nested lock holds, the records of changes (blk.c
 * record_change()), and the text of every message.
 */

#define WB	0	/* "write back" */
#define WT	1	/* "write through" */
#define UNK	2	/* a fact not known (a command failed) */

#ifndef NN
#define NN	1	/* nodes of the namespace: the head and NN-1 paths */
#endif

byte wce[2];
bool reach[2];
bool ident[2];
bool wtmark;
byte wc[3];
bool stuck[3];
bool ovt[10];
bool wrote[10];
byte orig[10];
bool rb[10];	/* a write of write through whose read-back is to come */

bool lock;
byte wbgen;

byte win;
#ifdef RETRY_GHOST
bool retried;
#endif
byte fastowed;
byte inflight;
bool drift;

#define NODE_WT(i)	((i) < NN && !stuck[i] && wc[i] == WT)
#define ANY_WT		(NODE_WT(0) || NODE_WT(1) || NODE_WT(2))
#define CACHE_ON	((reach[0] && wce[0] == 1) || (reach[1] && wce[1] == 1))
/*
 * The safety invariant's breach: a node that can be written is write
 * through while a controller the kernel routes the namespace through has
 * its cache on. (A stuck node is left out: nothing can write it.)
 */
#define UNSAFE		(ANY_WT && CACHE_ON)

/*
 * policy.c: write through only if the writer knows at least one
 * controller and every one it knows reads WCE=0; unknown is write back.
 */
#define DECIDE(f0, f1, s0, s1) \
	(((s0 || s1) && (!s0 || f0 == 0) && (!s1 || f1 == 0)) -> WT : WB)

/* vwc_nvme_get_wce(): the drive's value, or (the command failed) unknown */
inline get_wce(c, v)
{
	if
	:: v = wce[c]
#ifndef NOGETFAIL
	:: v = UNK
#endif
	fi
}

/* one write of queue/write_cache (blk.c blk_write()), and the ghost */
inline setnode(n, m)
{
	atomic {
		wc[n] = m;
		if
		:: !ANY_WT -> drift = 0
		:: else
		fi
	}
}

/*
 * blk.c blk_write()'s read-back of a write of write through, a step of
 * its own: write back read there is another writer's, after ours
 * (-EAGAIN, overtaken); write back always reads back as written here
 * (the kernel's refusal is aside.c's, left out)
 */
inline read_back(wm, err, n)
{
	atomic {
		if
		:: rb[_pid] ->
			rb[_pid] = 0;
			if
			:: wc[n] != wm -> err = 1; ovt[_pid] = 1
			:: else
			fi
		:: else
		fi
	}
}

/*
 * blk.c node_at(): write back goes to the head first, then to every path
 * node; write through to the path nodes first and to the head last.
 * Before the fix (BUG_FIRST_ERROR): the path nodes first both ways.
 */
#ifdef BUG_FIRST_ERROR
#define NODE_AT(m, i)	(((i) + 1) % NN)
#else
#define NODE_AT(m, i)	((m) == WB -> (i) : (((i) + 1) % NN))
#endif

/*
 * blk.c write_nodes(): each node is read, and written if it differs; a
 * node that fails is reported and the others are still written. Before
 * the fix (BUG_FIRST_ERROR) it returned at the first failing node.
 */
#if NN == 1
/* one node: its read and write as one step (see below) */
inline write_nodes(wm, err, i, n)
{
	atomic {
		err = 0;
		if
		:: wc[0] != wm && stuck[0] -> err = 1
		:: wc[0] != wm && !stuck[0] ->
			wc[0] = wm;
			wrote[_pid] = 1;
			rb[_pid] = wm == WT;
			if
			:: wm == WB -> drift = 0
			:: else
			fi
		:: else
		fi
	};
	read_back(wm, err, 0)
}
#else
inline write_nodes(wm, err, i, n)
{
	i = 0;
	err = 0;
	do
	:: i < NN ->
		/*
		 * vwc_blk_read(), then blk_write() if it differs, as one step:
		 * every write is idempotent, so no other process's step in
		 * between changes what the pair leaves
		 */
		atomic {
			n = NODE_AT(wm, i);
			if
			:: wc[n] != wm && stuck[n] -> err = 1
			:: wc[n] != wm && !stuck[n] ->
				wc[n] = wm;
				wrote[_pid] = 1;
				rb[_pid] = wm == WT;
				if
				:: !ANY_WT -> drift = 0
				:: else
				fi
			:: else
			fi
		};
		read_back(wm, err, n);
#ifdef BUG_FIRST_ERROR
		if
		:: err ->
			printf("MODEL: BUG-a write_nodes stopped at failing node %d, head %d\n", n, wc[0]);
			break
		:: else
		fi;
#endif
		i++
	:: else -> break
	od;
	i = 0;
	n = 0
}
#endif

/*
 * blk.c vwc_blk_apply(): the head read first (bf); a namespace without
 * path nodes already in the mode is left as it is; never left half-way
 * in the unsafe direction.
 */
inline blk_apply(am, bf, err, i, n)
{
	d_step { bf = wc[0]; wrote[_pid] = 0; ovt[_pid] = 0 };
	if
	:: bf == am && NN == 1 -> err = 0
	:: else ->
		write_nodes(am, err, i, n);
		if
		:: err && am == WT ->
			write_nodes(WB, err, i, n);
			err = 1
		:: else
		fi
	fi
}

/* lock.c vwc_lock_take(VWC_LOCK_TIMEOUT_MS): taken, or timed out while held */
inline lock_wait(ok)
{
	if
	:: atomic { !lock -> lock = 1; ok = 1 }
	:: atomic { lock -> ok = 0 }
	fi
}

/* lock.c vwc_lock_take(0): the sidecar's one try */
inline lock_try(ok)
{
	atomic {
		if
		:: !lock -> lock = 1; ok = 1
		:: else -> ok = 0
		fi
	}
}

/*
 * Re-read, under the lock, which controllers reach the namespace
 * (pathjoin.pml: the intended design; on main the topology is the one
 * scanned at the start of the run and never read again).
 */
#if defined(RESCAN_PEERS)
/*
 * As the code does it: vwc_topo_link_reach() (a controller of the run
 * that names the namespace in its list reaches it, path node or not) and
 * vwc_topo_new_peer() (one of the subsystem in sysfs that the run does
 * not know makes it write back): an identified controller counts.
 */
#define RESCAN(s0, s1)	s0 = reach[0]; s1 = reach[1] || ident[1]
#elif defined(RESCAN_UNDER_LOCK)
#define RESCAN(s0, s1)	s0 = reach[0]; s1 = reach[1]
#else
#define RESCAN(s0, s1)	skip
#endif

/*
 * apply.c vwc_run_apply() for one namespace, from facts f0/f1 read by
 * the probe (no lock) of the controllers s0/s1 the writer's topology
 * says reach it. wait: a command's lock wait (1) or the sidecar's one
 * try (0); busy: set when the lock could not be had (left_alone()).
 * The locals are the caller's: ok, gen, before, after, inw, err, i, n.
 */
inline run_apply(wait, busy)
{
	if
	:: DECIDE(f0, f1, s0, s1) == WB ->
		/* 1. write back at once: no lock, no wait */
		blk_apply(WB, before, err, i, n)
	:: else ->
		/* 2. write through under the writers' lock */
		if
		:: wait -> lock_wait(ok)
		:: else -> lock_try(ok)
		fi;
		if
		:: !ok -> busy = 1	/* left_alone(): keeps its mode */
		:: else ->
			gen = wbgen;
#if defined(GATE) && !defined(BUG_MARK_LATE)
			/* the mark, before the look at who reaches it */
			wtmark = 1;
#endif
			/* only WCE can have changed since the probe */
			RESCAN(s0, s1);
			if
			:: s0 -> get_wce(0, f0)
			:: else
			fi;
			if
			:: s1 -> get_wce(1, f1)
			:: else
			fi;
			if
			:: DECIDE(f0, f1, s0, s1) == WT ->
				atomic { win++; inw = 1 };
				printf("MODEL: window: write through on WCE read under the lock\n");
				blk_apply(WT, before, err, i, n)
			:: else ->
				blk_apply(WB, before, err, i, n)
			fi;
			orig[_pid] = before;
#ifndef NO_OVT_RETRY
			/*
			 * overtaken_again(): WCE read again, decided again,
			 * written once more; not in the sidecar when its fast
			 * path wrote write back meanwhile
			 */
			if
			:: ovt[_pid] && (wait || wbgen == gen) ->
				printf("MODEL: overtaken: once more\n");
#ifdef RETRY_GHOST
				retried = 1;
#endif
				RESCAN(s0, s1);
				if
				:: s0 -> get_wce(0, f0)
				:: else
				fi;
				if
				:: s1 -> get_wce(1, f1)
				:: else
				fi;
				if
				:: DECIDE(f0, f1, s0, s1) == WT ->
					blk_apply(WT, before, err, i, n)
				:: else ->
					blk_apply(WB, before, err, i, n)
				fi
			:: else
			fi;
#endif
			after = wc[0];
			/*
			 * recheck(): WCE again where write through was just
			 * written: the head changed, or (not BUG_RECHECK_CHANGED,
			 * main before the fix) a node written, a head found in
			 * write through with a path node that was not
			 */
#define RECHECK_DUE	((orig[_pid] != WT || wrote[_pid]) && after == WT)
#ifndef BUG_NORECHECK
#ifdef BUG_RECHECK_CHANGED
			if
			:: orig[_pid] == WT && after == WT && wrote[_pid] ->
				printf("MODEL: BUG-e recheck skipped: the head was found in write through\n")
			:: else
			fi;
#define RECHECK_WHEN	(orig[_pid] != WT && after == WT)
#else
#define RECHECK_WHEN	RECHECK_DUE
#endif
			if
			:: RECHECK_WHEN ->
				RESCAN(s0, s1);
				if
				:: s0 -> get_wce(0, f0)
				:: else
				fi;
				if
				:: s1 -> get_wce(1, f1)
				:: else
				fi
			:: else
			fi;
			if
			:: after == WT && DECIDE(f0, f1, s0, s1) != WT ->
				blk_apply(WB, before, err, i, n);
				after = wc[0]
			:: else
			fi;
#else
			if
			:: RECHECK_DUE -> printf("MODEL: recheck left out\n")
			:: else
			fi;
#endif
			/* the sidecar's fast path wrote write back meanwhile
			 * (its own process's count: a command's never moves),
			 * where this run wrote (fast_path_raced()) */
#define GEN_DUE	(!wait && wbgen != gen && after == WT && wrote[_pid])
#ifndef BUG_NOGEN
			if
			:: GEN_DUE -> blk_apply(WB, before, err, i, n)
			:: else
			fi;
#else
			if
			:: GEN_DUE -> printf("MODEL: generation check left out\n")
			:: else
			fi;
#endif
			atomic {
				if
				:: inw -> win--; inw = 0
				:: else
				fi;
				lock = 0
			}
		fi
	fi;
#ifdef BUG_MARK_LATE
	/* the mark made only once write through is found (the run's end) */
	if
	:: wc[0] == WT && !wtmark ->
		printf("MODEL: BUG-d the mark made after the write through\n");
		wtmark = 1
	:: else
	fi;
#endif
	/* what the run read is forgotten: no state differs by it alone */
	d_step {
		ok = 0; gen = 0; before = 0; after = 0; err = 0;
		f0 = 0; f1 = 0; ovt[_pid] = 0; wrote[_pid] = 0; orig[_pid] = 0
	}
}
