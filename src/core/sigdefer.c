// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signals held over a rebind, SIGPIPE deferred to the command's end
 * (sigdefer.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sigdefer.h"

static int depth;
static sigset_t saved;
static char section[160];

/* every blockable signal whose default action ends or stops the process */
static void held_set(sigset_t *set)
{
	static const int sigs[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2,
		SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR,
		SIGSTKFLT, SIGTSTP, SIGTTIN, SIGTTOU,
	};
	size_t i;
	int s;

	sigemptyset(set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(set, sigs[i]);
	for (s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaddset(set, s);
}

static const char *sig_name(int s, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(s);

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", s);
	return buf;
}

void vwc_sig_hold(const char *what)
{
	sigset_t set;

	if (depth++)
		return;
	snprintf(section, sizeof(section), "%s", what);
	held_set(&set);
	sigprocmask(SIG_BLOCK, &set, &saved);
}

void vwc_sig_release(void)
{
	sigset_t set, pending;
	char name[32];
	int s;

	if (!depth || --depth)
		return;
	held_set(&set);
	if (!sigpending(&pending))
		for (s = 1; s < NSIG; s++)
			if (sigismember(&set, s) == 1 &&
			    sigismember(&pending, s) == 1 &&
			    sigismember(&saved, s) != 1)
				vwc_warn("%s arrived during %s: held until it ended",
					 sig_name(s, name, sizeof(name)),
					 section);
	/* what arrived is delivered now */
	sigprocmask(SIG_SETMASK, &saved, NULL);
}

static volatile sig_atomic_t got_pipe;

static void on_pipe(int sig)
{
	(void)sig;
	got_pipe = 1;
}

void vwc_sigpipe_defer(void)
{
	struct sigaction sa = { .sa_handler = on_pipe, .sa_flags = SA_RESTART };
	struct sigaction old;

	if (sigaction(SIGPIPE, NULL, &old) || old.sa_handler == SIG_IGN)
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}

void vwc_sigpipe_finish(void)
{
	sigset_t one;

	/* the output still buffered: a closed pipe shows now, not at exit */
	fflush(NULL);
	if (!got_pipe)
		return;
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(SIGPIPE);
}
