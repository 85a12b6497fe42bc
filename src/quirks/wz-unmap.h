/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: wz-unmap.h - write_zeroes_unmap_max_bytes at run time (6.18+)
 *
 * Kernels from 6.18 have a writable write_zeroes_unmap_max_bytes for each
 * namespace: quirks sets it to 0 after the dynamic ID's rebind and records
 * the value found in <rundir>/changed/<ns>.write_zeroes_unmap_max_bytes;
 * restore puts the kernel's own value back.
 */
#ifndef VWC_WZ_UNMAP_H
#define VWC_WZ_UNMAP_H

#include <stdbool.h>

#include "quirks.h"
#include "topo.h"

/**
 * vwc_wzu_runtime() - write_zeroes_unmap_max_bytes to 0 on a controller's
 *		       namespaces
 * @t:		topology
 * @ci:		the controller's index
 * @qo:		options (dry run, quiet)
 *
 * Prints write_zeroes_max_bytes of each, and each change.
 *
 * Return: 0, or a negative errno (a write failed).
 */
int vwc_wzu_runtime(struct vwc_topo *t, int ci,
		    const struct vwc_quirks_opts *qo);

/**
 * vwc_wzu_restore() - put write_zeroes_unmap_max_bytes back
 * @ns:		namespace name
 * @syspath:	its sysfs directory
 * @dry_run:	only print
 * @quiet:	print nothing
 *
 * Only if this tool recorded the change and the value is still 0: the
 * kernel's own value, write_zeroes_unmap_max_hw_bytes.
 *
 * Return: 1 restored, 0 nothing to do, negative errno.
 */
int vwc_wzu_restore(const char *ns, const char *syspath, bool dry_run,
		    bool quiet);

#endif
