/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: kmod-table.h - the nvme driver's ID table and modprobe, via libkmod
 *
 * What the driver's own table says about a PCI device (depmod's alias
 * indexes) and what modprobe would pass as nvme's quirks= (modprobe.d and
 * the kernel command line), both read the way modprobe reads them.
 */
#ifndef VWC_KMOD_TABLE_H
#define VWC_KMOD_TABLE_H

#include <stddef.h>

/**
 * vwc_pci_id_key() - the lookup key for a device's own entries in a
 *		      driver's PCI table (pure)
 * @modalias:	the device's modalias ("pci:v00001B36d00000010sv...sd...bc01sc08i02")
 * @key:	on return, "pci:v00001B36d00000010sv00001AF4sd00001100bc*sc*i*"
 * @len:	size of @key
 *
 * The class fields become wildcards: libkmod matches each alias pattern of
 * the index against the key with fnmatch(), so a class-wide entry such as
 * nvme's "pci:v*d*sv*sd*bc01sc08i02*" does not match it (the key has no
 * "bc01"), while entries naming the vendor and device (any or the same
 * subsystem IDs) do. Every vendor entry of nvme's table leaves the class
 * open (PCI_DEVICE()).
 *
 * Return: 0, -EINVAL for anything but a PCI modalias, -ENOSPC.
 */
int vwc_pci_id_key(const char *modalias, char *key, size_t len);

/**
 * vwc_driver_table_lists() - is a PCI device in a driver's own ID table
 * @moddir:	a module directory (NVME_VWC_SYNC_MODULES_DIR), or NULL for
 *		the running kernel's (/lib/modules/<release>, as modprobe)
 * @driver:	module name, "nvme"
 * @modalias:	the device's modalias
 * @src:	on return, the key and the directory that answered
 * @len:	size of @src
 *
 * Asks libkmod (kmod_module_new_from_lookup(), the lookup modprobe makes),
 * which reads depmod's indexes: modules.alias.bin for a module,
 * modules.builtin.alias.bin for a built-in driver. Debian's 6.1 and 6.12
 * cloud kernels list no device-table aliases of the built-in nvme there.
 *
 * Return: 1 listed by vendor and device (vwc_pci_id_key()), 0 the driver
 * takes the device only through a wider entry, -ENOENT when the index does
 * not resolve the device to @driver at all (the table cannot be known),
 * -EINVAL for a modalias that is not PCI, -ENOMEM.
 */
int vwc_driver_table_lists(const char *moddir, const char *driver,
			   const char *modalias, char *src, size_t len);

/**
 * vwc_options_quirks() - the last quirks= of one module options string
 *			  (pure)
 * @opts:	"quirks=8086:5845:bogus_nid io_queue_depth=4", as libkmod
 *		gives an "options" entry; double quotes group blanks
 * @out:	on return, the value (quotes removed), if found
 * @len:	size of @out
 *
 * Return: 1 found, 0 none (@out untouched), -ENOSPC.
 */
int vwc_options_quirks(const char *opts, char *out, size_t len);

/**
 * vwc_modprobe_admin_quirks() - the admin's nvme quirks= without ours
 * @paths:	modprobe.d directories (or files) in priority order, NULL for
 *		modprobe's own (libkmod's defaults: /etc, /run,
 *		/usr/local/lib and /lib modprobe.d; /usr/lib through /lib)
 * @ours:	our file (VWC_MODPROBE_FILE)
 * @out:	on return, the value modprobe would pass without @ours, or ""
 * @len:	size of @out
 *
 * All of modprobe's "options nvme" entries, from libkmod, in modprobe's
 * order (files by name across directories, then nvme.* of the kernel
 * command line), minus one exact copy of each entry of @ours (read alone
 * by libkmod); the last quirks= of the rest wins, as in the kernel.
 *
 * Return: 0 (@out may be ""), or a negative errno (libkmod failed).
 */
int vwc_modprobe_admin_quirks(const char *const *paths, const char *ours,
			      char *out, size_t len);

/**
 * vwc_modprobe_quirks_now() - the quirks= modprobe passes to nvme now
 * @out:	on return, the value (ours included), or ""
 * @len:	size of @out
 *
 * Return: 0, or a negative errno (libkmod failed).
 */
int vwc_modprobe_quirks_now(char *out, size_t len);

/**
 * vwc_modules_dir() - the module directory for table lookups
 *
 * Return: NVME_VWC_SYNC_MODULES_DIR (tests), or NULL: libkmod's, the
 * running kernel's.
 */
const char *vwc_modules_dir(void);

#endif
