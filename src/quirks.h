/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: quirks.h - the hwdb quirk database and host advisories
 *
 * Quirks live in one place, the udev hwdb (udev/hwdb.d/61-nvme-vwc-sync.hwdb,
 * extended by admins under /etc/udev/hwdb.d), keyed by PCI modalias and read
 * through libudev, by the tool and by udev rules alike. The property is
 * NVME_VWC_SYNC_QUIRKS, a comma-separated list of kernel quirk names
 * (e.g. "disable_write_zeroes").
 */
#ifndef VWC_QUIRKS_H
#define VWC_QUIRKS_H

#include <stdbool.h>
#include <stddef.h>

struct udev;
struct vwc_run;

/*
 * Named to sort after the admin's own files: modprobe applies "options"
 * lines in file-name order and the last quirks= wins, so ours, which
 * already merges the admin's value, must come last.
 */
#define VWC_MODPROBE_FILE "/etc/modprobe.d/zz-nvme-vwc-sync.conf"

/**
 * vwc_quirks_fill() - look up every controller of a run in the hwdb and
 *		       read the kernel's active quirks
 * @r:	run
 */
void vwc_quirks_fill(struct vwc_run *r);

/**
 * vwc_quirk_has() - is @name in comma/newline separated @list (pure)
 * @list:	"a,b" or "a\nb\n"
 * @name:	quirk name
 *
 * Return: true if present.
 */
bool vwc_quirk_has(const char *list, const char *name);

/**
 * vwc_quirks_merge() - merge a VID:DID:quirk into a module parameter (pure)
 * @current:	existing value of nvme's quirks= ("" or
 *		"VID:DID:q[,q][-VID:DID:q...]")
 * @id:		"c0a9:5419"
 * @quirk:	"disable_write_zeroes"
 * @out:	merged value
 * @len:	size of @out
 *
 * Keeps every quirk already there; adds @quirk to @id's entry or a new
 * entry. Idempotent.
 *
 * Return: 0, or -ENOSPC / -EINVAL.
 */
int vwc_quirks_merge(const char *current, const char *id, const char *quirk,
		     char *out, size_t len);

/**
 * vwc_quirks_apply() - apply what the running kernel allows
 * @r:		run (quirks filled)
 * @dry_run:	only print the steps
 *
 * Run time: write_zeroes_unmap_max_bytes to 0 where that file exists.
 * Persistent: a modprobe.d snippet where nvme is a module with a quirks
 * parameter. Each step is printed.
 *
 * Return: 0 or a negative errno.
 */
int vwc_quirks_apply(struct vwc_run *r, bool dry_run);

/**
 * vwc_quirks_restore_runtime() - undo write_zeroes_unmap_max_bytes = 0
 * @ns:		namespace name
 * @syspath:	its sysfs directory
 * @dry_run:	only print
 * @quiet:	print nothing
 *
 * Only if this tool recorded the change and the value is still 0; puts
 * back the kernel's own value, write_zeroes_unmap_max_hw_bytes.
 *
 * Return: 1 restored, 0 nothing to do or left alone, negative errno.
 */
int vwc_quirks_restore_runtime(const char *ns, const char *syspath,
			       bool dry_run, bool quiet);

/**
 * vwc_quirks_remove_modprobe() - remove the snippet this tool wrote
 * @dry_run:	only print
 * @quiet:	print nothing
 *
 * Return: 1 removed, 0 none, negative errno on failure.
 */
int vwc_quirks_remove_modprobe(bool dry_run, bool quiet);

/**
 * vwc_cpu_is_hygon() - is this a Hygon CPU; read once per process
 *
 * Return: true for vendor_id HygonGenuine.
 */
bool vwc_cpu_is_hygon(void);

/**
 * vwc_cpu_vendor() - /proc/cpuinfo vendor_id, read once per process
 *
 * Return: a static string, "" if unknown.
 */
const char *vwc_cpu_vendor(void);

#endif
