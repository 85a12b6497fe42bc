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

/* the file holds the line TEXT (the whole file read, up to 16 MiB) */
static bool file_has(const char *path, const char *text)
{
	static char buf[16 << 20];
	size_t tl = strlen(text), len = 0;
	ssize_t n;
	char *p;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	while (len < sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	if (!len)
		return false;
	buf[len] = '\0';
	for (p = buf; (p = strstr(p, text)); p += tl)
		if ((p == buf || p[-1] == '\n') && (p[tl] == '\n' || !p[tl]))
			return true;
	return false;
}

/* an event of the inotify buffer names @base, or the queue overflowed */
static bool event_for(const char *ev, ssize_t n, const char *base)
{
	ssize_t off = 0;

	while (off + (ssize_t)sizeof(struct inotify_event) <= n) {
		const struct inotify_event *e = (const void *)(ev + off);

		if ((e->mask & IN_Q_OVERFLOW) ||
		    (e->len && !strcmp(e->name, base)))
			return true;
		off += sizeof(*e) + e->len;
	}
	return false;
}

/*
 * Woken by inotify on the file's directory (a file renamed over it, or
 * it written and closed), not by sampling: at fabrics scale the file is
 * half a megabyte, and reading it every 200 us took the CPU from the
 * writer being timed. Events for other files there (a writer's temporary
 * file closed before its rename) wake it but are not read for. The time
 * printed is the wake's, before the read.
 */
static int file_when(const char *path, const char *text, double t0,
		     double deadline)
{
	char dir[4096], ev[4096] __attribute__((aligned(8)));
	const char *slash = strrchr(path, '/'), *base = slash + 1;
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	bool look = true;
	double t = t0;

	if (in < 0) {
		perror("wc-when: inotify_init1");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (inotify_add_watch(in, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		perror(dir);
		return 2;
	}
	printf("WCW start=%.6f\n", t0);
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { .fd = in, .events = POLLIN };
		ssize_t n;

		if (look && file_has(path, text)) {
			printf("WCW flip=%.6f\n", t);
			return 0;
		}
		if (mono() >= deadline)
			break;
		poll(&pfd, 1, (int)((deadline - mono()) * 1e3) + 1);
		t = mono();
		look = false;
		while ((n = read(in, ev, sizeof(ev))) > 0)
			look |= event_for(ev, n, base);
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
	if (getenv("WCW_FIFO") && !strcmp(getenv("WCW_FIFO"), "1")) {
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
