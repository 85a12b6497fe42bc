// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The block-layer edge: queue/write_cache reads and writes, and the
 * records of what this tool changed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vwc-config.h"
#include "blk.h"
#include "fileio.h"
#include "log.h"

const char *vwc_rundir(void)
{
	const char *d = getenv("NVME_VWC_SYNC_RUNDIR");

	return d && *d ? d : VWC_RUNDIR;
}

static int write_small(const char *path, const char *val, int flags)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

int vwc_blk_read(const char *syspath, enum vwc_mode *mode)
{
	char path[VWC_PATH_LEN + 32], buf[32];
	int r;

	snprintf(path, sizeof(path), "%s/queue/write_cache", syspath);
	r = vwc_read_attr(path, buf, sizeof(buf));
	if (r)
		return r;
	return vwc_mode_parse(buf, mode);
}

int vwc_blk_kernel_wc(const char *syspath)
{
	char path[VWC_PATH_LEN + 32], buf[16];
	int r;

	snprintf(path, sizeof(path), "%s/queue/fua", syspath);
	r = vwc_read_attr(path, buf, sizeof(buf));
	if (r)
		return r;
	if (buf[0] == '0' || buf[0] == '1')
		return buf[0] - '0';
	return -EINVAL;
}

static int blk_write(const char *syspath, enum vwc_mode mode)
{
	char path[VWC_PATH_LEN + 32];
	enum vwc_mode now;
	int r;

	snprintf(path, sizeof(path), "%s/queue/write_cache", syspath);
	r = write_small(path, vwc_mode_str(mode), O_TRUNC);
	if (r)
		return r;
	r = vwc_blk_read(syspath, &now);
	if (r || now == mode)
		return r;
	/*
	 * Write through always takes: reading write back, another writer's
	 * write came after ours (the sidecar's while a Set Features 06h is
	 * in flight, without the lock; a kernel's rescan)
	 */
	return mode == VWC_MODE_WRITE_THROUGH ? -EAGAIN : -EIO;
}

/* Records: <rundir>/changed/<name> = "original=<mode>\nset=<mode>\n" */
static void record_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/changed/%s", vwc_rundir(), name);
}

static int record_load(const char *name, enum vwc_mode *orig,
		       enum vwc_mode *set)
{
	char path[512], buf[128], *o, *s;
	int r;

	record_path(name, path, sizeof(path));
	r = vwc_read_attr(path, buf, sizeof(buf));
	if (r)
		return r;
	o = strstr(buf, "original=");
	s = strstr(buf, "set=");
	if (!o || !s || vwc_mode_parse(o + 9, orig) ||
	    vwc_mode_parse(s + 4, set))
		return -EINVAL;
	return 0;
}

int vwc_blk_record(const char *name, enum vwc_mode *orig)
{
	enum vwc_mode set;

	return record_load(name, orig, &set);
}

