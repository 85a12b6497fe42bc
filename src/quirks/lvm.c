// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/dm-ioctl.h>

#include "fileio.h"
#include "inuse.h"
#include "log.h"
#include "lvm.h"

/* one LVM name part: '-' doubled inside; stops at a single '-' or the end */
static const char *name_part(const char *p, char *out, size_t len)
{
	size_t i = 0;

	while (*p && !(p[0] == '-' && p[1] != '-')) {
		if (i + 1 >= len)
			return NULL;
		out[i++] = *p;
		p += p[0] == '-' ? 2 : 1;
	}
	out[i] = '\0';
	return i ? p : NULL;
}

int vwc_dm_lvm_name(const char *dmname, char *vg, size_t vl, char *lv,
		    size_t ll)
{
	const char *p = name_part(dmname, vg, vl);

	if (!p || *p != '-')
		return -EINVAL;
	p = name_part(p + 1, lv, ll);
	if (!p)
		return -EINVAL;
	return *p ? 1 : 0;
}

static int attr(const char *sysblock, const char *b, const char *a,
		char *buf, size_t len)
{
	char path[VWC_PATH_LEN];

	snprintf(path, sizeof(path), "%s/%s/%s", sysblock, b, a);
	return vwc_read_line(path, buf, len);
}

/* a holder that stops the LVM path: "nvme0n1p3 is held by ..." */
static void not_lvm(const char *sysblock, const char *b, const char *h,
		    const char *uuid, char *why, size_t len)
{
	char name[128] = "";

	attr(sysblock, h, "dm/name", name, sizeof(name));
	if (!strncmp(uuid, "CRYPT-", 6))
		snprintf(why, len, "%s is held by dm-crypt mapping %s (%s)",
			 b, name, h);
	else if (name[0])
		snprintf(why, len, "%s is held by device-mapper device %s (%s), not an LVM logical volume",
			 b, name, h);
	else if (!strncmp(h, "md", 2))
		snprintf(why, len, "%s is a member of RAID array %s", b, h);
	else
		snprintf(why, len, "%s is held by %s", b, h);
}

static int add_top(const char *sysblock, const char *h, struct vwc_lvm_set *s,
		   char *why, size_t len)
{
	struct vwc_lvm_lv *v;
	char name[256] = "";
	int i;

	for (i = 0; i < s->n; i++)
		if (!s->lv[i].down && !strcmp(s->lv[i].dm, h))
			return 0;
	if (strlen(h) >= sizeof(s->lv[0].dm)) {
		snprintf(why, len, "device name %.64s too long", h);
		return -EBUSY;
	}
	if (s->n >= VWC_LVM_MAX) {
		snprintf(why, len, "more than %d LVM logical volumes on it",
			 VWC_LVM_MAX);
		return -EBUSY;
	}
	v = &s->lv[s->n];
	attr(sysblock, h, "dm/name", name, sizeof(name));
	if (vwc_dm_lvm_name(name, v->vg, sizeof(v->vg), v->lv,
			    sizeof(v->lv))) {
		snprintf(why, len, "LVM device %s (%s) has nothing above it and no logical volume name to activate it by",
			 name, h);
		return -EBUSY;
	}
	memcpy(v->dm, h, strlen(h) + 1);
	v->down = false;
	s->n++;
	return 0;
}

/* holders of @b, up to the top ones; how many holders @b has, or -EBUSY */
static int walk(const char *sysblock, const char *b, int depth,
		struct vwc_lvm_set *s, char *why, size_t len)
{
	char path[VWC_PATH_LEN];
	struct dirent *de;
	int seen = 0, r = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%s/holders", sysblock, b);
	dir = opendir(path);
	while (dir && r >= 0 && (de = readdir(dir))) {
		char uuid[160] = "";

		if (de->d_name[0] == '.')
			continue;
		seen++;
		attr(sysblock, de->d_name, "dm/uuid", uuid, sizeof(uuid));
		if (strncmp(uuid, "LVM-", 4)) {
			not_lvm(sysblock, b, de->d_name, uuid, why, len);
			r = -EBUSY;
		} else if (depth >= 8) {
			snprintf(why, len, "%s: device-mapper stack deeper than 8 under %s",
				 b, de->d_name);
			r = -EBUSY;
		} else {
			r = walk(sysblock, de->d_name, depth + 1, s, why, len);
			if (r == 0)
				r = add_top(sysblock, de->d_name, s, why, len);
		}
	}
	if (dir)
		closedir(dir);
	return r < 0 ? r : seen;
}

int vwc_lvm_collect(const char *sysblock, char (*names)[VWC_NAME_LEN], int n,
		    struct vwc_lvm_set *s, char *why, size_t len)
{
	char path[VWC_PATH_LEN];
	struct dirent *de;
	int i, r;
	DIR *dir;

	for (i = 0; i < n; i++) {
		r = walk(sysblock, names[i], 0, s, why, len);
		if (r < 0)
			return r;
		snprintf(path, sizeof(path), "%s/%s", sysblock, names[i]);
		dir = opendir(path);
		while (dir && (de = readdir(dir))) {
			char part[VWC_PATH_LEN + 300];

			if (strncmp(de->d_name, names[i], strlen(names[i])))
				continue;
			snprintf(part, sizeof(part), "%s/%s/partition", path,
				 de->d_name);
			if (access(part, F_OK))
				continue;
			r = walk(sysblock, de->d_name, 0, s, why, len);
			if (r < 0)
				break;
		}
		if (dir)
			closedir(dir);
		if (r < 0)
			return r;
	}
	return s->n;
}

