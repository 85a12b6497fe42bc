// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel NVMe device names: what each designates, and the instance
 * numbers in it (pure).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "devname.h"

/* Parse "<prefix><num>" at *p, advancing it. */
static bool parse_num(const char **p, unsigned int *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 1000000)
			return false;
		s++;
	}
	*out = (unsigned int)v;
	*p = s;
	return true;
}

enum vwc_kind vwc_name_classify(const char *name, char *ns_name, size_t len)
{
	unsigned int inst, cntlid, nsid, part;
	const char *p = name;
	bool generic = false;

	if (!strncmp(p, "nvme", 4)) {
		p += 4;
	} else if (!strncmp(p, "ng", 2)) {
		p += 2;
		generic = true;
	} else {
		return VWC_KIND_NONE;
	}
	if (!parse_num(&p, &inst))
		return VWC_KIND_NONE;
	if (!*p) {
		if (generic)
			return VWC_KIND_NONE;
		snprintf(ns_name, len, "nvme%u", inst);
		return VWC_KIND_CTRL;
	}
	if (*p == 'c' && !generic) {
		p++;
		if (!parse_num(&p, &cntlid) || *p != 'n')
			return VWC_KIND_NONE;
		p++;
		if (!parse_num(&p, &nsid) || *p)
			return VWC_KIND_NONE;
		snprintf(ns_name, len, "nvme%un%u", inst, nsid);
		return VWC_KIND_PATH;
	}
	if (*p != 'n')
		return VWC_KIND_NONE;
	p++;
	if (!parse_num(&p, &nsid))
		return VWC_KIND_NONE;
	snprintf(ns_name, len, "nvme%un%u", inst, nsid);
	if (!*p)
		return generic ? VWC_KIND_GENERIC : VWC_KIND_NS;
	if (*p == 'p' && !generic) {
		p++;
		if (parse_num(&p, &part) && !*p)
			return VWC_KIND_PARTITION;
	}
	return VWC_KIND_NONE;
}

bool vwc_name_numbers(const char *name, unsigned int *a, unsigned int *c)
{
	const char *p = name + 4;

	*c = UINT_MAX;
	if (strncmp(name, "nvme", 4) || !parse_num(&p, a))
		return false;
	if (*p == 'c') {
		p++;
		return parse_num(&p, c);
	}
	return true;
}

