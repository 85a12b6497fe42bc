// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writers' lock under contention: another process holds it, a timed
 * take gives up with -ETIMEDOUT (the SIGALRM path), a take of 0 ms tries
 * once, the holder named is the process really holding it (not the pid in
 * the file, not one that passed its descriptor on), a take waits for a
 * release, nesting, an earlier interval timer survives, an unusable run
 * directory fails. Only root can reach it: directory 0700 and file 0600,
 * an older 0755/0644 pair made safe, a symbolic link or a file someone else
 * made replaced, a run directory owned by someone else or a symlink
 * refused, a lock held through the old file by another user no longer
 * blocks anyone, one held by root is waited for before it is replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdbool.h>

#include "lock.h"
#include "tap.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* In a child: close what other children's pipes left open in the parent. */
static void close_others(int keep1, int keep2)
{
	int fd;

	for (fd = 3; fd < 256; fd++)
		if (fd != keep1 && fd != keep2)
			close(fd);
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
		char c;

		close_others(ready[1], go[0]);
		c = vwc_lock_take(5000) ? 'E' : 'L';

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

static void skip(const char *why, int n)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
}

static int child_status(pid_t pid)
{
	int st = -1;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ?
	       WEXITSTATUS(st) : -1;
}

/*
 * A child that flocks PATH itself (no pid written), as uid @uid if >= 0
 * (after opening it, as a process that kept an old descriptor would), and
 * holds it until @go closes. With @pass_on, it forks a grandchild that
 * keeps the descriptor and exits: the lock lives on in the grandchild.
 */
static pid_t raw_holder(const char *path, int uid, bool pass_on, int *ready_rd,
			int *go_wr)
{
	int ready[2], go[2];
	pid_t pid;

	if (pipe(ready) || pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c = 'L';
		int fd;

		close_others(ready[1], go[0]);
		fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB))
			c = 'E';
		if (uid >= 0 && (setgid(uid) || setuid(uid)))
			c = 'E';
		if (pass_on && fork() > 0)
			_exit(0);	/* the grandchild goes on */
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	*ready_rd = ready[0];
	*go_wr = go[1];
	return pid;
}

static unsigned int mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 0 : st.st_mode & 07777;
}

static ino_t ino_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 0 : st.st_ino;
}

