/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: quirks.h - disable Write Zeroes where the quirk database says so
 *
 * The steps of 'quirks' and their undoing by 'restore': a PCI dynamic ID
 * and a rebind (dynid.h) when no block device is in use (inuse.h), with
 * the driver_data the driver's table allows (kmod-table.h, quirk-db.h);
 * write_zeroes_unmap_max_bytes; a modprobe.d snippet.
 */
#ifndef VWC_QUIRKS_H
#define VWC_QUIRKS_H

#include <stdbool.h>

#include "topo.h"

struct udev;
struct vwc_config;

/*
 * Named to sort after the admin's own files: modprobe applies "options"
 * lines in file-name order and the last quirks= wins, so ours, which
 * already merges the admin's value, must come last.
 */
#define VWC_MODPROBE_FILE "/etc/modprobe.d/zz-nvme-vwc-sync.conf"

/**
 * struct vwc_quirks_opts - how quirks runs
 * @dry_run:		only print the steps
 * @quiet:		print only errors
 * @automatic:		run by udev (or with --keep-restored): leave alone
 *			what restore handed back in this boot
 * @deactivate_lvm:	(the initramfs) a drive held only by LVM logical
 *			volumes that nothing uses: deactivate them for the
 *			rebind, activate exactly those again after (lvm.h)
 * @cfg:		configuration for the write-cache policy applied
 *			again to re-created namespaces (may be NULL)
 * @resync:		called after the lock is released with the
 *			controllers whose namespaces were re-created, to
 *			apply the write-cache policy again (may be NULL);
 *			returns 0, or non-zero when that failed (the
 *			command then fails)
 */
struct vwc_quirks_opts {
	bool dry_run;
	bool quiet;
	bool automatic;
	bool deactivate_lvm;
	const struct vwc_config *cfg;
	int (*resync)(const struct vwc_quirks_opts *qo,
		      char (*ctrls)[VWC_NAME_LEN], int n);
};

/**
 * vwc_quirks_apply() - apply what the running kernel allows
 * @t:		topology (quirks filled, controllers selected)
 * @qo:		options
 *
 * For each selected controller the quirk database lists with
 * disable_write_zeroes whose Write Zeroes is still enabled: a PCI dynamic
 * ID for its exact IDs on the nvme driver, with driver_data = the quirks
 * the kernel gives it | NVME_QUIRK_DISABLE_WRITE_ZEROES, then unbind and
 * bind, when none of its namespaces is in use; verified after. Also
 * write_zeroes_unmap_max_bytes to 0 where that file exists, and a
 * modprobe.d snippet where nvme is a module with a quirks parameter.
 * Each step is printed.
 *
 * Return: 0 or a negative errno (a controller refused or failed, or the
 * write-cache policy applied again after a rebind failed).
 */
int vwc_quirks_apply(struct vwc_topo *t, const struct vwc_quirks_opts *qo);

/**
 * vwc_quirks_apply_pci() - the same for one PCI function (udev's add event)
 * @udev:	libudev context (hwdb)
 * @addr:	"0000:01:00.0"
 * @qo:		options
 *
 * When the function is not bound yet and the value is known, the dynamic
 * ID binds it with the quirk from the start; when nvme is bound, as for a
 * controller; when no driver is registered yet, nothing (the controller's
 * own add event comes later).
 *
 * Return: 0 or a negative errno (also when the write-cache policy applied
 * again after a rebind failed).
 */
int vwc_quirks_apply_pci(struct udev *udev, const char *addr,
			 const struct vwc_quirks_opts *qo);

/**
 * vwc_quirks_restore_runtime() - undo what quirks did at run time
 * @ns:		namespace name
 * @syspath:	its sysfs directory
 * @dry_run:	only print
 * @quiet:	print nothing
 *
 * write_zeroes_unmap_max_bytes: only if this tool recorded the change and
 * the value is still 0; puts back the kernel's own value,
 * write_zeroes_unmap_max_hw_bytes. A PCI dynamic ID this tool added for
 * the namespace's controller: remove_id, then unbind and bind the
 * controller when none of its namespaces is in use (once per controller),
 * so Write Zeroes comes back; automatic runs leave it alone until the next
 * boot or an explicit quirks.
 *
 * Return: 1 restored, 0 nothing to do or left alone, negative errno.
 */
int vwc_quirks_restore_runtime(const char *ns, const char *syspath,
			       bool dry_run, bool quiet);

/**
 * vwc_quirks_remove_modprobe() - remove the files and IDs this tool added
 * @dry_run:	only print
 * @quiet:	print nothing
 *
 * The modprobe.d snippet, and the PCI dynamic IDs recorded for devices no
 * longer present (those of present controllers go through
 * vwc_quirks_restore_runtime(), which rebinds).
 *
 * Return: 1 removed, 0 none, negative errno on failure.
 */
int vwc_quirks_remove_modprobe(bool dry_run, bool quiet);

#endif
