// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Records of the unbinds in progress and the binds that finish a rebind
 * cut short (unbound.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "blk.h"
#include "dynid.h"
#include "fileio.h"
#include "log.h"
#include "unbound.h"

#define BOOT_ID	"/proc/sys/kernel/random/boot_id"

static int nr_failed;	/* binds of this process that failed */

static void rec_dir(const char *sub, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", vwc_rundir(), sub);
}

int vwc_unbound_parse(const char *text, struct vwc_unbound_rec *r)
{
	if (sscanf(text, "unbinder %d %llu boot %39s ids %39s",
		   &r->unbinder.pid, &r->unbinder.start, r->boot, r->ids) != 4 ||
	    r->unbinder.pid <= 0)
		return -EINVAL;
	return 0;
}

int vwc_unbound_mark(const struct vwc_pcidev *d)
{
	char dir[512], path[600], tmp[600], boot[64], text[256];
	struct vwc_procid me;
	int fd, r;

	rec_dir("unbound", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, d->addr);
	/* written beside, renamed in: a record is whole or absent, and the
	 * path unit never sees a half-written file in the directory */
	rec_dir("unbound.new", tmp, sizeof(tmp));
	r = vwc_proc_ident(0, &me);
	if (!r)
		r = vwc_read_line(BOOT_ID, boot, sizeof(boot));
	if (!r)
		r = vwc_mkdir_p(dir);
	if (r)
		goto out;
	snprintf(text, sizeof(text), "unbinder %d %llu\nboot %s\nids %s\n",
		 me.pid, me.start, boot, d->key);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	errno = 0;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = errno ? -errno : -EIO;
	if (!r && fsync(fd))
		r = -errno;
	if (close(fd) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
out:
	if (r)
		vwc_err("%s: not unbinding: cannot write the record of the unbind %s: %s; the controller stays bound",
			d->label, path, strerror(-r));
	return r;
}

void vwc_unbound_clear(const char *addr)
{
	char dir[512], path[600];

	rec_dir("unbound", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, addr);
	unlink(path);
}

/* a bind that failed: its record out of the way of every watcher */
static void rec_failed(const char *path, const char *addr)
{
	char dir[512], to[600];

	rec_dir("unbound-failed", dir, sizeof(dir));
	snprintf(to, sizeof(to), "%s/%s", dir, addr);
	if (vwc_mkdir_p(dir) || rename(path, to)) {
		vwc_err("%s: cannot move %s to %s: %s; removed", addr, path, to,
			strerror(errno));
		unlink(path);
	}
}

/* one record whose unbinder ended: bind its function if it is still ours */
static int finish(const char *path, const struct vwc_unbound_rec *rec)
{
	struct vwc_pcidev d;
	char why[300];
	int r;

	if (vwc_dynid_pcidev_load(&d, rec->addr)) {
		vwc_notice("%s: unbound by pid %d, which ended before its bind; no such PCI function now: record removed",
			   rec->addr, rec->unbinder.pid);
		unlink(path);
		return 0;
	}
	if (strcmp(d.key, rec->ids)) {
		vwc_warn("%s: unbound by pid %d, which ended before its bind; another device there now (%s, the record says %s): not bound, record removed",
			 rec->addr, rec->unbinder.pid, d.key, rec->ids);
		unlink(path);
		return 0;
	}
	if (d.driver[0]) {
		vwc_notice("%s: unbound by pid %d, which ended before its bind; bound to %s since: record removed",
			   d.label, rec->unbinder.pid, d.driver);
		unlink(path);
		return 0;
	}
	if (vwc_dynid_override(&d, why, sizeof(why))) {
		vwc_warn("%s: unbound by pid %d, which ended before its bind; left unbound: %s; record removed",
			 d.label, rec->unbinder.pid, why);
		unlink(path);
		return 0;
	}
	vwc_warn("%s: unbound by pid %d, which ended before its bind: binding it to nvme",
		 d.label, rec->unbinder.pid);
	/* a bind that works removes the record (vwc_dynid_bind_retry()) */
	r = vwc_dynid_bind_retry(d.addr, d.label);
	if (!r) {
		vwc_warn("%s: bound again to nvme", d.label);
		return 0;
	}
	rec_failed(path, d.addr);
	nr_failed++;
	return -EIO;
}

int vwc_unbound_recover(void)
{
	char dir[512], path[800], text[512], boot[64] = "";
	struct vwc_unbound_rec rec;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	rec_dir("unbound", dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	vwc_read_line(BOOT_ID, boot, sizeof(boot));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		memset(&rec, 0, sizeof(rec));
		if (vwc_read_line(path, text, sizeof(text)) ||
		    !vwc_dynid_is_pci_addr(de->d_name) ||
		    vwc_unbound_parse(text, &rec)) {
			vwc_warn("%s: not a record of an unbind: removed", path);
			unlink(path);
			continue;
		}
		/* a PCI address: 14 characters at most */
		snprintf(rec.addr, sizeof(rec.addr), "%.19s", de->d_name);
		if (strcmp(rec.boot, boot)) {
			vwc_notice("%s: a record of an earlier boot: removed",
				   path);
			unlink(path);
			continue;
		}
		if (vwc_proc_alive(&rec.unbinder))
			continue;	/* its own bind is still to come */
		if (finish(path, &rec))
			ret = -EIO;
	}
	closedir(d);
	return ret;
}

int vwc_unbound_failed(void)
{
	return nr_failed;
}

bool vwc_unbound_pending(void)
{
	char dir[512];
	struct dirent *de;
	bool any = false;
	DIR *d;

	rec_dir("unbound", dir, sizeof(dir));
	d = opendir(dir);
	while (d && !any && (de = readdir(d)))
		any = de->d_name[0] != '.';
	if (d)
		closedir(d);
	return any;
}

int vwc_unbound_watch(void)
{
	char dir[512];
	int fd, r;

	rec_dir("unbound", dir, sizeof(dir));
	r = vwc_mkdir_p(dir);
	if (r)
		return r;
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (inotify_add_watch(fd, dir, IN_MOVED_TO | IN_CREATE |
			      IN_CLOSE_WRITE) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}
