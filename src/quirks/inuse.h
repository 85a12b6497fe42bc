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
 * vwc_path_is_dev() - is @path (followed) a device node of this number
 * @path:	a path, or a /proc/PID/fd/N link
 * @type:	S_IFBLK or S_IFCHR
 * @devt:	device number
 *
 * Return: 1 if it is, 0 if not (or it cannot be read).
 */
int vwc_path_is_dev(const char *path, mode_t type, dev_t devt);

/**
 * vwc_find_opener() - a process with a device open, through any node
 * @proc:	procfs ("/proc")
 * @type:	S_IFBLK or S_IFCHR
 * @devt:	device number (compared, not the node's name: a node made with
 *		mknod, a container's own /dev or a bind mount are found too)
 * @skip:	a pid not to report (ourselves)
 * @comm:	on a find, its command
 * @clen:	size of @comm
 * @node:	on a find, the path the fd was opened through
 * @nlen:	size of @node
 *
 * Return: the pid, or 0 if none.
 */
int vwc_find_opener(const char *proc, mode_t type, dev_t devt, int skip,
		    char *comm, size_t clen, char *node, size_t nlen);

/**
 * vwc_loop_backed_by() - a loop device whose backing file is this device
 * @sysblock:	"/sys/block"
 * @type:	S_IFBLK
 * @devt:	device number of the namespace or partition
 * @loop:	on a find, "/dev/loop3"
 * @len:	size of @loop
 *
 * A loop device opens its backing device without O_EXCL: no holder, no
 * exclusive claim shows it.
 *
 * Return: 1 found, 0 none.
 */
int vwc_loop_backed_by(const char *sysblock, mode_t type, dev_t devt,
		       char *loop, size_t len);

/**
 * vwc_nvmet_exports() - an enabled nvmet namespace whose device_path is
 *			 this device
 * @nvmet:	"/sys/kernel/config/nvmet"
 * @type:	S_IFBLK
 * @devt:	device number
 * @subsys:	on a find, "<subsystem NQN> (namespace N)"
 * @len:	size of @subsys
 *
 * Return: 1 found, 0 none.
 */
int vwc_nvmet_exports(const char *nvmet, mode_t type, dev_t devt,
		      char *subsys, size_t len);

/**
 * vwc_blk_users() - users of a block device the kernel does not show as an
 *		     exclusive claim on the whole disk
 * @b:		kernel name ("nvme0n1p2", "dm-1")
 * @devt:	its device number
 * @why:	on 1, who: "nvme0n1p2 is mounted on /srv (ext4)", "... is in use
 *		as swap", "... backs /dev/loop3", "... is exported by nvmet
 *		subsystem X", "process 1234 (postgres) holds ...", a holder
 * @len:	size of @why
 *
 * Mounts and swap (libmount), holders, loop devices and nvmet exports over
 * it, processes with it open (through any node).
 *
 * Return: 1 in use (@why), 0 none found.
 */
int vwc_blk_users(const char *b, dev_t devt, char *why, size_t len);

/**
 * vwc_xen_exports() - a xen-blkback virtual block device backed by this
 *		       device
 * @backends:	"/sys/bus/xen-backend/devices"
 * @devt:	device number of the namespace or partition
 * @vbd:	on a find, the backend's name ("vbd-3-51712": guest domain 3)
 * @len:	size of @vbd
 *
 * xen-blkback opens its physical device without O_EXCL; its sysfs
 * attribute physical_device reads "major:minor" in hex.
 *
 * Return: 1 found, 0 none.
 */
int vwc_xen_exports(const char *backends, dev_t devt, char *vbd, size_t len);

/**
 * struct vwc_holds - open handles kept on free block devices
 * @fd:		descriptors
 * @n:		how many
 * @cap:	room in @fd
 * @names:	the namespaces vwc_disks_in_use() found free (the caller's
 *		array), for vwc_holds_recheck()
 * @nr_names:	how many
 * @ctrl:	the controller vwc_ctrl_in_use() found free ("" none), for
 *		vwc_holds_recheck()
 * @ctrl_devt:	its device number then (0 none)
 */
struct vwc_holds {
	int *fd;
	int n;
	int cap;
	char (*names)[VWC_NAME_LEN];
	int nr_names;
	char ctrl[VWC_NAME_LEN];
	dev_t ctrl_devt;
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

/**
 * vwc_ctrl_in_use() - is a controller's own device open by a process
 * @ctrl:	"nvme0" ("" for none: free)
 * @why:	on 1, "process 1234 (nvme) holds nvme0, the controller's device
 *		(through /dev/nvme0)"
 * @len:	size of @why
 * @h:		remembers @ctrl for vwc_holds_recheck()
 *
 * A firmware download, a format or a sanitize in progress holds
 * /dev/nvmeN (any node of its device number, compared as for the
 * namespaces); an unbind would reset the controller under it. This
 * process and the sidecar (vwc_is_sidecar(): its pid file checked against
 * /proc/PID/exe) are not users. udev's workers and this tool's own runs
 * from udev's rules are waited for, up to 5 s.
 *
 * Return: 1 in use (@why), 0 free.
 */
int vwc_ctrl_in_use(const char *ctrl, char *why, size_t len,
		    struct vwc_holds *h);

/**
 * vwc_holds_recheck() - has anything started using the devices of @h since
 *			 vwc_disks_in_use() found them free
 * @h:		handles from vwc_disks_in_use()
 * @why:	on 1, what uses which device
 * @len:	size of @why
 *
 * The exclusive handles keep mounts, swap, LVM and md out, but the kernel
 * has no way to refuse a plain open (dd, a backup tool, losetup, nvmet).
 * Called right before the unbind, this narrows that window to the unbind
 * itself: every check of vwc_ctrl_in_use() and vwc_disks_in_use() but the
 * exclusive open again.
 *
 * Return: 1 in use (@why), 0 still free.
 */
int vwc_holds_recheck(const struct vwc_holds *h, char *why, size_t len);

/**
 * vwc_holds_wait_sidecar() - after the unbind: wait for the sidecar to let
 *			      go of the removed controller's device
 * @h:		handles from vwc_ctrl_in_use()
 * @ms:		at most this long
 *
 * The sidecar closes its descriptor at the kernel's remove event, and may
 * open the node again (a probe on the namespaces' removal) until devtmpfs
 * has removed it: both are waited for. A controller still referenced
 * keeps its instance number, so that a bind before the sidecar let go
 * would bring the controller back under another name (nvme2 for nvme0).
 */
void vwc_holds_wait_sidecar(const struct vwc_holds *h, int ms);

/**
 * vwc_disks_in_use_but_lvm() - the same checks, LVM logical volumes aside
 * @names:	block device names ("nvme0n1")
 * @n:		how many
 * @why:	on 1, what uses which device
 * @len:	size of @why
 *
 * For a drive whose LVM logical volumes are to be deactivated: any other
 * user (a mounted partition beside the PV, swap, a process, a loop device,
 * another holder) is found before anything is deactivated. No exclusive
 * open is tried (LVM's holders claim the disk) and no handle kept: call
 * vwc_disks_in_use() once they are down.
 *
 * Return: 1 in use (@why), 0 free but for LVM's holders.
 */
int vwc_disks_in_use_but_lvm(char (*names)[VWC_NAME_LEN], int n, char *why,
			     size_t len);

#endif
