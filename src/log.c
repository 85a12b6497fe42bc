// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

int vwc_log_level = LOG_WARNING;

void vwc_log(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio > vwc_log_level)
		return;
	va_start(ap, fmt);
	fputs("nvme-vwc-sync: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
