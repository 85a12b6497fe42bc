// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* pid and command of a process with @devnode open, 0 if none */
static int find_opener(const char *devnode, char *comm, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	int found = 0;

	comm[0] = '\0';
	while (proc && !found && (pe = readdir(proc))) {
		char path[300], link[300];
		struct dirent *fe;
		DIR *fds;
		int pid = atoi(pe->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		while (fds && (fe = readdir(fds))) {
			char fp[600];
			ssize_t n;

			snprintf(fp, sizeof(fp), "%s/%s", path, fe->d_name);
			n = readlink(fp, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, devnode)) {
				found = pid;
				break;
			}
		}
		if (fds)
			closedir(fds);
		if (found) {
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			vwc_read_line(path, comm, len);
		}
	}
	if (proc)
		closedir(proc);
	return found;
}

/* what holds block device @b through holders/: "LVM logical volume vg-lv (dm-0)" */
static bool holder_of(const char *b, char *why, size_t len)
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
		held = true;
		snprintf(p, sizeof(p), "/sys/class/block/%s/dm/name", de->d_name);
		vwc_read_line(p, name, sizeof(name));
		snprintf(p, sizeof(p), "/sys/class/block/%s/dm/uuid", de->d_name);
		vwc_read_line(p, uuid, sizeof(uuid));
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

/* one block device (namespace or partition): 1 in use (@why), 0 free */
static int blk_in_use(const char *b, char *why, size_t len, struct vwc_holds *h)
{
	char path[VWC_PATH_LEN], devt[32], devnode[VWC_NAME_LEN + 8];
	char where[600], comm[64];
	struct stat st;
	unsigned int ma, mi;
	int fd, pid, r;

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", b);
	if (vwc_read_line(path, devt, sizeof(devt)) ||
	    sscanf(devt, "%u:%u", &ma, &mi) != 2) {
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return 1;
	}
	snprintf(devnode, sizeof(devnode), "/dev/%s", b);
	r = vwc_blk_mounted(NULL, NULL, makedev(ma, mi), devnode, where,
			    sizeof(where));
	if (r) {
		if (r > 0)
			snprintf(why, len, "%s is %s", b, where);
		else
			snprintf(why, len, "cannot check whether %s is mounted or swap (libmount: /proc/self/mountinfo, /proc/swaps): %s",
				 b, strerror(-r));
		return 1;
	}
	if (holder_of(b, why, len))
		return 1;
	fd = open(devnode, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;

		if (e == EBUSY) {
			pid = find_opener(devnode, comm, sizeof(comm));
			if (pid)
				snprintf(why, len, "%s is open exclusively by pid %d (%s)",
					 b, pid, comm);
			else
				snprintf(why, len, "%s is open exclusively by another user (O_EXCL open refused)",
					 b);
		} else {
			snprintf(why, len, "cannot check whether %s is in use: %s: %s",
				 b, devnode, strerror(e));
		}
		return 1;
	}
	if (fstat(fd, &st) || !S_ISBLK(st.st_mode) ||
	    st.st_rdev != makedev(ma, mi)) {
		close(fd);
		snprintf(why, len, "cannot check whether %s is in use: %s is not its device node",
			 b, devnode);
		return 1;
	}
	pid = find_opener(devnode, comm, sizeof(comm));
	if (pid) {
		close(fd);
		snprintf(why, len, "%s is open by pid %d (%s)", b, pid, comm);
		return 1;
	}
	/* kept open (exclusive) until the unbind: nobody mounts it meanwhile */
	holds_add(h, fd);
	return 0;
}

/* every namespace and partition of a controller: 1 in use (@why), 0 free */
static int disks_in_use_once(char (*names)[VWC_NAME_LEN], int n, char *why,
			      size_t len, struct vwc_holds *h)
{
	int i;

	for (i = 0; i < n; i++) {
		char path[VWC_PATH_LEN];
		struct dirent *de;
		DIR *dir;

		if (blk_in_use(names[i], why, len, h))
			return 1;
		snprintf(path, sizeof(path), "/sys/class/block/%s", names[i]);
		dir = opendir(path);
		while (dir && (de = readdir(dir))) {
			char part[VWC_PATH_LEN + 300];

			if (strncmp(de->d_name, names[i], strlen(names[i])))
				continue;
			snprintf(part, sizeof(part), "%s/%s/partition", path,
				 de->d_name);
			if (access(part, F_OK))
				continue;
			if (blk_in_use(de->d_name, why, len, h)) {
				closedir(dir);
				return 1;
			}
		}
		if (dir)
			closedir(dir);
	}
	return 0;
}

int vwc_disks_in_use(char (*names)[VWC_NAME_LEN], int n, char *why,
		     size_t len, struct vwc_holds *h)
{
	int t, r = 0;

	for (t = 0; t < 5000; t += 200) {
		r = disks_in_use_once(names, n, why, len, h);
		if (!r || (!strstr(why, "(udev-worker)") &&
			   !strstr(why, "(systemd-udevd)")))
			return r;
		vwc_holds_release(h);
		usleep(200 * 1000);
	}
	return r;
}
