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
#include <sys/types.h>

struct udev;
struct vwc_config;
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

/* nvme-pci's NVME_QUIRK_DISABLE_WRITE_ZEROES (enum nvme_quirks, 1 << 9) */
#define VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES	(1UL << 9)

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
 * vwc_blk_mounted() - is a block device mounted or a swap area (libmount)
 * @mountinfo:	a mountinfo file, NULL for /proc/self/mountinfo
 * @swaps:	a swaps file, NULL for /proc/swaps
 * @devt:	the block device's number
 * @devnode:	"/dev/nvme0n1p1"
 * @where:	on a match, "mounted on /mnt (ext4)" or "in use as swap"
 * @len:	size of @where
 *
 * Both tables are parsed by libmount (util-linux): a mount matches on its
 * device number, or on its source for file systems that report an
 * anonymous device number (btrfs); a swap area on its node's device number.
 *
 * Return: 1 in use (@where), 0 not, or a negative errno when a table cannot
 * be read (callers treat that as in use).
 */
int vwc_blk_mounted(const char *mountinfo, const char *swaps, dev_t devt,
		    const char *devnode, char *where, size_t len);

/**
 * struct vwc_quirks_opts - how quirks runs
 * @dry_run:		only print the steps
 * @quiet:		print only errors
 * @automatic:		run by udev (or with --keep-restored): leave alone
 *			what restore handed back in this boot
 * @cfg:		configuration for the write-cache policy applied
 *			again to re-created namespaces (may be NULL)
 */
struct vwc_quirks_opts {
	bool dry_run;
	bool quiet;
	bool automatic;
	const struct vwc_config *cfg;
};

/**
 * vwc_quirks_apply() - apply what the running kernel allows
 * @r:		run (quirks filled)
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
 * Return: 0 or a negative errno (a controller refused or failed).
 */
int vwc_quirks_apply(struct vwc_run *r, const struct vwc_quirks_opts *qo);

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
 * Return: 0 or a negative errno.
 */
int vwc_quirks_apply_pci(struct udev *udev, const char *addr,
			 const struct vwc_quirks_opts *qo);

/**
 * vwc_quirks_is_pci_addr() - is @s a PCI address "dddd:bb:dd.f" (pure)
 * @s:	string
 *
 * Return: true if it is.
 */
bool vwc_quirks_is_pci_addr(const char *s);

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

/**
 * vwc_cpu_is_hygon() - is this a Hygon CPU; read once per process
 *
 * Return: true for vendor_id HygonGenuine.
 */
bool vwc_cpu_is_hygon(void);

/**
 * vwc_cpu_vendor() - the x86 CPU vendor (CPUID leaf 0, e.g. "HygonGenuine",
 *		      the vendor_id /proc/cpuinfo shows), once per process
 *
 * Return: a static string, "" if unknown.
 */
const char *vwc_cpu_vendor(void);

#endif
