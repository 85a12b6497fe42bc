// SPDX-License-Identifier: GPL-2.0-or-later
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libkmod.h>
#include <libmount.h>
#include <libudev.h>

#include "blk.h"
#include "engine.h"
#include "log.h"
#include "quirks.h"

#define QUIRK_DWZ "disable_write_zeroes"

/* progress for the admin; --quiet (udev) keeps only errors, on stderr */
#define out(qo, ...) do { if (!(qo)->quiet) printf(__VA_ARGS__); } while (0)

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

/*
 * libkmod's messages after kmod_new() (index lookups) at our debug level.
 * Bad modprobe.d lines are reported while kmod_new() parses the
 * configuration, before a log function can be set: libkmod prints those
 * itself on stderr ("libkmod: ERROR ... ignoring bad line"), as modprobe
 * does, and skips the line, as modprobe does.
 */
static void kmod_log_fn(void *data, int prio, const char *file, int line,
			const char *fn, const char *fmt, va_list args)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, args);
	msg[strcspn(msg, "\n")] = '\0';
	vwc_dbg("libkmod: %s", msg);
}

static struct kmod_ctx *kmod_ctx_new(const char *moddir,
				     const char *const *paths)
{
	struct kmod_ctx *ctx = kmod_new(moddir, paths);

	if (ctx)
		kmod_set_log_fn(ctx, kmod_log_fn, NULL);
	return ctx;
}

int vwc_options_quirks(const char *opts, char *out, size_t len)
{
	const char *p = opts;
	int found = 0;

	while (*p) {
		const char *tok, *v;
		bool quoted = false;
		size_t n;

		while (isspace((unsigned char)*p))
			p++;
		tok = p;
		/* the kernel's parse_args(): blanks inside double quotes */
		while (*p && (quoted || !isspace((unsigned char)*p))) {
			if (*p == '"')
				quoted = !quoted;
			p++;
		}
		if (p == tok || (size_t)(p - tok) < 7 || strncmp(tok, "quirks=", 7))
			continue;
		v = tok + 7;
		n = (size_t)(p - v);
		if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
			v++;
			n -= 2;
		}
		if (n >= len)
			return -ENOSPC;
		memcpy(out, v, n);
		out[n] = '\0';
		found = 1;
	}
	return found;
}

/*
 * The option strings modprobe would pass to "nvme", in modprobe's order
 * (libkmod: files sorted by name across the configuration directories, a
 * file shadowing one of the same name in a later directory, then nvme.*
 * of the kernel command line). At most @max; Return: the count or -errno.
 */
static int nvme_option_entries(const char *const *paths, char **v, int max)
{
	struct kmod_ctx *ctx = kmod_ctx_new(NULL, paths);
	struct kmod_config_iter *it;
	int n = 0;

	if (!ctx)
		return -ENOMEM;
	it = kmod_config_get_options(ctx);
	while (it && kmod_config_iter_next(it)) {
		if (strcmp(kmod_config_iter_get_key(it), "nvme"))
			continue;
		if (n == max) {
			n = -E2BIG;
			break;
		}
		v[n] = strdup(kmod_config_iter_get_value(it));
		if (!v[n]) {
			n = -ENOMEM;
			break;
		}
		n++;
	}
	if (it)
		kmod_config_iter_free_iter(it);
	else
		n = -ENOMEM;
	kmod_unref(ctx);
	return n;
}

static void free_entries(char **v, int n)
{
	while (n > 0)
		free(v[--n]);
}

/*
 * "The admin's value without ours", precisely: libkmod lists every
 * "options nvme ..." entry modprobe would pass (all configuration
 * directories and the kernel command line, in modprobe's order). Our own
 * file, read alone by a second libkmod context, contributes its entries;
 * each of them is removed once from the full list, matched exactly, from
 * the file part (the kernel command line's entries, listed last by both
 * contexts, are left). The admin's value is then the last quirks= of what
 * remains, as the kernel takes the last of repeated parameters: that is
 * what modprobe would use if our file did not exist. An identical line of
 * the admin's own stays (one copy is removed, the value is the same).
 */
int vwc_modprobe_admin_quirks(const char *const *paths, const char *ours,
			      char *out, size_t len)
{
	enum { MAX = 256 };
	static const char *const none[] = { NULL };
	const char *const own[] = { ours, NULL };
	char *all[MAX], *mine[MAX], *kc[MAX];
	bool gone[MAX] = { false };
	int na, nm, nk, i, j, r = 0;

	out[0] = '\0';
	na = nvme_option_entries(paths, all, MAX);
	if (na < 0)
		return na;
	nk = nvme_option_entries(none, kc, MAX);
	nm = access(ours, F_OK) ? 0 : nvme_option_entries(own, mine, MAX);
	if (nk < 0 || nm < 0) {
		r = nk < 0 ? nk : nm;
		goto out;
	}
	for (i = 0; i < nm - (nm ? nk : 0); i++)
		for (j = na - nk - 1; j >= 0; j--)
			if (!gone[j] && !strcmp(all[j], mine[i])) {
				gone[j] = true;
				break;
			}
	for (i = 0; i < na && r >= 0; i++)
		if (!gone[i])
			r = vwc_options_quirks(all[i], out, len) < 0 ?
			    -ENOSPC : r;
	if (r >= 0)
		r = 0;
out:
	free_entries(all, na);
	if (nk > 0)
		free_entries(kc, nk);
	if (nm > 0)
		free_entries(mine, nm);
	return r;
}

