// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libudev.h>

#include "blk.h"
#include "engine.h"
#include "log.h"
#include "quirks.h"

#define QUIRK_DWZ "disable_write_zeroes"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

bool vwc_quirk_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		bool start = p == list || p[-1] == ',' || p[-1] == '\n' ||
			     p[-1] == ' ';
		bool end = !p[n] || p[n] == ',' || p[n] == '\n' || p[n] == ' ';

		if (start && end)
			return true;
		p += n;
	}
	return false;
}

void vwc_quirks_fill(struct vwc_run *r)
{
	struct udev_hwdb *hwdb = udev_hwdb_new(r->udev);
	int i;

	for (i = 0; i < r->topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r->topo.ctrls[i];
		struct udev_list_entry *e;
		char path[VWC_PATH_LEN + 16];

		snprintf(path, sizeof(path), "%s/quirks", c->syspath);
		c->has_kernel_quirks = !read_line(path, c->kernel_quirks,
						  sizeof(c->kernel_quirks));
		if (!hwdb || !c->modalias[0])
			continue;
		udev_list_entry_foreach(e,
			udev_hwdb_get_properties_list_entry(hwdb, c->modalias, 0)) {
			if (!strcmp(udev_list_entry_get_name(e),
				    "NVME_VWC_SYNC_QUIRKS"))
				snprintf(c->hwdb_quirks, sizeof(c->hwdb_quirks),
					 "%s", udev_list_entry_get_value(e));
		}
	}
	if (hwdb)
		udev_hwdb_unref(hwdb);
}

int vwc_quirks_merge(const char *current, const char *id, const char *quirk,
		     char *out, size_t len)
{
	char buf[1024], *entry, *save = NULL;
	size_t idlen = strlen(id), used = 0;
	bool found = false;
	int n;

	if (strlen(current) >= sizeof(buf))
		return -ENOSPC;
	snprintf(buf, sizeof(buf), "%s", current);
	out[0] = '\0';
	for (entry = strtok_r(buf, "-", &save); entry;
	     entry = strtok_r(NULL, "-", &save)) {
		bool mine = !strncasecmp(entry, id, idlen) &&
			    entry[idlen] == ':';

		if (!*entry)
			continue;
		if (!mine) {
			n = snprintf(out + used, len - used, "%s%s",
				     used ? "-" : "", entry);
		} else {
			found = true;
			n = snprintf(out + used, len - used, "%s%s%s%s",
				     used ? "-" : "", entry,
				     vwc_quirk_has(entry + idlen + 1, quirk) ?
				     "" : ",",
				     vwc_quirk_has(entry + idlen + 1, quirk) ?
				     "" : quirk);
		}
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
	}
	if (!found) {
		n = snprintf(out + used, len - used, "%s%s:%s",
			     used ? "-" : "", id, quirk);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
	}
	return 0;
}

/* The admin's own "options nvme quirks=" (the last one wins), not ours. */
static void admin_quirks(char *out, size_t len)
{
	DIR *d = opendir("/etc/modprobe.d");
	struct dirent *de;
	char **names = NULL;
	int n = 0, i;

	out[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d))) {
		char **t;

		if (de->d_name[0] == '.' || !strstr(de->d_name, ".conf") ||
		    !strcmp(de->d_name, strrchr(VWC_MODPROBE_FILE, '/') + 1))
			continue;
		t = realloc(names, (n + 1) * sizeof(*names));
		if (!t)
			break;
		names = t;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		int j;

		for (j = i + 1; j < n; j++)
			if (names[i] && names[j] &&
			    strcmp(names[i], names[j]) > 0) {
				char *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	}
	for (i = 0; i < n; i++) {
		char path[512], line[1024];
		FILE *f;

		if (!names[i])
			continue;
		snprintf(path, sizeof(path), "/etc/modprobe.d/%s", names[i]);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			char *q = strstr(line, "quirks=");

			if (strncmp(line, "options", 7) || !strstr(line, " nvme ") ||
			    !q)
				continue;
			q += 7;
			q[strcspn(q, " \t\n")] = '\0';
			snprintf(out, len, "%s", q);
		}
		if (f)
			fclose(f);
		free(names[i]);
	}
	free(names);
}

