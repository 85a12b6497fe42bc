/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: sigdefer.h - signals that must not cut a rebind short
 *
 * Between the unbind of a controller and its bind, the end of the process
 * leaves the controller unbound (its disks gone) until someone binds it.
 * Every signal whose default action ends or stops the process and that can
 * be blocked (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2,
 * SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT,
 * SIGTSTP, SIGTTIN, SIGTTOU and the real-time signals) is blocked over such
 * a section, and acted on
 * when it ends: with its default action, the process then ends with the
 * status that signal gives (128 + its number in a shell). SIGKILL, SIGSTOP
 * and a crash cannot be held: the record written before the unbind
 * (unbound.h) is for them.
 *
 * SIGPIPE is no reason to stop anything: for the whole command a closed
 * output only loses the output. A SIGPIPE (a write to a closed pipe, or
 * sent) is noted and the command goes on to its end, and then ends by it.
 * When the command was started with SIGPIPE ignored it stays ignored.
 *
 * The sections are for single-threaded commands (quirks, restore): the
 * mask is the calling thread's. No timed lock may be taken inside one:
 * the writers' lock times its wait with SIGALRM (lock.c).
 */
#ifndef VWC_SIGDEFER_H
#define VWC_SIGDEFER_H

/**
 * vwc_sig_hold() - enter a section no signal may cut short
 * @what:	what it is, for the message when a signal was held ("the
 *		rebind of nvme0 (0000:01:00.0)"); the outermost one's is kept
 *
 * Sections nest; only the outermost one blocks and unblocks.
 */
void vwc_sig_hold(const char *what);

/**
 * vwc_sig_release() - leave the section vwc_sig_hold() entered
 *
 * When the outermost section ends, each signal that arrived during it is
 * named (warning: "SIGTERM arrived during the rebind of ...: held until
 * it ended") and the mask is put back, which delivers it.
 */
void vwc_sig_release(void);

/**
 * vwc_sigpipe_defer() - SIGPIPE noted, not acted on, until the command ends
 *
 * Call at the command's start. An inherited SIG_IGN is kept.
 */
void vwc_sigpipe_defer(void);

/**
 * vwc_sigpipe_finish() - the command has ended: act on a SIGPIPE it got
 *
 * Ends the process by SIGPIPE when one arrived since vwc_sigpipe_defer();
 * returns otherwise.
 */
void vwc_sigpipe_finish(void);

#endif
