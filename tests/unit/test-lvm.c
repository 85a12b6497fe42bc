// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LVM logical volumes on a drive: device-mapper names, and the holders/
 * walk up to the logical volumes 'lvchange' names, on a fake sysfs tree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lvm.h"
#include "tap.h"

static char root[] = "/tmp/vwc-lvm-XXXXXX";

static void put(const char *rel, const char *data)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(data, f);
		fputc('\n', f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

/* a disk with partitions: /sys/class/block/<p> links into the disk */
static void disk(const char *ns, int parts)
{
	char rel[128], target[128], link[512];
	int i;

	dir(ns);
	snprintf(rel, sizeof(rel), "%s/holders", ns);
	dir(rel);
	for (i = 1; i <= parts; i++) {
		snprintf(rel, sizeof(rel), "%s/%sp%d", ns, ns, i);
		dir(rel);
		snprintf(rel, sizeof(rel), "%s/%sp%d/holders", ns, ns, i);
		dir(rel);
		snprintf(rel, sizeof(rel), "%s/%sp%d/partition", ns, ns, i);
		put(rel, "1");
		snprintf(target, sizeof(target), "%s/%sp%d", ns, ns, i);
		snprintf(link, sizeof(link), "%s/%sp%d", root, ns, i);
		if (symlink(target, link))
			perror(link);
	}
}

/* a device-mapper device */
static void dm(const char *kname, const char *name, const char *uuid)
{
	char rel[128];

	dir(kname);
	snprintf(rel, sizeof(rel), "%s/holders", kname);
	dir(rel);
	snprintf(rel, sizeof(rel), "%s/dm", kname);
	dir(rel);
	snprintf(rel, sizeof(rel), "%s/dm/name", kname);
	put(rel, name);
	snprintf(rel, sizeof(rel), "%s/dm/uuid", kname);
	put(rel, uuid);
}

/* @holder holds @b */
static void holds(const char *holder, const char *b)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/holders/%s", b, holder);
	dir(rel);
}

#define LVU "LVM-" \
	"Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" "Zy4xWv1uTs8rQp5oNm2lKj9iHg6fEd3c"

static const char *lv_name(const struct vwc_lvm_set *s, int i, char *buf,
			   size_t len)
{
	snprintf(buf, len, "%s/%s %s", s->lv[i].vg, s->lv[i].lv, s->lv[i].dm);
	return buf;
}

