/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: topo-scope.h - a scan of some NVM subsystems: what it looks at
 *
 * vwc_topo_scan_nqns() reads the controllers whose subsystem NQN is one
 * of a list, and only the block devices those can own, by their names'
 * instance numbers (topo.c's, not for other callers).
 */
#ifndef VWC_TOPO_SCOPE_H
#define VWC_TOPO_SCOPE_H

#include <stdbool.h>

#include "devname.h"
#include "topo.h"

struct vwc_scope;

/**
 * vwc_scope_new() - a scope of subsystems
 * @nqns:	their NQNs (kept, not copied)
 * @nr:		how many
 *
 * Return: it, to free(), or NULL (no memory).
 */
struct vwc_scope *vwc_scope_new(const char *const *nqns, int nr);

/**
 * vwc_scope_ctrl() - is a controller in scope
 * @sc:		scope
 * @syspath:	the controller's sysfs directory (its subsysnqn is read)
 *
 * Return: 1 in scope, 0 another subsystem's, -1 no subsystem NQN yet.
 */
int vwc_scope_ctrl(const struct vwc_scope *sc, const char *syspath);

/**
 * vwc_scope_name() - may a block device be a controller's in scope
 * @sc:		scope, after vwc_scope_numbers()
 * @name:	its name
 * @kind:	its kind (vwc_name_classify())
 *
 * Return: true if its name's instance numbers are in scope.
 */
bool vwc_scope_name(const struct vwc_scope *sc, const char *name,
		    enum vwc_kind kind);

/**
 * vwc_scope_numbers() - the instance numbers in scope
 * @sc:		scope
 * @t:		the scan's controllers (those in scope)
 */
void vwc_scope_numbers(struct vwc_scope *sc, const struct vwc_topo *t);

/**
 * vwc_scope_keeps() - does a scanned namespace belong to the scope
 * @sc:		scope
 * @t:		the scan
 * @ns:		a namespace of it
 *
 * Return: true if it is kept.
 */
bool vwc_scope_keeps(const struct vwc_scope *sc, const struct vwc_topo *t,
		     const struct vwc_ns *ns);

#endif
