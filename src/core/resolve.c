// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An admin's device argument (a path, a device node, a kernel name) as the
 * controller or namespace the kernel knows it by (libudev), and the NVM
 * subsystem it belongs to (sysfs).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <libudev.h>

#include "fileio.h"
#include "resolve.h"

static int resolve_name(struct udev *udev, const char *name,
			struct vwc_target *t, char *err, size_t errlen)
{
	char ns_name[VWC_NAME_LEN];
	struct udev_device *dev;
	const char *subsystem;

	switch (vwc_name_classify(name, ns_name, sizeof(ns_name))) {
	case VWC_KIND_CTRL:
		t->kind = VWC_KIND_CTRL;
		subsystem = "nvme";
		break;
	case VWC_KIND_NS:
	case VWC_KIND_GENERIC:
		t->kind = VWC_KIND_NS;
		subsystem = "block";
		break;
	case VWC_KIND_PARTITION:
		snprintf(err, errlen,
			 "is a partition; give its namespace %s", ns_name);
		return -EINVAL;
	case VWC_KIND_PATH:
		snprintf(err, errlen,
			 "is a hidden multipath path; give its namespace %s",
			 ns_name);
		return -EINVAL;
	default:
		snprintf(err, errlen, "not an NVMe device");
		return -ENODEV;
	}
	snprintf(t->name, sizeof(t->name), "%s", ns_name);
	dev = udev_device_new_from_subsystem_sysname(udev, subsystem, t->name);
	if (!dev) {
		snprintf(err, errlen, "no such NVMe %s",
			 t->kind == VWC_KIND_CTRL ? "controller" : "namespace");
		return -ENODEV;
	}
	udev_device_unref(dev);
	return 0;
}

int vwc_resolve(struct udev *udev, const char *arg, struct vwc_target *t,
		char *err, size_t errlen)
{
	struct udev_device *dev;
	const char *subsystem, *sysname;
	char ns_name[VWC_NAME_LEN], name[VWC_NAME_LEN];
	enum vwc_kind kind;
	struct stat st;
	bool ok;
	int r;

	memset(t, 0, sizeof(*t));
	if (!*arg) {
		snprintf(err, errlen, "empty device name");
		return -EINVAL;
	}
	if (!strchr(arg, '/'))
		return resolve_name(udev, arg, t, err, errlen);

	if (stat(arg, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return r;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "not a device node");
		return -ENODEV;
	}
	dev = udev_device_new_from_devnum(udev, S_ISCHR(st.st_mode) ? 'c' : 'b',
					  st.st_rdev);
	if (!dev) {
		snprintf(err, errlen, "not an NVMe device (no device %u:%u)",
			 major(st.st_rdev), minor(st.st_rdev));
		return -ENODEV;
	}
	subsystem = udev_device_get_subsystem(dev);
	sysname = udev_device_get_sysname(dev);
	kind = vwc_name_classify(sysname, ns_name, sizeof(ns_name));
	subsystem = subsystem ? subsystem : "";

	ok = (kind == VWC_KIND_CTRL && !strcmp(subsystem, "nvme")) ||
	     (kind == VWC_KIND_NS && !strcmp(subsystem, "block")) ||
	     (kind == VWC_KIND_PARTITION && !strcmp(subsystem, "block")) ||
	     (kind == VWC_KIND_GENERIC && !strcmp(subsystem, "nvme-generic"));
	if (!ok) {
		snprintf(err, errlen, "not an NVMe device (it is %s %s)",
			 subsystem[0] ? subsystem : "device", sysname);
		udev_device_unref(dev);
		return -ENODEV;
	}
	/* sysname belongs to dev */
	snprintf(name, sizeof(name), "%s", sysname);
	udev_device_unref(dev);
	return resolve_name(udev, name, t, err, errlen);
}

int vwc_target_nqn(const struct vwc_target *t, char *nqn, size_t len)
{
	char path[VWC_NAME_LEN + 48];

	/* a head's parent is its nvme-subsystem device, a namespace's (no
	 * multipath) its controller: both have the attribute */
	if (t->kind == VWC_KIND_CTRL)
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/subsysnqn", t->name);
	else
		snprintf(path, sizeof(path), "/sys/class/block/%s/device/subsysnqn", t->name);
	if (vwc_read_line(path, nqn, len))
		return -ENOENT;
	return nqn[0] ? 0 : -ENOENT;
}
