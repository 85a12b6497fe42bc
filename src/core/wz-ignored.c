// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk.h"
#include "fileio.h"
#include "log.h"
#include "quirk-db.h"
#include "wz-ignored.h"

void vwc_wz_read(const char *sysfs, const char *ctrl,
		 char (*ns)[VWC_NAME_LEN], int nr_ns, struct vwc_wz_seen *s)
{
	char path[VWC_PATH_LEN + 64], q[512];
	size_t used = 0;
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < nr_ns; i++) {
		long v;

		snprintf(path, sizeof(path),
			 "%s/class/block/%s/queue/write_zeroes_max_bytes",
			 sysfs, ns[i]);
		v = vwc_read_long(path);
		if (v < 0)
			continue;
		s->nr_ns++;
		if (v > 0)
			s->nr_on++;
		if (v > s->max_bytes)
			s->max_bytes = v;
		if (used < sizeof(s->summary))
			used += snprintf(s->summary + used,
					 sizeof(s->summary) - used, "%s%s %ld",
					 used ? ", " : "", ns[i], v);
	}
	if (!s->nr_ns)
		snprintf(s->summary, sizeof(s->summary), "no namespace");
	snprintf(path, sizeof(path), "%s/class/nvme/%s/quirks", sysfs, ctrl);
	s->quirks_shown = ctrl[0] && !vwc_read_line(path, q, sizeof(q));
	s->quirk_active = s->quirks_shown && vwc_quirk_has(q, VWC_QUIRK_DWZ);
}

enum vwc_wz_verdict vwc_wz_verdict(const struct vwc_wz_seen *s,
				   bool bound_with_quirk)
{
	if (!s->nr_ns)
		return VWC_WZ_NO_NS;
	if (!s->nr_on)
		return VWC_WZ_OFF;
	/* the kernel's own word first; without it, how it was bound */
	if (s->quirks_shown)
		return s->quirk_active ? VWC_WZ_IGNORED : VWC_WZ_NOT_TAKEN;
	return bound_with_quirk ? VWC_WZ_IGNORED : VWC_WZ_NOT_TAKEN;
}

void vwc_wz_why(const struct vwc_wz_seen *s, const char *how, char *buf,
		size_t len)
{
	snprintf(buf, len,
		 "the kernel ignores %s: the controller runs with it (%s), yet write_zeroes_max_bytes is %s. A kernel without \"%s\" lets a controller's Write Zeroes Size Limit (WZSL, Identify Controller for the NVM command set) set the Write Zeroes limit over the quirk: this controller reports a WZSL (%ld bytes) and this kernel lacks that fix",
		 VWC_QUIRK_DWZ, how, s->summary, VWC_WZSL_FIX, s->max_bytes);
}

bool vwc_wz_ctrl_ignored(const char *sysfs, const struct vwc_topo *t, int ci,
			 char *why, size_t len)
{
	const struct vwc_ctrl *c = &t->ctrls[ci];
	char path[VWC_PATH_LEN + 16], real[PATH_MAX], how[300];
	char (*ns)[VWC_NAME_LEN];
	ssize_t ln;
	struct vwc_wz_seen s;
	const char *b;
	int i, n = 0;

	/* the PCI function's address: the link's last component (one
	 * readlink, where realpath() reads every component of the path) */
	snprintf(path, sizeof(path), "%s/device", c->syspath);
	ln = readlink(path, real, sizeof(real) - 1);
	if (ln > 0) {
		real[ln] = '\0';
		b = strrchr(real, '/');
		b = b ? b + 1 : real;
		if (strchr(b, ':') && vwc_wz_marked(b, why, len))
			return true;
	}
	if (!c->has_kernel_quirks ||
	    !vwc_quirk_has(c->kernel_quirks, VWC_QUIRK_DWZ))
		return false;
	ns = calloc(t->nr_ns ? t->nr_ns : 1, sizeof(*ns));
	if (!ns)
		return false;
	for (i = 0; i < t->nr_ns; i++)
		if (vwc_ns_has_ctrl(&t->ns[i], ci))
			snprintf(ns[n++], VWC_NAME_LEN, "%s", t->ns[i].name);
	vwc_wz_read(sysfs, c->name, ns, n, &s);
	free(ns);
	if (vwc_wz_verdict(&s, true) != VWC_WZ_IGNORED)
		return false;
	snprintf(how, sizeof(how), "kernel quirks: %s", c->kernel_quirks);
	for (i = 0; how[i]; i++)
		if (how[i] == '\n')
			how[i] = ',';
	vwc_wz_why(&s, how, why, len);
	return true;
}

/* ---- <rundir>/wz-ignored/<addr>: "driver-inode N\nwhy TEXT\n" ---- */

static void rec_path(const char *addr, char *path, size_t len)
{
	snprintf(path, len, "%s/wz-ignored/%s", vwc_rundir(), addr);
}

/* the nvme driver's sysfs directory inode: new at every registration */
static unsigned long long drv_ino(void)
{
	struct stat st;

	return stat("/sys/bus/pci/drivers/nvme", &st) ? 0 :
	       (unsigned long long)st.st_ino;
}

int vwc_wz_mark(const char *addr, const char *why)
{
	char path[512], dir[512];
	FILE *f;
	int r;

	snprintf(dir, sizeof(dir), "%s/wz-ignored", vwc_rundir());
	vwc_mkdir_p(dir);
	rec_path(addr, path, sizeof(path));
	f = fopen(path, "we");
	if (!f)
		return -errno;
	r = fprintf(f, "driver-inode %llu\nwhy %s\n", drv_ino(), why) < 0;
	if (fclose(f) || r) {
		r = errno ? -errno : -EIO;
		unlink(path);
		return r;
	}
	return 0;
}

bool vwc_wz_marked(const char *addr, char *why, size_t len)
{
	char path[512], buf[2048], *w;
	unsigned long long ino = 0;

	if (why && len)
		why[0] = '\0';
	rec_path(addr, path, sizeof(path));
	if (vwc_read_line(path, buf, sizeof(buf)))
		return false;
	if (sscanf(buf, "driver-inode %llu", &ino) != 1 || ino != drv_ino()) {
		/* nvme registered again since: another module may be loaded */
		unlink(path);
		return false;
	}
	w = strstr(buf, "\nwhy ");
	if (why && len && w)
		snprintf(why, len, "%.*s", (int)strcspn(w + 5, "\n"), w + 5);
	return true;
}

void vwc_wz_unmark(const char *addr)
{
	char path[512];

	rec_path(addr, path, sizeof(path));
	unlink(path);
}