/* the quirks= value modprobe will pass to nvme now (ours included) */
static int modprobe_quirks_now(char *out, size_t len)
{
	return vwc_modprobe_admin_quirks(NULL, "/nonexistent", out, len);
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

static int wzu_restore(const char *ns, const char *syspath, bool dry_run,
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
				const struct vwc_quirks_opts *qo)
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
		out(qo, "  %s: write_zeroes_max_bytes %s%s\n", ns->name, val,
		       strcmp(val, "0") ? " (Write Zeroes offload in use)" :
					  " (offload off)");
		snprintf(path, sizeof(path),
			 "%s/queue/write_zeroes_unmap_max_bytes", ns->syspath);
		if (read_line(path, val, sizeof(val))) {
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
	(void)c;
	return ret;
}

/* ---------------------------------------------------------------------
 * Write Zeroes off at run time: a PCI dynamic ID on the nvme driver.
 *
 * nvme-pci takes a matching pci_device_id's driver_data as the controller's
 * quirks. A dynamic ID (new_id) is matched before the driver's own table,
 * so it replaces the quirks the table gives the device: its value must
 * keep them. The PCI core accepts a driver_data only if an entry of the
 * table has exactly that value (new_id answers EINVAL otherwise). The
 * quirks are read at probe time, so the controller is unbound and bound
 * again, which removes and re-creates its block devices: never while any
 * of them is in use.
 * ---------------------------------------------------------------------
 */
#define NVME_DRV_DIR	"/sys/bus/pci/drivers/nvme"
#define PCI_DEV_DIR	"/sys/bus/pci/devices"
#define MAX_NS		64

/*
 * enum nvme_quirks (drivers/nvme/host/nvme.h) in bit order, named as
 * nvme_quirk_name() prints them in /sys/class/nvme/nvmeN/quirks (7.x);
 * checked against Debian's 7.2 nvme-core.ko. Bits never move: new quirks
 * are added at the end.
 */
static const char *const nvme_quirk_names[] = {
	"stripe_size", "identify_cns", "deallocate_zeroes",
	"delay_before_chk_rdy", "no_apst", "no_deepest_ps", "qdepth_one",
	"medium_prio_sq", "ignore_dev_subnqn", "disable_write_zeroes",
	"simple_suspend", "single_vector", "128_bytes_sqes", "shared_tags",
	"no_temp_thresh_change", "no_ns_desc_list", "dma_address_bits_48",
	"skip_cid_gen", "bogus_nid", "no_secondary_temp_thresh",
	"force_no_simple_suspend", "broken_msi", "dmapool_align_512",
};

int vwc_quirk_bit(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(nvme_quirk_names) / sizeof(*nvme_quirk_names);
	     i++)
		if (strlen(nvme_quirk_names[i]) == len &&
		    !strncmp(nvme_quirk_names[i], name, len))
			return (int)i;
	return -1;
}

int vwc_quirks_mask(const char *list, unsigned long *mask, char *bad,
		    size_t len)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n;
		int bit;

		p += strspn(p, ", \t\n");
		n = strcspn(p, ", \t\n");
		if (!n)
			break;
		bit = vwc_quirk_bit(p, n);
		if (bit < 0) {
			snprintf(bad, len, "%.*s", (int)n, p);
			return -EINVAL;
		}
		*mask |= 1UL << bit;
		p += n;
	}
	return 0;
}

int vwc_pci_id_key(const char *modalias, char *key, size_t len)
{
	char v[9], d[9], sv[9], sd[9], rest[4];
	int n;

	if (sscanf(modalias, "pci:v%8[0-9A-Fa-f]d%8[0-9A-Fa-f]sv%8[0-9A-Fa-f]sd%8[0-9A-Fa-f]%3s",
		   v, d, sv, sd, rest) != 5 ||
	    strlen(v) != 8 || strlen(d) != 8 || strlen(sv) != 8 ||
	    strlen(sd) != 8 || strncmp(rest, "bc", 2))
		return -EINVAL;
	n = snprintf(key, len, "pci:v%sd%ssv%ssd%sbc*sc*i*", v, d, sv, sd);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* 1 if libkmod resolves @alias to @driver (module or built in), 0 if not */
static int kmod_resolves(struct kmod_ctx *ctx, const char *alias,
			 const char *driver)
{
	struct kmod_list *l = NULL, *e;
	int r, found = 0;

	r = kmod_module_new_from_lookup(ctx, alias, &l);
	if (r < 0)
		return r;
	kmod_list_foreach(e, l) {
		struct kmod_module *m = kmod_module_get_module(e);

		if (m && !strcmp(kmod_module_get_name(m), driver))
			found = 1;
		kmod_module_unref(m);
	}
	kmod_module_unref_list(l);
	return found;
}

int vwc_driver_table_lists(const char *moddir, const char *driver,
			   const char *modalias, char *src, size_t len)
{
	struct kmod_ctx *ctx;
	char key[96];
	int r;

	src[0] = '\0';
	if (vwc_pci_id_key(modalias, key, sizeof(key)))
		return -EINVAL;
	ctx = kmod_ctx_new(moddir, NULL);
	if (!ctx)
		return -ENOMEM;
	/* the indexes (modules.alias.bin, modules.builtin.alias.bin) */
	kmod_load_resources(ctx);
	r = kmod_resolves(ctx, key, driver);
	if (r > 0) {
		snprintf(src, len, "%s in %s's module index", key,
			 kmod_get_dirname(ctx));
	} else if (r == 0) {
		r = kmod_resolves(ctx, modalias, driver);
		if (r == 0)
			r = -ENOENT;
		else if (r > 0)
			r = 0;
		snprintf(src, len, "%s", kmod_get_dirname(ctx));
	}
	kmod_unref(ctx);
	return r;
}

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

bool vwc_quirks_is_pci_addr(const char *s)
{
	unsigned int dom, bus, dev, fn;
	char end;

	return strlen(s) == 12 &&
	       sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &end) == 4;
}

static int write_str(const char *path, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;
	int fd, r;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, s, n);
	r = w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

static unsigned int read_hex(const char *dir, const char *file)
{
	char path[VWC_PATH_LEN + 32], buf[32];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_line(path, buf, sizeof(buf)))
		return 0;
	return (unsigned int)strtoul(buf, NULL, 16);
}

