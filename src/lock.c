// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writers' lock: one flock(2) on <rundir>/lock, see lock.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "lock.h"
#include "log.h"

static int lock_fd = -1;
static int lock_depth;
static struct timespec lock_since;
static double longest_ms;

const char *vwc_lock_path(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/lock", vwc_rundir());
	return path;
}

static void on_alarm(int sig)
{
	(void)sig;	/* only interrupts flock() */
}

/* flock(LOCK_EX) that gives up after @timeout_ms: ITIMER_REAL interrupts it. */
static int flock_timed(int fd, int timeout_ms)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	struct itimerval it = { 0 }, old_it;
	int r;

	if (!flock(fd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	sigemptyset(&sa.sa_mask);	/* no SA_RESTART: flock returns EINTR */
	if (sigaction(SIGALRM, &sa, &old_sa) < 0)
		return -errno;
	it.it_value.tv_sec = timeout_ms / 1000;
	it.it_value.tv_usec = (timeout_ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, &old_it);
	r = flock(fd, LOCK_EX) ? -errno : 0;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	if (old_it.it_value.tv_sec || old_it.it_value.tv_usec)
		setitimer(ITIMER_REAL, &old_it, NULL);
	return r == -EINTR ? -ETIMEDOUT : r;
}

int vwc_lock_take(int timeout_ms)
{
	char buf[32];
	int fd, r;

	if (lock_depth) {
		lock_depth++;
		return 0;
	}
	r = vwc_mkdir_p(vwc_rundir());
	if (r)
		return r;
	fd = open(vwc_lock_path(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return -errno;
	r = flock_timed(fd, timeout_ms);
	if (r) {
		close(fd);
		return r;
	}
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, strlen(buf), 0) < 0)
		vwc_dbg("cannot record the pid in %s: %s", vwc_lock_path(),
			strerror(errno));
	lock_fd = fd;
	lock_depth = 1;
	clock_gettime(CLOCK_MONOTONIC, &lock_since);
	return 0;
}

void vwc_lock_release(void)
{
	struct timespec now;
	double held;

	if (!lock_depth || --lock_depth)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	held = (double)(now.tv_sec - lock_since.tv_sec) * 1e3 +
	       (double)(now.tv_nsec - lock_since.tv_nsec) / 1e6;
	if (held > longest_ms)
		longest_ms = held;
	/* closing drops the flock */
	close(lock_fd);
	lock_fd = -1;
}

int vwc_lock_holder(void)
{
	char buf[32] = "";
	int fd, n;

	fd = open(vwc_lock_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return atoi(buf);
}

double vwc_lock_longest_ms(void)
{
	return longest_ms;
}
