/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: wz-settle.h - after a bind with disable_write_zeroes: taken or not
 *
 * quirks' last step for a controller: read write_zeroes_max_bytes back
 * (wz-ignored.h decides). Where the kernel ignores the quirk (a controller
 * reporting a Write Zeroes Size Limit on a kernel without "nvme: respect
 * NVME_QUIRK_DISABLE_WRITE_ZEROES when wzsl is set"), the dynamic ID
 * gained nothing: it is removed and the controller unbound and bound
 * again, as it was, with the safety of every rebind (in-use checks and
 * handles, signals held, the unbind record), and the finding recorded.
 */
#ifndef VWC_WZ_SETTLE_H
#define VWC_WZ_SETTLE_H

#include <stdbool.h>

#include "dynid.h"
#include "quirks.h"

/**
 * vwc_wz_settle() - did the kernel take the quirk; undo the dynamic ID if not
 * @d:		PCI function, bound (reloaded here)
 * @qo:		options (quiet)
 * @val:	the driver_data it runs with (the dynamic ID's, or the
 *		table's when the kernel gives the quirk itself)
 * @ours:	that driver_data comes from a dynamic ID of this tool:
 *		undone when the kernel ignores the quirk
 * @recreated:	on return, true when the undo's rebind re-created the
 *		namespaces (the write-cache policy is due again)
 *
 * Called with the quirks lock held.
 *
 * Return: 0 the quirk is in effect (or no namespace to read yet), -EIO
 * Write Zeroes is still on (the kernel ignores the quirk: said, undone
 * where @ours, recorded; or the kernel shows the controller runs without
 * it), another negative errno when the undo failed.
 */
int vwc_wz_settle(struct vwc_pcidev *d, const struct vwc_quirks_opts *qo,
		  unsigned long val, bool ours, bool *recreated);

#endif
