// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device-name classification: every name an admin or the kernel uses, and
 * the instance numbers in them.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "topo.h"
#include "tap.h"

static const struct {
	const char *in;
	enum vwc_kind kind;
	const char *ns;
} table[] = {
	{ "nvme0", VWC_KIND_CTRL, "nvme0" },
	{ "nvme12", VWC_KIND_CTRL, "nvme12" },
	{ "nvme0n1", VWC_KIND_NS, "nvme0n1" },
	{ "nvme3n17", VWC_KIND_NS, "nvme3n17" },
	{ "ng0n1", VWC_KIND_GENERIC, "nvme0n1" },
	{ "ng2n3", VWC_KIND_GENERIC, "nvme2n3" },
	{ "nvme0c1n1", VWC_KIND_PATH, "nvme0n1" },
	{ "nvme1c12n4", VWC_KIND_PATH, "nvme1n4" },
	{ "nvme0n1p1", VWC_KIND_PARTITION, "nvme0n1" },
	{ "nvme0n1p", VWC_KIND_NONE, NULL },
	{ "nvme", VWC_KIND_NONE, NULL },
	{ "nvmex", VWC_KIND_NONE, NULL },
	{ "nvme0x", VWC_KIND_NONE, NULL },
	{ "nvme0n", VWC_KIND_NONE, NULL },
	{ "ng0", VWC_KIND_NONE, NULL },
	{ "ng0c1n1", VWC_KIND_NONE, NULL },
	{ "ng0n1p1", VWC_KIND_NONE, NULL },
	{ "nvme-fabrics", VWC_KIND_NONE, NULL },
	{ "nvme-subsys0", VWC_KIND_NONE, NULL },
	{ "null", VWC_KIND_NONE, NULL },
	{ "vda", VWC_KIND_NONE, NULL },
	{ "sda1", VWC_KIND_NONE, NULL },
	{ "", VWC_KIND_NONE, NULL },
	{ "nvme99999999999", VWC_KIND_NONE, NULL },
};

/* pairs of @names (in strverscmp() order) whose order keys compare as
 * strverscmp() compares them, counted in *@pairs: how many */
static int keys_ordered(const char *const *names, size_t n, bool ns,
			int *pairs)
{
	uint64_t x, y;
	size_t i, j;
	int same = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			(*pairs)++;
			same += vwc_name_order_key(names[i], ns, &x) &&
				vwc_name_order_key(names[j], ns, &y) &&
				(x < y) == (strverscmp(names[i], names[j]) < 0) &&
				(x == y) == (i == j);
		}
	return same;
}

/* names as the index keeps them: in an array of entries */
struct named {
	int pad;
	char name[VWC_NAME_LEN];
};

/* the name index: every name found at its index, none that is not there,
 * and an entry put at the hole find gave found afterwards */
