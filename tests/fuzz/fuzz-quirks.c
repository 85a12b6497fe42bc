// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pure parsers of src/quirks/quirks.c, on text from outside: the modprobe.d
 * "options nvme quirks=" merge (vwc_quirks_merge), hwdb property values
 * and the kernel's quirks file (vwc_quirk_has, vwc_quirks_mask,
 * vwc_quirk_bit), the driver-table lookup key made from a modalias
 * (vwc_pci_id_key), libkmod's "options nvme" strings (vwc_options_quirks),
 * /proc/self/mountinfo and /proc/swaps as libmount parses them for the
 * in-use check (vwc_blk_mounted) and PCI addresses
 * (vwc_dynid_is_pci_addr). The input is up to three NUL-separated
 * strings; the first byte of the first one picks the function.
 *
 * Invariants: a merge keeps the ID's quirk in the result and is
 * idempotent; a mask holds only known bits; a lookup key keeps the
 * modalias's IDs and opens the class fields; output buffers (heap, exact
 * size) are never overrun.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dynid.h"
#include "inuse.h"
#include "kmod-table.h"
#include "quirk-db.h"
#include "fuzz.h"

#define DWZ "disable_write_zeroes"

static void merge(const char *cur, const char *id, const char *quirk,
		  size_t len)
{
	char *out = malloc(len), *again = malloc(len);

	if (!vwc_quirks_merge(cur, id, quirk, out, len)) {
		fuzz_assert(strlen(out) < len);
		/* merging into the result changes nothing */
		if (!vwc_quirks_merge(out, id, quirk, again, len))
			fuzz_assert(!strcmp(out, again));
	}
	free(again);
	free(out);
}

/* @mi and @sw as the files vwc_blk_mounted() reads (memfds) */
static int table_uses(const char *mi, const char *sw, char *where, size_t len)
{
	int a = memfd_create("mountinfo", MFD_CLOEXEC);
	int b = memfd_create("swaps", MFD_CLOEXEC);
	char pa[64], pb[64];
	int r = -1;

	if (a >= 0 && b >= 0 &&
	    write(a, mi, strlen(mi)) == (ssize_t)strlen(mi) &&
	    write(b, sw, strlen(sw)) == (ssize_t)strlen(sw)) {
		snprintf(pa, sizeof(pa), "/proc/self/fd/%d", a);
		snprintf(pb, sizeof(pb), "/proc/self/fd/%d", b);
		r = vwc_blk_mounted(pa, pb, makedev(259, 1), "/dev/nvme0n1p1",
				    where, len);
	}
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *p[3], *where, *key, bad[24];
	unsigned long mask;
	const char *a;
	int op;

	if (!size)
		return 0;
	op = data[0] % 7;
	fuzz_parts(data + 1, size - 1, p, 3);
	a = p[0];
	switch (op) {
	case 0:	/* the admin's quirks= value, our ID and quirk */
		merge(a, "1b36:0010", DWZ, 1024);
		merge(a, "1b36:0010", DWZ, 1 + (size % 64));
		break;
	case 1:	/*
		 * everything from the input; the ID and the quirk are ours
		 * (sysfs, a constant): never empty, no separators
		 */
		if (*p[1] && *p[2] && !strpbrk(p[1], "-, \t\n") &&
		    !strpbrk(p[2], "-,: \t\n"))
			merge(a, p[1], p[2], 256);
		break;
	case 2:	/* a hwdb NVME_VWC_SYNC_QUIRKS value */
		(void)vwc_quirk_has(a, DWZ);
		if (*p[1])
			(void)vwc_quirk_has(a, p[1]);
		break;
	case 3:	/* /sys/class/nvme/nvmeN/quirks */
		if (!vwc_quirks_mask(a, &mask, bad, sizeof(bad)))
			fuzz_assert(mask < (1UL << 32));
		(void)vwc_quirk_bit(a, strlen(a));
		break;
	case 4:	/* a modalias (sysfs) to the driver-table key */
		key = malloc(1 + (size % 64));
		if (!vwc_pci_id_key(a, key, 1 + (size % 64))) {
			fuzz_assert(strlen(key) == 50 && !strncmp(key, a, 42) &&
				    !strcmp(key + 42, "bc*sc*i*"));
		}
		free(key);
		/* and as an "options nvme ..." string (modprobe.d via libkmod) */
		key = malloc(16);
		key[0] = '\0';
		if (vwc_options_quirks(a, key, 16) == 1)
			fuzz_assert(strlen(key) < 16 && strstr(a, key));
		free(key);
		break;
	case 5:	/* mountinfo and swaps tables, as libmount reads them for us */
		where = malloc(16);
		if (table_uses(a, p[1], where, 16) == 1)
			fuzz_assert(strlen(where) < 16);
		free(where);
		break;
	case 6:
		(void)vwc_dynid_is_pci_addr(a);
		break;
	}
	fuzz_free_parts(p, 3);
	return 0;
}
