/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: wz-ignored.h - a kernel that ignores disable_write_zeroes
 *
 * Before "nvme: respect NVME_QUIRK_DISABLE_WRITE_ZEROES when wzsl is set",
 * nvme_init_non_mdts_limits() (drivers/nvme/host/core.c) first set a
 * controller's Write Zeroes limit to 0 for NVME_QUIRK_DISABLE_WRITE_ZEROES,
 * then to the controller's Write Zeroes Size Limit (WZSL, Identify
 * Controller for the NVM command set) whenever that is not 0: the quirk
 * was ignored for such a controller. On those kernels that limit is the
 * only source of a namespace's write_zeroes_max_bytes, so a controller
 * that runs with the quirk and still shows a non-zero
 * write_zeroes_max_bytes is such a controller on such a kernel: told by
 * what the kernel shows, never by its version.
 *
 * What quirks found is recorded in <rundir>/wz-ignored/<PCI address>
 * (the nvme driver's registration and the reason), for audit and for
 * udev's next runs, which leave that controller alone.
 */
#ifndef VWC_WZ_IGNORED_H
#define VWC_WZ_IGNORED_H

#include <stdbool.h>
#include <stddef.h>

#include "topo.h"

/* the patch whose absence makes a kernel ignore the quirk */
#define VWC_WZSL_FIX "nvme: respect NVME_QUIRK_DISABLE_WRITE_ZEROES when wzsl is set"

/**
 * struct vwc_wz_seen - what the kernel shows of a controller's Write Zeroes
 * @nr_ns:		namespaces read
 * @nr_on:		of them, with write_zeroes_max_bytes not 0
 * @max_bytes:		the largest write_zeroes_max_bytes read
 * @quirks_shown:	the kernel has the controller's quirks attribute (7.x)
 * @quirk_active:	that attribute lists disable_write_zeroes
 * @summary:		"nvme0n1 131072, nvme0n2 131072"
 */
struct vwc_wz_seen {
	int nr_ns;
	int nr_on;
	long max_bytes;
	bool quirks_shown;
	bool quirk_active;
	char summary[256];
};

/**
 * enum vwc_wz_verdict - what a bind with disable_write_zeroes came to
 * @VWC_WZ_OFF:		Write Zeroes off on every namespace: the quirk works
 * @VWC_WZ_NO_NS:	no namespace to read
 * @VWC_WZ_IGNORED:	the controller runs with the quirk and some
 *			namespace still has Write Zeroes: the kernel ignores
 *			it (the controller reports WZSL, the kernel lacks
 *			VWC_WZSL_FIX)
 * @VWC_WZ_NOT_TAKEN:	the kernel shows the controller runs without the
 *			quirk (the dynamic ID did not reach its probe)
 */
enum vwc_wz_verdict {
	VWC_WZ_OFF,
	VWC_WZ_NO_NS,
	VWC_WZ_IGNORED,
	VWC_WZ_NOT_TAKEN,
};

/**
 * vwc_wz_read() - read what the kernel shows of a controller's Write Zeroes
 * @sysfs:	"/sys" (a test's tree)
 * @ctrl:	"nvme0"
 * @ns:		its namespaces' block devices ("nvme0n1")
 * @nr_ns:	how many
 * @s:		result
 *
 * <sysfs>/class/block/<ns>/queue/write_zeroes_max_bytes of each, and
 * <sysfs>/class/nvme/<ctrl>/quirks. A namespace whose file cannot be read
 * is not counted.
 */
void vwc_wz_read(const char *sysfs, const char *ctrl,
		 char (*ns)[VWC_NAME_LEN], int nr_ns, struct vwc_wz_seen *s);

/**
 * vwc_wz_verdict() - decide what a bind with the quirk came to (pure)
 * @s:			what the kernel shows after the bind
 * @bound_with_quirk:	the controller was bound through a dynamic ID (or
 *			the driver's table) whose driver_data has the quirk;
 *			decides where the kernel shows no quirks attribute
 *
 * Return: the verdict.
 */
enum vwc_wz_verdict vwc_wz_verdict(const struct vwc_wz_seen *s,
				   bool bound_with_quirk);

/**
 * vwc_wz_why() - the reason for VWC_WZ_IGNORED, for the admin (pure)
 * @s:		what the kernel shows
 * @how:	how the controller runs with the quirk, as shown ("kernel
 *		quirks: disable_write_zeroes", "bound through a dynamic ID
 *		with driver_data 0x200")
 * @buf:	the text
 * @len:	size of @buf
 */
void vwc_wz_why(const struct vwc_wz_seen *s, const char *how, char *buf,
		size_t len);

/**
 * vwc_wz_ctrl_ignored() - does the kernel ignore the quirk on a controller
 * @sysfs:	"/sys" (a test's tree): where the namespaces are read
 * @t:		topology (kernel quirks filled)
 * @ci:		the controller's index
 * @why:	on true, the reason
 * @len:	size of @why
 *
 * Recorded by quirks for its PCI function (vwc_wz_marked()), or shown
 * now: the kernel's quirks attribute lists disable_write_zeroes and a
 * namespace of it has Write Zeroes.
 *
 * Return: true if so.
 */
bool vwc_wz_ctrl_ignored(const char *sysfs, const struct vwc_topo *t, int ci,
			 char *why, size_t len);

/**
 * vwc_wz_mark() - record that the kernel ignores the quirk on @addr
 * @addr:	PCI address
 * @why:	vwc_wz_why()'s text
 *
 * Return: 0, or a negative errno.
 */
int vwc_wz_mark(const char *addr, const char *why);

/**
 * vwc_wz_marked() - is @addr recorded, under this registration of nvme
 * @addr:	PCI address
 * @why:	on true, the recorded reason ("" when none; may be NULL)
 * @len:	size of @why
 *
 * A record made under an earlier registration of the nvme driver (module
 * reloaded: another kernel module may be in place) is removed and not
 * reported.
 *
 * Return: true if recorded.
 */
bool vwc_wz_marked(const char *addr, char *why, size_t len);

/**
 * vwc_wz_unmark() - remove @addr's record
 * @addr:	PCI address
 */
void vwc_wz_unmark(const char *addr);

#endif
