// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wc-when: print when a namespace's write_cache first reads a mode, on
 * CLOCK_MONOTONIC (the clock of `udevadm monitor`'s KERNEL[...] and
 * UDEV[...] stamps), so a chain of events can be timed step by step. A
 * test tool for the VM guests.
 *
 * Usage: wc-when NS MODE [TIMEOUT_MS]
 *        wc-when /PATH TEXT [TIMEOUT_MS]
 *   MODE: "back" or "through". Samples every 200 us. Prints, as soon as it
 *   starts sampling, "WCW start=<s.us>", then "WCW flip=<s.us>" or
 *   "WCW timeout". Exit status 0 flipped, 1 timeout, 2 usage or setup.
 *   The second form waits for the file PATH (re-opened each time, since
 *   writers replace it by rename) to contain the line TEXT, woken by
 *   inotify on its directory.
 *   With WCW_FIFO=1 in the environment it samples under SCHED_FIFO
 *   (priority 1, the sidecar's fast path's: above every ordinary process,
 *   such as the sidecar's main thread writing its textfile), so that a
 *   busy guest does not delay the sampler by tens of milliseconds.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the file holds the line TEXT */
static bool file_has(const char *path, const char *text)
{
	static char buf[1 << 20];
	size_t tl = strlen(text);
	ssize_t n = -1;
	char *p;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, text)); p += tl)
		if ((p == buf || p[-1] == '\n') && (p[tl] == '\n' || !p[tl]))
			return true;
	return false;
}

/*
 * Woken by inotify on the file's directory (a file renamed over it, or
 * it written and closed), not by sampling: at fabrics scale the file is
 * half a megabyte, and reading it every 200 us took the CPU from the
 * writer being timed. The time printed is the wake's, before the read.
 */
static int file_when(const char *path, const char *text, double t0,
		     double deadline)
{
	char dir[256], ev[4096];
	const char *slash = strrchr(path, '/');
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (in < 0 || inotify_add_watch(in, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		perror(dir);
		return 2;
	}
	printf("WCW start=%.6f\n", t0);
	fflush(stdout);
	for (;;) {
		double t = mono();
		struct pollfd pfd = { .fd = in, .events = POLLIN };

		if (file_has(path, text)) {
			printf("WCW flip=%.6f\n", t);
			return 0;
		}
		if (t >= deadline)
			break;
		poll(&pfd, 1, (int)((deadline - t) * 1e3) + 1);
		while (read(in, ev, sizeof(ev)) > 0)
			;
	}
	printf("WCW timeout\n");
	return 1;
}

int main(int argc, char **argv)
{
	char path[256], buf[32], want[32];
	double t0, deadline;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: wc-when NS back|through [TIMEOUT_MS]\n");
		return 2;
	}
	if (getenv("WCW_FIFO")) {
		struct sched_param sp = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			perror("wc-when: SCHED_FIFO");
	}
	t0 = mono();
	deadline = t0 + (argc > 3 ? atoi(argv[3]) : 10000) / 1e3;
	if (argv[1][0] == '/')
		return file_when(argv[1], argv[2], t0, deadline);
	snprintf(path, sizeof(path), "/sys/block/%s/queue/write_cache", argv[1]);
	snprintf(want, sizeof(want), "write %s", argv[2]);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 2;
	}
	printf("WCW start=%.6f\n", t0);
	fflush(stdout);
	while (mono() < deadline) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		if (n > 0) {
			buf[n] = '\0';
			if (!strncmp(buf, want, strlen(want))) {
				printf("WCW flip=%.6f\n", mono());
				return 0;
			}
		}
		usleep(200);
	}
	printf("WCW timeout\n");
	return 1;
}
