/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: log.h - messages to stderr (the journal, under systemd); run by
 * systemd-udevd (ACTION, DEVPATH and SEQNUM in the environment) they also go
 * to syslog(3), and NOTICE lines (a mode changed, and why) are always kept.
 */
#ifndef VWC_LOG_H
#define VWC_LOG_H

#include <syslog.h>

extern int vwc_log_level;

/**
 * vwc_log() - print a message if @prio is within vwc_log_level
 * @prio:	LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO or LOG_DEBUG
 * @fmt:	printf format
 */
void vwc_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define vwc_err(...)	vwc_log(LOG_ERR, __VA_ARGS__)
#define vwc_warn(...)	vwc_log(LOG_WARNING, __VA_ARGS__)
#define vwc_notice(...)	vwc_log(LOG_NOTICE, __VA_ARGS__)
#define vwc_info(...)	vwc_log(LOG_INFO, __VA_ARGS__)
#define vwc_dbg(...)	vwc_log(LOG_DEBUG, __VA_ARGS__)

#endif
