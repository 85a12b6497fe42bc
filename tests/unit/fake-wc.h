/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A namespace's queue/write_cache as a plain file, <root>/sys/<ns>/queue/
 * write_cache, for the unit tests that run the core's writers on a fake
 * sysfs tree (they link the core library: vwc_mkdir_p(), vwc_blk_read()).
 */
#ifndef VWC_FAKE_WC_H
#define VWC_FAKE_WC_H

#include <stdio.h>
#include <string.h>

#include "blk.h"

static inline void fake_wc_put(const char *root, const char *ns,
			       const char *val)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/sys/%s/queue", root, ns);
	vwc_mkdir_p(p);
	strcat(p, "/write_cache");
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%s\n", val);
		fclose(f);
	}
}

/* its mode as vwc_blk_read() reads it, "?" if it cannot be read */
static inline const char *fake_wc_get(const char *root, const char *ns)
{
	static char buf[32];
	char p[512];
	enum vwc_mode m;

	snprintf(p, sizeof(p), "%s/sys/%s", root, ns);
	if (vwc_blk_read(p, &m))
		return "?";
	snprintf(buf, sizeof(buf), "%s", vwc_mode_str(m));
	return buf;
}

#endif
