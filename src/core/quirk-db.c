// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <libudev.h>

#include "fileio.h"
#include "quirk-db.h"
#include "topo.h"
#include "wz-ignored.h"

bool vwc_quirk_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		bool start = p == list || p[-1] == ',' || p[-1] == '\n' ||
			     p[-1] == ' ';
		bool end = !p[n] || p[n] == ',' || p[n] == '\n' || p[n] == ' ';

		if (start && end)
			return true;
		p += n;
	}
	return false;
}

void vwc_quirks_fill(struct udev *udev, struct vwc_topo *t)
{
	struct udev_hwdb *hwdb = udev_hwdb_new(udev);
	int i;

	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		struct udev_list_entry *e;
		char path[VWC_PATH_LEN + 16];

		snprintf(path, sizeof(path), "%s/quirks", c->syspath);
		c->has_kernel_quirks = !vwc_read_line(path, c->kernel_quirks,
						  sizeof(c->kernel_quirks));
		/* 7.x: "none" is the empty set */
		if (!strcmp(c->kernel_quirks, "none"))
			c->kernel_quirks[0] = '\0';
		if (!hwdb || !c->modalias[0])
			continue;
		udev_list_entry_foreach(e,
			udev_hwdb_get_properties_list_entry(hwdb, c->modalias, 0)) {
			if (!strcmp(udev_list_entry_get_name(e),
				    "NVME_VWC_SYNC_QUIRKS"))
				snprintf(c->hwdb_quirks, sizeof(c->hwdb_quirks),
					 "%s", udev_list_entry_get_value(e));
		}
	}
	if (hwdb)
		udev_hwdb_unref(hwdb);
	/* the kernel's answer to a quirk: after the kernel quirks of all */
	for (i = 0; i < t->nr_ctrls; i++)
		t->ctrls[i].wz_ignored =
			vwc_wz_ctrl_ignored(t->sysfs[0] ? t->sysfs : "/sys", t, i,
					    t->ctrls[i].wz_ignored_why,
					    sizeof(t->ctrls[i].wz_ignored_why));
}

bool vwc_hwdb_lists_quirk(struct udev *udev, const char *modalias,
			  const char *quirk)
{
	struct udev_hwdb *hwdb = udev_hwdb_new(udev);
	struct udev_list_entry *e;
	bool yes = false;

	if (!hwdb)
		return false;
	udev_list_entry_foreach(e,
		udev_hwdb_get_properties_list_entry(hwdb, modalias, 0))
		if (!strcmp(udev_list_entry_get_name(e), "NVME_VWC_SYNC_QUIRKS") &&
		    vwc_quirk_has(udev_list_entry_get_value(e), quirk))
			yes = true;
	udev_hwdb_unref(hwdb);
	return yes;
}

int vwc_quirks_merge(const char *current, const char *id, const char *quirk,
		     char *out, size_t len)
{
	char buf[1024], *entry, *save = NULL;
	size_t idlen = strlen(id), used = 0;
	bool found = false;
	int n;

	if (strlen(current) >= sizeof(buf))
		return -ENOSPC;
	snprintf(buf, sizeof(buf), "%s", current);
	out[0] = '\0';
	for (entry = strtok_r(buf, "-", &save); entry;
	     entry = strtok_r(NULL, "-", &save)) {
		bool mine = !strncasecmp(entry, id, idlen) &&
			    entry[idlen] == ':';

		if (!*entry)
			continue;
		if (!mine) {
			n = snprintf(out + used, len - used, "%s%s",
				     used ? "-" : "", entry);
		} else {
			found = true;
			n = snprintf(out + used, len - used, "%s%s%s%s",
				     used ? "-" : "", entry,
				     vwc_quirk_has(entry + idlen + 1, quirk) ?
				     "" : ",",
				     vwc_quirk_has(entry + idlen + 1, quirk) ?
				     "" : quirk);
		}
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
	}
	if (!found) {
		n = snprintf(out + used, len - used, "%s%s:%s",
			     used ? "-" : "", id, quirk);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
	}
	return 0;
}

/*
 * enum nvme_quirks (drivers/nvme/host/nvme.h) in bit order, named as
 * nvme_quirk_name() prints them in /sys/class/nvme/nvmeN/quirks (7.x);
 * checked against Debian's 7.2 nvme-core.ko. Bits never move: new quirks
 * are added at the end.
 */
static const char *const nvme_quirk_names[] = {
	"stripe_size", "identify_cns", "deallocate_zeroes",
	"delay_before_chk_rdy", "no_apst", "no_deepest_ps", "qdepth_one",
	"medium_prio_sq", "ignore_dev_subnqn", "disable_write_zeroes",
	"simple_suspend", "single_vector", "128_bytes_sqes", "shared_tags",
	"no_temp_thresh_change", "no_ns_desc_list", "dma_address_bits_48",
	"skip_cid_gen", "bogus_nid", "no_secondary_temp_thresh",
	"force_no_simple_suspend", "broken_msi", "dmapool_align_512",
};

int vwc_quirk_bit(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(nvme_quirk_names) / sizeof(*nvme_quirk_names);
	     i++)
		if (strlen(nvme_quirk_names[i]) == len &&
		    !strncmp(nvme_quirk_names[i], name, len))
			return (int)i;
	return -1;
}

int vwc_quirks_mask(const char *list, unsigned long *mask, char *bad,
		    size_t len)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n;
		int bit;

		p += strspn(p, ", \t\n");
		n = strcspn(p, ", \t\n");
		if (!n)
			break;
		/* 7.x prints "none" for a controller without quirks */
		if (n == 4 && !strncmp(p, "none", 4)) {
			p += n;
			continue;
		}
		bit = vwc_quirk_bit(p, n);
		if (bit < 0) {
			snprintf(bad, len, "%.*s", (int)n, p);
			return -EINVAL;
		}
		*mask |= 1UL << bit;
		p += n;
	}
	return 0;
}

int vwc_quirks_dynid_value(const char *kernel, int table, const char *ids,
			   const char *src, unsigned long *val, bool *already,
			   char *why, size_t len)
{
	unsigned long mask = 0;
	char bad[64];
	int r;

	*already = false;
	if (kernel) {
		r = vwc_quirks_mask(kernel, &mask, bad, sizeof(bad));
		*already = r ? vwc_quirk_has(kernel, VWC_QUIRK_DWZ) :
			   !!(mask & VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES);
		if (r && table != 0) {
			snprintf(why, len,
				 "the kernel lists quirk '%s', which this tool cannot map to nvme-pci's bit: a dynamic ID would drop it",
				 bad);
			return -EINVAL;
		}
	}
	if (table == 0) {
		/* the class-wide entry's 0; probe-time quirks come back */
		*val = VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES;
		return 0;
	}
	if (kernel) {
		*val = mask | VWC_NVME_QUIRK_DISABLE_WRITE_ZEROES;
		return 0;
	}
	if (table > 0) {
		snprintf(why, len,
			 "%s is in this kernel's nvme table (%s) with quirks this kernel does not show (no quirks attribute): a dynamic ID would replace them",
			 ids, src);
		return -EEXIST;
	}
	snprintf(why, len,
		 "this kernel does not show a controller's quirks (no quirks attribute) and the module index of %s (modules.alias.bin, modules.builtin.alias.bin, read with libkmod) does not show the nvme driver's table for %s, so a dynamic ID could drop quirks the table gives it",
		 src[0] ? src : "this kernel", ids);
	return table;
}