/* <rundir>/write-through in @path (512), and fstatat()'s answer on it */
static int mark_stat(char *path, struct stat *st)
{
	snprintf(path, 512, "%s/" VWC_WT_MARK, vwc_rundir());
	return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int vwc_blk_mark_wt(const char *why)
{
	char path[512];
	struct stat st;
	int dfd, fd;

	/* there already (the common case): one system call */
	if (!mark_stat(path, &st) && S_ISREG(st.st_mode))
		return 0;
	dfd = vwc_rundir_open();
	if (dfd < 0)
		return dfd;
	/* no link followed; a FIFO planted there does not block */
	fd = openat(dfd, VWC_WT_MARK,
		    O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		fd = -errno;
	} else {
		close(fd);
		/* once a boot: udev's rule runs sync for controllers now */
		vwc_notice("%s: made %s: udev's rule runs sync for every controller's event from now on",
			   why, path);
	}
	close(dfd);
	return fd < 0 ? fd : 0;
}

bool vwc_blk_wt_marked(void)
{
	char path[512];
	struct stat st;

	/* anything there but nothing at all counts as made */
	return !mark_stat(path, &st) || errno != ENOENT;
}

const char *vwc_blk_mark_strerror(int err, char *buf, size_t len)
{
	snprintf(buf, len, "cannot make %s/%s: %s", vwc_rundir(), VWC_WT_MARK,
		 strerror(-err));
	return buf;
}

int vwc_mkdir_p(const char *dir)
{
	char tmp[512], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * The run directory, made safe: created 0700, a real directory (no
 * symlink), owned by this user, and reachable by nobody else (group and
 * other bits cleared). Return: a descriptor, or a negative errno with the
 * reason logged.
 */
int vwc_rundir_open(void)
{
	const char *dir = vwc_rundir();
	char parent[512], *s;
	struct stat st;
	int dfd, r;

	snprintf(parent, sizeof(parent), "%s", dir);
	s = strrchr(parent, '/');
	if (s && s != parent) {
		*s = '\0';
		r = vwc_mkdir_p(parent);
		if (r)
			return r;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		if (r == -ELOOP || r == -ENOTDIR)
			vwc_err("%s is a symbolic link or not a directory: refusing it as the run directory; remove it",
				dir);
		return r;
	}
	if (fstat(dfd, &st) < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	if (st.st_uid != geteuid()) {
		vwc_err("%s is owned by uid %u, not %u: refusing it as the run directory; remove it",
			dir, (unsigned int)st.st_uid, (unsigned int)geteuid());
		close(dfd);
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700) {
		if (fchmod(dfd, 0700) < 0) {
			r = -errno;
			vwc_err("%s has mode %04o and cannot be made 0700: %s",
				dir, (unsigned int)(st.st_mode & 07777),
				strerror(-r));
			close(dfd);
			return r;
		}
		vwc_notice("%s had mode %04o: now 0700", dir,
			   (unsigned int)(st.st_mode & 07777));
	}
	return dfd;
}

static void record_change(const char *name, enum vwc_mode before,
			  enum vwc_mode set)
{
	char path[512], dir[512], buf[96], tmp[600];
	enum vwc_mode orig = before, old_set;
	int r;

	/* keep the first original: that is what the kernel chose */
	if (!record_load(name, &orig, &old_set) && orig == set) {
		record_path(name, path, sizeof(path));
		unlink(path);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/changed", vwc_rundir());
	r = vwc_mkdir_p(dir);
	if (!r) {
		record_path(name, path, sizeof(path));
		/* writers of write back run concurrently: a file each */
		/* and the sidecar's fast path is a thread: its tid */
		snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path,
			 (long)syscall(SYS_gettid));
		snprintf(buf, sizeof(buf), "original=%s\nset=%s\n",
			 vwc_mode_str(orig), vwc_mode_str(set));
		r = write_small(tmp, buf, O_CREAT | O_TRUNC);
		if (!r && rename(tmp, path) < 0)
			r = -errno;
	}
	if (r)
		vwc_warn("%s: cannot record the change under %s: %s", name,
			 dir, strerror(-r));
}

/* blk_write()'s -EAGAIN: whose write it was, as far as can be told */
#define OVERTAKEN_BY " (a Set Features 06h in flight, or the kernel's rescan)"

static const char *write_strerror(int r)
{
	return r == -EAGAIN ? "another writer put write back in its place" :
			      strerror(-r);
}

static const char *node_name(const char *syspath)
{
	const char *s = strrchr(syspath, '/');

	return s ? s + 1 : syspath;
}

/*
 * The order @ns's nodes are written in for @mode: write back goes to the
 * node that matters first, the one I/O is submitted to (the multipath head,
 * or the namespace itself), then to every path node; write through goes to
 * the path nodes first and to the head last, so that flushes stop at the
 * head only once everything below it is set.
 */
static const char *node_at(const struct vwc_ns *ns, enum vwc_mode mode,
			   int i)
{
	if (mode == VWC_MODE_WRITE_BACK)
		return i ? ns->path_syspath[i - 1] : ns->syspath;
	return i < ns->nr_paths ? ns->path_syspath[i] : ns->syspath;
}

/*
 * Write every node of @ns that differs. A node that fails is reported and
 * never a reason to stop: every other node is still written (a head left in
 * write through because a path node could not be written would drop the
 * flushes of a cache that is on). Write through is written only after
 * vwc_blk_mark_wt(), made before the first node that needs it (none, no
 * mark: the kernel's own write through stays unmarked); a mark that cannot
 * be made ends it at once, nothing written, @bad set to NULL. Return: 0,
 * or the first failing node's error, with that node's syspath in @bad (if
 * not NULL); the nodes written are counted in @written (if not NULL).
 */
static int write_nodes(struct vwc_ns *ns, enum vwc_mode mode,
		       const char **bad, int *written)
{
	int i, r, first = 0;
	bool marked = mode != VWC_MODE_WRITE_THROUGH;

	for (i = 0; i <= ns->nr_paths; i++) {
		const char *sp = node_at(ns, mode, i);
		bool head = sp == ns->syspath;
		enum vwc_mode cur;

		r = vwc_blk_read(sp, &cur);
		if (r == -ENOENT && !head)
			continue;	/* path node without a queue */
		if (!r && cur == mode)
			continue;
		/* write through from this tool: the mark first, once;
		 * without it nothing is written (nothing was before) */
		if (!r && !marked) {
			marked = true;
			r = vwc_blk_mark_wt(ns->name);
			if (r) {
				if (bad)
					*bad = NULL;
				return r;
			}
		}
		if (!r) {
			r = blk_write(sp, mode);
			if (written)
				(*written)++;
		}
		if (r) {
			/* overtaken: the engine tries once more */
			if (!head)
				vwc_log(r == -EAGAIN ? LOG_INFO : LOG_WARNING,
					"%s: path node %s: cannot set %s: %s",
					ns->name, node_name(sp),
					vwc_mode_str(mode), write_strerror(r));
			if (!first) {
				first = r;
				if (bad)
					*bad = sp;
			}
			continue;
		}
		record_change(node_name(sp), cur, mode);
	}
	return first;
}

/*
 * Write back wanted on @ns, in write through, which the kernel holds no
 * write cache for: leave the mode to the kernel. Only the nodes this tool
 * itself put in write through (a record says so) get write back written,
 * whatever the kernel answers: on 6.11 and later that write through is a
 * flag of the queue that the kernel's next rescan would keep, with the
 * cache enabled again. Then the record goes: the mode is the kernel's.
 */
static void kernel_held(struct vwc_ns *ns)
{
	enum vwc_mode orig, set;
	char path[VWC_PATH_LEN + 512];
	int i;

	for (i = 0; i <= ns->nr_paths; i++) {
		const char *sp = i ? ns->path_syspath[i - 1] : ns->syspath;
		const char *name = node_name(sp);

		if (record_load(name, &orig, &set) ||
		    set != VWC_MODE_WRITE_THROUGH)
			continue;
		blk_write(sp, VWC_MODE_WRITE_BACK);
		record_path(name, path, sizeof(path));
		unlink(path);
	}
	ns->kernel_held = true;
	ns->action = VWC_ACT_UNCHANGED;
	if (vwc_blk_read(ns->syspath, &ns->after))
		ns->after = VWC_MODE_NONE;
	vwc_info("%s: the kernel holds no write cache for it (fua 0): write back left to the kernel",
		 ns->name);
}

static unsigned long wb_gen;

void vwc_blk_wb_bump(void)
{
	__atomic_add_fetch(&wb_gen, 1, __ATOMIC_SEQ_CST);
}

unsigned long vwc_blk_wb_gen(void)
{
	return __atomic_load_n(&wb_gen, __ATOMIC_SEQ_CST);
}

int vwc_blk_apply(struct vwc_ns *ns, struct vwc_decision d, bool dry_run)
{
	const char *bad = ns->syspath;
	int r, written = 0;

	ns->decision = d;
	ns->errmsg[0] = '\0';
	ns->kernel_held = false;
	ns->overtaken = false;
	ns->written = 0;
	r = vwc_blk_read(ns->syspath, &ns->before);
	if (r) {
		ns->action = VWC_ACT_FAILED;
		snprintf(ns->errmsg, sizeof(ns->errmsg),
			 "cannot read %s/queue/write_cache: %s", ns->name,
			 strerror(-r));
		return r;
	}
	ns->after = ns->before;
	if (d.mode == VWC_MODE_NONE) {
		ns->action = VWC_ACT_SKIPPED;
		return 0;
	}
	if (ns->before == d.mode) {
		ns->action = VWC_ACT_UNCHANGED;
		/* the head may be right while a path node is not */
		if (dry_run || !ns->nr_paths)
			return 0;
	} else if (d.mode == VWC_MODE_WRITE_BACK &&
		   vwc_blk_kernel_wc(ns->syspath) == 0) {
		if (!dry_run)
			kernel_held(ns);
		else
			ns->kernel_held = true;
		ns->action = VWC_ACT_UNCHANGED;
		return 0;
	} else if (dry_run) {
		ns->action = VWC_ACT_WOULD_CHANGE;
		ns->after = d.mode;
		return 0;
	}

	r = write_nodes(ns, d.mode, &bad, &written);
	ns->written = written;
	if (r && !bad) {	/* vwc_blk_mark_wt(): nothing written */
		char why[640];

		ns->action = VWC_ACT_FAILED;
		snprintf(ns->errmsg, sizeof(ns->errmsg), "%s; left in %s",
			 vwc_blk_mark_strerror(r, why, sizeof(why)),
			 vwc_mode_str(ns->before));
		vwc_err("%s: %s", ns->name, ns->errmsg);
		return r;
	}
	if (r) {
		ns->action = VWC_ACT_FAILED;
		ns->overtaken = r == -EAGAIN;
		if (bad == ns->syspath)
			snprintf(ns->errmsg, sizeof(ns->errmsg),
				 "cannot set %s: %s%s", vwc_mode_str(d.mode),
				 write_strerror(r),
				 ns->overtaken ? OVERTAKEN_BY : "");
		else
			snprintf(ns->errmsg, sizeof(ns->errmsg),
				 "cannot set %s on path node %s: %s%s",
				 vwc_mode_str(d.mode), node_name(bad),
				 write_strerror(r),
				 ns->overtaken ? OVERTAKEN_BY : "");
		/* never leave it half-way in the unsafe direction */
		if (d.mode == VWC_MODE_WRITE_THROUGH)
			write_nodes(ns, VWC_MODE_WRITE_BACK, NULL, NULL);
		if (vwc_blk_read(ns->syspath, &ns->after))
			ns->after = VWC_MODE_NONE;
		/* the engine tries once more, and says it if that fails */
		vwc_log(ns->overtaken ? LOG_INFO : LOG_ERR, "%s: %s", ns->name,
			ns->errmsg);
		return r;
	}
	if (vwc_blk_read(ns->syspath, &ns->after))
		ns->after = VWC_MODE_NONE;
	if (ns->before != ns->after && !written) {
		/* the kernel changed it between our reads (its rescan) */
		ns->action = VWC_ACT_UNCHANGED;
		vwc_info("%s: %s -> %s by the kernel itself: nothing written",
			 ns->name, vwc_mode_str(ns->before),
			 vwc_mode_str(ns->after));
	} else if (ns->before != ns->after) {
		ns->action = VWC_ACT_CHANGED;
		vwc_notice("%s: %s -> %s: %s", ns->name,
			   vwc_mode_str(ns->before), vwc_mode_str(ns->after),
			   vwc_reason_str(d.reason));
	}
	return 0;
}

void vwc_blk_report_found(struct vwc_ns *ns, enum vwc_mode before)
{
	ns->before = before;
	if (ns->action != VWC_ACT_FAILED)
		ns->action = before == ns->after ? VWC_ACT_UNCHANGED :
						   VWC_ACT_CHANGED;
}

struct apply_job {
	struct vwc_ns *const *ns;
	const struct vwc_decision *d;
	int n;
	bool dry_run;
	int next;		/* the next namespace to take */
	int failed;
};

/*
 * Apply the job's next namespace. Return: 0 when none is left, 1 done with
 * nothing written, 2 done with a write of write_cache.
 */
static int apply_next(struct apply_job *j)
{
	int i = __atomic_fetch_add(&j->next, 1, __ATOMIC_SEQ_CST);

	if (i >= j->n)
		return 0;
	if (vwc_blk_apply(j->ns[i], j->d[i], j->dry_run))
		__atomic_add_fetch(&j->failed, 1, __ATOMIC_SEQ_CST);
	return j->ns[i]->written > 0 ? 2 : 1;
}

static void *apply_worker(void *arg)
{
	while (apply_next(arg))
		;
	return NULL;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int vwc_blk_apply_many(struct vwc_ns *const *ns, const struct vwc_decision *d,
		       int n, bool dry_run)
{
	struct apply_job j = { ns, d, n, dry_run, 0, 0 };
	pthread_t tid[VWC_BLK_WRITERS - 1];
	int i, left, nt = 0, r;
	double t0;

	/*
	 * One namespace after the other in this thread while each costs next
	 * to nothing (6.1 takes no freeze; a namespace already right is not
	 * written): threads would cost more than they save. Once a write took
	 * a millisecond or more (a queue frozen for it), the rest is shared;
	 * a read alone never starts them, however slow the machine (under
	 * emulation a sysfs read takes a millisecond: a thread per evaluation
	 * of a controller, for nothing to write).
	 */
	do {
		/* a dry run never starts them: no clock read (a system call
		 * a namespace where the kernel has no vDSO clock, as under
		 * emulation when it finds the TSC unstable) */
		t0 = dry_run ? 0 : mono_ms();
		r = apply_next(&j);
		if (!r)
			return j.failed;
	} while (dry_run || r != 2 || mono_ms() - t0 < 1.0);
	left = n - __atomic_load_n(&j.next, __ATOMIC_SEQ_CST);
	for (i = 0; i < left - 1 && i < VWC_BLK_WRITERS - 1; i++)
		if (!pthread_create(&tid[nt], NULL, apply_worker, &j))
			nt++;
	apply_worker(&j);
	for (i = 0; i < nt; i++)
		pthread_join(tid[i], NULL);
	return j.failed;
}

int vwc_blk_hold(const char *name, enum vwc_hold_op op)
{
	char dir[512], path[600];
	int r;

	snprintf(dir, sizeof(dir), "%s/restored", vwc_rundir());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	switch (op) {
	case VWC_HOLD_TEST:
		return access(path, F_OK) ? 0 : 1;
	case VWC_HOLD_CLEAR:
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	case VWC_HOLD_SET:
		r = vwc_mkdir_p(dir);
		return r ? r : write_small(path, "", O_CREAT | O_TRUNC);
	}
	return -EINVAL;
}

bool vwc_blk_any_hold(void)
{
	char dir[512];
	struct dirent *d;
	bool any = false;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/restored", vwc_rundir());
	dp = opendir(dir);
	if (!dp)
		return errno != ENOENT;
	errno = 0;
	while (!any && (d = readdir(dp)))
		any = strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	/* a directory that cannot be read may hold marks */
	any = any || errno;
	closedir(dp);
	return any;
}

int vwc_blk_restore(const char *syspath, const char *name, bool dry_run,
		    bool allow_wt, char *msg, size_t len)
{
	enum vwc_mode orig, set, cur;
	char path[512];
	int r;

	r = record_load(name, &orig, &set);
	if (r == -ENOENT) {
		snprintf(msg, len, "not changed by this tool");
		return 0;
	}
	if (r) {
		snprintf(msg, len, "unreadable record: %s", strerror(-r));
		return r;
	}
	record_path(name, path, sizeof(path));
	r = vwc_blk_read(syspath, &cur);
	if (r == -ENOENT) {
		snprintf(msg, len, "device gone; record dropped");
		if (!dry_run)
			unlink(path);
		return 0;
	}
	if (r) {
		snprintf(msg, len, "cannot read write_cache: %s", strerror(-r));
		return r;
	}
	if (cur != set) {
		snprintf(msg, len,
			 "left alone: now %s, changed by someone else since this tool set %s",
			 vwc_mode_str(cur), vwc_mode_str(set));
		if (!dry_run)
			unlink(path);
		return 0;
	}
	if (orig == VWC_MODE_WRITE_THROUGH && !allow_wt) {
		snprintf(msg, len,
			 "kept in write back: the controller reports an enabled or unknown cache");
		if (!dry_run)
			unlink(path);
		return 0;
	}
	snprintf(msg, len, "%s -> %s%s", vwc_mode_str(cur), vwc_mode_str(orig),
		 dry_run ? " (dry run)" : "");
	if (dry_run)
		return 1;
	if (cur != orig) {
		r = orig == VWC_MODE_WRITE_THROUGH ? vwc_blk_mark_wt(name) : 0;
		if (r) {
			char why[640];

			snprintf(msg, len, "left in %s: %s", vwc_mode_str(cur),
				 vwc_blk_mark_strerror(r, why, sizeof(why)));
			return r;
		}
		r = blk_write(syspath, orig);
		if (r) {
			snprintf(msg, len, "cannot set %s: %s%s",
				 vwc_mode_str(orig), write_strerror(r),
				 r == -EAGAIN ? OVERTAKEN_BY : "");
			return r;
		}
	}
	unlink(path);
	return 1;
}
