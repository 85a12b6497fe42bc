/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An admin's device argument as the kernel's controller or namespace
 * (resolve.c).
 */
#ifndef VWC_RESOLVE_H
#define VWC_RESOLVE_H

#include <stddef.h>

#include "topo.h"

struct udev;

/**
 * struct vwc_target - a device named on the command line
 * @kind:	VWC_KIND_CTRL or VWC_KIND_NS
 * @name:	kernel name of the controller or namespace
 */
struct vwc_target {
	enum vwc_kind kind;
	char name[VWC_NAME_LEN];
};

/**
 * vwc_resolve() - turn an admin's argument into a controller or namespace
 * @udev:	libudev context
 * @arg:	/dev/nvme0, /dev/nvme0n1, /dev/ng0n1, nvme0, nvme0n1, a symlink
 * @t:		result
 * @err:	on failure, the cause (without the device name)
 * @errlen:	size of @err
 *
 * Return: 0, or a negative errno with @err filled.
 */
int vwc_resolve(struct udev *udev, const char *arg, struct vwc_target *t,
		char *err, size_t errlen);

/**
 * vwc_target_nqn() - the subsystem NQN of a resolved target
 * @t:		from vwc_resolve()
 * @nqn:	on success, the NQN
 * @len:	size of @nqn
 *
 * Return: 0, or -ENOENT when sysfs does not say (the caller looks at
 * every controller then).
 */
int vwc_target_nqn(const struct vwc_target *t, char *nqn, size_t len);

#endif
