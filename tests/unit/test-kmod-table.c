// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Driver table lookups through libkmod (a module directory built by
 * depmod), modprobe.d through libkmod.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kmod-table.h"
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
	char src[600], dir[] = "/tmp/vwc-kmod-XXXXXX";
	char path[600], mods[128], key[96], val[256], cdirs[3][128], ours[160];
	const char *paths[4];
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
	return tap_done();
}