static long read_long(const char *path)
{
	char buf[32];

	if (read_line(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	return strtol(buf, NULL, 10);
}

/** struct qdev - one PCI function and what is bound to it */
struct qdev {
	char addr[16];
	char dir[VWC_PATH_LEN];
	unsigned int vendor, device, subvendor, subdevice;
	char modalias[128];
	char key[40];		/* record name: 1b36_0010_1af4_1100 */
	char ids[64];		/* for messages */
	char driver[64];	/* "" when unbound */
	char ctrl[VWC_NAME_LEN];	/* nvmeN, "" when none */
	char label[96];		/* "nvme0 (0000:01:00.0)" */
};

static int qdev_load(struct qdev *d, const char *addr)
{
	char path[VWC_PATH_LEN + 32], link[VWC_PATH_LEN];
	struct dirent *de;
	ssize_t n;
	DIR *dir;

	memset(d, 0, sizeof(*d));
	snprintf(d->addr, sizeof(d->addr), "%s", addr);
	snprintf(d->dir, sizeof(d->dir), PCI_DEV_DIR "/%s", addr);
	if (access(d->dir, F_OK))
		return -ENODEV;
	d->vendor = read_hex(d->dir, "vendor");
	d->device = read_hex(d->dir, "device");
	d->subvendor = read_hex(d->dir, "subsystem_vendor");
	d->subdevice = read_hex(d->dir, "subsystem_device");
	snprintf(path, sizeof(path), "%s/modalias", d->dir);
	read_line(path, d->modalias, sizeof(d->modalias));
	snprintf(d->key, sizeof(d->key), "%04x_%04x_%04x_%04x", d->vendor,
		 d->device, d->subvendor, d->subdevice);
	snprintf(d->ids, sizeof(d->ids), "%04x:%04x (subsystem %04x:%04x)",
		 d->vendor, d->device, d->subvendor, d->subdevice);
	snprintf(path, sizeof(path), "%s/driver", d->dir);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		snprintf(d->driver, sizeof(d->driver), "%.63s",
			 strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
	}
	snprintf(path, sizeof(path), "%s/nvme", d->dir);
	dir = opendir(path);
	while (dir && (de = readdir(dir)))
		if (!strncmp(de->d_name, "nvme", 4) &&
		    isdigit((unsigned char)de->d_name[4])) {
			snprintf(d->ctrl, sizeof(d->ctrl), "%.31s", de->d_name);
			break;
		}
	if (dir)
		closedir(dir);
	if (d->ctrl[0])
		snprintf(d->label, sizeof(d->label), "%s (%s)", d->ctrl,
			 d->addr);
	else
		snprintf(d->label, sizeof(d->label), "%s", d->addr);
	return 0;
}

/* the PCI function of a controller: nvmeN -> 0000:01:00.0 */
static int ctrl_pci_addr(const char *ctrl, char *addr, size_t len)
{
	char path[VWC_PATH_LEN], real[PATH_MAX], *b;

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/device", ctrl);
	if (!realpath(path, real))
		return -errno;
	b = strrchr(real, '/');
	if (!b || !vwc_quirks_is_pci_addr(b + 1))
		return -ENODEV;	/* not PCI (fabrics) */
	snprintf(addr, len, "%s", b + 1);
	return 0;
}

struct nslist {
	char name[MAX_NS][VWC_NAME_LEN];
	int n;
};

/* block devices of a controller's namespaces (multipath heads for paths) */
static void ctrl_namespaces(const char *ctrl, struct nslist *l)
{
	char path[VWC_PATH_LEN], ns[VWC_NAME_LEN];
	struct dirent *de;
	DIR *dir;
	int i;

	l->n = 0;
	if (!ctrl[0])
		return;
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", ctrl);
	dir = opendir(path);
	while (dir && (de = readdir(dir)) && l->n < MAX_NS) {
		enum vwc_kind k = vwc_name_classify(de->d_name, ns, sizeof(ns));
		bool dup = false;

		if (k != VWC_KIND_NS && k != VWC_KIND_PATH)
			continue;
		for (i = 0; i < l->n; i++)
			dup |= !strcmp(l->name[i], ns);
		if (!dup)
			snprintf(l->name[l->n++], VWC_NAME_LEN, "%s", ns);
	}
	if (dir)
		closedir(dir);
}

static long ns_wz(const char *ns)
{
	char path[VWC_PATH_LEN];

	snprintf(path, sizeof(path),
		 "/sys/class/block/%s/queue/write_zeroes_max_bytes", ns);
	return read_long(path);
}

/* "nvme0n1 524288, nvme0n2 524288" */
static void wz_summary(const struct nslist *l, char *out, size_t len)
{
	size_t used = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < l->n && used < len; i++)
		used += snprintf(out + used, len - used, "%s%s %ld",
				 i ? ", " : "", l->name[i], ns_wz(l->name[i]));
	if (!l->n)
		snprintf(out, len, "no namespace");
}

/* 1 some namespace has Write Zeroes, 0 none has, -ENOENT no namespace */
static int wz_enabled(const struct nslist *l)
{
	int i, on = 0;

	if (!l->n)
		return -ENOENT;
	for (i = 0; i < l->n; i++)
		if (ns_wz(l->name[i]) != 0)
			on = 1;
	return on;
}

static int ctrl_kernel_quirks(const char *ctrl, char *buf, size_t len)
{
	char path[VWC_PATH_LEN];

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/quirks", ctrl);
	return ctrl[0] ? read_line(path, buf, len) : -ENOENT;
}

/* NVME_VWC_SYNC_MODULES_DIR (tests), or NULL: libkmod's, the running kernel's */
static const char *modules_dir(void)
{
	const char *e = getenv("NVME_VWC_SYNC_MODULES_DIR");

	return e && *e ? e : NULL;
}

/*
 * The driver_data for the device's dynamic ID: the quirks the kernel gives
 * it, plus disable_write_zeroes. *already when the kernel applies it.
 * Return: 0, or a negative errno with @why filled (nothing can be applied).
 */
static int want_value(const struct qdev *d, unsigned long *val,
		      bool *already, char *why, size_t len)
{
	char kq[512], bad[64], src[256];
	unsigned long mask;
	int r;

	*already = false;
	if (!ctrl_kernel_quirks(d->ctrl, kq, sizeof(kq))) {
		if (vwc_quirks_mask(kq, &mask, bad, sizeof(bad))) {
			snprintf(why, len,
				 "the kernel lists quirk '%s', which this tool cannot map to nvme-pci's bit: a dynamic ID would drop it",
				 bad);
			return -EINVAL;
		}
		*already = mask & VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES;
		*val = mask | VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES;
		return 0;
	}
	r = vwc_driver_table_lists(modules_dir(), "nvme", d->modalias, src,
				   sizeof(src));
	if (r < 0) {
		snprintf(why, len,
			 "this kernel does not show a controller's quirks (no quirks attribute) and the module index of %s (modules.alias.bin, modules.builtin.alias.bin, read with libkmod) does not show the nvme driver's table for %s, so a dynamic ID could drop quirks the table gives it",
			 src[0] ? src : "this kernel", d->ids);
		return r;
	}
	if (r > 0) {
		snprintf(why, len,
			 "%s is in this kernel's nvme table (%s) with quirks this kernel does not show (no quirks attribute): a dynamic ID would replace them",
			 d->ids, src);
		return -EEXIST;
	}
	*val = VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES;
	return 0;
}

/* ---- in-use checks ---- */

struct holds {
	int fd[MAX_NS * 8];
	int n;
};

static void holds_release(struct holds *h)
{
	while (h->n > 0)
		close(h->fd[--h->n]);
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
			read_line(path, comm, len);
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
		read_line(p, name, sizeof(name));
		snprintf(p, sizeof(p), "/sys/class/block/%s/dm/uuid", de->d_name);
		read_line(p, uuid, sizeof(uuid));
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
static int blk_in_use(const char *b, char *why, size_t len, struct holds *h)
{
	char path[VWC_PATH_LEN], devt[32], devnode[VWC_NAME_LEN + 8];
	char where[600], comm[64];
	struct stat st;
	unsigned int ma, mi;
	int fd, pid, r;

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", b);
	if (read_line(path, devt, sizeof(devt)) ||
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
	if (h->n < (int)(sizeof(h->fd) / sizeof(*h->fd)))
		h->fd[h->n++] = fd;
	else
		close(fd);
	return 0;
}

/* every namespace and partition of a controller: 1 in use (@why), 0 free */
static int ctrl_in_use_once(const struct nslist *l, char *why, size_t len,
			    struct holds *h);

/*
 * udev's workers open a new block device for a moment (blkid): wait for
 * them, up to 5 s, before calling the device in use.
 */
static int ctrl_in_use(const struct nslist *l, char *why, size_t len,
		       struct holds *h)
{
	int t, r = 0;

	for (t = 0; t < 5000; t += 200) {
		r = ctrl_in_use_once(l, why, len, h);
		if (!r || (!strstr(why, "(udev-worker)") &&
			   !strstr(why, "(systemd-udevd)")))
			return r;
		holds_release(h);
		usleep(200 * 1000);
	}
	return r;
}

static int ctrl_in_use_once(const struct nslist *l, char *why, size_t len,
			    struct holds *h)
{
	int i;

	for (i = 0; i < l->n; i++) {
		char path[VWC_PATH_LEN];
		struct dirent *de;
		DIR *dir;

		if (blk_in_use(l->name[i], why, len, h))
			return 1;
		snprintf(path, sizeof(path), "/sys/class/block/%s", l->name[i]);
		dir = opendir(path);
		while (dir && (de = readdir(dir))) {
			char part[VWC_PATH_LEN + 300];

			if (strncmp(de->d_name, l->name[i], strlen(l->name[i])))
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

/* ---- records: <rundir>/dynid/<key> holds the new_id line ---- */

static void dynid_path(const char *dir, const char *key, char *path,
		       size_t len)
{
	snprintf(path, len, "%s/%s/%s", vwc_rundir(), dir, key);
}

static bool dynid_recorded(const char *key, unsigned long *val)
{
	char path[512], buf[128], *last;

	dynid_path("dynid", key, path, sizeof(path));
	if (read_line(path, buf, sizeof(buf)))
		return false;
	last = strrchr(buf, ' ');
	*val = last ? strtoul(last + 1, NULL, 16) : 0;
	return true;
}

static bool held_back(const char *key)
{
	char path[512];

	dynid_path("dynid-restored", key, path, sizeof(path));
	return !access(path, F_OK);
}

static void hold_set(const char *key, bool set)
{
	char path[512], dir[512];
	FILE *f;

	dynid_path("dynid-restored", key, path, sizeof(path));
	if (!set) {
		unlink(path);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/dynid-restored", vwc_rundir());
	vwc_mkdir_p(dir);
	f = fopen(path, "we");
	if (f)
		fclose(f);
}

/* remove every dynamic ID for these IDs: remove_id takes one at a time */
static int dynid_remove_ids(unsigned int v, unsigned int dv, unsigned int sv,
			    unsigned int sd, const char *key)
{
	char line[96], path[512];
	int n = 0, r;

	snprintf(line, sizeof(line), "%04x %04x %04x %04x 0 0", v, dv, sv, sd);
	/* no nvme driver registered (module unloaded): its IDs went with it */
	r = access(NVME_DRV_DIR, F_OK) ? -ENODEV : 0;
	while (!r && (r = write_str(NVME_DRV_DIR "/remove_id", line)) == 0 &&
	       n < 64)
		n++;
	if (r && r != -ENODEV) {
		vwc_err("%04x:%04x: cannot remove the dynamic ID from %s/remove_id: %s",
			v, dv, NVME_DRV_DIR, strerror(-r));
		return r;
	}
	dynid_path("dynid", key, path, sizeof(path));
	unlink(path);
	return n;
}

static int dynid_add(const struct qdev *d, unsigned long val)
{
	char line[96], path[512], dir[512];
	unsigned long have;
	FILE *f;
	int r;

	if (dynid_recorded(d->key, &have) && have == val)
		return 0;
	if (dynid_remove_ids(d->vendor, d->device, d->subvendor, d->subdevice,
			     d->key) < 0)
		return -EIO;
	snprintf(line, sizeof(line), "%04x %04x %04x %04x 0 0 %lx", d->vendor,
		 d->device, d->subvendor, d->subdevice, val);
	r = write_str(NVME_DRV_DIR "/new_id", line);
	if (r == -EINVAL) {
		vwc_err("%s: the PCI core refused driver_data 0x%lx (%s): it accepts only a value some entry of the nvme driver's table has, and none has exactly these quirks; nothing changed",
			d->label, val, line);
		return r;
	}
	if (r) {
		vwc_err("%s: cannot write '%s' to %s/new_id: %s; nothing changed",
			d->label, line, NVME_DRV_DIR, strerror(-r));
		return r;
	}
	snprintf(dir, sizeof(dir), "%s/dynid", vwc_rundir());
	vwc_mkdir_p(dir);
	dynid_path("dynid", d->key, path, sizeof(path));
	f = fopen(path, "we");
	if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f))
		vwc_warn("%s: cannot record the dynamic ID in %s: %s", d->label,
			 path, strerror(errno));
	return 0;
}

/* wait until @addr has a live controller with at least @want_ns namespaces */
static int wait_ctrl(struct qdev *d, int want_ns, int timeout_ms)
{
	char addr[16], state[32], path[VWC_PATH_LEN];
	struct nslist l;
	int t;

	snprintf(addr, sizeof(addr), "%s", d->addr);
	for (t = 0; t <= timeout_ms; t += 100) {
		if (!qdev_load(d, addr) && d->ctrl[0]) {
			snprintf(path, sizeof(path), "/sys/class/nvme/%s/state",
				 d->ctrl);
			ctrl_namespaces(d->ctrl, &l);
			if (!read_line(path, state, sizeof(state)) &&
			    !strcmp(state, "live") && l.n >= want_ns)
				return 0;
		}
		usleep(100 * 1000);
	}
	return -ETIMEDOUT;
}

static int bind_to(const char *what, const char *addr)
{
	char path[128];

	snprintf(path, sizeof(path), NVME_DRV_DIR "/%s", what);
	return write_str(path, addr);
}

/*
 * Dynamic IDs and rebinds are serialized by their own lock, <rundir>/quirks.lock
 * (udev's PCI and controller events, a manual run, restore), not by the
 * writers' lock: a rebind writes no write_cache (the namespaces come back in
 * the kernel's write back), and while it waits for a namespace to be free,
 * udev's workers that hold it open may wait for the writers' lock in their
 * sync (before write through). Neither restore nor quirks holds the
 * writers' lock while it takes this one (pending_resync comes after).
 */
static int qlock_fd = -1;

static int qlock_take(void)
{
	char path[512];
	int t;

	snprintf(path, sizeof(path), "%s/quirks.lock", vwc_rundir());
	vwc_mkdir_p(vwc_rundir());
	qlock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (qlock_fd < 0) {
		vwc_err("cannot open %s: %s; nothing changed", path,
			strerror(errno));
		return -errno;
	}
	for (t = 0; t < 120000; t += 100) {
		if (!flock(qlock_fd, LOCK_EX | LOCK_NB))
			return 0;
		usleep(100 * 1000);
	}
	vwc_err("%s held by another process for 120 s; nothing changed", path);
	close(qlock_fd);
	qlock_fd = -1;
	return -ETIMEDOUT;
}

static void qlock_release(void)
{
	if (qlock_fd >= 0)
		close(qlock_fd);
	qlock_fd = -1;
}

/* controllers whose namespaces were re-created: the policy again, later */
static char pending_resync[16][VWC_NAME_LEN];
static int nr_pending_resync;

static void resync_later(const char *ctrl)
{
	if (nr_pending_resync < 16)
		snprintf(pending_resync[nr_pending_resync++], VWC_NAME_LEN,
			 "%s", ctrl);
}

/*
 * write cache policy again on the re-created namespaces: write back at
 * once, write through under the writers' lock (vwc_run_apply())
 */
static void resync_pending(const struct vwc_quirks_opts *qo)
{
	struct vwc_run r;
	int i, n = nr_pending_resync;

	nr_pending_resync = 0;
	if (!n || qo->dry_run)
		return;
	if (!vwc_run_init(&r, "quirks", qo->cfg)) {
		char *args[16];

		for (i = 0; i < n; i++)
			args[i] = pending_resync[i];
		r.keep_restored = qo->automatic;
		vwc_run_select(&r, args, n);
		vwc_run_probe(&r);
		vwc_run_apply(&r);
		vwc_run_free(&r);
	}
}

/*
 * Unbind and bind @d, now matched by the dynamic ID (or no longer);
 * @holds are released between the two. Return: 0 or a negative errno.
 */
static int rebind(struct qdev *d, struct holds *h, int nr_ns)
{
	char addr[16];
	int r;

	snprintf(addr, sizeof(addr), "%s", d->addr);
	r = bind_to("unbind", addr);
	holds_release(h);
	if (r) {
		vwc_err("%s: cannot unbind from nvme: %s", d->label,
			strerror(-r));
		return r;
	}
	r = bind_to("bind", addr);
	if (r) {
		vwc_err("%s: cannot bind to nvme again: %s", d->label,
			strerror(-r));
		return r;
	}
	r = wait_ctrl(d, nr_ns, 30000);
	if (r)
		vwc_err("%s: controller not live with its %d namespace(s) 30 s after the bind",
			d->label, nr_ns);
	return r;
}

/* the dynamic-ID step for one listed PCI function. Return 0 or -errno */
static int apply_dev(struct qdev *d, const struct vwc_quirks_opts *qo)
{
	char why[800], kq[512], before[512], after[512];
	struct holds h = { .n = 0 };
	unsigned long val = 0;
	struct nslist l;
	bool already;
	int r, wz;

	if (qo->automatic && held_back(d->addr)) {
		out(qo, "  %s: handed back by 'restore' in this boot; left alone until the next boot or an explicit quirks run\n",
		    d->ids);
		return 0;
	}
	if (!qo->automatic && !qo->dry_run)
		hold_set(d->addr, false);
	if (d->driver[0] && strcmp(d->driver, "nvme")) {
		out(qo, "  bound to driver %s, not nvme: left alone\n", d->driver);
		return 0;
	}
	if (!d->driver[0]) {
		/* not bound yet: the dynamic ID binds it with the quirk */
		if (access(NVME_DRV_DIR, F_OK)) {
			out(qo, "  nvme driver not registered yet: its controller's add event applies the quirk\n");
			return 0;
		}
		r = want_value(d, &val, &already, why, sizeof(why));
		if (r) {
			/* the kernel binds it on its own: decide then */
			if (wait_ctrl(d, 0, 10000)) {
				vwc_err("%s: %s; nothing changed", d->label, why);
				return r;
			}
		} else {
			snprintf(before, sizeof(before), "not bound");
			out(qo, "  not bound: dynamic ID %04x %04x %04x %04x driver_data 0x%lx%s\n",
			    d->vendor, d->device, d->subvendor, d->subdevice, val,
			    qo->dry_run ? " (dry run)" : "");
			if (qo->dry_run)
				return 0;
			r = dynid_add(d, val);
			if (r)
				return r;
			if (wait_ctrl(d, 1, 30000))
				vwc_warn("%s: bound, but no live controller with a namespace after 30 s",
					 d->label);
			goto verify;
		}
	}
	/* bound: let the probe finish and the namespaces appear */
	wait_ctrl(d, 1, 10000);
	ctrl_namespaces(d->ctrl, &l);
	r = want_value(d, &val, &already, why, sizeof(why));
	if (!r && already) {
		out(qo, "  kernel already applies disable_write_zeroes (quirks: %s): nothing to do\n",
		    ctrl_kernel_quirks(d->ctrl, kq, sizeof(kq)) ? "?" : kq);
		return 0;
	}
	wz = wz_enabled(&l);
	wz_summary(&l, before, sizeof(before));
	if (wz == 0) {
		out(qo, "  Write Zeroes already off (write_zeroes_max_bytes: %s): nothing to do\n",
		    before);
		return 0;
	}
	if (wz < 0) {
		out(qo, "  no namespace yet: nothing to check\n");
		return 0;
	}
	if (r) {
		vwc_err("%s: Write Zeroes not disabled: %s; nothing changed",
			d->label, why);
		return r;
	}
	if (ctrl_in_use(&l, why, sizeof(why), &h)) {
		holds_release(&h);
		vwc_err("%s: not rebinding to disable Write Zeroes: %s; nothing changed",
			d->label, why);
		return -EBUSY;
	}
	out(qo, "  dynamic ID %04x %04x %04x %04x driver_data 0x%lx, then unbind and bind %s%s\n",
	    d->vendor, d->device, d->subvendor, d->subdevice, val, d->addr,
	    qo->dry_run ? " (dry run)" : "");
	if (qo->dry_run) {
		holds_release(&h);
		return 0;
	}
	r = dynid_add(d, val);
	if (r) {
		holds_release(&h);
		return r;
	}
	r = rebind(d, &h, l.n);
	if (r) {
		/* the controller back without the quirk rather than not at all */
		dynid_remove_ids(d->vendor, d->device, d->subvendor,
				 d->subdevice, d->key);
		bind_to("bind", d->addr);
		return r;
	}
verify:
	ctrl_namespaces(d->ctrl, &l);
	wz_summary(&l, after, sizeof(after));
	r = ctrl_kernel_quirks(d->ctrl, kq, sizeof(kq));
	wz = wz_enabled(&l);
	if (wz > 0 || (!r && !vwc_quirk_has(kq, QUIRK_DWZ))) {
		vwc_err("%s: Write Zeroes still enabled after the bind (write_zeroes_max_bytes: %s; quirks: %s)",
			d->label, after, r ? "not shown" : kq);
		return -EIO;
	}
	if (wz < 0 && r) {
		out(qo, "  %s: bound with the dynamic ID; no namespace to verify yet\n",
		    d->label);
		return 0;
	}
	out(qo, "  %s: Write Zeroes disabled; write_zeroes_max_bytes: %s (was %s)%s%s\n",
	    d->label, after, before,
	    r ? "" : "; kernel quirks: ", r ? "" : kq);
	if (d->ctrl[0])
		resync_later(d->ctrl);
	return 0;
}

static bool hwdb_lists_dwz(struct udev *udev, const char *modalias)
{
	struct udev_hwdb *hwdb = udev_hwdb_new(udev);
	struct udev_list_entry *e;
	bool yes = false;

	if (!hwdb)
		return false;
	udev_list_entry_foreach(e,
		udev_hwdb_get_properties_list_entry(hwdb, modalias, 0))
		if (!strcmp(udev_list_entry_get_name(e), "NVME_VWC_SYNC_QUIRKS") &&
		    vwc_quirk_has(udev_list_entry_get_value(e), QUIRK_DWZ))
			yes = true;
	udev_hwdb_unref(hwdb);
	return yes;
}

int vwc_quirks_apply_pci(struct udev *udev, const char *addr,
			 const struct vwc_quirks_opts *qo)
{
	struct qdev d;
	int r;

	if (qdev_load(&d, addr)) {
		vwc_err("%s: no such PCI device", addr);
		return -ENODEV;
	}
	if (!hwdb_lists_dwz(udev, d.modalias)) {
		out(qo, "%s %s: not in the quirk database\n", addr, d.ids);
		return 0;
	}
	out(qo, "%s %s: quirk database says %s\n", d.label, d.ids, QUIRK_DWZ);
	if (!qo->dry_run && qlock_take())
		return -ETIMEDOUT;
	if (qdev_load(&d, addr)) {	/* again, under the lock */
		qlock_release();
		vwc_err("%s: no such PCI device", addr);
		return -ENODEV;
	}
	r = apply_dev(&d, qo);
	qlock_release();
	resync_pending(qo);
	return r;
}

/* restore: remove the dynamic ID and rebind; once per PCI function */
static int restore_dev(struct qdev *d, bool dry_run, bool quiet)
{
	static char done[16][16];
	static int nr_done;
	struct vwc_quirks_opts qo = { .dry_run = dry_run, .quiet = quiet };
	char why[800], before[512], after[512], kq[512];
	struct holds h = { .n = 0 };
	unsigned long val;
	struct nslist l;
	int i, r;

	static char removed[16][40];
	static int nr_removed;
	bool recorded, uses;

	for (i = 0; i < nr_done; i++)
		if (!strcmp(done[i], d->addr))
			return 0;
	if (nr_done < 16)
		snprintf(done[nr_done++], sizeof(done[0]), "%s", d->addr);
	recorded = dynid_recorded(d->key, &val);
	for (i = 0; !recorded && i < nr_removed; i++)
		if (!strcmp(removed[i], d->key))
			break;
	if (!recorded && i == nr_removed)
		return 0;	/* no dynamic ID of ours for these IDs */
	ctrl_namespaces(d->ctrl, &l);
	wz_summary(&l, before, sizeof(before));
	/* does this controller run with it (probed since it was added)? */
	uses = !ctrl_kernel_quirks(d->ctrl, kq, sizeof(kq)) ?
	       vwc_quirk_has(kq, QUIRK_DWZ) : wz_enabled(&l) == 0;
	if (!uses) {
		if (!recorded)
			return 0;
		out(&qo, "%s: remove dynamic ID %s (driver_data 0x%lx); this controller does not run with it: not rebound%s\n",
		    d->label, d->ids, val, dry_run ? " (dry run)" : "");
		if (dry_run)
			return 1;
		r = dynid_remove_ids(d->vendor, d->device, d->subvendor,
				     d->subdevice, d->key);
		if (r >= 0 && nr_removed < 16)
			snprintf(removed[nr_removed++], sizeof(removed[0]),
				 "%s", d->key);
		return r < 0 ? r : 1;
	}
	if (!dry_run && qlock_take())
		return -ETIMEDOUT;
	if (ctrl_in_use(&l, why, sizeof(why), &h)) {
		holds_release(&h);
		qlock_release();
		vwc_err("%s: dynamic ID (driver_data 0x%lx) left in place, not rebinding: %s; nothing changed",
			d->label, val, why);
		return -EBUSY;
	}
	if (recorded)
		out(&qo, "%s: remove dynamic ID %s (driver_data 0x%lx), unbind and bind%s\n",
		    d->label, d->ids, val, dry_run ? " (dry run)" : "");
	else
		out(&qo, "%s: dynamic ID %s already removed; unbind and bind%s\n",
		    d->label, d->ids, dry_run ? " (dry run)" : "");
	if (dry_run) {
		holds_release(&h);
		return 1;
	}
	if (recorded) {
		r = dynid_remove_ids(d->vendor, d->device, d->subvendor,
				     d->subdevice, d->key);
		if (r < 0) {
			holds_release(&h);
			qlock_release();
			return r;
		}
		if (nr_removed < 16)
			snprintf(removed[nr_removed++], sizeof(removed[0]),
				 "%s", d->key);
	}
	hold_set(d->addr, true);
	r = rebind(d, &h, l.n);
	qlock_release();
	if (r)
		return r;
	ctrl_namespaces(d->ctrl, &l);
	wz_summary(&l, after, sizeof(after));
	r = ctrl_kernel_quirks(d->ctrl, kq, sizeof(kq));
	out(&qo, "%s: Write Zeroes back to the kernel's choice; write_zeroes_max_bytes: %s (was %s)%s%s\n",
	    d->label, after, before, r ? "" : "; kernel quirks: ",
	    r ? "" : kq);
	return 1;
}

/* restore for the controllers of namespace @syspath */
static int restore_ns_ctrls(const char *syspath, bool dry_run, bool quiet)
{
	char path[VWC_PATH_LEN + 16], real[PATH_MAX], addr[16], ctrl[64];
	int ret = 0, r;
	struct dirent *de;
	struct qdev d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/multipath", syspath);
	dir = opendir(path);
	if (dir) {
		while ((de = readdir(dir))) {
			int s, c, n;

			if (sscanf(de->d_name, "nvme%dc%dn%d", &s, &c, &n) != 3)
				continue;
			snprintf(ctrl, sizeof(ctrl), "nvme%d", c);
			if (ctrl_pci_addr(ctrl, addr, sizeof(addr)) ||
			    qdev_load(&d, addr))
				continue;
			r = restore_dev(&d, dry_run, quiet);
			if (r < 0)
				ret = r;
		}
		closedir(dir);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/device", syspath);
	if (!realpath(path, real) || !strrchr(real, '/'))
		return 0;
	if (ctrl_pci_addr(strrchr(real, '/') + 1, addr, sizeof(addr)) ||
	    qdev_load(&d, addr))
		return 0;
	return restore_dev(&d, dry_run, quiet);
}

/* records of devices restore did not reach: rebind bound ones, drop others */
static int restore_leftover_dynids(bool dry_run, bool quiet)
{
	char path[512];
	struct dirent *de;
	int ret = 0, r;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/dynid", vwc_rundir());
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		unsigned int v, dv, sv, sd;
		struct dirent *pe;
		bool present = false;
		DIR *pci;

		if (sscanf(de->d_name, "%4x_%4x_%4x_%4x", &v, &dv, &sv, &sd) != 4)
			continue;
		pci = opendir(NVME_DRV_DIR);
		while (pci && (pe = readdir(pci))) {
			struct qdev d;

			if (!vwc_quirks_is_pci_addr(pe->d_name) ||
			    qdev_load(&d, pe->d_name) || strcmp(d.key, de->d_name))
				continue;
			present = true;
			r = restore_dev(&d, dry_run, quiet);
			if (r < 0)
				ret = r;
		}
		if (pci)
			closedir(pci);
		if (present)
			continue;
		if (!quiet)
			printf("remove dynamic ID %04x:%04x (subsystem %04x:%04x), no such device present%s\n",
			       v, dv, sv, sd, dry_run ? " (dry run)" : "");
		if (!dry_run && dynid_remove_ids(v, dv, sv, sd, de->d_name) < 0)
			ret = -EIO;
	}
	if (dir)
		closedir(dir);
	return ret;
}

static bool nvme_is_builtin(void)
{
	return access("/sys/module/nvme", F_OK) == 0 &&
	       access("/sys/module/nvme/initstate", F_OK) != 0;
}

static int persist(const char *merged, const struct vwc_quirks_opts *qo)
{
	char cur[1200], want[1200];
	FILE *f;
	int e;

	snprintf(want, sizeof(want),
		 "# Written by nvme-vwc-sync: NVMe quirks from its hwdb quirk database,\n"
		 "# merged with the admin's own. Remove with 'nvme vwc restore'.\n"
		 "options nvme quirks=%s\n", merged);
	if (!read_line(VWC_MODPROBE_FILE, cur, sizeof(cur)) &&
	    !strncmp(cur, want, strlen(want) - 1)) {
		out(qo, "  %s already up to date\n", VWC_MODPROBE_FILE);
	} else {
		out(qo, "  write %s: options nvme quirks=%s%s\n",
		    VWC_MODPROBE_FILE, merged, qo->dry_run ? " (dry run)" : "");
		if (qo->dry_run)
			return 0;
		mkdir("/etc/modprobe.d", 0755);
		f = fopen(VWC_MODPROBE_FILE ".tmp", "we");
		e = !f ? errno : fputs(want, f) < 0 ? errno : 0;
		if (f && fclose(f) && !e)
			e = errno;
		if (!e && rename(VWC_MODPROBE_FILE ".tmp", VWC_MODPROBE_FILE))
			e = errno;
		if (e) {
			/* the old file, if any, is left as it was */
			unlink(VWC_MODPROBE_FILE ".tmp");
			vwc_err("cannot write %s: %s", VWC_MODPROBE_FILE,
				strerror(e));
			return -e;
		}
		out(qo, "  takes effect at the next boot or nvme module reload; 'nvme vwc audit' then shows it\n");
	}
	/* what modprobe itself will pass: a later file or nvme.quirks= wins */
	if (modprobe_quirks_now(cur, sizeof(cur)) || strcmp(cur, merged)) {
		vwc_err("%s holds quirks=%s, but modprobe would pass nvme quirks=%s: a modprobe.d file sorting after it, or nvme.quirks= on the kernel command line, overrides it",
			VWC_MODPROBE_FILE, merged, cur);
		return -EIO;
	}
	return 0;
}

int vwc_quirks_apply(struct vwc_run *r, const struct vwc_quirks_opts *qo)
{
	char merged[1024] = "", base[1024];
	bool any = false;
	int i, ret = 0, admin_r;

	admin_r = vwc_modprobe_admin_quirks(NULL, VWC_MODPROBE_FILE, base,
					    sizeof(base));
	if (!qo->dry_run && qlock_take())
		return -ETIMEDOUT;
	for (i = 0; i < r->topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r->topo.ctrls[i];
		char addr[16];
		struct qdev d;
		int rr;

		if (!c->wanted || !vwc_quirk_has(c->hwdb_quirks, QUIRK_DWZ))
			continue;
		out(qo, "%s (pci %s): quirk database says %s\n", c->name,
		    c->pci_id, QUIRK_DWZ);
		if (c->has_kernel_quirks)
			out(qo, "  kernel quirk %s: %s\n", QUIRK_DWZ,
			    vwc_quirk_has(c->kernel_quirks, QUIRK_DWZ) ?
			    "active" : "not active");
		else
			out(qo, "  kernel quirk state: not shown by this kernel (no quirks attribute)\n");
		if (ctrl_pci_addr(c->name, addr, sizeof(addr)) ||
		    qdev_load(&d, addr)) {
			vwc_err("%s: not a PCI controller: no dynamic ID possible",
				c->name);
			ret = -ENODEV;
			continue;
		}
		rr = apply_dev(&d, qo);
		if (rr) {
			ret = rr;	/* refused or failed: nothing else */
			continue;
		}
		/* the rebind re-created the namespaces: the topology is stale */
		if (!strcmp(d.ctrl, c->name) && !qo->dry_run)
			write_zeroes_runtime(r, c, i, qo);
		if (vwc_quirks_merge(any ? merged : base, c->pci_id, QUIRK_DWZ,
				     merged, sizeof(merged)) == 0)
			any = true;
	}
	qlock_release();
	resync_pending(qo);
	if (!any)
		return ret;
	if (access("/sys/module/nvme/parameters/quirks", F_OK)) {
		out(qo, "persistent: this kernel's nvme driver has no quirks parameter; the udev rule (and the initramfs hook for the root file system) adds the dynamic ID again at every boot and hotplug\n");
		return ret;
	}
	if (nvme_is_builtin()) {
		out(qo, "persistent: NVMe is built into this kernel, where 'nvme.quirks=%s' on the kernel command line is rejected at boot; the udev rule (and the initramfs hook) adds the dynamic ID again at every boot and hotplug\n",
		    merged);
		return ret;
	}
	if (admin_r < 0) {
		vwc_err("cannot read modprobe's configuration for nvme (libkmod): %s; %s not written, so as not to drop the admin's quirks",
			strerror(-admin_r), VWC_MODPROBE_FILE);
		return -EIO;
	}
	if (persist(merged, qo))
		ret = -EIO;
	return ret;
}

int vwc_quirks_restore_runtime(const char *ns, const char *syspath,
			       bool dry_run, bool quiet)
{
	int a = wzu_restore(ns, syspath, dry_run, quiet);
	int b = restore_ns_ctrls(syspath, dry_run, quiet);

	if (a < 0 || b < 0)
		return a < 0 ? a : b;
	return a || b;
}

int vwc_quirks_remove_modprobe(bool dry_run, bool quiet)
{
	int r = restore_leftover_dynids(dry_run, quiet);

	if (r < 0)
		return r;
	if (access(VWC_MODPROBE_FILE, F_OK))
		return r;
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
	static char vendor[13];
	static bool done;
#if defined(__x86_64__) || defined(__i386__)
	unsigned int eax, ebx, ecx, edx;

	if (done)
		return vendor;
	done = true;
	/* CPUID leaf 0: the vendor string in EBX, EDX, ECX */
	if (__get_cpuid(0, &eax, &ebx, &ecx, &edx)) {
		memcpy(vendor, &ebx, 4);
		memcpy(vendor + 4, &edx, 4);
		memcpy(vendor + 8, &ecx, 4);
		vendor[12] = '\0';
	}
#else
	done = true;	/* no x86 vendor: "" */
#endif
	return vendor;
}

bool vwc_cpu_is_hygon(void)
{
	return !strcmp(vwc_cpu_vendor(), "HygonGenuine");
}
