// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "irqstat.h"

int vwc_irq_count_cpus(const char *header)
{
	int n = 0;
	const char *p = header;

	while ((p = strstr(p, "CPU"))) {
		n++;
		p += 3;
	}
	return n;
}

int vwc_irq_parse_line(const char *line, int ncpu, char *queue, size_t len,
		       unsigned long long *count)
{
	const char *p = line, *name;
	unsigned long long sum = 0;
	char *end;
	int i;
	size_t n;

	/* the queue name is the last word */
	n = strlen(line);
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	name = line + n;
	while (name > line && !isspace((unsigned char)name[-1]))
		name--;
	if (strncmp(name, "nvme", 4) || !strchr(name, 'q') ||
	    (size_t)(line + n - name) >= len)
		return 0;
	/* "IRQ:" then one column per CPU */
	p = strchr(line, ':');
	if (!p)
		return 0;
	p++;
	for (i = 0; i < ncpu; i++) {
		unsigned long long v = strtoull(p, &end, 10);

		if (end == p)
			return 0;
		sum += v;
		p = end;
	}
	memcpy(queue, name, (size_t)(line + n - name));
	queue[line + n - name] = '\0';
	*count = sum;
	return 1;
}

int vwc_stat_completions(const char *stat, unsigned long long *out)
{
	unsigned long long f[17] = { 0 };
	const char *p = stat;
	char *end;
	int i;

	for (i = 0; i < 17; i++) {
		f[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	if (i < 11)
		return -EINVAL;
	/* fields 1, 5, 12, 16 (1-based): reads, writes, discards, flushes */
	*out = f[0] + f[4] + (i >= 15 ? f[11] : 0) + (i >= 17 ? f[15] : 0);
	return 0;
}
