// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel NVMe device names: what each designates, and the instance
 * numbers in it (pure).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
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

/*
 * "nvme<inst>" or "nvme<inst>n<nsid>" into @dst of @len, cut as snprintf()
 * would: without snprintf(), which cost a scan of class/block more than
 * the rest of its work on every entry.
 */
static void put_name(char *dst, size_t len, unsigned int inst, bool ns,
		     unsigned int nsid)
{
	char buf[32], digits[12];
	size_t n = 4, k;
	int pass;

	if (!len)
		return;		/* the kind alone asked */
	memcpy(buf, "nvme", 4);
	for (pass = 0; pass < (ns ? 2 : 1); pass++) {
		unsigned int v = pass ? nsid : inst;

		if (pass)
			buf[n++] = 'n';
		k = 0;
		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (k)
			buf[n++] = digits[--k];
	}
	if (n > len - 1)
		n = len - 1;
	memcpy(dst, buf, n);
	dst[n] = '\0';
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
		put_name(ns_name, len, inst, false, 0);
		return VWC_KIND_CTRL;
	}
	if (*p == 'c' && !generic) {
		p++;
		if (!parse_num(&p, &cntlid) || *p != 'n')
			return VWC_KIND_NONE;
		p++;
		if (!parse_num(&p, &nsid) || *p)
			return VWC_KIND_NONE;
		put_name(ns_name, len, inst, true, nsid);
		return VWC_KIND_PATH;
	}
	if (*p != 'n')
		return VWC_KIND_NONE;
	p++;
	if (!parse_num(&p, &nsid))
		return VWC_KIND_NONE;
	put_name(ns_name, len, inst, true, nsid);
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

unsigned int vwc_name_hash(const char *name)
{
	unsigned int h = 2166136261u;	/* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

int vwc_name_index_init(struct vwc_name_index *ix, int n, const void *base,
			size_t size, size_t name_off)
{
	unsigned int slots = 1;

	memset(ix, 0, sizeof(*ix));
	ix->base = base;
	ix->size = size;
	ix->name_off = name_off;
	if (n < 1 || (unsigned int)n > UINT_MAX / 4)
		return -ENOMEM;
	while (slots < 2 * (unsigned int)n)
		slots <<= 1;
	ix->slot = calloc(slots, sizeof(*ix->slot));
	if (!ix->slot)
		return -ENOMEM;
	ix->mask = slots - 1;
	return 0;
}

static const char *entry_name(const struct vwc_name_index *ix, int i)
{
	return (const char *)ix->base + (size_t)i * ix->size + ix->name_off;
}

int vwc_name_index_find(const struct vwc_name_index *ix, const char *name,
			unsigned int *hole)
{
	unsigned int h;

	if (!ix->slot)
		return -1;
	for (h = vwc_name_hash(name) & ix->mask; ix->slot[h];
	     h = (h + 1) & ix->mask)
		if (!strcmp(entry_name(ix, ix->slot[h] - 1), name))
			return ix->slot[h] - 1;
	if (hole)
		*hole = h;
	return -1;
}

void vwc_name_index_all(struct vwc_name_index *ix, int n)
{
	unsigned int h;
	int i;

	if (!ix->slot)
		return;
	for (i = 0; i < n; i++) {
		for (h = vwc_name_hash(entry_name(ix, i)) & ix->mask;
		     ix->slot[h]; h = (h + 1) & ix->mask)
			;
		ix->slot[h] = i + 1;
	}
}

void vwc_name_index_free(struct vwc_name_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
}

/* a run of decimal digits, the kernel's (no leading zero), below 2^32 */
static bool key_digits(const char **p, uint64_t *v)
{
	const char *s = *p;

	if (!isdigit((unsigned char)*s) ||
	    (*s == '0' && isdigit((unsigned char)s[1])))
		return false;
	for (*v = 0; isdigit((unsigned char)*s); s++) {
		*v = *v * 10 + (uint64_t)(*s - '0');
		if (*v > UINT32_MAX)
			return false;
	}
	*p = s;
	return true;
}

bool vwc_name_order_key(const char *name, bool ns, uint64_t *key)
{
	const char *p = name + 4;
	uint64_t a, n = 0;

	if (strncmp(name, "nvme", 4) || !key_digits(&p, &a))
		return false;
	if (ns && (*p++ != 'n' || !key_digits(&p, &n)))
		return false;
	if (*p)
		return false;
	*key = a << 32 | n;
	return true;
}
