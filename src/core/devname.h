/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: devname.h - kernel NVMe device names
 *
 * What a name designates (a controller nvme0, a namespace nvme0n1, a
 * hidden multipath path nvme0c1n1, a generic node ng0n1, a partition
 * nvme0n1p1), and the instance numbers in it. Pure: no file is read.
 */
#ifndef VWC_DEVNAME_H
#define VWC_DEVNAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/** enum vwc_kind - what a kernel device name designates */
enum vwc_kind {
	VWC_KIND_NONE = 0,
	VWC_KIND_CTRL,		/* nvme0 */
	VWC_KIND_NS,		/* nvme0n1 */
	VWC_KIND_PATH,		/* nvme0c1n1: hidden multipath path */
	VWC_KIND_GENERIC,	/* ng0n1 */
	VWC_KIND_PARTITION,	/* nvme0n1p1 */
};

/**
 * vwc_name_classify() - classify a kernel device name (pure)
 * @name:	e.g. "nvme0", "nvme0n1", "ng0n1", "nvme0c1n1", "nvme0n1p1"
 * @ns_name:	for anything naming a namespace, the namespace's block name
 *		("nvme0n1"); for a controller, the name itself
 * @len:	size of @ns_name; 0: the kind alone (@ns_name not touched,
 *		may be NULL)
 *
 * Return: the kind, VWC_KIND_NONE if @name is not an NVMe device name.
 */
enum vwc_kind vwc_name_classify(const char *name, char *ns_name, size_t len);

/**
 * vwc_name_numbers() - the instance numbers in a controller, namespace or
 *			path node name (pure)
 * @name:	"nvme<A>", "nvme<A>n<N>" or "nvme<A>c<C>n<N>"
 * @a:		A: the controller's instance (nvme<A>, and a namespace of
 *		controller A when multipath is off) or the kernel subsystem's
 *		(a multipath head nvme<A>n<N>, a path node)
 * @c:		C for a path node (the controller it goes through), else
 *		UINT_MAX
 *
 * Return: false when @name does not start with "nvme" and a number.
 */
bool vwc_name_numbers(const char *name, unsigned int *a, unsigned int *c);

/**
 * vwc_name_hash() - a device name as a hash table's number (pure)
 * @name:	any name
 *
 * Return: its 32-bit FNV-1a hash.
 */
unsigned int vwc_name_hash(const char *name);

/**
 * struct vwc_name_index - an array's entries by name: their indices + 1
 *			   by vwc_name_hash(), open addressing
 * @slot:	the table; NULL when there is none (nothing to index, or
 *		no memory): vwc_name_index_find() finds nothing then, and
 *		the caller walks or bisects its array (slower, the same
 *		answer)
 * @mask:	slots - 1 (a power of two, at least twice the entries)
 * @base:	the array
 * @size:	the size of its entries
 * @name_off:	the offset of an entry's name (a char array)
 */
struct vwc_name_index {
	int *slot;
	unsigned int mask;
	const void *base;
	size_t size;
	size_t name_off;
};

/**
 * vwc_name_index_init() - an empty index with room for @n entries
 * @ix:		the index (zeroed first)
 * @n:		how many entries it will hold, at most
 * @base:	the array (where its entries are looked up; it may be moved
 *		or grown later: vwc_name_index_rebase())
 * @size:	the size of an entry
 * @name_off:	the offset of the entry's name
 *
 * Return: 0, or -ENOMEM (or @n < 1) with no table (@ix->slot NULL).
 */
int vwc_name_index_init(struct vwc_name_index *ix, int n, const void *base,
			size_t size, size_t name_off);

/**
 * vwc_name_index_rebase() - the indexed array moved (grown by realloc())
 * @ix:		the index
 * @base:	where the array lives now
 */
static inline void vwc_name_index_rebase(struct vwc_name_index *ix,
					 const void *base)
{
	ix->base = base;
}

/**
 * vwc_name_index_find() - the entry named @name
 * @ix:		the index (its table may be NULL)
 * @name:	the name
 * @hole:	if not NULL and the name is not there, set to the slot where
 *		vwc_name_index_put() adds it (keep the table unchanged between
 *		the two)
 *
 * Return: the entry's index, or -1 (not there, or no table).
 */
int vwc_name_index_find(const struct vwc_name_index *ix, const char *name,
			unsigned int *hole);

/**
 * vwc_name_index_put() - entry @i, not yet indexed, at @hole
 * @ix:		the index (with a table)
 * @hole:	what vwc_name_index_find() gave for @i's name
 * @i:		its index in the array
 */
static inline void vwc_name_index_put(struct vwc_name_index *ix,
				      unsigned int hole, int i)
{
	ix->slot[hole] = i + 1;
}

/**
 * vwc_name_index_all() - index each of the array's first entries
 * @ix:		a new index (with no table, nothing is done)
 * @n:		how many: no more than vwc_name_index_init() made room for;
 *		their names distinct
 */
void vwc_name_index_all(struct vwc_name_index *ix, int n);

/**
 * vwc_name_index_free() - the table freed
 * @ix:		the index: it has no table afterwards
 */
void vwc_name_index_free(struct vwc_name_index *ix);

/**
 * vwc_name_order_key() - a controller or namespace name as a number in
 *			  its strverscmp() order (pure)
 * @name:	"nvme<A>" (!@ns) or "nvme<A>n<N>" (@ns), as the kernel makes
 *		them (no leading zeros)
 * @ns:		which form
 * @key:	on success, A << 32 | N: two such names compare as their
 *		keys do, as strverscmp() compares them (digit runs without
 *		leading zeros compare as their values)
 *
 * Return: false for any other name (a leading zero, a number of 2^32 or
 * more, anything after).
 */
bool vwc_name_order_key(const char *name, bool ns, uint64_t *key);

#endif
