// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device discovery and name resolution through libudev.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <libudev.h>

#include "topo.h"

/* Parse "<prefix><num>" at *p, advancing it. */
static bool parse_num(const char **p, unsigned int *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 1000000)
			return false;
		s++;
	}
	*out = (unsigned int)v;
	*p = s;
	return true;
}

enum vwc_kind vwc_name_classify(const char *name, char *ns_name, size_t len)
{
	unsigned int inst, cntlid, nsid, part;
	const char *p = name;
	bool generic = false;

	if (!strncmp(p, "nvme", 4)) {
		p += 4;
	} else if (!strncmp(p, "ng", 2)) {
		p += 2;
		generic = true;
	} else {
		return VWC_KIND_NONE;
	}
	if (!parse_num(&p, &inst))
		return VWC_KIND_NONE;
	if (!*p) {
		if (generic)
			return VWC_KIND_NONE;
		snprintf(ns_name, len, "nvme%u", inst);
		return VWC_KIND_CTRL;
	}
	if (*p == 'c' && !generic) {
		p++;
		if (!parse_num(&p, &cntlid) || *p != 'n')
			return VWC_KIND_NONE;
		p++;
		if (!parse_num(&p, &nsid) || *p)
			return VWC_KIND_NONE;
		snprintf(ns_name, len, "nvme%un%u", inst, nsid);
		return VWC_KIND_PATH;
	}
	if (*p != 'n')
		return VWC_KIND_NONE;
	p++;
	if (!parse_num(&p, &nsid))
		return VWC_KIND_NONE;
	snprintf(ns_name, len, "nvme%un%u", inst, nsid);
	if (!*p)
		return generic ? VWC_KIND_GENERIC : VWC_KIND_NS;
	if (*p == 'p' && !generic) {
		p++;
		if (parse_num(&p, &part) && !*p)
			return VWC_KIND_PARTITION;
	}
	return VWC_KIND_NONE;
}

static void copy_attr(struct udev_device *dev, const char *attr, char *dst,
		      size_t len)
{
	const char *v = udev_device_get_sysattr_value(dev, attr);
	size_t n;

	snprintf(dst, len, "%s", v ? v : "");
	/* sysfs values carry padding and a newline */
	n = strlen(dst);
	while (n && isspace((unsigned char)dst[n - 1]))
		dst[--n] = '\0';
}

static int add_ctrl(struct vwc_topo *t, struct udev_device *dev)
{
	const char *sysname = udev_device_get_sysname(dev);
	struct udev_device *pci;
	struct vwc_ctrl *c, *arr;
	const char *node;
	char tmp[VWC_NAME_LEN];

	if (vwc_name_classify(sysname, tmp, sizeof(tmp)) != VWC_KIND_CTRL)
		return 0;
	arr = realloc(t->ctrls, (t->nr_ctrls + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	t->ctrls = arr;
	c = &arr[t->nr_ctrls++];
	memset(c, 0, sizeof(*c));
	c->held_fd = -1;
	c->facts.present = VWC_TRI_UNKNOWN;
	c->facts.wce = VWC_TRI_UNKNOWN;
	c->facts.backup_failed = VWC_TRI_UNKNOWN;
	snprintf(c->name, sizeof(c->name), "%s", sysname);
	snprintf(c->syspath, sizeof(c->syspath), "%s",
		 udev_device_get_syspath(dev));
	node = udev_device_get_devnode(dev);
	snprintf(c->devnode, sizeof(c->devnode), "%s",
		 node ? node : "");
	if (!node)
		snprintf(c->devnode, sizeof(c->devnode), "/dev/%s", sysname);
	copy_attr(dev, "model", c->model, sizeof(c->model));
	copy_attr(dev, "serial", c->serial, sizeof(c->serial));
	copy_attr(dev, "firmware_rev", c->firmware, sizeof(c->firmware));
	copy_attr(dev, "transport", c->transport, sizeof(c->transport));

	pci = udev_device_get_parent_with_subsystem_devtype(dev, "pci", NULL);
	if (pci) {
		const char *v = udev_device_get_sysattr_value(pci, "vendor");
		const char *d = udev_device_get_sysattr_value(pci, "device");

		copy_attr(pci, "modalias", c->modalias, sizeof(c->modalias));
		if (v && d) {
			c->pci_vendor = (uint16_t)strtoul(v, NULL, 16);
			c->pci_device = (uint16_t)strtoul(d, NULL, 16);
			snprintf(c->pci_id, sizeof(c->pci_id), "%04x:%04x",
				 c->pci_vendor, c->pci_device);
		}
	}
	return 0;
}

int vwc_topo_find_ctrl(const struct vwc_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_ctrls; i++)
		if (!strcmp(t->ctrls[i].name, name))
			return i;
	return -1;
}

int vwc_topo_find_ns(const struct vwc_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_ns; i++)
		if (!strcmp(t->ns[i].name, name))
			return i;
	return -1;
}

bool vwc_ns_has_ctrl(const struct vwc_ns *ns, int c)
{
	int i;

	for (i = 0; i < ns->nr_ctrl; i++)
		if (ns->ctrl[i] == c)
			return true;
	return false;
}

static struct vwc_ns *get_ns(struct vwc_topo *t, const char *name)
{
	struct vwc_ns *arr;
	int i = vwc_topo_find_ns(t, name);

