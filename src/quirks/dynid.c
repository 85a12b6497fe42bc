// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk.h"
#include "dynid.h"
#include "fileio.h"
#include "inuse.h"
#include "log.h"
#include "sigdefer.h"
#include "unbound.h"

bool vwc_dynid_is_pci_addr(const char *s)
{
	unsigned int dom, bus, dev, fn;
	size_t dl = strcspn(s, ":");
	char end;

	/* Intel VMD puts its devices in 5-digit domains (10000:e1:00.0) */
	return (dl == 4 || dl == 5) && strlen(s) == dl + 8 &&
	       strspn(s, "0123456789abcdefABCDEF") == dl &&
	       sscanf(s, "%x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &end) == 4 &&
	       fn < 8;
}

static unsigned int read_hex(const char *dir, const char *file)
{
	char path[VWC_PATH_LEN + 32], buf[32];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (vwc_read_line(path, buf, sizeof(buf)))
		return 0;
	return (unsigned int)strtoul(buf, NULL, 16);
}


int vwc_dynid_pcidev_load(struct vwc_pcidev *d, const char *addr)
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
	vwc_read_line(path, d->modalias, sizeof(d->modalias));
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
int vwc_dynid_ctrl_pci_addr(const char *ctrl, char *addr, size_t len)
{
	char path[VWC_PATH_LEN], real[PATH_MAX], *b;

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/device", ctrl);
	if (!realpath(path, real))
		return -errno;
	b = strrchr(real, '/');
	if (!b || !vwc_dynid_is_pci_addr(b + 1))
		return -ENODEV;	/* not PCI (fabrics) */
	snprintf(addr, len, "%s", b + 1);
	return 0;
}


void vwc_dynid_nslist_free(struct vwc_nslist *l)
{
	free(l->name);
	l->name = NULL;
	l->n = 0;
}

/* block devices of a controller's namespaces (multipath heads for paths) */
void vwc_dynid_ctrl_namespaces(const char *ctrl, struct vwc_nslist *l)
{
	char path[VWC_PATH_LEN], ns[VWC_NAME_LEN];
	struct dirent *de;
	DIR *dir;
	int i, cap = 0;

	vwc_dynid_nslist_free(l);
	if (!ctrl[0])
		return;
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", ctrl);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		enum vwc_kind k = vwc_name_classify(de->d_name, ns, sizeof(ns));
		bool dup = false;

		if (k != VWC_KIND_NS && k != VWC_KIND_PATH)
			continue;
		for (i = 0; i < l->n; i++)
			dup |= !strcmp(l->name[i], ns);
		if (dup)
			continue;
		if (l->n == cap) {
			void *m = realloc(l->name, (cap ? cap * 2 : 8) *
					  sizeof(*l->name));

			if (!m)
				break;	/* fewer: the in-use check then fails */
			l->name = m;
			cap = cap ? cap * 2 : 8;
		}
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
	return vwc_read_long(path);
}

/* "nvme0n1 524288, nvme0n2 524288" */
void vwc_dynid_wz_summary(const struct vwc_nslist *l, char *out, size_t len)
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
int vwc_dynid_wz_enabled(const struct vwc_nslist *l)
{
	int i, on = 0;

	if (!l->n)
		return -ENOENT;
	for (i = 0; i < l->n; i++)
		if (ns_wz(l->name[i]) != 0)
			on = 1;
	return on;
}

int vwc_dynid_kernel_quirks(const char *ctrl, char *buf, size_t len)
{
	char path[VWC_PATH_LEN];

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/quirks", ctrl);
	return ctrl[0] ? vwc_read_line(path, buf, len) : -ENOENT;
}


/* ---- records: <rundir>/dynid/<key> holds the new_id line ---- */

static void dynid_path(const char *dir, const char *key, char *path,
		       size_t len)
{
	snprintf(path, len, "%s/%s/%s", vwc_rundir(), dir, key);
}

/* the nvme driver's sysfs directory inode: new at every registration */
static unsigned long long drv_ino(void)
{
	struct stat st;

	return stat(NVME_DRV_DIR, &st) ? 0 : (unsigned long long)st.st_ino;
}

int vwc_dynid_parse(const char *rec, unsigned long *val,
		    unsigned long long *ino)
{
	unsigned int f[6];
	const char *nl;

	*ino = 0;
	if (sscanf(rec, "%x %x %x %x %x %x %lx", &f[0], &f[1], &f[2], &f[3],
		   &f[4], &f[5], val) != 7)
		return -EINVAL;
	nl = strchr(rec, '\n');
	if (nl && sscanf(nl + 1, "driver-inode %llu", ino) != 1)
		*ino = 0;
	return 0;
}

bool vwc_dynid_recorded(const char *key, unsigned long *val)
{
	char path[512], buf[256];
	unsigned long long ino, now;

	dynid_path("dynid", key, path, sizeof(path));
	if (vwc_read_line(path, buf, sizeof(buf)))
		return false;
	if (vwc_dynid_parse(buf, val, &ino)) {
		vwc_warn("%s: not a dynamic ID record; removed", path);
		unlink(path);
		return false;
	}
	/*
	 * A dynamic ID lives as long as the driver's registration: after
	 * rmmod nvme, modprobe nvme it is gone, and the record with it.
	 */
	now = drv_ino();
	if (ino && ino != now) {
		vwc_notice("%s: the nvme driver was registered again since this dynamic ID was added (module reloaded): it no longer exists; record removed",
			   path);
		unlink(path);
		return false;
	}
	return true;
}

bool vwc_dynid_held_back(const char *key)
{
	char path[512];

	dynid_path("dynid-restored", key, path, sizeof(path));
	return !access(path, F_OK);
}

void vwc_dynid_hold_set(const char *key, bool set)
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
int vwc_dynid_remove_ids(unsigned int v, unsigned int dv, unsigned int sv,
			    unsigned int sd, const char *key)
{
	char line[96], path[512];
	int n = 0, r;

	snprintf(line, sizeof(line), "%04x %04x %04x %04x 0 0", v, dv, sv, sd);
	/* no nvme driver registered (module unloaded): its IDs went with it */
	r = access(NVME_DRV_DIR, F_OK) ? -ENODEV : 0;
	while (!r && (r = vwc_write_str(NVME_DRV_DIR "/remove_id", line)) == 0 &&
	       n < 64)
		n++;
	if (r && r != -ENODEV) {
		vwc_err("%04x:%04x: cannot remove the dynamic ID from %s/remove_id: %s",
			v, dv, NVME_DRV_DIR, strerror(-r));
		return r;
	}
	if (key) {
		dynid_path("dynid", key, path, sizeof(path));
		unlink(path);
	}
	return n;
}

void vwc_dynid_forget(const char *key)
{
	char path[512];

	dynid_path("dynid", key, path, sizeof(path));
	unlink(path);
}

#define TWINS_MAX	32
#define TWIN_OVERRIDE	"nvme-vwc-sync-keep-unbound"

/* unbound devices with @d's IDs, but not @d, with no driver_override */
static int twins_hold(const struct vwc_pcidev *d, char (*addr)[20], int max)
{
	DIR *dir = opendir(PCI_DEV_DIR);
	struct dirent *de;
	int n = 0;

	while (dir && n < max && (de = readdir(dir))) {
		struct vwc_pcidev t;
		char path[VWC_PATH_LEN + 32], ov[64];

		if (!vwc_dynid_is_pci_addr(de->d_name) ||
		    !strcmp(de->d_name, d->addr) ||
		    vwc_dynid_pcidev_load(&t, de->d_name) || t.driver[0] ||
		    strcmp(t.key, d->key))
			continue;
		snprintf(path, sizeof(path), "%s/driver_override", t.dir);
		if (vwc_read_line(path, ov, sizeof(ov)) ||
		    (ov[0] && strcmp(ov, "(null)")))
			continue;	/* the admin's own override stays */
		if (vwc_write_str(path, TWIN_OVERRIDE)) {
			vwc_warn("%s: cannot set %s: new_id may bind this unbound device",
				 t.addr, path);
			continue;
		}
		vwc_info("%s: left unbound, kept out of the dynamic ID's bind (driver_override)",
			 t.addr);
		snprintf(addr[n++], 20, "%s", t.addr);
	}
	if (dir)
		closedir(dir);
	return n;
}

static void twins_release(char (*addr)[20], int n)
{
	while (n-- > 0) {
		char path[VWC_PATH_LEN];

		snprintf(path, sizeof(path), PCI_DEV_DIR "/%s/driver_override",
			 addr[n]);
		if (vwc_write_str(path, "\n"))
			vwc_warn("%s: cannot clear %s (it stays %s)", addr[n],
				 path, TWIN_OVERRIDE);
	}
}

int vwc_dynid_add(const struct vwc_pcidev *d, unsigned long val)
{
	char line[96], path[512], dir[512], twins[TWINS_MAX][20], what[160];
	FILE *f;
	int r, nt;

	/*
	 * Written again even where a record says so: a record outlives its
	 * ID when restore is killed between removing the ID and the end of
	 * the rebind (the record goes only after it), and add is called
	 * only to rebind with the ID.
	 */
	if (vwc_dynid_remove_ids(d->vendor, d->device, d->subvendor, d->subdevice,
			     d->key) < 0)
		return -EIO;
	snprintf(line, sizeof(line), "%04x %04x %04x %04x 0 0 %lx", d->vendor,
		 d->device, d->subvendor, d->subdevice, val);
	/*
	 * new_id binds every unbound device these IDs match: the twins the
	 * admin left unbound (vfio, SPDK) are kept out by a driver_override
	 * naming no driver, for the time of the write.
	 */
	snprintf(what, sizeof(what), "the dynamic ID's write for %s", d->label);
	vwc_sig_hold(what);
	nt = twins_hold(d, twins, TWINS_MAX);
	r = vwc_write_str(NVME_DRV_DIR "/new_id", line);
	twins_release(twins, nt);
	vwc_sig_release();
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
	if (!f || fprintf(f, "%s\ndriver-inode %llu\n", line, drv_ino()) < 0 ||
	    fclose(f))
		vwc_warn("%s: cannot record the dynamic ID in %s: %s", d->label,
			 path, strerror(errno));
	return 0;
}

/*
 * every namespace listed has its queue registered: a disk's directory
 * comes before its queue's attributes, and a Write Zeroes limit read in
 * between is no answer (it read as "still enabled" on a slow host)
 */
static bool ns_ready(const struct vwc_nslist *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (ns_wz(l->name[i]) < 0)
			return false;
	return true;
}

/*
 * wait until @addr has a live controller with at least @want_ns
 * namespaces, each with its queue
 */
int vwc_dynid_wait_ctrl(struct vwc_pcidev *d, int want_ns, int timeout_ms)
{
	char addr[20], state[32], path[VWC_PATH_LEN];
	struct vwc_nslist l VWC_NSLIST_AUTO = { 0 };
	int t;

	snprintf(addr, sizeof(addr), "%s", d->addr);
	for (t = 0; t <= timeout_ms; t += 100) {
		if (!vwc_dynid_pcidev_load(d, addr) && d->ctrl[0]) {
			snprintf(path, sizeof(path), "/sys/class/nvme/%s/state",
				 d->ctrl);
			vwc_dynid_ctrl_namespaces(d->ctrl, &l);
			if (!vwc_read_line(path, state, sizeof(state)) &&
			    !strcmp(state, "live") && l.n >= want_ns &&
			    ns_ready(&l))
				return 0;
		}
		usleep(100 * 1000);
	}
	return -ETIMEDOUT;
}

int vwc_dynid_bind(const char *what, const char *addr)
{
	char path[128];

	snprintf(path, sizeof(path), NVME_DRV_DIR "/%s", what);
	return vwc_write_str(path, addr);
}

/* the driver @addr is bound to, "" when none */
static void bound_driver(const char *addr, char *drv, size_t len)
{
	char path[VWC_PATH_LEN], link[VWC_PATH_LEN], *b;
	ssize_t n;

	snprintf(path, sizeof(path), PCI_DEV_DIR "/%s/driver", addr);
	n = readlink(path, link, sizeof(link) - 1);
	drv[0] = '\0';
	if (n <= 0)
		return;
	link[n] = '\0';
	b = strrchr(link, '/');
	snprintf(drv, len, "%.63s", b ? b + 1 : link);
}

int vwc_dynid_override(const struct vwc_pcidev *d, char *why, size_t len)
{
	char path[VWC_PATH_LEN + 32], ov[64];

	snprintf(path, sizeof(path), "%s/driver_override", d->dir);
	if (vwc_read_line(path, ov, sizeof(ov)) || !ov[0] ||
	    !strcmp(ov, "(null)") || !strcmp(ov, "nvme"))
		return 0;
	snprintf(why, len, "its driver_override names %s: after an unbind the PCI core would not bind it to nvme again",
		 ov);
	return 1;
}

static int bind_retry(const char *addr, const char *label)
{
	char drv[64];
	int i, r = 0;

	for (i = 0; i < VWC_BIND_TRIES; i++) {
		bound_driver(addr, drv, sizeof(drv));
		if (!strcmp(drv, "nvme"))
			return 0;
		if (drv[0]) {
			vwc_err("%s: bound to %s, not nvme, after the unbind",
				label, drv);
			return -EBUSY;
		}
		r = vwc_dynid_bind("bind", addr);
		bound_driver(addr, drv, sizeof(drv));
		if (!strcmp(drv, "nvme"))
			return 0;
		if (!r)
			r = -ENODEV;	/* the write went through, no driver */
		vwc_warn("%s: bind to nvme failed (%s), attempt %d of %d",
			 label, strerror(-r), i + 1, VWC_BIND_TRIES);
		usleep(VWC_BIND_WAIT_MS * 1000);
	}
	/* the PCI core's own matching, in case the ID tables changed */
	vwc_write_str("/sys/bus/pci/drivers_probe", addr);
	bound_driver(addr, drv, sizeof(drv));
	if (!strcmp(drv, "nvme"))
		return 0;
	vwc_err("%s: LEFT UNBOUND: %d binds to nvme failed (%s); bind it with 'echo %s > %s/bind'",
		label, VWC_BIND_TRIES, strerror(-r), addr, NVME_DRV_DIR);
	return r ? r : -ENODEV;
}

int vwc_dynid_bind_retry(const char *addr, const char *label)
{
	int r = bind_retry(addr, label);

	/* bound: the record of its unbind has served */
	if (!r)
		vwc_unbound_clear(addr);
	return r;
}

/*
 * Dynamic IDs and rebinds are serialized by their own lock, <rundir>/quirks.lock
 * (udev's PCI and controller events, a manual run, restore), not by the
 * writers' lock: a rebind writes no write_cache (the namespaces come back in
 * the kernel's write back), and while it waits for a namespace to be free,
 * udev's workers that hold it open may wait for the writers' lock in their
 * sync (before write through). Neither restore nor quirks holds the
 * writers' lock while it takes this one (the resync comes after).
 */
static int qlock_fd = -1;

/* the lock, waiting up to @wait_ms (0: one try); then the records */
static int qlock_wait(int wait_ms)
{
	char path[512];
	int t;

	snprintf(path, sizeof(path), "%s/quirks.lock", vwc_rundir());
	vwc_mkdir_p(vwc_rundir());
	qlock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (qlock_fd < 0) {
		t = -errno;
		vwc_err("cannot open %s: %s; nothing changed", path,
			strerror(-t));
		return t;
	}
	for (t = 0; ; t += 100) {
		if (!flock(qlock_fd, LOCK_EX | LOCK_NB)) {
			/* a rebind cut short first: its unbinder is gone */
			vwc_unbound_recover();
			return 0;
		}
		if (t >= wait_ms)
			break;
		usleep(100 * 1000);
	}
	if (wait_ms)
		vwc_err("%s held by another process for %d s; nothing changed",
			path, wait_ms / 1000);
	close(qlock_fd);
	qlock_fd = -1;
	return wait_ms ? -ETIMEDOUT : -EWOULDBLOCK;
}

int vwc_dynid_qlock_take(void)
{
	return qlock_wait(VWC_QLOCK_WAIT_MS);
}

int vwc_dynid_qlock_try(void)
{
	return qlock_wait(0);
}

void vwc_dynid_qlock_release(void)
{
	if (qlock_fd >= 0)
		close(qlock_fd);
	qlock_fd = -1;
}


/*
 * Unbind and bind @d, now matched by the dynamic ID (or no longer);
 * @holds are released between the two. Signals are held from the last
 * check to the end of the wait (sigdefer.h), and a record of the unbind
 * (unbound.h) lives from before the unbind to the bind, for whatever the
 * process cannot hold off. Return: 0 or a negative errno.
 */
static int rebind(struct vwc_pcidev *d, struct vwc_holds *h, int nr_ns)
{
	char addr[20], why[600], drv[64];
	int r;

	snprintf(addr, sizeof(addr), "%s", d->addr);
	/* a plain open since the check: the last moment to say no */
	if (vwc_holds_recheck(h, why, sizeof(why))) {
		vwc_holds_release(h);
		vwc_err("%s: not unbinding: %s (since the check); the controller stays bound",
			d->label, why);
		return -EBUSY;
	}
	r = vwc_unbound_mark(d);
	if (r) {
		vwc_holds_release(h);
		return r;
	}
	r = vwc_dynid_bind("unbind", addr);
	vwc_holds_release(h);
	/* the same name back: nothing of ours keeps the old controller */
	vwc_holds_wait_sidecar(h, 2000);
	if (r) {
		bound_driver(addr, drv, sizeof(drv));
		vwc_err("%s: cannot unbind from nvme: %s%s", d->label,
			strerror(-r), drv[0] ? "" : " (but it is unbound)");
		if (drv[0]) {
			vwc_unbound_clear(addr);
			return r;
		}
	}
	r = vwc_dynid_bind_retry(addr, d->label);
	if (r)
		return r;
	r = vwc_dynid_wait_ctrl(d, nr_ns, 30000);
	if (r)
		vwc_err("%s: controller not live with its %d namespace(s) 30 s after the bind",
			d->label, nr_ns);
	return r;
}

int vwc_dynid_rebind(struct vwc_pcidev *d, struct vwc_holds *h, int nr_ns)
{
	char what[160];
	int r;

	snprintf(what, sizeof(what), "the rebind of %s", d->label);
	vwc_sig_hold(what);
	r = rebind(d, h, nr_ns);
	vwc_sig_release();
	return r;
}
