/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The processes of writers.pml and nodes.pml: a root user's raw Set
 * Features, sync, restore, the sidecar's fast path and main loop. What
 * each stands for is in writers.pml's header; the configurations
 * (FAST, NOFAST, STOPPED, DRIVE_IN_ORDER, ...) too.
 */
#include "protocol.pml"

#define SUB	1	/* a Set Features 06h submitted (kprobe) */
#define CPL	2	/* ... completed (kretprobe) */
#define CLOSE	3	/* nvme-cli closed /dev/nvme0 (inotify) */

chan kev = [2] of { byte, byte };	/* kernel -> fast path thread */
chan mq = [3] of { byte, byte };	/* fast path thread -> main loop */

bool applied;	/* the drive took the command in flight */

#ifndef SYNCS
#define SYNCS	1	/* sync_writer() processes */
#endif
#ifndef RESTORE
#define RESTORE	0	/* a restore() process */
#endif

/*
 * The safety net's rounds: SN_ROUNDS at any moment, and (LAST_ROUND) one
 * after every command is done, which stands for "every --interval
 * seconds, for ever" in the liveness property. With the kernel-side
 * detection, none by default: the evaluation after each completion is
 * the same code at a moment the checker chooses.
 */
#ifndef SN_ROUNDS
#ifdef FAST
#define SN_ROUNDS	0
#else
#define SN_ROUNDS	1
#define LAST_ROUND
#endif
#endif

/* one Set Features 06h with WCE=v from nvme-cli, and the drive */
inline set_features(v)
{
	atomic {
		applied = 0;
		if
		:: v -> fastowed++; inflight++
		:: else
		fi;
#ifdef DRIVE_IN_ORDER
		wce[0] = v;
		if
		:: v && ANY_WT -> drift = 1
		:: else
		fi;
		applied = 1;
#endif
#ifdef FAST
		kev!SUB, v
#endif
	}
#ifndef DRIVE_IN_ORDER
	atomic {
		wce[0] = v;
		if
		:: v && ANY_WT -> drift = 1
		:: else
		fi;
		applied = 1
	};
#endif
#ifdef FAST
	kev!CPL, v;
#else
	if
	:: v -> inflight--
	:: else
	fi;
#endif
#if !defined(STOPPED) && !defined(FAST)
	/* nvme-cli exits: a close event (a held descriptor would send none) */
	if
	:: mq!CLOSE, v
	:: skip
	fi
#endif
}

bool envdone;	/* every command done: the safety net's next round comes */

#ifndef COMMANDS
#define COMMANDS	set_features(0); set_features(1)
#endif

proctype nvmecli()
{
	COMMANDS;
	envdone = 1
}

proctype sync_writer()
{
	byte f0, f1 = 0, ok, gen, before, after, inw, err, i, n;
	bool s0 = 1, s1 = 0, busy;

	get_wce(0, f0);		/* vwc_run_probe(): no lock */
	run_apply(1, busy)
}

proctype restore()
{
	byte f0, ok, bf, err, i, n;

	/* allows_wt() on the probe: a WCE read without the lock */
	get_wce(0, f0);
	if
	:: f0 != 0 -> skip	/* kept in write back */
	:: else ->
		lock_wait(ok);
		if
		:: !ok -> skip	/* "cannot take the writers' lock": nothing changed */
		:: else ->
			get_wce(0, f0);
			/* vwc_blk_restore(): only over the value this tool set */
			if
			:: f0 == 0 && wc[0] == WB ->
				atomic { win++ };
				printf("MODEL: window: restore writes write through\n");
				setnode(0, WT);
				get_wce(0, f0);	/* "WCE once more, as recheck() does" */
				if
				:: f0 != 0 -> blk_apply(WB, bf, err, i, n)
				:: else
				fi;
				atomic { win--; lock = 0 }
			:: else -> lock = 0
			fi
		fi
	fi;
	d_step { f0 = 0; ok = 0; bf = 0; err = 0 }
}

#ifdef FAST
proctype fastpath()
{
	byte k, v, bf, err, i, n;

end:	do
	:: kev?k, v ->
		if
		:: k == SUB && v ->
			wbgen++;	/* vwc_blk_wb_bump(), before the writes */
			blk_apply(WB, bf, err, i, n);
			d_step { fastowed--; bf = 0; err = 0 }
		:: else
		fi;
		mq!k, v
	od
}
#endif

#ifndef STOPPED
/* watch-act.c evaluate_ctrl(): probe(), then vwc_run_apply() with lock_wait_ms 0 */
inline evaluate()
{
	busy = 0;
	get_wce(0, f0);
	if
	:: pend > 0 -> f0 = UNK	/* a Set Features in flight: the cache may be on */
	:: else
	fi;
	run_apply(0, busy);
	retry = busy;	/* lock_retry: evaluated again later */
	if
	:: cpl -> d_step { cpl = 0; inflight-- }
	:: else
	fi;
	d_step { k = 0; v = 0; busy = 0 }
}

proctype sidecar()
{
	byte k, v, pend, f0, f1 = 0, ok, gen, before, after, inw, err, i, n;
	bool s0 = 1, s1 = 0, busy, retry, cpl, last;
	byte rounds = SN_ROUNDS;

end:	do
	:: if
	   :: mq?k, v ->
		if
		:: k == SUB ->
			pend++;		/* note_one(): pending, WCE to read */
			if
			:: v -> blk_apply(WB, before, err, i, n)	/* write_back_now() */
			:: else
			fi
		:: k == CPL ->
			if
			:: pend > 0 -> pend--
			:: else		/* late: after the pending timeout */
			fi;
			cpl = v
		:: k == CLOSE
		fi
#ifdef PENDING_TIMEOUT
	   :: pend > 0 ->
#ifndef TIMEOUT_EARLY
		applied;
#endif
		pend = 0	/* no completion seen in time: expire() */
#endif
	   :: retry -> skip
	   :: rounds > 0 -> rounds--	/* the safety net's round, at any moment */
#ifdef LAST_ROUND
	   :: envdone && !last -> last = 1	/* ... and one after every command */
#endif
	   fi;
	   evaluate()
	od
}
#endif

