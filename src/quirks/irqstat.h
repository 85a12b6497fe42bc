/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: irqstat.h - interrupts and completions per NVMe queue
 *
 * What the kernel patch that disables IRQ completion batching on Hygon
 * CPUs measured, from userspace: interrupts per NVMe queue
 * (/proc/interrupts) and completed requests (the namespaces' stat files)
 * over a sampling window, and completions per interrupt.
 */
#ifndef VWC_IRQSTAT_H
#define VWC_IRQSTAT_H

#include <stddef.h>

/**
 * vwc_irq_parse_line() - parse one /proc/interrupts line (pure)
 * @line:	e.g. " 24:   10   20  PCI-MSIX-0000:00:04.0  1-edge  nvme0q1"
 * @ncpu:	number of CPU columns (from the header line)
 * @queue:	the action name if it is an NVMe queue ("nvme0q1")
 * @len:	size of @queue
 * @count:	sum over the CPU columns
 *
 * Return: 1 for an NVMe queue line, 0 for another line.
 */
int vwc_irq_parse_line(const char *line, int ncpu, char *queue, size_t len,
		       unsigned long long *count);

/**
 * vwc_irq_count_cpus() - number of CPU columns in the header line (pure)
 * @header:	first line of /proc/interrupts
 *
 * Return: the count.
 */
int vwc_irq_count_cpus(const char *header);

/**
 * vwc_stat_completions() - completed requests in a block stat line (pure)
 * @stat:	contents of /sys/block/<dev>/stat
 * @out:	reads + writes + discards + flushes completed
 *
 * Return: 0, or -EINVAL if the line has too few fields.
 */
int vwc_stat_completions(const char *stat, unsigned long long *out);

#endif