/* <rundir>/changed/<ns>.write_zeroes_unmap_max_bytes: the value found */
static void wzu_record_path(const char *ns, char *path, size_t len)
{
	snprintf(path, len, "%s/changed/%s.write_zeroes_unmap_max_bytes",
		 vwc_rundir(), ns);
}

static void wzu_record(const char *ns, const char *orig)
{
	char path[512], dir[512];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", vwc_rundir());
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/changed", vwc_rundir());
	mkdir(dir, 0755);
	wzu_record_path(ns, path, sizeof(path));
	if (!access(path, F_OK))
		return;		/* keep the first original */
	f = fopen(path, "we");
	if (!f || fprintf(f, "%s\n", orig) < 0 || fclose(f))
		vwc_warn("%s: cannot record %s: %s", ns, path, strerror(errno));
}

int vwc_quirks_restore_runtime(const char *ns, const char *syspath,
			       bool dry_run, bool quiet)
{
	char rec[512], path[VWC_PATH_LEN + 48], hw[32], cur[32];
	int fd, r = 0;

	wzu_record_path(ns, rec, sizeof(rec));
	if (access(rec, F_OK))
		return 0;
	/* the kernel's own value is the hardware limit (6.18+ sysfs) */
	snprintf(path, sizeof(path),
		 "%s/queue/write_zeroes_unmap_max_hw_bytes", syspath);
	if (read_line(path, hw, sizeof(hw)))
		hw[0] = '\0';
	snprintf(path, sizeof(path), "%s/queue/write_zeroes_unmap_max_bytes",
		 syspath);
	if (read_line(path, cur, sizeof(cur)) || !hw[0] || !strcmp(cur, hw)) {
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

static int write_zeroes_runtime(struct vwc_run *r, struct vwc_ctrl *c, int ci,
				bool dry_run)
{
	int i, ret = 0;

	for (i = 0; i < r->topo.nr_ns; i++) {
		struct vwc_ns *ns = &r->topo.ns[i];
		char path[VWC_PATH_LEN + 48], val[32];
		int fd;

		if (!vwc_ns_has_ctrl(ns, ci))
			continue;
		snprintf(path, sizeof(path), "%s/queue/write_zeroes_max_bytes",
			 ns->syspath);
		read_line(path, val, sizeof(val));
		printf("  %s: write_zeroes_max_bytes %s%s\n", ns->name, val,
		       strcmp(val, "0") ? " (Write Zeroes offload in use)" :
					  " (offload off)");
		snprintf(path, sizeof(path),
			 "%s/queue/write_zeroes_unmap_max_bytes", ns->syspath);
		if (read_line(path, val, sizeof(val))) {
			printf("  %s: no write_zeroes_unmap_max_bytes on this kernel (6.18+); nothing to set at run time\n",
			       ns->name);
			continue;
		}
		if (!strcmp(val, "0")) {
			printf("  %s: write_zeroes_unmap_max_bytes already 0\n",
			       ns->name);
			continue;
		}
		printf("  %s: write_zeroes_unmap_max_bytes %s -> 0%s\n",
		       ns->name, val, dry_run ? " (dry run)" : "");
		if (dry_run)
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
	(void)c;
	return ret;
}

static bool nvme_is_builtin(void)
{
	return access("/sys/module/nvme", F_OK) == 0 &&
	       access("/sys/module/nvme/initstate", F_OK) != 0;
}

static int persist(const char *merged, bool dry_run)
{
	char cur[1200], want[1200];
	FILE *f;

	snprintf(want, sizeof(want),
		 "# Written by nvme-vwc-sync: NVMe quirks from its hwdb quirk database,\n"
		 "# merged with the admin's own. Remove with 'nvme vwc restore'.\n"
		 "options nvme quirks=%s\n", merged);
	if (!read_line(VWC_MODPROBE_FILE, cur, sizeof(cur)) &&
	    !strncmp(cur, want, strlen(want) - 1)) {
		printf("  %s already up to date\n", VWC_MODPROBE_FILE);
		return 0;
	}
	printf("  write %s: options nvme quirks=%s%s\n", VWC_MODPROBE_FILE,
	       merged, dry_run ? " (dry run)" : "");
	if (dry_run)
		return 0;
	mkdir("/etc/modprobe.d", 0755);
	f = fopen(VWC_MODPROBE_FILE ".tmp", "we");
	if (!f || fputs(want, f) < 0 || fclose(f)) {
		vwc_err("cannot write %s: %s", VWC_MODPROBE_FILE, strerror(errno));
		return -errno;
	}
	if (rename(VWC_MODPROBE_FILE ".tmp", VWC_MODPROBE_FILE) < 0)
		return -errno;
	printf("  takes effect at the next boot or nvme module reload; 'nvme vwc audit' then shows it\n");
	return 0;
}

int vwc_quirks_apply(struct vwc_run *r, bool dry_run)
{
	char merged[1024] = "", base[1024];
	bool any = false;
	int i, ret = 0;

	admin_quirks(base, sizeof(base));
	for (i = 0; i < r->topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r->topo.ctrls[i];

		if (!c->wanted || !vwc_quirk_has(c->hwdb_quirks, QUIRK_DWZ))
			continue;
		printf("%s (pci %s): quirk database says %s\n", c->name,
		       c->pci_id, QUIRK_DWZ);
		if (c->has_kernel_quirks)
			printf("  kernel quirk %s: %s\n", QUIRK_DWZ,
			       vwc_quirk_has(c->kernel_quirks, QUIRK_DWZ) ?
			       "active" : "not active");
		else
			printf("  kernel quirk state: not shown by this kernel (no quirks attribute)\n");
		if (write_zeroes_runtime(r, c, i, dry_run))
			ret = -EIO;
		if (vwc_quirks_merge(any ? merged : base, c->pci_id, QUIRK_DWZ,
				     merged, sizeof(merged)) == 0)
			any = true;
	}
	if (!any)
		return ret;
	if (access("/sys/module/nvme/parameters/quirks", F_OK)) {
		printf("persistent: this kernel's nvme driver has no quirks parameter; only a kernel carrying the quirk can disable Write Zeroes for good\n");
		return ret;
	}
	if (nvme_is_builtin()) {
		printf("persistent: NVMe is built into this kernel; 'nvme.quirks=%s' on the kernel command line is rejected at boot on current kernels (parsed before the memory allocator is up). Options: a kernel with NVMe as a module (then re-run to write %s), or a kernel that carries the quirk.\n",
		       merged, VWC_MODPROBE_FILE);
		return ret;
	}
	if (persist(merged, dry_run))
		ret = -EIO;
	return ret;
}

int vwc_quirks_remove_modprobe(bool dry_run, bool quiet)
{
	if (access(VWC_MODPROBE_FILE, F_OK))
		return 0;
	if (!quiet)
		printf("remove %s%s\n", VWC_MODPROBE_FILE,
		       dry_run ? " (dry run)" : "");
	if (dry_run)
		return 1;
	if (unlink(VWC_MODPROBE_FILE) < 0) {
		vwc_err("cannot remove %s: %s", VWC_MODPROBE_FILE,
			strerror(errno));
		return -errno;
	}
	return 1;
}

const char *vwc_cpu_vendor(void)
{
	static char vendor[32];
	static bool done;
	char line[256];
	FILE *f;

	if (done)
		return vendor;
	done = true;
	f = fopen("/proc/cpuinfo", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *v;

		if (strncmp(line, "vendor_id", 9) || !(v = strchr(line, ':')))
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(vendor, sizeof(vendor), "%s", v);
		break;
	}
	if (f)
		fclose(f);
	return vendor;
}

bool vwc_cpu_is_hygon(void)
{
	return !strcmp(vwc_cpu_vendor(), "HygonGenuine");
}
