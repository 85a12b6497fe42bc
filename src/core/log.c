// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

int vwc_log_level = LOG_WARNING;

/*
 * Run by systemd-udevd (RUN+=), the tool's stderr reaches the journal only
 * at udev's debug level, so a namespace changed at boot would leave no
 * trace. udevd gives the programs it runs the event's properties as
 * environment (ACTION, DEVPATH, SEQNUM); then messages also go to syslog(3)
 * (journald's /dev/log), and NOTICE lines (what changed and why) are always
 * logged. Without a syslog socket (busybox guests) syslog() drops them.
 */
static int from_udev = -1;

static bool under_udev(void)
{
	if (from_udev < 0) {
		from_udev = getenv("ACTION") && getenv("DEVPATH") &&
			    getenv("SEQNUM");
		if (from_udev)
			openlog("nvme-vwc-sync", LOG_PID, LOG_DAEMON);
	}
	return from_udev;
}

void vwc_log(int prio, const char *fmt, ...)
{
	bool udev = under_udev();
	int level = vwc_log_level;
	va_list ap;

	if (udev && level < LOG_NOTICE)
		level = LOG_NOTICE;
	if (prio > level)
		return;
	if (udev) {
		va_start(ap, fmt);
		vsyslog(prio, fmt, ap);
		va_end(ap);
	}
	va_start(ap, fmt);
	/* one line at a time: the sidecar's fast path is a thread */
	flockfile(stderr);
	fputs("nvme-vwc-sync: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}
