// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writers' lock: one flock(2) on <rundir>/lock, see lock.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "lock.h"
#include "log.h"

#define LOCK_NAME	"lock"

static int lock_fd = -1;
static int lock_depth;
static struct timespec lock_since;
static double longest_ms;

const char *vwc_lock_path(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/" LOCK_NAME, vwc_rundir());
	return path;
}

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void on_alarm(int sig)
{
	(void)sig;	/* only interrupts flock() */
}

/*
 * flock(LOCK_EX) that gives up after @timeout_ms (0: one try): ITIMER_REAL
 * interrupts it.
 */
static int flock_timed(int fd, int timeout_ms)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	struct itimerval it = { 0 }, old_it;
	int r;

	if (!flock(fd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	if (timeout_ms <= 0)
		return -ETIMEDOUT;
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

/* "maj:min:ino" as /proc/locks and fdinfo spell a file */
static void lock_key(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%lu", major(st->st_dev),
		 minor(st->st_dev), (unsigned long)st->st_ino);
}

/* The pid /proc/locks names for the FLOCK held on @key, or 0. */
static int locks_pid(const char *key)
{
	char line[256], kind[16], tok[64];
	int pid = 0, p, n;
	FILE *f;

	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 00:19:567 0 EOF";
		 * waiters are "1: -> FLOCK ..." */
		if (strstr(line, "->"))
			continue;
		if (sscanf(line, "%*s %15s %*s %*s %d %63s%n", kind, &p, tok,
			   &n) != 3)
			continue;
		if (!strcmp(kind, "FLOCK") && !strcmp(tok, key) && p > 0) {
			pid = p;
			break;
		}
	}
	fclose(f);
	return pid;
}

/* @pid has a descriptor that carries the FLOCK on @key (its fdinfo). */
static int pid_holds(int pid, const char *key)
{
	char dir[64], path[400], buf[1024];
	struct dirent *de;
	int found = 0, fd;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		found = strstr(buf, "lock:") && strstr(buf, "FLOCK") &&
			strstr(buf, key);
	}
	closedir(d);
	return found;
}

/* The pid really holding the lock on the file @st, or 0 if not known. */
static int holder_of(const struct stat *st)
{
	char key[64];
	int pid;

	lock_key(st, key, sizeof(key));
	pid = locks_pid(key);
	/* /proc/locks keeps the pid that called flock(); the descriptor may
	 * live on in another process only: name it only when it holds */
	return pid > 0 && pid_holds(pid, key) ? pid : 0;
}

/* The effective uid of @pid, or -1. */
static long pid_euid(int pid)
{
	char path[64], line[256];
	long ruid, euid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %ld %ld", &ruid, &euid) == 2)
			break;
	fclose(f);
	return euid;
}

/*
 * A new lock file, locked by us, renamed over <rundir>/lock. Whoever holds
 * or waits for the old one finds it replaced (the check after flock) and
 * comes back to this one. Return: its descriptor or a negative errno.
 */
static int replace_lock(int dfd)
{
	char tmp[64];
	int fd, r;

	snprintf(tmp, sizeof(tmp), LOCK_NAME ".new.%d", (int)getpid());
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 ||
	    renameat(dfd, tmp, dfd, LOCK_NAME) < 0) {
		r = -errno;
		unlinkat(dfd, tmp, 0);
		close(fd);
		return r;
	}
	return fd;
}

/*
 * One attempt: the lock file, checked, and its lock taken (waiting at most
 * until @deadline). Return: a locked descriptor whose file is still
 * <rundir>/lock, -EAGAIN to try again (the file was replaced meanwhile),
 * or a negative errno.
 */
static int take_once(int dfd, double deadline)
{
	struct stat st, now;
	int fd, r, wait_ms, pid;
	bool unsafe;

	fd = openat(dfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0 && errno != ELOOP && errno != ENXIO)
		return -errno;
	unsafe = fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		 st.st_uid != geteuid() || (st.st_mode & 077);
	wait_ms = (int)(deadline - mono_ms());
	if (wait_ms < 0)
		wait_ms = 0;
	if (unsafe) {
		/*
		 * Made by someone else, or once open to others (an older
		 * version's 0644, flock(1)'s own creation): anyone may hold a
		 * descriptor to it. Replaced by a fresh 0600 file; while a
		 * root process holds it, only after that one is done, so two
		 * root writers never hold "the lock" at once.
		 */
		if (fd >= 0) {
			r = flock(fd, LOCK_EX | LOCK_NB) ? -errno : 0;
			if (r == -EWOULDBLOCK) {
				pid = holder_of(&st);
				if (pid > 0 && pid_euid(pid) == (long)geteuid())
					r = flock_timed(fd, wait_ms);
			}
			if (r && r != -EWOULDBLOCK) {
				close(fd);
				return r;
			}
		}
		vwc_notice("%s: not a %04o file of uid %u: replaced by a new one",
			   vwc_lock_path(), 0600, (unsigned int)geteuid());
		r = replace_lock(dfd);
		if (fd >= 0)
			close(fd);
		if (r < 0) {
			vwc_err("%s cannot be replaced: %s", vwc_lock_path(),
				strerror(-r));
			return r;
		}
		fd = r;
	} else {
		r = flock_timed(fd, wait_ms);
		if (r) {
			close(fd);
			return r;
		}
	}
	/* replaced while we waited: the lock is the new file's */
	if (fstat(fd, &st) < 0 ||
	    fstatat(dfd, LOCK_NAME, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != now.st_dev || st.st_ino != now.st_ino) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

int vwc_lock_take(int timeout_ms)
{
	double deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int dfd, fd = -EAGAIN, i;
	char buf[32];

	if (lock_depth) {
		lock_depth++;
		return 0;
	}
	dfd = vwc_rundir_open();
	if (dfd < 0)
		return dfd;
	for (i = 0; i < 20 && fd == -EAGAIN; i++)
		fd = take_once(dfd, deadline);
	close(dfd);
	if (fd < 0)
		return fd == -EAGAIN ? -ETIMEDOUT : fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
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

bool vwc_lock_held(void)
{
	return lock_depth > 0;
}

int vwc_lock_holder(void)
{
	struct stat st;

	if (lstat(vwc_lock_path(), &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return holder_of(&st);
}

const char *vwc_lock_strerror(int err, char *buf, size_t len)
{
	char path[64], comm[32] = "";
	int pid, fd;
	ssize_t n;

	if (err != -ETIMEDOUT) {
		snprintf(buf, len, "%s%s", strerror(-err),
			 geteuid() && (err == -EACCES || err == -EPERM ||
				       err == -EROFS) ? " (must be root)" : "");
		return buf;
	}
	pid = vwc_lock_holder();
	if (!pid) {
		snprintf(buf, len, "held by another process");
		return buf;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		close(fd);
	}
	snprintf(buf, len, "held by another process (pid %d%s%s)", pid,
		 comm[0] ? ", " : "", comm);
	return buf;
}

double vwc_lock_longest_ms(void)
{
	return longest_ms;
}
