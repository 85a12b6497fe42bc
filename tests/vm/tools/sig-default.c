// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sig-default: run a command with every signal at its default action and
 * none blocked. A test tool for the VM guests.
 *
 * Usage: sig-default COMMAND [ARG...]
 *
 * A non-interactive shell starts its background jobs with SIGINT and
 * SIGQUIT ignored, and a signal ignored on entry cannot be reset by the
 * shell: a test that sends SIGINT to a background command would otherwise
 * prove nothing (the command never sees it).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sigset_t none;
	int s;

	if (argc < 2) {
		fprintf(stderr, "usage: sig-default COMMAND [ARG...]\n");
		return 2;
	}
	for (s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);	/* SIGKILL, SIGSTOP: EINVAL, fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "sig-default: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
