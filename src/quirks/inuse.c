// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libmount.h>

#include "fileio.h"
#include "inuse.h"
#include "log.h"
#include "procid.h"

/* @fs mounts or swaps on the block device @devt (or its node @devnode) */
static bool fs_uses(struct libmnt_fs *fs, dev_t devt, const char *devnode)
{
	const char *src = mnt_fs_get_srcpath(fs);
	struct stat st;

	if (mnt_fs_get_devno(fs) == devt)
		return true;
	/* btrfs reports an anonymous device number: its source names it */
	if (!src)
		return false;
	if (!strcmp(src, devnode))
		return true;
	return mnt_fs_is_swaparea(fs) && !stat(src, &st) &&
	       S_ISBLK(st.st_mode) && st.st_rdev == devt;
}

int vwc_blk_mounted(const char *mountinfo, const char *swaps, dev_t devt,
		    const char *devnode, char *where, size_t len)
{
	struct libmnt_table *tb[2];
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	int i, r = 0;

	where[0] = '\0';
	tb[0] = mnt_new_table();
	tb[1] = mnt_new_table();
	if (!it || !tb[0] || !tb[1]) {
		r = -ENOMEM;
		goto out;
	}
	/* an unreadable table is an error, never "not mounted" */
	r = mnt_table_parse_file(tb[0], mountinfo ? mountinfo :
				 "/proc/self/mountinfo");
	if (!r) {
		r = mnt_table_parse_swaps(tb[1], swaps);
		/* a kernel without swap support has no /proc/swaps */
		if (r == -ENOENT && !swaps)
			r = 0;
	}
	if (r) {
		r = r < 0 ? r : -EINVAL;
		goto out;
	}
	for (i = 0; i < 2 && !r; i++) {
		mnt_reset_iter(it, MNT_ITER_FORWARD);
		while (!r && mnt_table_next_fs(tb[i], it, &fs) == 0) {
			if (!fs_uses(fs, devt, devnode))
				continue;
			if (i == 0)
				snprintf(where, len, "mounted on %s (%s)",
					 mnt_fs_get_target(fs) ?: "?",
					 mnt_fs_get_fstype(fs) ?: "?");
			else
				snprintf(where, len, "in use as swap");
			r = 1;
		}
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb[0]);
	mnt_unref_table(tb[1]);
	return r;
}

void vwc_holds_release(struct vwc_holds *h)
{
	while (h->n > 0)
		close(h->fd[--h->n]);
	free(h->fd);
	h->fd = NULL;
	h->cap = 0;
}

/* keep @fd open in @h; closed when there is no room */
static void holds_add(struct vwc_holds *h, int fd)
{
	if (h->n == h->cap) {
		int cap = h->cap ? h->cap * 2 : 16;
		int *fds = realloc(h->fd, cap * sizeof(*fds));

		if (!fds) {
			close(fd);
			return;
		}
		h->fd = fds;
		h->cap = cap;
	}
	h->fd[h->n++] = fd;
}

int vwc_path_is_dev(const char *path, mode_t type, dev_t devt)
{
	struct stat st;

	return !stat(path, &st) && (st.st_mode & S_IFMT) == type &&
	       st.st_rdev == devt;
}

