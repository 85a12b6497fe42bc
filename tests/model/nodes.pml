/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A multipath namespace's nodes: the head (node 0, the one I/O is
 * submitted to and the one whose write_cache drops flushes) and two path
 * nodes, one of which stops taking writes at some moment (its
 * queue/write_cache fails: EIO, a directory, ...). A sync puts the
 * namespace in write through (WCE=0); then a root user's Set Features
 * 06h with WCE=1 and the sidecar's fast path writing write back.
 *
 * Processes and the code they stand for (processes.pml):
 *   nvmecli()      `nvme set-feature -f 6 -v 1` (WCE 0 -> 1), the drive
 *                  taking it at submission (DRIVE_IN_ORDER)
 *   sync_writer()  apply.c vwc_run_apply(): write through to the path
 *                  nodes first and to the head last, rolled back to write
 *                  back on a failure (blk.c vwc_blk_apply())
 *   fastpath()     watch-fast.c write_back() -> blk.c vwc_blk_apply()
 *   fault()        a path node that starts failing (blk_write() errors)
 * blk.c write_nodes() and node_at() are protocol.pml's; with
 * BUG_FIRST_ERROR they are blk.c as it was before the fix (paths first
 * both ways, return at the first error).
 *
 * HEAD_WT: the head starts in write through (with WCE=0), its path nodes
 * in write back (an admin's echo on the head; a path that came back):
 * the sync finds the head as it wants it and writes the path nodes. With
 * BUG_RECHECK_CHANGED, recheck() as it was before (a namespace whose
 * head it found in write through is not read again): the fast path's
 * write back that landed before the sync's write is lost.
 *
 * The fast path's write back can land between the sync's write of write
 * through and its read-back (overtaken): the sync reads WCE again and
 * writes once more (apply.c overtaken_again(); p_no_retry, with
 * RETRY_GHOST, shows the search reaches it; NO_OVT_RETRY: main before it).
 *
 * Property (pan -N p_fast): a node that can be written is write through
 * while WCE=1 only inside the sync's window or before the fast path's
 * write back has landed. The failing node itself is left out: nothing can
 * write it.
 *
 * Left out: the sidecar's main loop (its write back goes through the
 * same blk.c code), paths of other controllers (pathjoin.pml), a path
 * node that vanishes (ENOENT: skipped, as the code does), the records.
 */
#define NN	3
#define FAST
#define DRIVE_IN_ORDER
#define COMMANDS	set_features(1)
#include "processes.pml"

proctype fault()
{
	stuck[1] = 1
}

init {
	atomic {
		reach[0] = 1;
#ifdef HEAD_WT
		wc[0] = WT;
#endif
		run nvmecli();
		run sync_writer();
		run fastpath();
		run fault()
	}
}

ltl p_fast { [] (UNSAFE -> (win > 0 || fastowed > 0)) }
#ifdef RETRY_GHOST
/* the search reaches a second write after an overtaking (it must fail) */
ltl p_no_retry { [] !retried }
#endif
