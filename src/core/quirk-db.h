/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: quirk-db.h - the hwdb quirk database and the quirk decisions
 *
 * Quirks live in one place, the udev hwdb (udev/hwdb.d/61-nvme-vwc-sync.hwdb,
 * extended by admins under /etc/udev/hwdb.d), keyed by PCI modalias and read
 * through libudev, by the tool and by udev rules alike. The property is
 * NVME_VWC_SYNC_QUIRKS, a comma-separated list of kernel quirk names
 * (e.g. "disable_write_zeroes"). This file also knows nvme-pci's quirk
 * bits and decides the driver_data of a dynamic ID; it does no I/O but the
 * hwdb's.
 */
#ifndef VWC_QUIRK_DB_H
#define VWC_QUIRK_DB_H

#include <stdbool.h>
#include <stddef.h>

struct udev;
struct vwc_topo;

#define VWC_QUIRK_DWZ	"disable_write_zeroes"

/* nvme-pci's NVME_QUIRK_DISABLE_WRITE_ZEROES (enum nvme_quirks, 1 << 9) */
#define VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES	(1UL << 9)

/**
 * vwc_quirks_fill() - look up every controller of a topology in the hwdb
 *		       and read the kernel's active quirks
 * @udev:	libudev context (hwdb)
 * @t:		topology
 */
void vwc_quirks_fill(struct udev *udev, struct vwc_topo *t);

/**
 * vwc_hwdb_lists_quirk() - does the hwdb list @quirk for a modalias
 * @udev:	libudev context
 * @modalias:	"pci:v...d...sv...sd...bc01sc08i02"
 * @quirk:	quirk name
 *
 * Return: true if listed.
 */
bool vwc_hwdb_lists_quirk(struct udev *udev, const char *modalias,
			  const char *quirk);

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
 * vwc_quirk_bit() - the bit of one nvme quirk name (pure)
 * @name:	a name as /sys/class/nvme/nvmeN/quirks prints it ("bogus_nid")
 * @len:	its length
 *
 * The list is the kernel's enum nvme_quirks in bit order, named as its
 * nvme_quirk_name() names them.
 *
 * Return: the bit number, or -1 for a name this tool does not know.
 */
int vwc_quirk_bit(const char *name, size_t len);

/**
 * vwc_quirks_mask() - turn a list of quirk names into nvme-pci's mask (pure)
 * @list:	names separated by newlines, commas or blanks ("" is 0)
 * @mask:	result
 * @bad:	on -EINVAL, the first name not known
 * @len:	size of @bad
 *
 * Return: 0, or -EINVAL when a name is unknown (nothing can then be
 * computed that keeps every quirk the kernel gave the device).
 */
int vwc_quirks_mask(const char *list, unsigned long *mask, char *bad,
		    size_t len);

/**
 * vwc_quirks_dynid_value() - the driver_data of a dynamic ID that disables
 *			      Write Zeroes on one device (pure)
 * @kernel:	the controller's /sys/class/nvme/nvmeX/quirks (7.x: names,
 *		or "none"), NULL where the kernel has no such attribute
 * @table:	what the driver's table says of the device
 *		(vwc_driver_table_lists()): 1 an entry names its vendor and
 *		device, 0 only the class-wide entry (driver_data 0), negative
 *		when the index cannot tell
 * @ids:	the device's IDs, for @why
 * @src:	where @table came from, for @why
 * @val:	on 0, the driver_data
 * @already:	on 0, whether the kernel already applies the quirk
 * @why:	on error, the reason
 * @len:	size of @why
 *
 * A dynamic ID replaces what the matching table entry gives; the quirks
 * the kernel adds at probe (ACPI StorageD3Enable, DMI, nvme.quirks=, the
 * core's model list) come back by themselves at the next probe. So the
 * value is the table entry's driver_data plus disable_write_zeroes: 0x200
 * for a device only the class-wide entry takes (a T700), whatever its
 * run-time set is; for a device an entry names, the run-time set (7.x) is
 * the best known stand-in for the entry (new_id refuses a value no entry
 * has, so a wrong guess changes nothing).
 *
 * Return: 0, -EINVAL (a name this tool cannot map), -EEXIST (named by the
 * table, and its quirks are not shown), or @table's error.
 */
int vwc_quirks_dynid_value(const char *kernel, int table, const char *ids,
			   const char *src, unsigned long *val, bool *already,
			   char *why, size_t len);

#endif
