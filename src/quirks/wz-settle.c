// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dynid.h"
#include "inuse.h"
#include "log.h"
#include "quirk-db.h"
#include "sigdefer.h"
#include "wz-ignored.h"
#include "wz-settle.h"

#define out(qo, ...) do { if (!(qo)->quiet) printf(__VA_ARGS__); } while (0)

/* how the controller runs with the quirk, as the kernel shows it */
static void how_text(const struct vwc_pcidev *d, const struct vwc_wz_seen *s,
		     unsigned long val, bool ours, char *how, size_t len)
{
	char kq[512];
	int i;

	if (s->quirks_shown && !vwc_dynid_kernel_quirks(d->ctrl, kq, sizeof(kq))) {
		for (i = 0; kq[i]; i++)
			if (kq[i] == '\n')
				kq[i] = ',';
		snprintf(how, len, "kernel quirks: %s", kq);
	} else if (ours) {
		snprintf(how, len, "bound through this tool's dynamic ID, driver_data 0x%lx",
			 val);
	} else {
		snprintf(how, len, "the nvme driver's table gives it, driver_data 0x%lx",
			 val);
	}
}

/*
 * The dynamic ID off and the controller rebound without it, as every
 * rebind: nothing may use a namespace or the controller, handles kept
 * until the unbind, signals held from the first change to the end.
 * Return: 0 undone, or a negative errno (said).
 */
static int undo(struct vwc_pcidev *d, unsigned long val, bool *recreated)
{
	struct vwc_nslist l VWC_NSLIST_AUTO = { 0 };
	struct vwc_holds h = { .n = 0 };
	char why[800], what[160];
	int r;

	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	snprintf(what, sizeof(what), "the undoing of %s's dynamic ID", d->label);
	vwc_sig_hold(what);
	r = vwc_dynid_remove_ids(d->vendor, d->device, d->subvendor,
				 d->subdevice, d->key);
	if (r < 0) {
		vwc_sig_release();
		vwc_err("%s: the dynamic ID (driver_data 0x%lx) could not be removed; not rebound",
			d->label, val);
		return r;
	}
	if (vwc_dynid_override(d, why, sizeof(why)) ||
	    vwc_ctrl_in_use(d->ctrl, why, sizeof(why), &h) ||
	    vwc_disks_in_use(l.name, l.n, why, sizeof(why), &h)) {
		vwc_holds_release(&h);
		vwc_sig_release();
		vwc_err("%s: dynamic ID removed, but not rebinding: %s; it runs with driver_data 0x%lx until it is bound again",
			d->label, why, val);
		return -EBUSY;
	}
	r = vwc_dynid_rebind(d, &h, l.n);
	vwc_sig_release();
	*recreated = !r;
	return r;
}

int vwc_wz_settle(struct vwc_pcidev *d, const struct vwc_quirks_opts *qo,
		  unsigned long val, bool ours, bool *recreated)
{
	struct vwc_nslist l VWC_NSLIST_AUTO = { 0 };
	char why[1200], how[600], after[512];
	struct vwc_wz_seen s;
	enum vwc_wz_verdict v;
	int r;

	*recreated = false;
	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	vwc_wz_read("/sys", d->ctrl, l.name, l.n, &s);
	v = vwc_wz_verdict(&s, val & VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES);
	switch (v) {
	case VWC_WZ_OFF:
		vwc_wz_unmark(d->addr);
		return 0;
	case VWC_WZ_NO_NS:
		return 0;
	case VWC_WZ_NOT_TAKEN:
		vwc_err("%s: Write Zeroes still enabled after the bind (write_zeroes_max_bytes: %s); the kernel shows it runs without %s",
			d->label, s.summary, VWC_QUIRK_DWZ);
		return -EIO;
	case VWC_WZ_IGNORED:
		break;
	}
	how_text(d, &s, val, ours, how, sizeof(how));
	vwc_wz_why(&s, how, why, sizeof(why));
	/* before the undo: udev's run on the re-created controller reads it */
	if (!qo->dry_run && vwc_wz_mark(d->addr, why))
		vwc_warn("%s: cannot record that the kernel ignores the quirk",
			 d->label);
	vwc_err("%s: %s", d->label, why);
	if (!ours) {
		vwc_err("%s: Write Zeroes stays enabled; nothing of this tool's to undo",
			d->label);
		return -EIO;
	}
	out(qo, "  %s: the dynamic ID gains nothing here: remove it, then unbind and bind %s\n",
	    d->label, d->addr);
	r = undo(d, val, recreated);
	if (r)
		return r;
	vwc_dynid_ctrl_namespaces(d->ctrl, &l);
	vwc_dynid_wz_summary(&l, after, sizeof(after));
	vwc_err("%s: Write Zeroes NOT disabled: the dynamic ID is removed and the controller bound again as it was (write_zeroes_max_bytes: %s)",
		d->label, after);
	return -EIO;
}
