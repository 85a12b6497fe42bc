// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libudev.h>

#include "blk.h"
#include "dynid.h"
#include "fileio.h"
#include "inuse.h"
#include "kmod-table.h"
#include "log.h"
#include "lvm.h"
#include "quirk-db.h"
#include "quirks.h"
#include "sigdefer.h"
#include "topo.h"
#include "wz-ignored.h"
#include "wz-settle.h"
#include "wz-unmap.h"

/* progress for the admin; --quiet (udev) keeps only errors, on stderr */
#define out(qo, ...) do { if (!(qo)->quiet) printf(__VA_ARGS__); } while (0)

/*
 * The driver_data for the device's dynamic ID (vwc_quirks_dynid_value()):
 * the driver's table entry, read through libkmod, plus
 * disable_write_zeroes. *already when the kernel applies it.
 * Return: 0, or a negative errno with @why filled (nothing can be applied).
 */
static int want_value(const struct vwc_pcidev *d, unsigned long *val,
		      bool *already, char *why, size_t len)
{
	char kq[512], src[256];
	bool have_kq;
	int table;

	have_kq = !vwc_dynid_kernel_quirks(d->ctrl, kq, sizeof(kq));
	table = vwc_driver_table_lists(vwc_modules_dir(), "nvme", d->modalias,
				       src, sizeof(src));
	return vwc_quirks_dynid_value(have_kq ? kq : NULL, table, d->ids, src,
				      val, already, why, len);
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

/* write cache policy again on the re-created namespaces (the caller's) */
static int resync_pending(const struct vwc_quirks_opts *qo)
{
	int n = nr_pending_resync;

	nr_pending_resync = 0;
	if (!n || qo->dry_run || !qo->resync)
		return 0;
	return qo->resync(qo, pending_resync, n);
}

/*
 * --deactivate-lvm (the initramfs): namespaces held only by LVM logical
 * volumes that nothing uses are freed by deactivating those (@lvs, to
 * activate again after the rebind). 0 when they are free now (@h holds
 * them); 1 in use (@why), every logical volume as it was.
 */
static int free_from_lvm(struct vwc_nslist *l,
			 const struct vwc_quirks_opts *qo,
			 struct vwc_lvm_set *lvs, char *why, size_t len,
			 struct vwc_holds *h)
{
	static struct vwc_lvm_set probe;
	char other[800];

	probe.n = 0;
	if (!qo->deactivate_lvm || qo->dry_run ||
	    vwc_lvm_collect("/sys/class/block", l->name, l->n, &probe, other,
			    sizeof(other)) <= 0)
		return 1;	/* not LVM alone: the first reason stands */
	/* anything else on the drive, before a logical volume goes down */
	if (vwc_disks_in_use_but_lvm(l->name, l->n, why, len))
		return 1;
	if (vwc_lvm_deactivate(l->name, l->n, lvs, why, len))
		return 1;
	if (!vwc_disks_in_use(l->name, l->n, why, len, h))
		return 0;
	vwc_holds_release(h);
	vwc_lvm_activate(lvs);
	return 1;
}

/*
 * The dynamic ID, the rebind, Write Zeroes read back (undone where the
 * kernel ignores the quirk: wz-settle.h), and what was deactivated for it
 * (@lvs) activated again after all that, also when it failed (@lvm_r:
 * that activation's result). Return: 0 or -errno, the rebind's or the
 * read back's.
 */
static int rebind_with_dynid(struct vwc_pcidev *d, struct vwc_holds *h,
			     int nr_ns, struct vwc_lvm_set *lvs,
			     const struct vwc_quirks_opts *qo,
			     unsigned long val, int *lvm_r)
{
	bool recreated = false;
	int r = vwc_dynid_add(d, val);

	if (r) {
		vwc_holds_release(h);
		*lvm_r = vwc_lvm_activate(lvs);
		return r;
	}
	r = vwc_dynid_rebind(d, h, nr_ns);
	if (r) {
		/* the controller back without the quirk rather than not at all */
		vwc_dynid_remove_ids(d->vendor, d->device, d->subvendor,
				     d->subdevice, d->key);
		if (!vwc_dynid_bind_retry(d->addr, d->label))
			vwc_err("%s: bound to nvme; the dynamic ID is removed (Write Zeroes stays enabled at its next probe)",
				d->label);
	} else {
		/* before the logical volumes come back: an undo needs the
		 * drive as free as the rebind had it */
		r = vwc_wz_settle(d, qo, val, true, &recreated);
		if (r && recreated && d->ctrl[0])
			resync_later(d->ctrl);
	}
	/* what was deactivated for the rebind, on the re-created namespaces */
	*lvm_r = vwc_lvm_activate(lvs);
	return r;
}

/*
 * The dynamic-ID step for one listed PCI function. Return 0, 1 left alone
 * with nothing else to do for it (the kernel ignores the quirk there, as
 * found in this boot), or -errno.
 */
static int apply_dev(struct vwc_pcidev *d, const struct vwc_quirks_opts *qo)
{
	char why[1200], kq[512], before[512], after[512], what[160];
	struct vwc_holds h = { .n = 0 };
	static struct vwc_lvm_set lvs;
	unsigned long val = 0;
	struct vwc_nslist l VWC_NSLIST_AUTO = { 0 };
	bool already, recreated = false;
	int r, wz, busy, lvm_r = 0;

	lvs.n = 0;
	if (qo->automatic && vwc_wz_marked(d->addr, why, sizeof(why))) {
		/* found in this boot, said then: no rebind at every event */
		vwc_notice("%s: left alone (found by quirks in this boot; an explicit quirks run tries again): %s",
			   d->label, why);
		return 1;
	}

	if (qo->automatic && vwc_dynid_held_back(d->addr)) {
		out(qo, "  %s: handed back by 'restore' in this boot; left alone until the next boot or an explicit quirks run\n",
		    d->ids);
		return 0;
	}
	if (!qo->automatic && !qo->dry_run)
		vwc_dynid_hold_set(d->addr, false);
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
		/*
		 * udev (a hotplug, or 'udevadm trigger --action=add' replaying
		 * a device the admin left unbound): never bind it from here.
		 * When the kernel binds it, the controller's add event applies
		 * the quirk.
		 */
		if (qo->automatic) {
			out(qo, "  not bound to a driver: left as it is (if the kernel binds it to nvme, the controller's add event applies the quirk)\n");
			return 0;
		}
		r = want_value(d, &val, &already, why, sizeof(why));
		if (r) {
			/* the kernel binds it on its own: decide then */
			if (vwc_dynid_wait_ctrl(d, 0, 10000)) {
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
			r = vwc_dynid_add(d, val);
			if (r)
				return r;
			if (vwc_dynid_wait_ctrl(d, 1, 30000))
				vwc_warn("%s: bound, but no live controller with a namespace after 30 s",
					 d->label);
			r = vwc_wz_settle(d, qo, val, true, &recreated);
			if (r && recreated && d->ctrl[0])
				resync_later(d->ctrl);
			if (r)
				return r;
			goto verify;
		}
	}
	/* bound: let the probe finish and the namespaces appear */
	vwc_dynid_wait_ctrl(d, 1, 10000);
	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	r = want_value(d, &val, &already, why, sizeof(why));
	if (!r && already && vwc_dynid_wz_enabled(&l) > 0) {
		/* the quirk in force and Write Zeroes on: the kernel ignores
		 * it; a dynamic ID of an earlier run is undone */
		unsigned long rv = val;
		bool ours = vwc_dynid_recorded(d->key, &rv);

		r = vwc_wz_settle(d, qo, rv, ours, &recreated);
		if (r && recreated && d->ctrl[0])
			resync_later(d->ctrl);
		if (r)
			return r;
	}
	if (!r && already) {
		out(qo, "  kernel already applies disable_write_zeroes (quirks: %s): nothing to do\n",
		    vwc_dynid_kernel_quirks(d->ctrl, kq, sizeof(kq)) ?
		    "?" : kq);
		return 0;
	}
	wz = vwc_dynid_wz_enabled(&l);
	vwc_dynid_wz_summary(&l, before, sizeof(before));
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
	busy = vwc_dynid_override(d, why, sizeof(why)) ||
	       vwc_ctrl_in_use(d->ctrl, why, sizeof(why), &h);
	/* from the first change (an LVM deactivation) to the last: no signal
	 * may leave it half done (sigdefer.h) */
	snprintf(what, sizeof(what), "the rebind of %s", d->label);
	vwc_sig_hold(what);
	if (!busy && vwc_disks_in_use(l.name, l.n, why, sizeof(why), &h)) {
		vwc_holds_release(&h);
		busy = free_from_lvm(&l, qo, &lvs, why, sizeof(why), &h);
	}
	if (busy) {
		vwc_sig_release();
		vwc_holds_release(&h);
		vwc_err("%s: not rebinding to disable Write Zeroes: %s; nothing changed",
			d->label, why);
		return -EBUSY;
	}
	out(qo, "  dynamic ID %04x %04x %04x %04x driver_data 0x%lx, then unbind and bind %s%s\n",
	    d->vendor, d->device, d->subvendor, d->subdevice, val, d->addr,
	    qo->dry_run ? " (dry run)" : "");
	if (qo->dry_run) {
		vwc_sig_release();
		vwc_holds_release(&h);
		return 0;
	}
	r = rebind_with_dynid(d, &h, l.n, &lvs, qo, val, &lvm_r);
	vwc_sig_release();
	if (r)
		return r;
verify:
	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	vwc_dynid_wz_summary(&l, after, sizeof(after));
	r = vwc_dynid_kernel_quirks(d->ctrl, kq, sizeof(kq));
	wz = vwc_dynid_wz_enabled(&l);
	if (wz > 0 || (!r && !vwc_quirk_has(kq, VWC_QUIRK_DWZ))) {
		vwc_err("%s: Write Zeroes still enabled after the bind (write_zeroes_max_bytes: %s; quirks: %s)",
			d->label, after, r ? "not shown" : kq);
		return -EIO;
	}
	if (wz < 0 && r) {
		out(qo, "  %s: bound with the dynamic ID; no namespace to verify yet\n",
		    d->label);
		return lvm_r;
	}
	out(qo, "  %s: Write Zeroes disabled; write_zeroes_max_bytes: %s (was %s)%s%s\n",
	    d->label, after, before,
	    r ? "" : "; kernel quirks: ", r ? "" : kq);
	if (d->ctrl[0])
		resync_later(d->ctrl);
	return lvm_r;
}

int vwc_quirks_apply_pci(struct udev *udev, const char *addr,
			 const struct vwc_quirks_opts *qo)
{
	struct vwc_pcidev d;
	int r;

	if (vwc_dynid_pcidev_load(&d, addr)) {
		vwc_err("%s: no such PCI device", addr);
		return -ENODEV;
	}
	if (!vwc_hwdb_lists_quirk(udev, d.modalias, VWC_QUIRK_DWZ)) {
		out(qo, "%s %s: not in the quirk database\n", addr, d.ids);
		return 0;
	}
	out(qo, "%s %s: quirk database says %s\n", d.label, d.ids, VWC_QUIRK_DWZ);
	if (!qo->dry_run && vwc_dynid_qlock_take())
		return -ETIMEDOUT;
	/* again, under the lock */
	if (vwc_dynid_pcidev_load(&d, addr)) {
		vwc_dynid_qlock_release();
		vwc_err("%s: no such PCI device", addr);
		return -ENODEV;
	}
	r = apply_dev(&d, qo);
	if (r > 0)
		r = 0;
	vwc_dynid_qlock_release();
	if (resync_pending(qo) && !r)
		r = -EIO;
	return r;
}

/*
 * What restore did in this run with each dynamic ID: devices with the same
 * IDs share one (its record is removed with the first of them).
 */
struct restored_id {
	char key[40];
	unsigned long val;
	char by[20];		/* the PCI function it was removed for */
	char kept[20];		/* one left bound with it (in use), if any */
};

static struct restored_id *restored_id(const char *key)
{
	static struct restored_id ids[16];
	static int nr_ids;
	int i;

	for (i = 0; i < nr_ids; i++)
		if (!strcmp(ids[i].key, key))
			return &ids[i];
	if (nr_ids == 16)
		return NULL;
	snprintf(ids[nr_ids].key, sizeof(ids[0].key), "%s", key);
	return &ids[nr_ids++];
}

/* "; 0000:01:00.0, in use, was left bound: ..." when one was, else "" */
static const char *kept_note(const struct restored_id *id, char *buf,
			     size_t len)
{
	if (!id || !id->kept[0])
		return "";
	snprintf(buf, len, "; %s, in use, was left bound: it runs with driver_data 0x%lx until it is bound again",
		 id->kept, id->val);
	return buf;
}

/* restore: remove the dynamic ID and rebind; once per PCI function */
static int restore_dev(struct vwc_pcidev *d, bool dry_run, bool quiet)
{
	static char done[64][20];
	static int nr_done;
	struct vwc_quirks_opts qo = { .dry_run = dry_run, .quiet = quiet };
	char why[800], before[512], after[512], kq[512], note[160], what[160];
	struct vwc_holds h = { .n = 0 };
	unsigned long val = 0;
	struct vwc_nslist l VWC_NSLIST_AUTO = { 0 };
	struct restored_id *id;
	int i, r;
	bool recorded, uses;

	for (i = 0; i < nr_done; i++)
		if (!strcmp(done[i], d->addr))
			return 0;
	if (nr_done < 64)
		snprintf(done[nr_done++], sizeof(done[0]), "%s", d->addr);
	recorded = vwc_dynid_recorded(d->key, &val);
	id = restored_id(d->key);
	if (id && id->by[0]) {
		/* removed (in a dry run: would be) for another device */
		recorded = false;
		val = id->val;
	} else if (!recorded) {
		return 0;	/* no dynamic ID of ours for these IDs */
	}
	if (id && recorded)
		id->val = val;
	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	vwc_dynid_wz_summary(&l, before, sizeof(before));
	/* does this controller run with it (probed since it was added)? */
	uses = !vwc_dynid_kernel_quirks(d->ctrl, kq, sizeof(kq)) ?
	       vwc_quirk_has(kq, VWC_QUIRK_DWZ) : vwc_dynid_wz_enabled(&l) == 0;
	if (!uses) {
		if (!recorded)
			return 0;
		out(&qo, "%s: remove dynamic ID %s (driver_data 0x%lx); this controller does not run with it: not rebound%s%s\n",
		    d->label, d->ids, val, kept_note(id, note, sizeof(note)),
		    dry_run ? " (dry run)" : "");
		r = dry_run ? 0 :
		    vwc_dynid_remove_ids(d->vendor, d->device, d->subvendor,
					 d->subdevice, d->key);
		if (r >= 0 && id)
			snprintf(id->by, sizeof(id->by), "%s", d->addr);
		return r < 0 ? r : 1;
	}
	if (!dry_run && vwc_dynid_qlock_take())
		return -ETIMEDOUT;
	if (vwc_dynid_override(d, why, sizeof(why)) ||
	    vwc_ctrl_in_use(d->ctrl, why, sizeof(why), &h) ||
	    vwc_disks_in_use(l.name, l.n, why, sizeof(why), &h)) {
		vwc_holds_release(&h);
		vwc_dynid_qlock_release();
		if (recorded) {
			vwc_err("%s: dynamic ID (driver_data 0x%lx) left in place, not rebinding: %s; nothing changed",
				d->label, val, why);
			if (id)
				snprintf(id->kept, sizeof(id->kept), "%s",
					 d->addr);
		} else {
			vwc_err("%s: not rebinding: %s; the dynamic ID %s (driver_data 0x%lx) is %sremoved already (for %s): this controller runs with it until it is bound again",
				d->label, why, d->ids, val,
				dry_run ? "to be " : "", id->by);
		}
		return -EBUSY;
	}
	if (recorded)
		out(&qo, "%s: remove dynamic ID %s (driver_data 0x%lx), unbind and bind%s%s\n",
		    d->label, d->ids, val, kept_note(id, note, sizeof(note)),
		    dry_run ? " (dry run)" : "");
	else
		out(&qo, "%s: dynamic ID %s (driver_data 0x%lx) %sremoved already (for %s); unbind and bind%s\n",
		    d->label, d->ids, val, dry_run ? "to be " : "", id->by,
		    dry_run ? " (dry run)" : "");
	if (dry_run) {
		vwc_holds_release(&h);
		if (recorded && id)
			snprintf(id->by, sizeof(id->by), "%s", d->addr);
		return 1;
	}
	/* from the ID's removal to the record's: a signal held (sigdefer.h) */
	snprintf(what, sizeof(what), "the restore of %s", d->label);
	vwc_sig_hold(what);
	if (recorded) {
		/* the record goes once the controller is bound without it */
		r = vwc_dynid_remove_ids(d->vendor, d->device, d->subvendor,
				     d->subdevice, NULL);
		if (r < 0) {
			vwc_sig_release();
			vwc_holds_release(&h);
			vwc_dynid_qlock_release();
			return r;
		}
		if (id)
			snprintf(id->by, sizeof(id->by), "%s", d->addr);
	}
	vwc_dynid_hold_set(d->addr, true);
	r = vwc_dynid_rebind(d, &h, l.n);
	if (!r && recorded)
		vwc_dynid_forget(d->key);
	vwc_sig_release();
	vwc_dynid_qlock_release();
	if (r)
		return r;
	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	vwc_dynid_wz_summary(&l, after, sizeof(after));
	r = vwc_dynid_kernel_quirks(d->ctrl, kq, sizeof(kq));
	out(&qo, "%s: Write Zeroes back to the kernel's choice; write_zeroes_max_bytes: %s (was %s)%s%s\n",
	    d->label, after, before, r ? "" : "; kernel quirks: ",
	    r ? "" : kq);
	return 1;
}

/* restore for the controllers of namespace @syspath */
static int restore_ns_ctrls(const char *syspath, bool dry_run, bool quiet)
{
	char path[VWC_PATH_LEN + 16], real[PATH_MAX], addr[20], ctrl[64];
	int ret = 0, r;
	struct dirent *de;
	struct vwc_pcidev d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/multipath", syspath);
	dir = opendir(path);
	if (dir) {
		while ((de = readdir(dir))) {
			int s, c, n;

			if (sscanf(de->d_name, "nvme%dc%dn%d", &s, &c, &n) != 3)
				continue;
			snprintf(ctrl, sizeof(ctrl), "nvme%d", c);
			if (vwc_dynid_ctrl_pci_addr(ctrl, addr, sizeof(addr)) ||
			    vwc_dynid_pcidev_load(&d, addr))
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
	if (vwc_dynid_ctrl_pci_addr(strrchr(real, '/') + 1, addr,
				    sizeof(addr)) ||
	    vwc_dynid_pcidev_load(&d, addr))
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
			struct vwc_pcidev d;

			if (!vwc_dynid_is_pci_addr(pe->d_name) ||
			    vwc_dynid_pcidev_load(&d, pe->d_name) ||
			    strcmp(d.key, de->d_name))
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
		if (!dry_run && vwc_dynid_remove_ids(v, dv, sv, sd, de->d_name) < 0)
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
	if (!vwc_read_line(VWC_MODPROBE_FILE, cur, sizeof(cur)) &&
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
	if (vwc_modprobe_quirks_now(cur, sizeof(cur)) || strcmp(cur, merged)) {
		vwc_err("%s holds quirks=%s, but modprobe would pass nvme quirks=%s: a modprobe.d file sorting after it, or nvme.quirks= on the kernel command line, overrides it",
			VWC_MODPROBE_FILE, merged, cur);
		return -EIO;
	}
	return 0;
}

int vwc_quirks_apply(struct vwc_topo *t, const struct vwc_quirks_opts *qo)
{
	char merged[1024] = "", base[1024];
	bool any = false;
	int i, ret = 0, admin_r;

	admin_r = vwc_modprobe_admin_quirks(NULL, VWC_MODPROBE_FILE, base,
					    sizeof(base));
	if (!qo->dry_run && vwc_dynid_qlock_take())
		return -ETIMEDOUT;
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		char addr[20];
		struct vwc_pcidev d;
		int rr;

		if (!c->wanted || !vwc_quirk_has(c->hwdb_quirks, VWC_QUIRK_DWZ))
			continue;
		out(qo, "%s (pci %s): quirk database says %s\n", c->name,
		    c->pci_id, VWC_QUIRK_DWZ);
		if (c->has_kernel_quirks)
			out(qo, "  kernel quirk %s: %s\n", VWC_QUIRK_DWZ,
			    vwc_quirk_has(c->kernel_quirks, VWC_QUIRK_DWZ) ?
			    "active" : "not active");
		else
			out(qo, "  kernel quirk state: not shown by this kernel (no quirks attribute)\n");
		if (vwc_dynid_ctrl_pci_addr(c->name, addr, sizeof(addr)) ||
		    vwc_dynid_pcidev_load(&d, addr)) {
			vwc_err("%s: not a PCI controller: no dynamic ID possible",
				c->name);
			ret = -ENODEV;
			continue;
		}
		rr = apply_dev(&d, qo);
		if (rr > 0)
			continue;	/* left alone: nothing else either */
		if (rr) {
			ret = rr;	/* refused or failed: nothing else */
			continue;
		}
		/* the rebind re-created the namespaces: the topology is stale */
		if (!strcmp(d.ctrl, c->name) && !qo->dry_run)
			vwc_wzu_runtime(t, i, qo);
		if (vwc_quirks_merge(any ? merged : base, c->pci_id, VWC_QUIRK_DWZ,
				     merged, sizeof(merged)) == 0)
			any = true;
	}
	vwc_dynid_qlock_release();
	if (resync_pending(qo) && !ret)
		ret = -EIO;
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
	int a = vwc_wzu_restore(ns, syspath, dry_run, quiet);
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

