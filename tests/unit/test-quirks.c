// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Quirk names to nvme-pci bits, driver table lookups through libkmod (a
 * module directory built by depmod), modprobe.d through libkmod,
 * mountinfo and swaps through libmount.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "quirks.h"
#include "tap.h"

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void conf(const char *dir, const char *name, const char *text)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, text, strlen(text));
}

/* depmod -b ROOT 1.0: 0 on success */
static int depmod(const char *root)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd),
		 "PATH=$PATH:/usr/sbin:/sbin depmod -b %s 1.0 2>/dev/null", root);
	return system(cmd);
}

int main(void)
{
	char bad[64], src[600], where[600], dir[] = "/tmp/vwc-quirks-XXXXXX";
	char path[600], mods[128], key[96], val[256], cdirs[3][128], ours[160];
	const char *paths[4];
	unsigned long m;
	int i;
	static const char modinfo[] =
		"nvme.parm=noacpi:disable acpi bios quirks\0"
		"nvme.alias=pci:v*d*sv*sd*bc01sc08i02*\0"
		"nvme.alias=pci:v00008086d00005845sv*sd*bc*sc*i*\0"
		"other.alias=pci:v0000C0A9d00005419sv*sd*bc*sc*i*\0";
	/* QEMU's ID is in 7.2's real table; here it is not */
	const char *qemu = "pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02";
	const char *intel = "pci:v00008086d00005845sv00001AF4sd00001100bc01sc08i02";
	const char *t700 = "pci:v0000C0A9d00005419sv0000C0A9sd00005419bc01sc08i02";

	ok(vwc_quirk_bit("stripe_size", 11) == 0, "stripe_size is bit 0");
	ok(vwc_quirk_bit("disable_write_zeroes", 20) == 9,
	   "disable_write_zeroes is bit 9 (0x200)");
	ok(vwc_quirk_bit("bogus_nid", 9) == 18, "bogus_nid is bit 18");
	ok(vwc_quirk_bit("dmapool_align_512", 17) == 22,
	   "dmapool_align_512 is bit 22");
	ok(vwc_quirk_bit("bogus", 5) == -1, "unknown name");
	ok(vwc_quirk_bit("bogus_nid_x", 11) == -1, "no prefix match");

	ok(!vwc_quirks_mask("bogus_nid\n", &m, bad, sizeof(bad)) &&
	   m == 0x40000, "quirks attribute 'bogus_nid' (QEMU on 7.2)");
	ok(!vwc_quirks_mask("identify_cns\ndisable_write_zeroes\nbogus_nid\n",
			    &m, bad, sizeof(bad)) && m == 0x40202,
	   "QEMU's Intel ID: 0x40202, as the 7.2 table has it");
	ok(!vwc_quirks_mask("", &m, bad, sizeof(bad)) && m == 0, "empty: 0");
	ok(!vwc_quirks_mask("no_apst, simple_suspend", &m, bad, sizeof(bad)) &&
	   m == 0x410, "commas and blanks");
	ok(vwc_quirks_mask("bogus_nid\nfuture_quirk\n", &m, bad, sizeof(bad)) ==
	   -EINVAL, "unknown quirk refused");
	is_str(bad, "future_quirk", "the unknown name is reported");

	ok(!vwc_pci_id_key(qemu, key, sizeof(key)), "key from a modalias");
	is_str(key, "pci:v00001B36d00000010sv00001AF4sd00001100bc*sc*i*",
	       "class fields open, IDs kept");
	ok(vwc_pci_id_key("pci:v00001B36d00000010sv00001AF4sd00001100", key,
			  sizeof(key)) == -EINVAL, "no class fields: refused");
	ok(vwc_pci_id_key("usb:v1D6Bp0002d0606dc09dsc00dp01ic09isc00ip00in00",
			  key, sizeof(key)) == -EINVAL, "not PCI: refused");
	ok(vwc_pci_id_key("pci:v1B36d00000010sv00001AF4sd00001100bc01sc08i02",
			  key, sizeof(key)) == -EINVAL, "short vendor: refused");
	ok(vwc_pci_id_key(qemu, key, 20) == -ENOSPC, "small buffer");

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(mods, sizeof(mods), "%s/lib/modules/1.0", dir);
	snprintf(path, sizeof(path), "mkdir -p %s", mods);
	ok(!system(path), "module directory");
	ok(vwc_driver_table_lists(mods, "nvme", qemu, src, sizeof(src)) ==
	   -ENOENT, "no index: cannot tell");
	ok(vwc_driver_table_lists(mods, "nvme", "garbage", src, sizeof(src)) ==
	   -EINVAL, "not a PCI modalias");
	/* depmod builds modules.builtin.alias.bin, as for a real kernel */
	snprintf(path, sizeof(path), "%s/modules.builtin", mods);
	write_file(path, "kernel/drivers/nvme/host/nvme.ko\n", 33);
	snprintf(path, sizeof(path), "%s/modules.order", mods);
	write_file(path, "", 0);
	snprintf(path, sizeof(path), "%s/modules.builtin.modinfo", mods);
	write_file(path, "nvme.parm=x\0", 12);
	ok(!depmod(dir), "depmod (kmod) builds the index");
	ok(vwc_driver_table_lists(mods, "nvme", qemu, src, sizeof(src)) ==
	   -ENOENT,
	   "built in without aliases (Debian 6.1, 6.12 cloud): cannot tell");
	write_file(path, modinfo, sizeof(modinfo) - 1);
	ok(!depmod(dir), "depmod");
	ok(vwc_driver_table_lists(mods, "nvme", intel, src, sizeof(src)) == 1,
	   "built in: Intel's QEMU ID is in the table");
	ok(strstr(src, "pci:v00008086d00005845") && strstr(src, mods),
	   "source names the key and the directory");
	ok(vwc_driver_table_lists(mods, "nvme", qemu, src, sizeof(src)) == 0,
	   "built in: 1b36:0010 only through the class entry");
	ok(vwc_driver_table_lists(mods, "nvme", t700, src, sizeof(src)) == 0,
	   "another module's alias does not count");
	snprintf(path, sizeof(path), "rm -rf %s/lib", dir);
	ok(!system(path), "cleanup");

	/* modprobe.d: libkmod's merge, ours left out */
	for (i = 0; i < 3; i++) {
		snprintf(cdirs[i], sizeof(cdirs[i]), "%s/%s", dir,
			 i == 0 ? "etc" : i == 1 ? "run" : "usr");
		mkdir(cdirs[i], 0755);
		paths[i] = cdirs[i];
	}
	paths[3] = NULL;
	snprintf(ours, sizeof(ours), "%s/zz-nvme-vwc-sync.conf", cdirs[0]);
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)) &&
	   !strcmp(val, ""), "no configuration: empty");
	conf(cdirs[2], "40-vendor.conf", "options nvme quirks=1234:5678:no_apst\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)),
	   "usr/lib snippet read");
	is_str(val, "1234:5678:no_apst", "the /usr/lib value");
	conf(cdirs[1], "50-admin.conf",
	     "# the admin's\noptions nvme io_queue_depth=4 quirks=\"8086:5845:bogus_nid\"\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)),
	   "run snippet read");
	is_str(val, "8086:5845:bogus_nid", "the /run file sorts later: it wins, unquoted");
	conf(cdirs[0], "zz-nvme-vwc-sync.conf",
	     "# ours\noptions nvme quirks=8086:5845:bogus_nid-1b36:0010:disable_write_zeroes\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)),
	   "with our file");
	is_str(val, "8086:5845:bogus_nid", "our file left out");
	ok(!vwc_modprobe_admin_quirks(paths, "/nonexistent", val, sizeof(val)),
	   "everything");
	is_str(val, "8086:5845:bogus_nid-1b36:0010:disable_write_zeroes",
	       "with ours counted: ours is last");
	conf(cdirs[1], "50-admin.conf", "options nvme io_queue_depth=4\n");
	conf(cdirs[1], "40-vendor.conf", "options nvme io_queue_depth=2\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)),
	   "shadowed");
	is_str(val, "", "a /run file shadows the /usr/lib one of the same name");
	conf(cdirs[1], "90-copy.conf",
	     "options nvme quirks=8086:5845:bogus_nid-1b36:0010:disable_write_zeroes\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)),
	   "identical line of the admin's");
	is_str(val, "8086:5845:bogus_nid-1b36:0010:disable_write_zeroes",
	       "one copy removed, the admin's identical one kept");
	conf(cdirs[1], "90-copy.conf", "options nvme-core x=1\noptions nvme quirks=abcd:0001:no_apst\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)) &&
	   !strcmp(val, "abcd:0001:no_apst"), "other modules' options ignored");
	/*
	 * what modprobe ignores (libkmod says so on stderr), the rest
	 * still read
	 */
	conf(cdirs[2], "30-broken.conf",
	     "options\nfrobnicate nvme\noptions nvme quirks=dead:beef:no_apst\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)) &&
	   !strcmp(val, "abcd:0001:no_apst"), "malformed lines skipped, as modprobe does");
	conf(cdirs[1], "90-copy.conf", "options nvme-core x=1\n");
	ok(!vwc_modprobe_admin_quirks(paths, ours, val, sizeof(val)),
	   "the broken file's good line");
	is_str(val, "dead:beef:no_apst", "read after its bad lines");
	snprintf(path, sizeof(path), "rm -rf %s/etc %s/run %s/usr", dir, dir, dir);
	ok(!system(path), "cleanup");
	rmdir(dir);

	ok(vwc_options_quirks("quirks=a quirks=b", val, sizeof(val)) == 1 &&
	   !strcmp(val, "b"), "options: the last quirks= wins");
	ok(vwc_options_quirks(" x=1  quirks=\"a b\"  y=2", val, sizeof(val)) == 1 &&
	   !strcmp(val, "a b"), "options: quoted value with a blank");
	strcpy(val, "kept");
	ok(vwc_options_quirks("myquirks=1 quirksx=2", val, sizeof(val)) == 0 &&
	   !strcmp(val, "kept"), "options: other names do not count");
	ok(vwc_options_quirks("quirks=", val, sizeof(val)) == 1 &&
	   !strcmp(val, ""), "options: empty value");
	/* found by fuzz-quirks: a blank strspn(" \t\n") did not skip looped */
	ok(vwc_options_quirks("\r\vquirks=a\f", val, sizeof(val)) == 1 &&
	   !strcmp(val, "a"), "options: every isspace() blank separates");
	ok(vwc_options_quirks("quirks=0123456789", val, 4) == -ENOSPC,
	   "options: small buffer");

	/* mountinfo and swaps through libmount */
	{
		char mi[] = "/tmp/vwc-mountinfo-XXXXXX";
		char sw[] = "/tmp/vwc-swaps-XXXXXX";
		int fm = mkstemp(mi), fs = mkstemp(sw);
		static const char mtab[] =
			"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
			"36 22 259:1 / /mnt/my\\040disk rw,relatime shared:1 - ext2 /dev/nvme0n1 rw\n"
			"40 22 0:45 / /data rw - btrfs /dev/nvme0n1p2 rw\n";
		static const char swaps[] =
			"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
			"/dev/null                               partition\t1048572\t\t0\t\t-2\n";
		struct stat st;

		ok(fm >= 0 && fs >= 0, "temporary tables");
		write_file(mi, mtab, sizeof(mtab) - 1);
		write_file(sw, swaps, sizeof(swaps) - 1);
		ok(vwc_blk_mounted(mi, sw, makedev(259, 1), "/dev/nvme0n1", where,
				   sizeof(where)) == 1, "mounted: by major:minor");
		is_str(where, "mounted on /mnt/my disk (ext2)",
		       "where, with the octal escape undone");
		ok(vwc_blk_mounted(mi, sw, makedev(259, 3), "/dev/nvme0n1p2",
				   where, sizeof(where)) == 1,
		   "mounted: btrfs by its source");
		ok(vwc_blk_mounted(mi, sw, makedev(259, 10), "/dev/nvme1n1",
				   where, sizeof(where)) == 0, "another device");
		/* a swap area on a block device: /dev/null stands in (char) */
		ok(!stat("/dev/null", &st) &&
		   vwc_blk_mounted(mi, sw, st.st_rdev, "/dev/x", where,
				   sizeof(where)) == 0,
		   "swaps: a character device is no swap partition");
		ok(vwc_blk_mounted(mi, sw, makedev(259, 20), "/dev/null", where,
				   sizeof(where)) == 1, "swaps: by its node");
		is_str(where, "in use as swap", "swap named");
		ok(vwc_blk_mounted("/nonexistent/mountinfo", sw, makedev(259, 1),
				   "/dev/nvme0n1", where, sizeof(where)) < 0,
		   "unreadable mountinfo: an error, not 'free'");
		ok(vwc_blk_mounted(mi, "/nonexistent/swaps", makedev(259, 10),
				   "/dev/nvme1n1", where, sizeof(where)) < 0,
		   "unreadable swaps file named: an error");
		ok(vwc_blk_mounted(NULL, NULL, makedev(259, 99), "/dev/nvme99n1",
				   where, sizeof(where)) == 0,
		   "this host's tables read");
		unlink(mi);
		unlink(sw);
		close(fm);
		close(fs);
	}

	ok(vwc_quirks_is_pci_addr("0000:01:00.0"), "PCI address");
	ok(!vwc_quirks_is_pci_addr("nvme0"), "controller name is not");
	ok(!vwc_quirks_is_pci_addr("0000:01:00.0x"), "trailing garbage");
	ok(!vwc_quirks_is_pci_addr("01:00.0"), "short form not accepted");
	return tap_done();
}
