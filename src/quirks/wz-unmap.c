// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blk.h"
#include "fileio.h"
#include "log.h"
#include "wz-unmap.h"

/* progress for the admin; --quiet (udev) keeps only errors, on stderr */
#define out(qo, ...) do { if (!(qo)->quiet) printf(__VA_ARGS__); } while (0)

/* <rundir>/changed/<ns>.write_zeroes_unmap_max_bytes: the value found */
static void wzu_record_path(const char *ns, char *path, size_t len)
{
	snprintf(path, len, "%s/changed/%s.write_zeroes_unmap_max_bytes",
		 vwc_rundir(), ns);
}

static void wzu_record(const char *ns, const char *orig)
{
	char path[512], dir[512];
	int r;
	FILE *f;

	/* the run directory's mode is lock.c's (0700) */
	snprintf(dir, sizeof(dir), "%s/changed", vwc_rundir());
	vwc_mkdir_p(dir);
	wzu_record_path(ns, path, sizeof(path));
	if (!access(path, F_OK))
		return;		/* keep the first original */
	f = fopen(path, "we");
	if (!f) {
		vwc_warn("%s: cannot record %s: %s", ns, path, strerror(errno));
		return;
	}
	r = fprintf(f, "%s\n", orig) < 0;
	if (fclose(f) || r)
		vwc_warn("%s: cannot record %s: %s", ns, path, strerror(errno));
}

int vwc_wzu_restore(const char *ns, const char *syspath, bool dry_run,
		       bool quiet)
{
	char rec[512], path[VWC_PATH_LEN + 48], hw[32], cur[32];
	int fd, r = 0;

	wzu_record_path(ns, rec, sizeof(rec));
	if (access(rec, F_OK))
		return 0;
	/* the kernel's own value is the hardware limit (6.18+ sysfs) */
	snprintf(path, sizeof(path),
		 "%s/queue/write_zeroes_unmap_max_hw_bytes", syspath);
	if (vwc_read_line(path, hw, sizeof(hw)))
		hw[0] = '\0';
	snprintf(path, sizeof(path), "%s/queue/write_zeroes_unmap_max_bytes",
		 syspath);
	if (vwc_read_line(path, cur, sizeof(cur)) || !hw[0] || !strcmp(cur, hw)) {
		if (!dry_run)
			unlink(rec);
		return 0;
	}
	if (strcmp(cur, "0")) {
		if (!quiet)
			printf("%s: write_zeroes_unmap_max_bytes left alone: now %s, changed by someone else since this tool set 0\n",
			       ns, cur);
		if (!dry_run)
			unlink(rec);
		return 0;
	}
	if (!quiet)
		printf("%s: write_zeroes_unmap_max_bytes 0 -> %s%s\n", ns, hw,
		       dry_run ? " (dry run)" : "");
	if (dry_run)
		return 1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, hw, strlen(hw)) != (ssize_t)strlen(hw)) {
		r = -errno;
		vwc_err("%s: cannot write %s: %s", ns, path, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	if (!r)
		unlink(rec);
	return r ? r : 1;
}

int vwc_wzu_runtime(struct vwc_topo *t, int ci,
		    const struct vwc_quirks_opts *qo)
{
	int i, ret = 0;

	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		char path[VWC_PATH_LEN + 48], val[32];
		int fd;

		if (!vwc_ns_has_ctrl(ns, ci))
			continue;
		snprintf(path, sizeof(path), "%s/queue/write_zeroes_max_bytes",
			 ns->syspath);
		vwc_read_line(path, val, sizeof(val));
		out(qo, "  %s: write_zeroes_max_bytes %s%s\n", ns->name, val,
		       strcmp(val, "0") ? " (Write Zeroes offload in use)" :
					  " (offload off)");
		snprintf(path, sizeof(path),
			 "%s/queue/write_zeroes_unmap_max_bytes", ns->syspath);
		if (vwc_read_line(path, val, sizeof(val))) {
			out(qo, "  %s: no write_zeroes_unmap_max_bytes on this kernel (6.18+); nothing to set at run time\n",
			       ns->name);
			continue;
		}
		if (!strcmp(val, "0")) {
			out(qo, "  %s: write_zeroes_unmap_max_bytes already 0\n",
			       ns->name);
			continue;
		}
		out(qo, "  %s: write_zeroes_unmap_max_bytes %s -> 0%s\n",
		       ns->name, val, qo->dry_run ? " (dry run)" : "");
		if (qo->dry_run)
			continue;
		wzu_record(ns->name, val);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			ret = -errno;
			vwc_err("%s: cannot write %s: %s", ns->name, path,
				strerror(errno));
		}
		if (fd >= 0)
			close(fd);
	}
	return ret;
}
