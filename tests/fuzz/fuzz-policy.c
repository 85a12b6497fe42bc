// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /sys/block/<ns>/queue/write_cache as read: vwc_mode_parse(). Invariant:
 * only the kernel's two spellings (a newline may follow) are accepted, and
 * an accepted value prints back the same.
 */
#include <errno.h>

#include "policy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	enum vwc_mode m = VWC_MODE_NONE;
	int r = vwc_mode_parse(s, &m);

	if (!r) {
		const char *back = vwc_mode_str(m);
		size_t n = strlen(back);

		fuzz_assert(m == VWC_MODE_WRITE_BACK ||
			    m == VWC_MODE_WRITE_THROUGH);
		fuzz_assert(!strncmp(s, back, n) && (!s[n] || s[n] == '\n'));
	} else {
		fuzz_assert(r == -EINVAL);
	}
	free(s);
	return 0;
}
