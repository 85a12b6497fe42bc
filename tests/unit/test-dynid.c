// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PCI addresses and the dynamic-ID records (in a private run directory).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dynid.h"
#include "tap.h"

int main(void)
{
	char dir[] = "/tmp/vwc-dynid-XXXXXX", path[300];
	unsigned long val = 1;
	FILE *f;

	ok(vwc_dynid_is_pci_addr("0000:01:00.0"), "PCI address");
	ok(!vwc_dynid_is_pci_addr("nvme0"), "controller name is not");
	ok(!vwc_dynid_is_pci_addr("0000:01:00.0x"), "trailing garbage");
	ok(!vwc_dynid_is_pci_addr("01:00.0"), "short form not accepted");
	ok(vwc_dynid_is_pci_addr("10000:e1:00.0"), "Intel VMD: 5-digit domain");
	ok(!vwc_dynid_is_pci_addr("100000:e1:00.0"), "6-digit domain refused");
	ok(!vwc_dynid_is_pci_addr("0000:01:00.8"), "function 8 refused");
	ok(!vwc_dynid_is_pci_addr("000g:01:00.0"), "not hex refused");
	{
		unsigned long v;
		unsigned long long ino;

		ok(!vwc_dynid_parse("1b36 0010 1af4 1100 0 0 200\ndriver-inode 4242",
				    &v, &ino) && v == 0x200 && ino == 4242,
		   "parse: driver_data and the driver's inode");
		ok(!vwc_dynid_parse("1b36 0010 1af4 1100 0 0 40200", &v, &ino) &&
		   v == 0x40200 && ino == 0, "parse: an older record, no inode");
		ok(vwc_dynid_parse("garbage", &v, &ino) == -EINVAL,
		   "parse: garbage refused");
	}

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	setenv("NVME_VWC_SYNC_RUNDIR", dir, 1);
	ok(!vwc_dynid_recorded("1b36_0010_1af4_1100", &val) && val == 1,
	   "no record");
	snprintf(path, sizeof(path), "%s/dynid", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dynid/1b36_0010_1af4_1100", dir);
	f = fopen(path, "w");
	if (f) {
		fputs("1b36 0010 1af4 1100 0 0 40200\n", f);
		fclose(f);
	}
	ok(vwc_dynid_recorded("1b36_0010_1af4_1100", &val) && val == 0x40200,
	   "record read: driver_data is the last field, hex");
	ok(!vwc_dynid_held_back("0000:01:00.0"), "not handed back");
	vwc_dynid_hold_set("0000:01:00.0", true);
	ok(vwc_dynid_held_back("0000:01:00.0"), "handed back: marked");
	vwc_dynid_hold_set("0000:01:00.0", false);
	ok(!vwc_dynid_held_back("0000:01:00.0"), "mark removed");
	/* written under another registration of the driver: stale */
	snprintf(path, sizeof(path), "%s/dynid/1b36_0010_1af4_1100", dir);
	f = fopen(path, "w");
	if (f) {
		fputs("1b36 0010 1af4 1100 0 0 200\ndriver-inode 1\n", f);
		fclose(f);
	}
	ok(!vwc_dynid_recorded("1b36_0010_1af4_1100", &val),
	   "record of an earlier nvme driver (module reloaded): not reported");
	ok(access(path, F_OK) != 0, "the stale record is removed");
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ok(!system(path), "cleanup");
	return tap_done();
}
