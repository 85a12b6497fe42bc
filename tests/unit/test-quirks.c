// SPDX-License-Identifier: GPL-2.0-or-later
/* Quirk names to nvme-pci bits, module alias lookups, mountinfo matching. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	char bad[64], src[600], where[600], dir[] = "/tmp/vwc-quirks-XXXXXX";
	char path[128];
	unsigned long m;
	static const char modinfo[] =
		"nvme.parm=noacpi:disable acpi bios quirks\0"
		"nvme.alias=pci:v*d*sv*sd*bc01sc08i02*\0"
		"nvme.alias=pci:v00008086d00005845sv*sd*bc*sc*i*\0"
		"other.alias=pci:v0000C0A9d00005419sv*sd*bc*sc*i*\0";
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

	ok(vwc_alias_names_id("pci:v00001B36d00000010sv*sd*bc*sc*i*", qemu),
	   "concrete alias matches");
	ok(vwc_alias_names_id("pci:v00001b36d00000010sv*sd*bc*sc*i*", qemu),
	   "case-insensitive hex");
	ok(!vwc_alias_names_id("pci:v*d*sv*sd*bc01sc08i02*", qemu),
	   "class-wide entry does not count");
	ok(!vwc_alias_names_id("pci:v00001B36d*sv*sd*bc*sc*i*", qemu),
	   "vendor-only entry does not count");
	ok(!vwc_alias_names_id("pci:v00001B36d00000011sv*sd*bc*sc*i*", qemu),
	   "other device");
	ok(vwc_alias_names_id("pci:v00001B36d00000010sv00001AF4sd*bc*sc*i*", qemu),
	   "subsystem-specific entry matches");
	ok(!vwc_alias_names_id("pci:v00001B36d00000010sv00001234sd*bc*sc*i*", qemu),
	   "other subsystem");

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	ok(vwc_driver_table_lists(dir, "nvme", qemu, src, sizeof(src)) ==
	   -ENOENT, "no files: cannot tell");
	snprintf(path, sizeof(path), "%s/modules.builtin.modinfo", dir);
	write_file(path, "nvme.parm=x\0", 12);
	ok(vwc_driver_table_lists(dir, "nvme", qemu, src, sizeof(src)) ==
	   -ENOENT, "modinfo without nvme aliases (6.1, 6.12 built in): cannot tell");
	write_file(path, modinfo, sizeof(modinfo) - 1);
	ok(vwc_driver_table_lists(dir, "nvme", intel, src, sizeof(src)) == 1,
	   "built-in: Intel's QEMU ID is in the table");
	ok(strstr(src, "pci:v00008086d00005845") != NULL, "source names the entry");
	ok(vwc_driver_table_lists(dir, "nvme", qemu, src, sizeof(src)) == 0,
	   "built-in: 1b36:0010 not listed here");
	ok(vwc_driver_table_lists(dir, "nvme", t700, src, sizeof(src)) == 0,
	   "another module's alias does not count");
	unlink(path);
	snprintf(path, sizeof(path), "%s/modules.alias", dir);
	{
		static const char al[] =
			"# Aliases extracted from modules themselves.\n"
			"alias pci:v00001B36d00000010sv*sd*bc*sc*i* nvme\n"
			"alias pci:v*d*sv*sd*bc01sc08i02* nvme\n"
			"alias pci:v0000C0A9d00005419sv*sd*bc*sc*i* notnvme\n";

		write_file(path, al, sizeof(al) - 1);
	}
	ok(vwc_driver_table_lists(dir, "nvme", qemu, src, sizeof(src)) == 1,
	   "module: 1b36:0010 in the table");
	ok(vwc_driver_table_lists(dir, "nvme", t700, src, sizeof(src)) == 0,
	   "module: T700 not in the table");
	unlink(path);
	rmdir(dir);

	ok(vwc_mountinfo_uses("36 35 259:1 / /mnt/t rw,relatime shared:1 - ext2 /dev/nvme0n1 rw",
			      "259:1", "/dev/nvme0n1", where, sizeof(where)),
	   "mountinfo: by major:minor");
	is_str(where, "/mnt/t (ext2)", "where it is mounted");
	ok(vwc_mountinfo_uses("40 1 0:45 / /data rw - btrfs /dev/nvme0n1p2 rw",
			      "259:3", "/dev/nvme0n1p2", where, sizeof(where)),
	   "mountinfo: btrfs by source");
	ok(!vwc_mountinfo_uses("36 35 259:10 / /mnt rw - ext4 /dev/nvme1n1 rw",
			       "259:1", "/dev/nvme0n1", where, sizeof(where)),
	   "mountinfo: another device");
	ok(!vwc_mountinfo_uses("garbage", "259:1", "/dev/nvme0n1", where,
			       sizeof(where)), "mountinfo: garbage");

	ok(vwc_quirks_is_pci_addr("0000:01:00.0"), "PCI address");
	ok(!vwc_quirks_is_pci_addr("nvme0"), "controller name is not");
	ok(!vwc_quirks_is_pci_addr("0000:01:00.0x"), "trailing garbage");
	ok(!vwc_quirks_is_pci_addr("01:00.0"), "short form not accepted");
	return tap_done();
}
