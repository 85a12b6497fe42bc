// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writers' lock under contention: another process holds it, a timed
 * take gives up with -ETIMEDOUT (the SIGALRM path), the holder's pid is
 * readable, a take waits for a release, nesting, an earlier interval timer
 * survives, an unusable run directory fails.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "tap.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/*
 * A child that takes the lock, says so on @ready, and releases it when
 * @go is closed (or after @hold_ms when >= 0). Return: its pid.
 */
static pid_t holder(int hold_ms, int *ready_rd, int *go_wr)
{
	int ready[2], go[2];
	pid_t pid;

	if (pipe(ready) || pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c = vwc_lock_take(5000) ? 'E' : 'L';

		close(ready[0]);
		close(go[1]);
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		if (hold_ms >= 0)
			usleep(hold_ms * 1000);
		else
			(void)!read(go[0], &c, 1);
		vwc_lock_release();
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	*ready_rd = ready[0];
	*go_wr = go[1];
	return pid;
}

static int child_status(pid_t pid)
{
	int st = -1;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ?
	       WEXITSTATUS(st) : -1;
}

int main(void)
{
	char dir[] = "/tmp/vwc-lock-XXXXXX", run[64], c = 0;
	struct itimerval it = { .it_value = { .tv_sec = 100 } }, left;
	int rd, wr, r;
	double t0, t;
	pid_t pid;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(run, sizeof(run), "%s/run/sub", dir);
	setenv("NVME_VWC_SYNC_RUNDIR", run, 1);
	ok(vwc_lock_holder() == 0, "no lock file: no holder");

	/* another process holds it: a timed take gives up */
	pid = holder(-1, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L',
	   "child takes the lock (run directory made)");
	ok(vwc_lock_holder() == pid, "holder: the child's pid");
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = now_ms();
	r = vwc_lock_take(300);
	t = now_ms() - t0;
	ok(r == -ETIMEDOUT, "timed take while held: -ETIMEDOUT (got %d)", r);
	ok(t >= 250 && t < 3000, "gave up after about 300 ms (%.0f ms)", t);
	getitimer(ITIMER_REAL, &left);
	ok(left.it_value.tv_sec > 90,
	   "an earlier interval timer is put back (%ld s left)",
	   (long)left.it_value.tv_sec);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	close(wr);
	close(rd);
	ok(child_status(pid) == 0, "child released and exited");

	/* held for 200 ms: a take waits for the release */
	pid = holder(200, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L', "child holds again");
	t0 = now_ms();
	r = vwc_lock_take(5000);
	t = now_ms() - t0;
	ok(r == 0, "take waits and succeeds (got %d)", r);
	ok(t >= 50 && t < 4000, "after the child's release (%.0f ms)", t);
	ok(vwc_lock_holder() == getpid(), "holder: this process");
	ok(vwc_lock_take(10) == 0, "nested take: at once");
	vwc_lock_release();
	ok(vwc_lock_holder() == getpid(), "still held after one release");
	usleep(20 * 1000);
	vwc_lock_release();
	ok(vwc_lock_longest_ms() >= 15, "longest hold recorded (%.1f ms)",
	   vwc_lock_longest_ms());
	vwc_lock_release();	/* not held: nothing */
	close(wr);
	close(rd);
	ok(child_status(pid) == 0, "second child exited");

	/* free again: a child gets it at once */
	pid = holder(0, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L',
	   "released: another process takes it");
	close(wr);
	close(rd);
	child_status(pid);

	setenv("NVME_VWC_SYNC_RUNDIR", "/proc/vwc-no-such-dir", 1);
	ok(vwc_lock_take(100) < 0, "run directory cannot be made: an error");
	ok(vwc_lock_holder() == 0, "no holder there");

	snprintf(run, sizeof(run), "rm -rf %s", dir);
	ok(!system(run), "cleanup");
	return tap_done();
}
