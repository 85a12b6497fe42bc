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