static void name_index(void)
{
	static struct named e[300];
	struct vwc_name_index ix;
	unsigned int hole = ~0u;
	int i, found = 0, n = 256;

	for (i = 0; i < 300; i++)
		snprintf(e[i].name, sizeof(e[i].name), "nvme%dn%d", i / 8,
			 i % 8 + 1);
	ok(!vwc_name_index_init(&ix, 300, e, sizeof(e[0]),
				offsetof(struct named, name)),
	   "name index: made for 300 entries");
	vwc_name_index_all(&ix, n / 2);
	/* the rest as a scan adds them: find, then put at the hole */
	for (i = n / 2; i < n; i++)
		if (vwc_name_index_find(&ix, e[i].name, &hole) == -1)
			vwc_name_index_put(&ix, hole, i);
	for (i = 0; i < n; i++)
		found += vwc_name_index_find(&ix, e[i].name, NULL) == i;
	ok(found == n, "name index: each of %d names found at its index (%d)",
	   n, found);
	ok(vwc_name_index_find(&ix, "nvme32n1", &hole) == -1 && hole <= ix.mask,
	   "name index: a name not indexed is not found, and a hole is given");
	vwc_name_index_put(&ix, hole, 256);
	ok(vwc_name_index_find(&ix, "nvme32n1", NULL) == 256 &&
	   vwc_name_index_find(&ix, "nvme31n8", NULL) == 255,
	   "name index: the entry put at the hole is found, the others still");
	ok(vwc_name_index_find(&ix, "nvme0n10", NULL) == -1 &&
	   vwc_name_index_find(&ix, "", NULL) == -1,
	   "name index: a prefix's longer name and the empty name are not found");
	vwc_name_index_free(&ix);
	ok(!ix.slot && vwc_name_index_find(&ix, "nvme0n1", &hole) == -1,
	   "name index: freed, it finds nothing");
	ok(vwc_name_index_init(&ix, 0, e, sizeof(e[0]),
			       offsetof(struct named, name)) == -ENOMEM &&
	   !ix.slot && vwc_name_index_find(&ix, "nvme0n1", NULL) == -1,
	   "name index: none for no entries (the caller walks its array)");
	vwc_name_index_all(&ix, 0);
	vwc_name_index_free(&ix);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		char ns[VWC_NAME_LEN] = "";
		enum vwc_kind k = vwc_name_classify(table[i].in, ns,
						    sizeof(ns));

		ok(k == table[i].kind, "classify '%s' -> kind %d", table[i].in,
		   table[i].kind);
		if (table[i].ns)
			is_str(ns, table[i].ns, "'%s' names %s", table[i].in,
			       table[i].ns);
		ok(vwc_name_classify(table[i].in, NULL, 0) == table[i].kind,
		   "classify '%s', the kind alone (no name made) -> kind %d",
		   table[i].in, table[i].kind);
	}
	{
		static const struct {
			const char *in;
			bool ok;
			unsigned int a, c;
		} nums[] = {
			{ "nvme7", true, 7, UINT_MAX },
			{ "nvme30n1", true, 30, UINT_MAX },
			{ "nvme5c30n2", true, 5, 30 },
			{ "nvme5c", false, 0, 0 },
			{ "ng5n1", false, 0, 0 },
			{ "nvme-subsys5", false, 0, 0 },
		};
		unsigned int a, c;
		bool r;

		for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
			a = c = 12345;
			r = vwc_name_numbers(nums[i].in, &a, &c);
			ok(r == nums[i].ok && (!r || (a == nums[i].a && c == nums[i].c)),
			   "numbers of '%s': %s %u %u (got %u %u)", nums[i].in,
			   nums[i].ok ? "yes" : "no", nums[i].a, nums[i].c, a, c);
		}
	}
	/* order keys: the same order as strverscmp(), pair by pair */
	{
		static const char *const ctrls[] = {
			"nvme0", "nvme1", "nvme2", "nvme9", "nvme10", "nvme12",
			"nvme99", "nvme100", "nvme1023", "nvme4294967295",
		};
		static const char *const nss[] = {
			"nvme0n1", "nvme0n2", "nvme0n10", "nvme1n1", "nvme1n9",
			"nvme1n12", "nvme2n1", "nvme10n1", "nvme10n3",
			"nvme12n1", "nvme100n7",
		};
		static const struct {
			const char *in;
			bool ns;
		} bad[] = {
			{ "nvme01", false }, { "nvme1n01", true },
			{ "nvme4294967296", false }, { "nvme1n4294967296", true },
			{ "nvme1", true }, { "nvme1n1", false }, { "nvme1c2n1", true },
			{ "nvme1n1p2", true }, { "ng0n1", true }, { "nvme", false },
			{ "nvme-subsys1", false }, { "nvme1n", true },
		};
		uint64_t x;
		int same = 0, pairs = 0;

		same += keys_ordered(ctrls, sizeof(ctrls) / sizeof(ctrls[0]),
				     false, &pairs);
		same += keys_ordered(nss, sizeof(nss) / sizeof(nss[0]), true,
				     &pairs);
		ok(same == pairs,
		   "order keys: every pair of controller and of namespace names ordered as strverscmp() orders it (%d of %d)",
		   same, pairs);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			ok(!vwc_name_order_key(bad[i].in, bad[i].ns, &x),
			   "order key: '%s' as a %s: none (another form)",
			   bad[i].in, bad[i].ns ? "namespace" : "controller");
	}
	name_index();
	return tap_done();
}