	if (i >= 0)
		return &t->ns[i];
	arr = realloc(t->ns, (t->nr_ns + 1) * sizeof(*arr));
	if (!arr)
		return NULL;
	t->ns = arr;
	memset(&arr[t->nr_ns], 0, sizeof(*arr));
	snprintf(arr[t->nr_ns].name, sizeof(arr->name), "%s", name);
	return &arr[t->nr_ns++];
}

/* No limit on paths: what the host has, the decision sees. */
static int ns_add_ctrl(struct vwc_ns *ns, int c)
{
	int *arr;

	if (c < 0 || vwc_ns_has_ctrl(ns, c))
		return 0;
	arr = realloc(ns->ctrl, (ns->nr_ctrl + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	ns->ctrl = arr;
	ns->ctrl[ns->nr_ctrl++] = c;
	return 0;
}

static int ns_add_path(struct vwc_ns *ns, const char *syspath)
{
	char (*arr)[VWC_PATH_LEN];

	arr = realloc(ns->path_syspath, (ns->nr_paths + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	ns->path_syspath = arr;
	snprintf(arr[ns->nr_paths++], VWC_PATH_LEN, "%s", syspath);
	return 0;
}

static void ns_free(struct vwc_ns *ns)
{
	free(ns->ctrl);
	free(ns->path_syspath);
	ns->ctrl = NULL;
	ns->path_syspath = NULL;
	ns->nr_ctrl = ns->nr_paths = 0;
}

/*
 * A namespace or path node lives in its controller's sysfs directory
 * (.../nvme/nvme0/nvme0n1, .../nvme/nvme1/nvme0c1n1); a multipath head
 * lives under its subsystem (.../nvme-subsystem/nvme-subsys0/nvme0n1).
 */
static int parent_ctrl(const struct vwc_topo *t, const char *syspath)
{
	char buf[VWC_PATH_LEN], *slash;

	snprintf(buf, sizeof(buf), "%s", syspath);
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	slash = strrchr(buf, '/');
	return vwc_topo_find_ctrl(t, slash ? slash + 1 : buf);
}

static int add_disk(struct vwc_topo *t, struct udev_device *dev)
{
	const char *sysname = udev_device_get_sysname(dev);
	const char *syspath = udev_device_get_syspath(dev);
	char ns_name[VWC_NAME_LEN];
	enum vwc_kind kind;
	struct vwc_ns *ns;

	/* partitions and anything else are not namespaces */
	kind = vwc_name_classify(sysname, ns_name, sizeof(ns_name));
	if (kind != VWC_KIND_NS && kind != VWC_KIND_PATH)
		return 0;
	ns = get_ns(t, ns_name);
	if (!ns)
		return -ENOMEM;
	if (kind == VWC_KIND_PATH) {
		if (ns_add_path(ns, syspath))
			return -ENOMEM;
	} else {
		snprintf(ns->syspath, sizeof(ns->syspath), "%s", syspath);
	}
	/* a multipath head has no controller parent: its paths do */
	return ns_add_ctrl(ns, parent_ctrl(t, syspath));
}

static int scan_subsystem(struct udev *udev, struct vwc_topo *t,
			  const char *subsystem,
			  int (*add)(struct vwc_topo *, struct udev_device *))
{
	struct udev_enumerate *e = udev_enumerate_new(udev);
	struct udev_list_entry *entry;
	int r = 0;

	if (!e)
		return -ENOMEM;
	udev_enumerate_add_match_subsystem(e, subsystem);
	/* by name only: no uevent file is read while enumerating */
	udev_enumerate_add_match_sysname(e, "nvme*");
	udev_enumerate_scan_devices(e);
	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
		struct udev_device *dev;

		dev = udev_device_new_from_syspath(udev,
				udev_list_entry_get_name(entry));
		if (!dev)
			continue;	/* vanished meanwhile */
		r = add(t, dev);
		udev_device_unref(dev);
		if (r)
			break;
	}
	udev_enumerate_unref(e);
	return r;
}

static int cmp_ctrl(const void *a, const void *b)
{
	return strverscmp(((const struct vwc_ctrl *)a)->name,
			  ((const struct vwc_ctrl *)b)->name);
}

static int cmp_ns(const void *a, const void *b)
{
	return strverscmp(((const struct vwc_ns *)a)->name,
			  ((const struct vwc_ns *)b)->name);
}

int vwc_topo_scan(struct udev *udev, struct vwc_topo *t)
{
	int r, i;

	memset(t, 0, sizeof(*t));
	r = scan_subsystem(udev, t, "nvme", add_ctrl);
	if (r)
		goto fail;
	/* controller indices are final from here on */
	qsort(t->ctrls, t->nr_ctrls, sizeof(*t->ctrls), cmp_ctrl);
	r = scan_subsystem(udev, t, "block", add_disk);
	if (r)
		goto fail;
	/* drop path nodes whose head is gone (being removed) */
	for (i = 0; i < t->nr_ns; i++) {
		if (!t->ns[i].syspath[0]) {
			ns_free(&t->ns[i]);
			t->ns[i] = t->ns[--t->nr_ns];
			i--;
		}
	}
	qsort(t->ns, t->nr_ns, sizeof(*t->ns), cmp_ns);
	return 0;
fail:
	vwc_topo_free(t);
	return r;
}

void vwc_topo_free(struct vwc_topo *t)
{
	int i;

	for (i = 0; i < t->nr_ns; i++)
		ns_free(&t->ns[i]);
	free(t->ctrls);
	free(t->ns);
	memset(t, 0, sizeof(*t));
}

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
