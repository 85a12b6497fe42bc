// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/interrupts lines and /sys/block/<dev>/stat:
 * vwc_irq_count_cpus(), vwc_irq_parse_line(), vwc_stat_completions().
 * The first byte picks the CPU column count and the queue buffer size
 * (heap-allocated at that size, so ASan sees any overrun). Invariant: a
 * queue name found starts with "nvme" and fits its buffer.
 */
#include "irqstat.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long n;
	size_t qlen;
	char *s, *q;
	int ncpu;

	if (!size)
		return 0;
	ncpu = data[0] & 0x3f;
	qlen = (data[0] >> 6) ? (size_t)(data[0] >> 6) * 8 : 1;
	s = fuzz_str(data + 1, size - 1);
	q = malloc(qlen);
	(void)vwc_irq_count_cpus(s);
	if (vwc_irq_parse_line(s, ncpu, q, qlen, &n)) {
		fuzz_assert(strlen(q) < qlen && !strncmp(q, "nvme", 4));
	}
	(void)vwc_stat_completions(s, &n);
	free(q);
	free(s);
	return 0;
}