/* A child's vwc_lock_take(@ms): its result, and its holding, on @ready. */
static pid_t taker(int ms, int *ready_rd, int *go_wr)
{
	int ready[2], go[2];
	pid_t pid;

	if (pipe(ready) || pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close_others(ready[1], go[0]);
		c = vwc_lock_take(ms) ? 'E' : 'L';

		if (write(ready[1], &c, 1) != 1)
			_exit(2);
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

/* The checks of who may reach the lock, in a fresh run directory @run. */
static void safety(const char *run)
{
	char lock[128], why[160], target[160];
	int rd, wr, rd2 = -1, wr2 = -1, r;
	ino_t old;
	pid_t pid, pid2;
	char c = 0;
	double t0;
	FILE *f;

	snprintf(lock, sizeof(lock), "%s/lock", run);
	setenv("NVME_VWC_SYNC_RUNDIR", run, 1);

	/* created: 0700 directory, 0600 file */
	ok(vwc_lock_take(100) == 0, "take in a new run directory");
	ok(mode_of(run) == 0700, "run directory made 0700 (%04o)",
	   mode_of(run));
	ok(mode_of(lock) == 0600, "lock file made 0600 (%04o)", mode_of(lock));
	vwc_lock_release();

	/* an older version's 0755 directory and 0644 file: made safe */
	chmod(run, 0755);
	chmod(lock, 0644);
	old = ino_of(lock);
	ok(vwc_lock_take(100) == 0, "take with a 0755 directory, 0644 file");
	ok(mode_of(run) == 0700 && mode_of(lock) == 0600,
	   "made 0700 and 0600 (%04o, %04o)", mode_of(run), mode_of(lock));
	ok(ino_of(lock) != old,
	   "the 0644 file, which anyone may hold open, is replaced");
	vwc_lock_release();

	/* the same uid holds a 0644 file (a root flock(1) that created it):
	 * waited for, replaced only once it is done */
	chmod(lock, 0644);
	pid = raw_holder(lock, -1, false, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L',
	   "a process of ours holds the 0644 file");
	r = vwc_lock_take(300);
	ok(r == -ETIMEDOUT,
	   "a holder of our own uid is waited for, not replaced (got %d)", r);
	ok(mode_of(lock) == 0644, "file left until it is released");
	pid2 = taker(5000, &rd2, &wr2);
	usleep(100 * 1000);
	close(wr);
	close(rd);
	child_status(pid);
	ok(pid2 > 0 && read(rd2, &c, 1) == 1 && c == 'L',
	   "after its release a waiter takes it");
	ok(mode_of(lock) == 0600, "and replaces it by a 0600 file (%04o)",
	   mode_of(lock));
	ok(vwc_lock_take(0) == -ETIMEDOUT,
	   "the new file is the lock: held by that waiter");
	close(wr2);
	close(rd2);
	child_status(pid2);

	/* a symbolic link: replaced, its target untouched */
	snprintf(target, sizeof(target), "%s.target", run);
	f = fopen(target, "w");
	if (f) {
		fputs("keep\n", f);
		fclose(f);
	}
	unlink(lock);
	ok(!symlink(target, lock), "lock file made a symbolic link");
	ok(vwc_lock_take(100) == 0, "take with a symbolic link");
	ok(mode_of(lock) == 0600, "replaced by a regular 0600 file (%04o)",
	   mode_of(lock));
	ok(mode_of(target) == 0644 || mode_of(target) == 0664,
	   "link target untouched (%04o)", mode_of(target));
	vwc_lock_release();
	unlink(target);

	if (geteuid()) {
		skip("other users (not root)", 4);
	} else {
		/* another user kept a descriptor of the old 0644 file and
		 * holds it: no longer blocks anyone */
		chmod(run, 0755);
		chmod(lock, 0644);
		pid = raw_holder(lock, 65534, false, &rd, &wr);
		ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L',
		   "uid 65534 holds the old 0644 file");
		t0 = now_ms();
		r = vwc_lock_take(5000);
		ok(r == 0 && now_ms() - t0 < 1000,
		   "take at once: the file is replaced (%d, %.0f ms)", r,
		   now_ms() - t0);
		vwc_lock_release();
		close(wr);
		close(rd);
		child_status(pid);

		/* a file of another user: replaced */
		if (chown(lock, 65534, 65534))
			perror("chown");
		ok(vwc_lock_take(100) == 0, "take with a file of uid 65534");
		{
			struct stat st;

			ok(!lstat(lock, &st) && st.st_uid == 0,
			   "replaced by root's own");
		}
		vwc_lock_release();
	}

	/* the holder named: the one really holding it */
	pid = holder(-1, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L', "child takes it");
	close(wr);
	close(rd);
	child_status(pid);	/* its pid stays in the file */
	pid = raw_holder(lock, -1, false, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L',
	   "another child holds it without writing its pid");
	ok(vwc_lock_holder() == pid,
	   "holder: the process holding it, not the pid in the file (%d, %d)",
	   vwc_lock_holder(), pid);
	vwc_lock_strerror(-ETIMEDOUT, why, sizeof(why));
	snprintf(target, sizeof(target), "(pid %d, test-lock)", pid);
	ok(strstr(why, target) != NULL, "message names it: %s", why);
	close(wr);
	close(rd);
	child_status(pid);

	pid = raw_holder(lock, -1, true, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L',
	   "a child takes it and leaves it to its own child");
	child_status(pid);
	ok(vwc_lock_take(0) == -ETIMEDOUT, "still held (by the grandchild)");
	ok(vwc_lock_holder() == 0,
	   "holder: not named (the pid /proc/locks keeps has gone)");
	vwc_lock_strerror(-ETIMEDOUT, why, sizeof(why));
	ok(!strcmp(why, "held by another process"), "message: %s", why);
	close(wr);	/* the grandchild reads EOF and exits */
	close(rd);
	usleep(100 * 1000);

	/* a run directory that cannot be made safe: refused */
	if (geteuid()) {
		skip("run directory of another user (not root)", 1);
	} else {
		if (chown(run, 65534, 65534))
			perror("chown");
		ok(vwc_lock_take(100) == -EPERM,
		   "run directory owned by uid 65534: refused");
		if (chown(run, 0, 0))
			perror("chown");
	}
	snprintf(target, sizeof(target), "%s.link", run);
	ok(!symlink(run, target), "a symbolic link to the run directory");
	setenv("NVME_VWC_SYNC_RUNDIR", target, 1);
	r = vwc_lock_take(100);
	ok(r == -ELOOP || r == -ENOTDIR,
	   "run directory that is a symbolic link: refused (%d)", r);
	unlink(target);
	setenv("NVME_VWC_SYNC_RUNDIR", run, 1);
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

	/* a take of 0 ms while held: one try */
	pid = holder(-1, &rd, &wr);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L', "child holds it");
	alarm(5);	/* an endless wait would be the failure */
	t0 = now_ms();
	r = vwc_lock_take(0);
	alarm(0);
	ok(r == -ETIMEDOUT && now_ms() - t0 < 200,
	   "take of 0 ms while held: -ETIMEDOUT at once (%d, %.0f ms)", r,
	   now_ms() - t0);
	close(wr);
	close(rd);
	child_status(pid);

	snprintf(run, sizeof(run), "%s/safe", dir);
	safety(run);

	setenv("NVME_VWC_SYNC_RUNDIR", "/proc/vwc-no-such-dir", 1);
	ok(vwc_lock_take(100) < 0, "run directory cannot be made: an error");
	ok(vwc_lock_holder() == 0, "no holder there");

	snprintf(run, sizeof(run), "rm -rf %s", dir);
	ok(!system(run), "cleanup");
	return tap_done();
}
