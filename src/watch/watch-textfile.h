/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: watch-textfile.h - the sidecar's node_exporter textfile
 *
 * "watch --textfile": what "audit -o prometheus" prints, rewritten at
 * start, on every change the sidecar makes or sees and at every
 * safety-net round. The modes of the namespaces the sidecar did not
 * evaluate or write since the last write are carried from it; every
 * mode is read again at start, after a new topology and at every
 * safety-net round. One prefix: vwc_watch_textfile_, and
 * vwc_watch_write_textfile().
 */
#ifndef VWC_WATCH_TEXTFILE_H
#define VWC_WATCH_TEXTFILE_H

#include "watch-act.h"

/**
 * vwc_watch_write_textfile() - write the node_exporter textfile, if any
 * @wr:	sidecar
 */
void vwc_watch_write_textfile(struct vwc_sidecar *wr);

/**
 * vwc_watch_textfile_stale() - a namespace's write_cache to read again
 *				at the next write of the textfile
 * @wr:	sidecar
 * @i:	its index in the topology of @wr's run
 *
 * For a namespace the sidecar evaluated or wrote.
 */
void vwc_watch_textfile_stale(struct vwc_sidecar *wr, int i);

/**
 * vwc_watch_textfile_free() - let go of what the textfile keeps
 * @wr:	sidecar
 */
void vwc_watch_textfile_free(struct vwc_sidecar *wr);

#endif
