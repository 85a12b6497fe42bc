/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: lvm.h - idle LVM logical volumes on a drive, down for a rebind
 *
 * In the initramfs, Debian's lvm2 activates a volume group from its udev
 * rule (69-lvm.rules, during init-top's coldplug) before any init-premount
 * script runs: the PV of a root on LVM is then held by active logical
 * volumes that nothing uses yet. For 'quirks --deactivate-lvm' (the
 * initramfs scripts only) such a drive is not in use when every holder of
 * its namespaces and partitions is an LVM logical volume, and none of
 * those is mounted, swap, open, or backs a loop device or an nvmet
 * export. They are deactivated ('lvm lvchange -an', which the kernel
 * itself refuses for an open device), the controller is rebound, and
 * exactly those are activated again.
 */
#ifndef VWC_LVM_H
#define VWC_LVM_H

#include <stdbool.h>
#include <stddef.h>

#include "topo.h"

#define VWC_LVM_MAX	32

/**
 * struct vwc_lvm_lv - one active logical volume with no LVM holder above it
 * @vg:		volume group name
 * @lv:		logical volume name
 * @dm:		kernel name of its device ("dm-3")
 * @down:	deactivated by us (to activate again)
 */
struct vwc_lvm_lv {
	char vg[128];
	char lv[128];
	char dm[VWC_NAME_LEN];
	bool down;
};

/**
 * struct vwc_lvm_set - the logical volumes on a controller's namespaces
 * @lv:	in the order found (deactivated in that order, activated back in
 *	the reverse)
 * @n:	how many
 */
struct vwc_lvm_set {
	struct vwc_lvm_lv lv[VWC_LVM_MAX];
	int n;
};

/**
 * vwc_dm_lvm_name() - volume group and logical volume of an LVM dm name
 * @dmname:	device-mapper name, "vwc--bookworm--vg-root" ('-' inside a
 *		name is doubled, one '-' separates)
 * @vg:		on 0, "vwc-bookworm-vg"
 * @vl:		size of @vg
 * @lv:		on 0, "root"
 * @ll:		size of @lv
 *
 * Return: 0 for a logical volume's own device, 1 for a layer of one
 * ("vg-pool-tpool", "vg-lv-real": no name to activate), -EINVAL when
 * @dmname is not in LVM's form or a part does not fit.
 */
int vwc_dm_lvm_name(const char *dmname, char *vg, size_t vl, char *lv,
		    size_t ll);

/**
 * vwc_lvm_collect() - the top logical volumes holding these namespaces
 * @sysblock:	"/sys/class/block" (a fake tree in tests)
 * @names:	namespace names ("nvme0n1"); their partitions are walked too
 * @n:		how many
 * @s:		found ones are added (once each) to it
 * @why:	on -EBUSY, the holder that is not an LVM logical volume
 * @len:	size of @why
 *
 * Follows holders/ from each namespace and partition up through stacked
 * device-mapper devices (thin pools, RAID images, snapshot origins) to the
 * devices nothing holds: the ones 'lvchange' names.
 *
 * Return: how many @s holds now, or -EBUSY (@why) when a holder is not
 * LVM (dm-crypt, md, another dm target), a top one has no activatable
 * name, or there are more than %VWC_LVM_MAX.
 */
int vwc_lvm_collect(const char *sysblock, char (*names)[VWC_NAME_LEN], int n,
		    struct vwc_lvm_set *s, char *why, size_t len);

/**
 * vwc_lvm_deactivate() - deactivate the idle logical volumes on namespaces
 * @names:	namespace names
 * @n:		how many
 * @s:		empty on entry; on return, what was deactivated (to hand to
 *		vwc_lvm_activate(), also after a failure)
 * @why:	on -EBUSY, what uses which logical volume, or what failed
 * @len:	size of @why
 *
 * Each logical volume is checked first (mounted, swap, open by anyone, a
 * loop device or nvmet export over it); the first one in use refuses the
 * whole drive before anything changes. A failed 'lvchange -an' (the
 * kernel refuses an open device) activates back what was deactivated.
 *
 * Return: 0 (nothing held the namespaces any more), or -EBUSY (@why,
 * everything active again).
 */
int vwc_lvm_deactivate(char (*names)[VWC_NAME_LEN], int n,
		       struct vwc_lvm_set *s, char *why, size_t len);

/**
 * vwc_lvm_activate() - activate again what vwc_lvm_deactivate() took down
 * @s:	the set; each one activated is marked up
 *
 * Waits for udev to have processed the re-created namespaces first (the
 * PV must be known again). Each failure is logged with the name.
 *
 * Return: 0, or -EIO when one could not be activated.
 */
int vwc_lvm_activate(struct vwc_lvm_set *s);

#endif
