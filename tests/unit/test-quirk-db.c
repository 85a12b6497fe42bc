// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Quirk names to nvme-pci bits and masks, quirk lists, the module
 * parameter merge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <stdbool.h>

#include "quirk-db.h"
#include "tap.h"

int main(void)
{
	char bad[64], out[256];
	unsigned long m;

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

	ok(vwc_quirk_has("bogus_nid\ndisable_write_zeroes\n", "disable_write_zeroes"),
	   "has: a name of the kernel's list");
	ok(!vwc_quirk_has("disable_write_zeroes_x", "disable_write_zeroes"),
	   "has: no prefix match");
	ok(vwc_quirk_has("a,disable_write_zeroes", "disable_write_zeroes"),
	   "has: comma list");
	ok(!vwc_quirks_merge("", "c0a9:5419", "disable_write_zeroes", out,
			     sizeof(out)), "merge into nothing");
	is_str(out, "c0a9:5419:disable_write_zeroes", "a new entry");
	ok(!vwc_quirks_merge("8086:5845:bogus_nid-c0a9:5419:no_apst",
			     "c0a9:5419", "disable_write_zeroes", out,
			     sizeof(out)), "merge into an entry");
	is_str(out, "8086:5845:bogus_nid-c0a9:5419:no_apst,disable_write_zeroes",
	       "the admin's quirks kept, ours added to the entry");
	ok(!vwc_quirks_merge(out, "c0a9:5419", "disable_write_zeroes", bad,
			     sizeof(bad)) && !strcmp(bad, out), "idempotent");
	ok(vwc_quirks_merge("8086:5845:bogus_nid", "c0a9:5419",
			    "disable_write_zeroes", out, 10) == -ENOSPC,
	   "small buffer");
	ok(!vwc_quirks_mask("none\n", &m, bad, sizeof(bad)) && m == 0,
	   "7.x 'none': the empty set");

	/* the dynamic ID's driver_data */
	{
		char why[600];
		unsigned long v = 0;
		bool al = true;

		ok(!vwc_quirks_dynid_value("none\n", 0, "c0a9:5419", "idx", &v,
					   &al, why, sizeof(why)) &&
		   v == 0x200 && !al, "7.x T700 (quirks 'none'): 0x200");
		ok(!vwc_quirks_dynid_value("simple_suspend\nno_apst\n", 0,
					   "c0a9:5419", "idx", &v, &al, why,
					   sizeof(why)) && v == 0x200,
		   "7.x, probe-time quirks (ACPI, DMI) not in the value: the table entry's 0 + 0x200");
		ok(!vwc_quirks_dynid_value("future_quirk\n", 0, "c0a9:5419",
					   "idx", &v, &al, why, sizeof(why)) &&
		   v == 0x200,
		   "class-wide entry: an unknown run-time name does not matter");
		ok(!vwc_quirks_dynid_value("disable_write_zeroes\n", 0, "x",
					   "idx", &v, &al, why, sizeof(why)) &&
		   al, "already applied");
		ok(!vwc_quirks_dynid_value("bogus_nid\n", 1, "1b36:0010", "idx",
					   &v, &al, why, sizeof(why)) &&
		   v == 0x40200, "named by the table (QEMU on 7.2): its quirks kept");
		ok(!vwc_quirks_dynid_value("none", -ENOENT, "x", "", &v, &al,
					   why, sizeof(why)) && v == 0x200,
		   "index silent, 'none': 0x200");
		ok(vwc_quirks_dynid_value("bogus_nid\nfuture_quirk\n", 1, "x",
					  "idx", &v, &al, why, sizeof(why)) ==
		   -EINVAL && strstr(why, "future_quirk"),
		   "named by the table, an unknown name: refused, named");
		ok(vwc_quirks_dynid_value(NULL, 1, "1b36:0010", "idx", &v, &al,
					  why, sizeof(why)) == -EEXIST &&
		   strstr(why, "1b36:0010 is in this kernel's nvme table (idx)"),
		   "6.x, named by the table: refused");
		ok(!vwc_quirks_dynid_value(NULL, 0, "c0a9:5419", "idx", &v, &al,
					   why, sizeof(why)) && v == 0x200 && !al,
		   "6.x, class-wide only: 0x200");
		ok(vwc_quirks_dynid_value(NULL, -ENOENT, "x", "", &v, &al, why,
					  sizeof(why)) == -ENOENT &&
		   strstr(why, "does not show a controller's quirks"),
		   "6.x, index silent: refused");
	}
	return tap_done();
}
