/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: unbound.h - records of the unbinds in progress, and their recovery
 *
 * Before it unbinds a PCI function from nvme, a rebind writes
 * <rundir>/unbound/<address>: the unbinder (its pid and start time, see
 * procid.h), the boot it happened in, the function's IDs. The bind that
 * follows removes it. A record whose unbinder has ended is a rebind cut
 * short by something no signal mask holds back (SIGKILL: udevd's event
 * timeout, the OOM killer; a crash): its function is bound to nvme again
 * by whoever sees it first, under the quirks lock:
 *
 *  - every command that takes the quirks lock (dynid.h), before anything
 *    else;
 *  - the sidecar (watch), which watches the directory;
 *  - rebind-guard, run by the systemd path unit
 *    nvme-vwc-sync-rebind-guard.path as soon as the directory is not
 *    empty: it waits for the unbinder to end (bounded), then binds.
 *
 * Only what a record names is bound, and never while its unbinder lives:
 * a function the admin unbound (no record), one bound since to any driver,
 * one whose driver_override names another driver, another device at that
 * address, a record of an earlier boot: the record goes, nothing is bound.
 * A bind that fails is retried (vwc_dynid_bind_retry()), logged as an
 * error naming the command that binds it, and its record moved to
 * <rundir>/unbound-failed/, so that nothing loops on it. /run survives
 * the initramfs's switch_root: a record made there reaches the system.
 */
#ifndef VWC_UNBOUND_H
#define VWC_UNBOUND_H

#include <stdbool.h>

#include "procid.h"

struct vwc_pcidev;

/* rebind-guard: how long it waits for an unbinder before leaving it */
#define VWC_GUARD_WAIT_MS	150000

/**
 * struct vwc_unbound_rec - one record
 * @addr:	the PCI function ("0000:01:00.0")
 * @unbinder:	the process that unbound it
 * @boot:	/proc/sys/kernel/random/boot_id then
 * @ids:	vendor_device_subvendor_subdevice (struct vwc_pcidev's key)
 */
struct vwc_unbound_rec {
	char addr[20];
	struct vwc_procid unbinder;
	char boot[40];
	char ids[40];
};

/**
 * vwc_unbound_parse() - read a record (pure)
 * @text:	"unbinder 1234 5678\nboot <uuid>\nids 1b36_0010_1af4_1100\n"
 * @r:		on 0, the record (@r->addr is left as it was)
 *
 * Return: 0, or -EINVAL.
 */
int vwc_unbound_parse(const char *text, struct vwc_unbound_rec *r);

/**
 * vwc_unbound_mark() - record that this process is about to unbind @d
 * @d:	PCI function
 *
 * Return: 0, or a negative errno (logged: the caller must not unbind).
 */
int vwc_unbound_mark(const struct vwc_pcidev *d);

/**
 * vwc_unbound_clear() - @addr is bound again: its record goes
 * @addr:	PCI address
 */
void vwc_unbound_clear(const char *addr);

/**
 * vwc_unbound_recover() - bind what a record names whose unbinder ended
 *
 * Call with the quirks lock held (vwc_dynid_qlock_take() and
 * vwc_dynid_qlock_try() do, once they have it). Records whose unbinder
 * lives are left.
 *
 * Return: 0, or -EIO when a bind failed (logged; its record moved to
 * <rundir>/unbound-failed).
 */
int vwc_unbound_recover(void);

/**
 * vwc_unbound_failed() - how many binds of vwc_unbound_recover() failed
 *			  in this process
 *
 * Return: the count.
 */
int vwc_unbound_failed(void);

/**
 * vwc_unbound_pending() - is there any record
 *
 * Return: true if <rundir>/unbound holds one.
 */
bool vwc_unbound_pending(void);

/**
 * vwc_unbound_watch() - an inotify descriptor on <rundir>/unbound
 *
 * Made if missing. Readable when a record appears (the sidecar polls it).
 *
 * Return: the descriptor, or a negative errno.
 */
int vwc_unbound_watch(void);

#endif
