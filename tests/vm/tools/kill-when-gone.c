// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kill-when-gone: send a signal to a process as soon as a path disappears.
 * A test tool for the guests without strace (the booted Debian systems).
 *
 * Usage: kill-when-gone [-s SIGNUM] [-t TIMEOUT_MS] PATH PID
 *   PATH  polled with lstat() every 200 us, e.g. a PCI function's driver
 *         link, which the PCI core removes at the start of an unbind,
 *         before the driver's remove callback runs: PID is still inside
 *         its write to the unbind file
 *   -s    signal (default 9, SIGKILL)
 *   -t    give up after this long (default 30000)
 * Output: "KWG killed pid=PID sig=N after_ms=X" and exit 0; "KWG timeout"
 * and exit 1; exit 2 for a bad command line or a failed kill.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int sig = SIGKILL, timeout = 30000, opt;
	struct stat st;
	double t0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "s:t:")) != -1) {
		switch (opt) {
		case 's':
			sig = atoi(optarg);
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: kill-when-gone [-s SIGNUM] [-t TIMEOUT_MS] PATH PID\n");
			return 2;
		}
	}
	if (argc - optind != 2 || (pid = (pid_t)atoi(argv[optind + 1])) <= 0) {
		fprintf(stderr, "usage: kill-when-gone [-s SIGNUM] [-t TIMEOUT_MS] PATH PID\n");
		return 2;
	}
	t0 = now_ms();
	while (!lstat(argv[optind], &st) || errno != ENOENT) {
		if (now_ms() - t0 > timeout) {
			printf("KWG timeout\n");
			return 1;
		}
		usleep(200);
	}
	if (kill(pid, sig)) {
		fprintf(stderr, "kill-when-gone: kill %d: %s\n", (int)pid,
			strerror(errno));
		return 2;
	}
	printf("KWG killed pid=%d sig=%d after_ms=%.1f\n", (int)pid, sig,
	       now_ms() - t0);
	return 0;
}
