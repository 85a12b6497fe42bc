/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: inuse.h - is a block device in use
 *
 * Before a controller is unbound, which removes its block devices, every
 * namespace and partition is checked: mounts and swap (libmount), holders
 * (device-mapper, LVM, md), processes with it open, and an exclusive open
 * the kernel refuses. Free devices stay open (O_EXCL) until the unbind.
 */
#ifndef VWC_INUSE_H
#define VWC_INUSE_H

#include <stddef.h>
#include <sys/types.h>

#include "topo.h"

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
 * struct vwc_holds - open handles kept on free block devices
 * @fd:		descriptors
 * @n:		how many
 * @cap:	room in @fd
 */
struct vwc_holds {
	int *fd;
	int n;
	int cap;
};

/**
 * vwc_holds_release() - close every handle of @h
 * @h:	handles
 */
void vwc_holds_release(struct vwc_holds *h);

/**
 * vwc_disks_in_use() - is any of these namespaces, or a partition of one,
 *			in use
 * @names:	block device names ("nvme0n1")
 * @n:		how many
 * @why:	on 1, what uses which device
 * @len:	size of @why
 * @h:		on 0, handles kept on the free devices (release after the
 *		unbind)
 *
 * udev's workers open a new block device for a moment (blkid): they are
 * waited for, up to 5 s, before a device is called in use.
 *
 * Return: 1 in use (@why), 0 free.
 */
int vwc_disks_in_use(char (*names)[VWC_NAME_LEN], int n, char *why,
		     size_t len, struct vwc_holds *h);

#endif
