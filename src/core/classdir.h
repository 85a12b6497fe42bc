/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: classdir.h - the NVMe entries of a sysfs class directory
 *
 * What discovery reads first (topo.h): the entries of <sysfs>/class/nvme
 * and <sysfs>/class/block whose names are NVMe devices, each with the
 * device directory its link leads to, and a signature of those names by
 * which the sidecar tells whether anything came or went. Given the entries
 * of a last read, an entry's link is read once in its lifetime (topo.c
 * gives them for class/block only: a controller's link it reads at every
 * scan, for carry_ctrl()'s check): sysfs makes a new entry, with a new
 * inode number, for every device added, even under a name that was there
 * before; a link leads to the object it was made for, and the kernel
 * neither moves nor renames an NVMe controller or block device
 * (device_move(), device_rename()), so the path to it stays. (Since Linux
 * 4.14 kernfs numbers its nodes from a cyclic 64-bit counter on 64-bit
 * kernels: a number comes back only when it wraps. The kernels supported
 * are 6.1 and later.) One prefix, vwc_classdir_.
 */
#ifndef VWC_CLASSDIR_H
#define VWC_CLASSDIR_H

#include <stdbool.h>
#include <stdint.h>

#include "devname.h"
#include "topo.h"

/**
 * vwc_classdir_read() - the NVMe entries of one class directory
 * @dir:	<sysfs>/class/nvme or <sysfs>/class/block
 * @ctrls:	controllers (nvmeN) if true, else namespaces and paths
 *		(nvmeNnM, nvmeNcCnM); partitions, generic nodes and anything
 *		else are passed over
 * @want:	NULL, or whether an entry is looked at (its name and kind,
 *		@arg): a scoped scan's filter
 * @arg:	for @want
 * @last:	NULL, or the entries a last read of @dir gave: an entry of
 *		the same name and inode number keeps its target, with no
 *		readlink
 * @nr_last:	how many
 * @out:	the entries, in the order of their targets' paths (the order
 *		libudev's enumerator gives), each target allocated: free
 *		with vwc_classdir_free()
 * @nr:		how many
 * @heads:	how many of them name a namespace or multipath head (not a
 *		path)
 * @sig:	NULL, or the signature of @dir's entries as this readdir saw
 *		them, the number vwc_classdir_sig() gives (0 if @dir cannot
 *		be read): what was read is what it stands for
 *
 * An entry that vanishes meanwhile is not listed; one whose target is
 * longer than a sysfs path can be is said and not listed.
 *
 * Return: 0 (no such directory, as without an NVMe driver: no entries),
 * or a negative errno (@out empty).
 */
int vwc_classdir_read(const char *dir, bool ctrls,
		      bool (*want)(void *arg, const char *name,
				   enum vwc_kind kind),
		      void *arg, const struct vwc_topo_link *last, int nr_last,
		      struct vwc_topo_link **out, int *nr, int *heads,
		      uint64_t *sig);

/**
 * vwc_classdir_free() - free what vwc_classdir_read() gave
 * @e:		its entries, or NULL
 * @n:		how many
 */
void vwc_classdir_free(struct vwc_topo_link *e, int n);

/**
 * vwc_classdir_sig() - the entries of a class directory as one number
 * @dir:	<sysfs>/class/nvme or <sysfs>/class/block
 *
 * One readdir: every entry whose name starts with "nvme", its name and
 * its inode number, in no order (vwc_topo_names_sig()).
 *
 * Return: the signature, 0 if @dir cannot be read.
 */
uint64_t vwc_classdir_sig(const char *dir);

#endif