/* vwc_find_opener(), the processes @skip says yes to left out */
static int find_opener(const char *proc, mode_t type, dev_t devt,
		       bool (*skip)(int pid, const void *arg), const void *arg,
		       char *comm, size_t clen, char *node, size_t nlen)
{
	DIR *pd = opendir(proc);
	struct dirent *pe;
	int found = 0;

	comm[0] = '\0';
	node[0] = '\0';
	while (pd && !found && (pe = readdir(pd))) {
		char path[300], fp[600];
		struct dirent *fe;
		DIR *fds;
		int pid = atoi(pe->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d/fd", proc, pid);
		fds = opendir(path);
		while (fds && (fe = readdir(fds))) {
			ssize_t n;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(fp, sizeof(fp), "%s/%s", path, fe->d_name);
			/* the device number, whatever node the fd came from */
			if (!vwc_path_is_dev(fp, type, devt))
				continue;
			/* asked only of a process that has it open */
			if (skip(pid, arg))
				break;
			found = pid;
			n = readlink(fp, node, nlen - 1);
			node[n > 0 ? n : 0] = '\0';
			break;
		}
		if (fds)
			closedir(fds);
		if (found) {
			snprintf(path, sizeof(path), "%s/%d/comm", proc, pid);
			vwc_read_line(path, comm, clen);
		}
	}
	if (pd)
		closedir(pd);
	return found;
}

static bool skip_pid(int pid, const void *arg)
{
	return pid == *(const int *)arg;
}

int vwc_find_opener(const char *proc, mode_t type, dev_t devt, int skip,
		    char *comm, size_t clen, char *node, size_t nlen)
{
	return find_opener(proc, type, devt, skip_pid, &skip, comm, clen,
			   node, nlen);
}

int vwc_loop_backed_by(const char *sysblock, mode_t type, dev_t devt,
		       char *loop, size_t len)
{
	DIR *dir = opendir(sysblock);
	struct dirent *de;
	int found = 0;

	loop[0] = '\0';
	while (dir && !found && (de = readdir(dir))) {
		char path[VWC_PATH_LEN + 64], file[PATH_MAX];

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s/loop/backing_file",
			 sysblock, de->d_name);
		if (vwc_read_line(path, file, sizeof(file)) || !file[0])
			continue;
		if (vwc_path_is_dev(file, type, devt)) {
			snprintf(loop, len, "/dev/%s", de->d_name);
			found = 1;
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

int vwc_xen_exports(const char *backends, dev_t devt, char *vbd, size_t len)
{
	DIR *dir = opendir(backends);
	struct dirent *de;
	int found = 0;

	vbd[0] = '\0';
	while (dir && !found && (de = readdir(dir))) {
		char path[VWC_PATH_LEN + 300], line[64];
		unsigned int maj, min;

		if (strncmp(de->d_name, "vbd-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s/physical_device", backends,
			 de->d_name);
		if (vwc_read_line(path, line, sizeof(line)) ||
		    sscanf(line, "%x:%x", &maj, &min) != 2)
			continue;
		if (makedev(maj, min) == devt) {
			snprintf(vbd, len, "%s", de->d_name);
			found = 1;
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

int vwc_nvmet_exports(const char *nvmet, mode_t type, dev_t devt,
		      char *subsys, size_t len)
{
	char path[VWC_PATH_LEN + 64];
	DIR *sd;
	struct dirent *se;
	int found = 0;

	subsys[0] = '\0';
	snprintf(path, sizeof(path), "%s/subsystems", nvmet);
	sd = opendir(path);
	while (sd && !found && (se = readdir(sd))) {
		char nsdir[VWC_PATH_LEN + 400];
		struct dirent *ne;
		DIR *nd;

		if (se->d_name[0] == '.')
			continue;
		snprintf(nsdir, sizeof(nsdir), "%s/%s/namespaces", path,
			 se->d_name);
		nd = opendir(nsdir);
		while (nd && !found && (ne = readdir(nd))) {
			char p[VWC_PATH_LEN + 700], dev[PATH_MAX], en[8];

			if (ne->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s/enable", nsdir,
				 ne->d_name);
			if (vwc_read_line(p, en, sizeof(en)) || strcmp(en, "1"))
				continue;
			snprintf(p, sizeof(p), "%s/%s/device_path", nsdir,
				 ne->d_name);
			if (vwc_read_line(p, dev, sizeof(dev)) || !dev[0])
				continue;
			if (vwc_path_is_dev(dev, type, devt)) {
				snprintf(subsys, len, "%s (namespace %s)",
					 se->d_name, ne->d_name);
				found = 1;
			}
		}
		if (nd)
			closedir(nd);
	}
	if (sd)
		closedir(sd);
	return found;
}

/* the device number in /sys/class/@cls/@b/dev; 0 when none */
static dev_t sys_devt(const char *cls, const char *b)
{
	char path[VWC_PATH_LEN], devt[32];
	unsigned int ma, mi;

	snprintf(path, sizeof(path), "/sys/class/%s/%s/dev", cls, b);
	if (vwc_read_line(path, devt, sizeof(devt)) ||
	    sscanf(devt, "%u:%u", &ma, &mi) != 2)
		return 0;
	return makedev(ma, mi);
}

/* what holds block device @b through holders/: "LVM logical volume vg-lv (dm-0)" */
static bool holder_of(const char *b, bool skip_lvm, char *why, size_t len)
{
	char path[VWC_PATH_LEN];
	struct dirent *de;
	bool held = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/block/%s/holders", b);
	dir = opendir(path);
	while (dir && !held && (de = readdir(dir))) {
		char p[VWC_PATH_LEN + 64], name[128] = "", uuid[160] = "";

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/class/block/%s/dm/name", de->d_name);
		vwc_read_line(p, name, sizeof(name));
		snprintf(p, sizeof(p), "/sys/class/block/%s/dm/uuid", de->d_name);
		vwc_read_line(p, uuid, sizeof(uuid));
		if (skip_lvm && !strncmp(uuid, "LVM-", 4))
			continue;
		held = true;
		if (!strncmp(uuid, "LVM-", 4))
			snprintf(why, len, "%s is an LVM physical volume in use by logical volume %s (%s)",
				 b, name, de->d_name);
		else if (!strncmp(uuid, "CRYPT-", 6))
			snprintf(why, len, "%s is held by dm-crypt mapping %s (%s)",
				 b, name, de->d_name);
		else if (name[0])
			snprintf(why, len, "%s is held by device-mapper device %s (%s)",
				 b, name, de->d_name);
		else if (!strncmp(de->d_name, "md", 2))
			snprintf(why, len, "%s is a member of RAID array %s",
				 b, de->d_name);
		else
			snprintf(why, len, "%s is held by %s", b, de->d_name);
	}
	if (dir)
		closedir(dir);
	return held;
}

/* vwc_blk_users(), LVM's holders left out with @skip_lvm */
static int blk_users(const char *b, dev_t devt, bool skip_lvm, char *why,
		     size_t len)
{
	char devnode[VWC_NAME_LEN + 8], where[600], comm[64], node[300];
	int pid, r;

	snprintf(devnode, sizeof(devnode), "/dev/%s", b);
	r = vwc_blk_mounted(NULL, NULL, devt, devnode, where, sizeof(where));
	if (r) {
		if (r > 0)
			snprintf(why, len, "%s is %s", b, where);
		else
			snprintf(why, len, "cannot check whether %s is mounted or swap (libmount: /proc/self/mountinfo, /proc/swaps): %s",
				 b, strerror(-r));
		return 1;
	}
	if (holder_of(b, skip_lvm, why, len))
		return 1;
	if (vwc_loop_backed_by("/sys/block", S_IFBLK, devt, where,
			       sizeof(where))) {
		snprintf(why, len, "%s backs %s", b, where);
		return 1;
	}
	if (vwc_nvmet_exports("/sys/kernel/config/nvmet", S_IFBLK, devt, where,
			      sizeof(where))) {
		snprintf(why, len, "%s is exported by nvmet subsystem %s", b,
			 where);
		return 1;
	}
	if (vwc_xen_exports("/sys/bus/xen-backend/devices", devt, where,
			    sizeof(where))) {
		snprintf(why, len, "%s is exported to a Xen guest by xen-blkback (%s)",
			 b, where);
		return 1;
	}
	pid = vwc_find_opener("/proc", S_IFBLK, devt, getpid(), comm,
			      sizeof(comm), node, sizeof(node));
	if (pid) {
		snprintf(why, len, "process %d (%s) holds %s (through %s)",
			 pid, comm, b, node);
		return 1;
	}
	return 0;
}

int vwc_blk_users(const char *b, dev_t devt, char *why, size_t len)
{
	return blk_users(b, devt, false, why, len);
}

/* a namespace's generic character device (ngXnY): open by a process? */
static int ng_users(const char *ns, char *why, size_t len)
{
	char ng[VWC_NAME_LEN + 4], comm[64], node[300];
	dev_t devt;
	int pid;

	if (strncmp(ns, "nvme", 4))
		return 0;
	snprintf(ng, sizeof(ng), "ng%s", ns + 4);
	devt = sys_devt("nvme-generic", ng);
	if (!devt)
		return 0;
	pid = vwc_find_opener("/proc", S_IFCHR, devt, getpid(), comm,
			      sizeof(comm), node, sizeof(node));
	if (!pid)
		return 0;
	snprintf(why, len, "process %d (%s) holds %s, the generic device of %s (through %s)",
		 pid, comm, ng, ns, node);
	return 1;
}

/*
 * Users of namespace @ns (number @devt) and of its partitions that the
 * kernel's exclusive claim does not show: 1 in use (@why), 0 none found.
 */
static int ns_users(const char *ns, dev_t devt, bool skip_lvm, char *why,
		    size_t len)
{
	char path[VWC_PATH_LEN];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/block/%s", ns);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		char part[VWC_PATH_LEN + 300];
		dev_t pdevt;

		if (strncmp(de->d_name, ns, strlen(ns)))
			continue;
		snprintf(part, sizeof(part), "%s/%s/partition", path,
			 de->d_name);
		if (access(part, F_OK))
			continue;
		pdevt = sys_devt("block", de->d_name);
		if (!pdevt) {
			snprintf(why, len, "cannot read /sys/class/block/%s/dev",
				 de->d_name);
			closedir(dir);
			return 1;
		}
		if (blk_users(de->d_name, pdevt, skip_lvm, why, len)) {
			closedir(dir);
			return 1;
		}
	}
	if (dir)
		closedir(dir);
	return blk_users(ns, devt, skip_lvm, why, len) ||
	       ng_users(ns, why, len);
}

/*
 * One namespace and its partitions: the partitions first, then the disk,
 * which is opened O_EXCL and kept open until the unbind. The kernel
 * refuses that open while any partition is claimed (mounted, swap, a
 * holder), and while it is held nobody can claim the disk or a partition
 * (mount, swapon, LVM, md). Opening a partition O_EXCL here instead would
 * fail against our own handle on the disk.
 */
static int ns_in_use(const char *ns, char *why, size_t len,
		     struct vwc_holds *h)
{
	char devnode[VWC_NAME_LEN + 8];
	struct stat st;
	dev_t devt;
	int fd;

	devt = sys_devt("block", ns);
	if (!devt) {
		snprintf(why, len, "cannot read /sys/class/block/%s/dev: %s",
			 ns, strerror(errno));
		return 1;
	}
	if (ns_users(ns, devt, false, why, len))
		return 1;
	snprintf(devnode, sizeof(devnode), "/dev/%s", ns);
	fd = open(devnode, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == EBUSY)
			snprintf(why, len, "%s or one of its partitions is claimed exclusively by another user (O_EXCL open refused)",
				 ns);
		else
			snprintf(why, len, "cannot check whether %s is in use: %s: %s",
				 ns, devnode, strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != devt) {
		close(fd);
		snprintf(why, len, "cannot check whether %s is in use: %s is not its device node",
			 ns, devnode);
		return 1;
	}
	/* kept open (exclusive) until the unbind: nobody claims it meanwhile */
	holds_add(h, fd);
	return 0;
}

/*
 * A user that lets go by itself within moments: udev's workers (blkid on a
 * new device), this tool's own runs from udev's rules (a sync opens the
 * controller for its admin commands).
 */
static bool transient(const char *why)
{
	return strstr(why, "(udev-worker)") || strstr(why, "(systemd-udevd)") ||
	       strstr(why, "(nvme-vwc-sync)");
}

/* this process, and the sidecar: its descriptor is no user (procid.h) */
static bool skip_ours(int pid, const void *arg)
{
	const char *ctrl = arg;

	if (pid == getpid())
		return true;
	if (!vwc_is_sidecar(pid))
		return false;
	vwc_info("%s: /dev/%s open by the sidecar (pid %d): not a user", ctrl,
		 ctrl, pid);
	return true;
}

/* the controller's character device, open by a process: 1 (@why), 0 not */
static int ctrl_users(const char *ctrl, char *why, size_t len)
{
	char comm[64], node[300];
	dev_t devt;
	int pid;

	if (!ctrl[0])
		return 0;
	devt = sys_devt("nvme", ctrl);
	if (!devt) {
		snprintf(why, len, "cannot read /sys/class/nvme/%s/dev", ctrl);
		return 1;
	}
	pid = find_opener("/proc", S_IFCHR, devt, skip_ours, ctrl, comm,
			  sizeof(comm), node, sizeof(node));
	if (!pid)
		return 0;
	snprintf(why, len, "process %d (%s) holds %s, the controller's device (through %s)",
		 pid, comm, ctrl, node);
	return 1;
}

/* every namespace and partition of a controller: 1 in use (@why), 0 free */
static int disks_in_use_once(char (*names)[VWC_NAME_LEN], int n, char *why,
			      size_t len, struct vwc_holds *h)
{
	int i;

	for (i = 0; i < n; i++)
		if (ns_in_use(names[i], why, len, h))
			return 1;
	return 0;
}

int vwc_disks_in_use(char (*names)[VWC_NAME_LEN], int n, char *why,
		     size_t len, struct vwc_holds *h)
{
	int t, r = 0;

	h->names = names;
	h->nr_names = n;
	for (t = 0; t < 5000; t += 200) {
		r = disks_in_use_once(names, n, why, len, h);
		if (!r || !transient(why))
			return r;
		vwc_holds_release(h);
		usleep(200 * 1000);
	}
	return r;
}

/* every check but the exclusive open, on each of @names */
static int names_users(char (*names)[VWC_NAME_LEN], int n, bool skip_lvm,
		       char *why, size_t len)
{
	int i;

	for (i = 0; i < n; i++) {
		dev_t devt = sys_devt("block", names[i]);

		if (!devt) {
			snprintf(why, len, "cannot read /sys/class/block/%s/dev: %s",
				 names[i], strerror(errno));
			return 1;
		}
		if (ns_users(names[i], devt, skip_lvm, why, len))
			return 1;
	}
	return 0;
}

static int holds_recheck_once(const struct vwc_holds *h, char *why,
			      size_t len)
{
	return ctrl_users(h->ctrl, why, len) ||
	       names_users(h->names, h->nr_names, false, why, len);
}

/* holds_recheck_once() again while its user lets go by itself, up to @ms */
static int recheck_wait(const struct vwc_holds *h, char *why, size_t len,
			int ms, int step_ms)
{
	int t, r = 0;

	for (t = 0; t < ms; t += step_ms) {
		r = holds_recheck_once(h, why, len);
		if (!r || !transient(why))
			return r;
		usleep(step_ms * 1000);
	}
	return r;
}

int vwc_ctrl_in_use(const char *ctrl, char *why, size_t len,
		    struct vwc_holds *h)
{
	struct vwc_holds c = { .n = 0 };

	snprintf(h->ctrl, sizeof(h->ctrl), "%s", ctrl);
	h->ctrl_devt = ctrl[0] ? sys_devt("nvme", ctrl) : 0;
	snprintf(c.ctrl, sizeof(c.ctrl), "%s", ctrl);
	/* udev's workers, this tool's runs from udev: waited for, 5 s */
	return recheck_wait(&c, why, len, 5000, 200);
}

static bool skip_but_sidecar(int pid, const void *arg)
{
	(void)arg;
	return !vwc_is_sidecar(pid);
}

void vwc_holds_wait_sidecar(const struct vwc_holds *h, int ms)
{
	char comm[64], node[300], dev[VWC_NAME_LEN + 8];
	int t = 0, pid = 0;

	if (!h->ctrl_devt)
		return;
	/*
	 * devtmpfs removes the node after the unbind: until then the sidecar
	 * may open it again (a probe on the namespaces' removal) and keep the
	 * old controller until its remove event.
	 */
	snprintf(dev, sizeof(dev), "/dev/%s", h->ctrl);
	for (; t < ms && vwc_path_is_dev(dev, S_IFCHR, h->ctrl_devt); t += 20)
		usleep(20 * 1000);
	for (; t < ms; t += 20) {
		pid = find_opener("/proc", S_IFCHR, h->ctrl_devt,
				  skip_but_sidecar, NULL, comm, sizeof(comm),
				  node, sizeof(node));
		if (!pid)
			return;
		usleep(20 * 1000);
	}
	if (pid)
		vwc_info("%s: the sidecar (pid %d) still holds the removed controller's device: it may come back under another name",
			 h->ctrl, pid);
}

int vwc_holds_recheck(const struct vwc_holds *h, char *why, size_t len)
{
	/* a udev worker's look at a device ends by itself, as above */
	return recheck_wait(h, why, len, 2000, 100);
}

int vwc_disks_in_use_but_lvm(char (*names)[VWC_NAME_LEN], int n, char *why,
			     size_t len)
{
	int t, r = 0;

	/* udev's workers, waited for as in vwc_disks_in_use() */
	for (t = 0; t < 5000; t += 200) {
		r = names_users(names, n, true, why, len);
		if (!r || !transient(why))
			return r;
		usleep(200 * 1000);
	}
	return r;
}
