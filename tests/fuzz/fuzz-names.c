// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device names given on the command line or found in sysfs:
 * vwc_name_classify() (the pure part of vwc_resolve(), which also needs
 * udev and /dev). Invariants: anything classified yields a block name
 * "nvmeX" or "nvmeXnY" that classifies again as a controller or a
 * namespace; a too short output buffer is never overrun.
 */
#include "topo.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = fuzz_str(data, size), ns[VWC_NAME_LEN], again[VWC_NAME_LEN];
	char *tiny = malloc(6);
	enum vwc_kind k, k2;

	k = vwc_name_classify(name, ns, sizeof(ns));
	if (k != VWC_KIND_NONE) {
		fuzz_assert(!strncmp(ns, "nvme", 4));
		k2 = vwc_name_classify(ns, again, sizeof(again));
		fuzz_assert(k2 == (k == VWC_KIND_CTRL ? VWC_KIND_CTRL :
							VWC_KIND_NS));
		fuzz_assert(!strcmp(ns, again));
	}
	/* truncation: snprintf into 6 bytes, ASan checks the bound */
	fuzz_assert(vwc_name_classify(name, tiny, 6) == k);
	free(tiny);
	free(name);
	return 0;
}
