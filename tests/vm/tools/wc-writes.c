// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wc-writes: count the write(2)s made to sysfs files (queue/write_cache)
 * until SIGTERM or SIGINT, through inotify (IN_MODIFY). A write by a
 * process is seen; a change the kernel makes itself (a rescan after a Set
 * Features) is not: the count is that of userspace's writes alone.
 * A write the kernel refuses with an error is not counted (IN_MODIFY
 * comes only with a write that returned bytes). A test tool for the VM
 * guests.
 *
 * Usage: wc-writes FILE...
 *   Prints "WCW ready" once watching, then at the end one line:
 *     WCW writes=N
 *   and one "WCW file=FILE writes=N" line for each FILE written.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char buf[4096] __attribute__((aligned(8)));
	long total = 0, *count;
	int fd, i, *wd;

	if (argc < 2) {
		fprintf(stderr, "usage: wc-writes FILE...\n");
		return 2;
	}
	count = calloc(argc, sizeof(*count));
	wd = calloc(argc, sizeof(*wd));
	fd = inotify_init1(IN_CLOEXEC);
	if (!count || !wd || fd < 0) {
		perror("wc-writes");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		wd[i] = inotify_add_watch(fd, argv[i], IN_MODIFY);
		if (wd[i] < 0) {
			fprintf(stderr, "wc-writes: %s: %s\n", argv[i],
				strerror(errno));
			return 2;
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("WCW ready\n");
	fflush(stdout);
	while (!stop) {
		ssize_t n = read(fd, buf, sizeof(buf)), at = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("wc-writes: read");
			return 2;
		}
		while (at < n) {
			struct inotify_event *ev = (void *)(buf + at);

			for (i = 1; i < argc; i++)
				if (wd[i] == ev->wd && (ev->mask & IN_MODIFY)) {
					count[i]++;
					total++;
				}
			at += sizeof(*ev) + ev->len;
		}
	}
	printf("WCW writes=%ld\n", total);
	for (i = 1; i < argc; i++)
		if (count[i])
			printf("WCW file=%s writes=%ld\n", argv[i], count[i]);
	return 0;
}
