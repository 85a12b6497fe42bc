// SPDX-License-Identifier: GPL-2.0-or-later
/* /proc/interrupts and block stat parsing. */
#include "irqstat.h"
#include "tap.h"

int main(void)
{
	char q[32];
	unsigned long long n;

	ok(vwc_irq_count_cpus("           CPU0       CPU1       \n") == 2,
	   "two CPU columns");
	ok(vwc_irq_parse_line(" 24:        10         20  PCI-MSIX-0000:00:04.0   1-edge      nvme0q1\n",
			      2, q, sizeof(q), &n) == 1 && n == 30,
	   "nvme0q1: 10 + 20");
	is_str(q, "nvme0q1", "queue name");
	ok(vwc_irq_parse_line(" 25:   1 2 PCI-MSIX-0000:00:05.0 0-edge nvme12q0", 2,
			      q, sizeof(q), &n) == 1 && n == 3, "admin queue");
	is_str(q, "nvme12q0", "admin queue name");
	ok(vwc_irq_parse_line(" 11:  5  6  IO-APIC  11-fasteoi  virtio0", 2, q,
			      sizeof(q), &n) == 0, "virtio line ignored");
	ok(vwc_irq_parse_line("NMI:  0  0  Non-maskable interrupts", 2, q,
			      sizeof(q), &n) == 0, "NMI ignored");
	ok(vwc_irq_parse_line(" 24: 10 PCI-MSIX nvme0q1", 2, q, sizeof(q),
			      &n) == 0, "short line rejected");
	ok(!vwc_stat_completions("  100 0 800 5  200 0 1600 9  0 10 14  7 0 56 1  42 3\n", &n) &&
	   n == 100 + 200 + 7 + 42, "stat: reads + writes + discards + flushes");
	ok(!vwc_stat_completions("1 0 8 5 2 0 16 9 0 10 14\n", &n) && n == 3,
	   "old 11-field stat");
	ok(vwc_stat_completions("1 2 3\n", &n) < 0, "short stat rejected");
	return tap_done();
}