int main(void)
{
	char names[2][VWC_NAME_LEN], vg[128], lv[128], why[800], b[400];
	struct vwc_lvm_set s;
	int r;

	/* device-mapper names: '-' doubled inside a name */
	ok(vwc_dm_lvm_name("vwc--bookworm--vg-swap_1", vg, sizeof(vg), lv,
			   sizeof(lv)) == 0, "installer's name: a logical volume");
	is_str(vg, "vwc-bookworm-vg", "volume group with its '-' undoubled");
	is_str(lv, "swap_1", "logical volume");
	ok(vwc_dm_lvm_name("vg-my--lv", vg, sizeof(vg), lv, sizeof(lv)) == 0,
	   "'-' doubled in the logical volume's name");
	is_str(lv, "my-lv", "logical volume with its '-' undoubled");
	ok(vwc_dm_lvm_name("vg-pool-tpool", vg, sizeof(vg), lv,
			   sizeof(lv)) == 1, "a layer (thin pool): 1");
	ok(vwc_dm_lvm_name("vg-lv-real", vg, sizeof(vg), lv, sizeof(lv)) == 1,
	   "a layer (snapshot origin): 1");
	ok(vwc_dm_lvm_name("novg", vg, sizeof(vg), lv, sizeof(lv)) == -EINVAL,
	   "no separator: not LVM's form");
	ok(vwc_dm_lvm_name("a--b", vg, sizeof(vg), lv, sizeof(lv)) == -EINVAL,
	   "only a doubled '-': no separator");
	ok(vwc_dm_lvm_name("vg-", vg, sizeof(vg), lv, sizeof(lv)) == -EINVAL,
	   "empty logical volume name");
	ok(vwc_dm_lvm_name("-lv", vg, sizeof(vg), lv, sizeof(lv)) == -EINVAL,
	   "empty volume group name");
	ok(vwc_dm_lvm_name("averylongvolumegroup-lv", vg, 8, lv,
			   sizeof(lv)) == -EINVAL, "a name that does not fit");

	if (!mkdtemp(root))
		return 1;

	/* the installer's layout: root and swap on the PV nvme0n1p3 */
	disk("nvme0n1", 3);
	dm("dm-0", "vwc--bookworm--vg-root", LVU);
	dm("dm-1", "vwc--bookworm--vg-swap_1", LVU "x");
	holds("dm-0", "nvme0n1p3");
	holds("dm-1", "nvme0n1p3");
	snprintf(names[0], sizeof(names[0]), "nvme0n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names, 1, &s, why, sizeof(why));
	ok(r == 2, "root and swap on a partition: 2 logical volumes (%d)", r);
	ok(r == 2 && ((!strcmp(lv_name(&s, 0, b, sizeof(b)), "vwc-bookworm-vg/root dm-0") &&
		       !strcmp(lv_name(&s, 1, b, sizeof(b)), "vwc-bookworm-vg/swap_1 dm-1")) ||
		      (!strcmp(lv_name(&s, 1, b, sizeof(b)), "vwc-bookworm-vg/root dm-0") &&
		       !strcmp(lv_name(&s, 0, b, sizeof(b)), "vwc-bookworm-vg/swap_1 dm-1"))),
	   "named by volume group and logical volume, with the device");
	r = vwc_lvm_collect(root, names, 1, &s, why, sizeof(why));
	ok(r == 2, "a second walk adds nothing (%d)", r);

	/* a logical volume over two partitions of it: once */
	holds("dm-0", "nvme0n1p2");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names, 1, &s, why, sizeof(why));
	ok(r == 2, "a logical volume on two PVs of the disk is found once (%d)", r);

	/* nothing on the disk: none */
	disk("nvme2n1", 1);
	snprintf(names[1], sizeof(names[1]), "nvme2n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == 0, "no holders: no logical volume (%d)", r);

	/* a thin pool: the thin volume and the pool's own device on top */
	disk("nvme1n1", 1);
	dm("dm-2", "vg-pool_tdata", LVU);
	dm("dm-3", "vg-pool-tpool", LVU "-tpool");
	dm("dm-4", "vg-thin1", LVU);
	dm("dm-5", "vg-pool", LVU "-pool");
	holds("dm-2", "nvme1n1p1");
	holds("dm-3", "dm-2");
	holds("dm-4", "dm-3");
	holds("dm-5", "dm-3");
	snprintf(names[1], sizeof(names[1]), "nvme1n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == 2, "thin pool: the thin volume and the pool, not the layers (%d)", r);
	ok(r == 2 && ((!strcmp(s.lv[0].lv, "thin1") && !strcmp(s.lv[1].lv, "pool")) ||
		      (!strcmp(s.lv[1].lv, "thin1") && !strcmp(s.lv[0].lv, "pool"))),
	   "thin pool: thin1 and pool");
	/* both disks at once: four */
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names, 2, &s, why, sizeof(why));
	ok(r == 4, "both disks: 4 logical volumes (%d)", r);

	/* a layer nothing holds: no name to activate it by */
	dm("dm-6", "vg-lv-real", LVU "-real");
	holds("dm-6", "nvme1n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == -EBUSY, "a bare layer on the disk: refused (%d)", r);
	is_str(why, "LVM device vg-lv-real (dm-6) has nothing above it and no logical volume name to activate it by",
	       "the layer named");
	rmdir(strcat(strcpy(b, root), "/nvme1n1/holders/dm-6"));

	/* dm-crypt over a partition: not LVM, refused by name */
	disk("nvme3n1", 2);
	dm("dm-7", "cryptroot", "CRYPT-LUKS2-0123456789abcdef-cryptroot");
	holds("dm-7", "nvme3n1p2");
	snprintf(names[1], sizeof(names[1]), "nvme3n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == -EBUSY, "dm-crypt: refused (%d)", r);
	is_str(why, "nvme3n1p2 is held by dm-crypt mapping cryptroot (dm-7)",
	       "the mapping named");

	/* LVM on dm-crypt: the crypt mapping stops the walk */
	dm("dm-8", "vg-home", LVU);
	holds("dm-8", "dm-7");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == -EBUSY, "LVM over dm-crypt: refused at the crypt mapping (%d)", r);

	/* MD RAID member */
	disk("nvme4n1", 1);
	dir("md0");
	dir("md0/holders");
	holds("md0", "nvme4n1p1");
	snprintf(names[1], sizeof(names[1]), "nvme4n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == -EBUSY, "MD member: refused (%d)", r);
	is_str(why, "nvme4n1p1 is a member of RAID array md0", "the array named");

	/* another dm target (a plain dmsetup linear device) */
	disk("nvme5n1", 0);
	dm("dm-9", "mylinear", "");
	holds("dm-9", "nvme5n1");
	snprintf(names[1], sizeof(names[1]), "nvme5n1");
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names + 1, 1, &s, why, sizeof(why));
	ok(r == -EBUSY, "a device-mapper device that is not LVM: refused (%d)", r);
	is_str(why, "nvme5n1 is held by device-mapper device mylinear (dm-9), not an LVM logical volume",
	       "the device named");

	/* the first disk refused too when the second is not LVM */
	memset(&s, 0, sizeof(s));
	r = vwc_lvm_collect(root, names, 2, &s, why, sizeof(why));
	ok(r == -EBUSY, "one non-LVM holder on any namespace refuses the controller (%d)", r);

	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			perror(cmd);
	}
	return tap_done();
}