/* open count of a device-mapper device (DM_DEV_STATUS), or -errno */
static int dm_open_count(dev_t devt)
{
	struct dm_ioctl io;
	int fd, r;

	fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&io, 0, sizeof(io));
	io.version[0] = DM_VERSION_MAJOR;
	io.data_size = sizeof(io);
	io.data_start = sizeof(io);
	io.dev = devt;
	r = ioctl(fd, DM_DEV_STATUS, &io) ? -errno : io.open_count;
	close(fd);
	return r;
}

/* 1 when logical volume @v is in use (@why), 0 idle */
static int lv_in_use(const struct vwc_lvm_lv *v, char *why, size_t len)
{
	char devt[32], users[700];
	unsigned int ma, mi;
	int open;

	if (attr("/sys/class/block", v->dm, "dev", devt, sizeof(devt)) ||
	    sscanf(devt, "%u:%u", &ma, &mi) != 2) {
		snprintf(why, len, "cannot read /sys/class/block/%s/dev (logical volume %s/%s)",
			 v->dm, v->vg, v->lv);
		return 1;
	}
	if (vwc_blk_users(v->dm, makedev(ma, mi), users, sizeof(users))) {
		snprintf(why, len, "logical volume %s/%s: %s", v->vg, v->lv,
			 users);
		return 1;
	}
	open = dm_open_count(makedev(ma, mi));
	if (open < 0) {
		snprintf(why, len, "cannot check whether logical volume %s/%s (%s) is open: /dev/mapper/control: %s",
			 v->vg, v->lv, v->dm, strerror(-open));
		return 1;
	}
	if (open > 0) {
		snprintf(why, len, "logical volume %s/%s (%s) is open (%d opener%s)",
			 v->vg, v->lv, v->dm, open, open > 1 ? "s" : "");
		return 1;
	}
	return 0;
}

/* run a program (stdout to stderr); its exit status, or -errno */
static int run(char *const argv[])
{
	static const char *const dirs[] = { "/usr/sbin/", "/sbin/",
					    "/usr/bin/", "/bin/" };
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char path[256];
		size_t i;

		dup2(2, 1);
		execvp(argv[0], argv);
		for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			snprintf(path, sizeof(path), "%s%s", dirs[i], argv[0]);
			execv(path, argv);
		}
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int lvchange(const struct vwc_lvm_lv *v, bool up)
{
	char name[260];
	char *argv[] = { "lvm", "lvchange", up ? "-ay" : "-an",
			 up ? "--sysinit" : "--ignoremonitoring", name, NULL };

	snprintf(name, sizeof(name), "%s/%s", v->vg, v->lv);
	return run(argv);
}

int vwc_lvm_deactivate(char (*names)[VWC_NAME_LEN], int n,
		       struct vwc_lvm_set *s, char *why, size_t len)
{
	int round, i, first, r;

	s->n = 0;
	for (round = 0; round < 4; round++) {
		first = s->n;
		r = vwc_lvm_collect("/sys/class/block", names, n, s, why, len);
		if (r < 0)
			goto fail;
		if (s->n == first)
			return 0;	/* nothing holds them any more */
		for (i = first; i < s->n; i++)
			if (lv_in_use(&s->lv[i], why, len))
				goto fail;
		for (i = first; i < s->n; i++) {
			struct vwc_lvm_lv *v = &s->lv[i];

			vwc_notice("deactivating logical volume %s/%s (%s) for the rebind",
				   v->vg, v->lv, v->dm);
			r = lvchange(v, false);
			if (r) {
				snprintf(why, len, "'lvm lvchange -an %s/%s' failed (exit %d)",
					 v->vg, v->lv, r);
				goto fail;
			}
			v->down = true;
		}
	}
	snprintf(why, len, "still held by LVM after deactivating %d logical volume(s)",
		 s->n);
fail:
	vwc_lvm_activate(s);
	return -EBUSY;
}

int vwc_lvm_activate(struct vwc_lvm_set *s)
{
	char *settle[] = { "udevadm", "settle", "--timeout=30", NULL };
	int i, r, ret = 0;
	bool any = false;

	for (i = 0; i < s->n; i++)
		any |= s->lv[i].down;
	if (!any)
		return 0;
	/* the PV's udev record, from the re-created namespace */
	run(settle);
	for (i = s->n - 1; i >= 0; i--) {
		struct vwc_lvm_lv *v = &s->lv[i];

		if (!v->down)
			continue;
		r = lvchange(v, true);
		if (r) {
			vwc_err("logical volume %s/%s NOT active again: 'lvm lvchange -ay %s/%s' failed (exit %d)",
				v->vg, v->lv, v->vg, v->lv, r);
			ret = -EIO;
			continue;
		}
		vwc_notice("logical volume %s/%s active again", v->vg, v->lv);
		v->down = false;
	}
	return ret;
}
