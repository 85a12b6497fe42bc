// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sig-default: run a command with every signal at its default action and
 * none blocked. A test tool for the VM guests.
 *
 * Usage: sig-default COMMAND [ARG...]
 *        sig-default -k SIGNUM -a MS COMMAND [ARG...]
 *
 * A non-interactive shell starts its background jobs with SIGINT and
 * SIGQUIT ignored, and a signal ignored on entry cannot be reset by the
 * shell: a test that sends SIGINT to a background command would otherwise
 * prove nothing (the command never sees it).
 *
 * With -k: the command runs as a child, and SIGNUM is sent to it MS
 * milliseconds after its exec (not after the fork: a shell's `cmd & sleep;
 * kill` can land before the command has started, on a process that does
 * not yet have the command's signal actions, or after a starved command
 * has ended). Prints one line on stderr:
 *   SIGDEF sig=N after_ms=MS running=0|1 status=S
 * (running: the command had not ended when the signal was sent; status:
 * its exit status, 128+N when a signal ended it) and exits with status S.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void defaults(void)
{
	sigset_t none;
	int s;

	for (s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);	/* SIGKILL, SIGSTOP: EINVAL, fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static int usage(void)
{
	fprintf(stderr, "usage: sig-default [-k SIGNUM -a MS] COMMAND [ARG...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	int sig = 0, ms = 0, p[2], st = 0, running;
	struct timespec ts;
	pid_t pid, r;
	char c;

	if (argc > 1 && !strcmp(argv[1], "-k")) {
		if (argc < 6 || strcmp(argv[3], "-a"))
			return usage();
		sig = atoi(argv[2]);
		ms = atoi(argv[4]);
		argv += 4;
		argc -= 4;
		if (sig <= 0 || sig >= NSIG || ms < 0)
			return usage();
	}
	if (argc < 2)
		return usage();
	defaults();
	if (!sig) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "sig-default: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	/* the pipe's write end closes at the child's exec: EOF here then */
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("sig-default: pipe");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("sig-default: fork");
		return 2;
	}
	if (!pid) {
		close(p[0]);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "sig-default: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	close(p[0]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	/* not yet reaped: a command that has ended is a zombie, and the
	 * signal to it does nothing */
	running = waitpid(pid, &st, WNOHANG) == 0;
	if (running) {
		kill(pid, sig);
		while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
			;
		if (r < 0) {
			perror("sig-default: waitpid");
			return 2;
		}
	}
	st = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	fprintf(stderr, "SIGDEF sig=%d after_ms=%d running=%d status=%d\n", sig,
		ms, running, st);
	return st;
}
