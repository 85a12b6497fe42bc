/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: dynid.h - PCI dynamic IDs on the nvme driver, rebinding, records
 *
 * nvme-pci takes a matching pci_device_id's driver_data as the controller's
 * quirks. A dynamic ID (new_id) is matched before the driver's own table,
 * so it replaces the quirks the table gives the device. The PCI core
 * accepts a driver_data only if an entry of the table has exactly that
 * value (new_id answers EINVAL otherwise). The quirks are read at probe
 * time, so the controller is unbound and bound again, which removes and
 * re-creates its block devices. Each dynamic ID this tool adds is recorded
 * in <rundir>/dynid/<key> (the new_id line); <rundir>/dynid-restored/<addr>
 * marks a controller 'restore' handed back in this boot.
 */
#ifndef VWC_DYNID_H
#define VWC_DYNID_H

#include <stdbool.h>
#include <stddef.h>

#include "topo.h"

struct vwc_holds;

#define NVME_DRV_DIR	"/sys/bus/pci/drivers/nvme"
#define PCI_DEV_DIR	"/sys/bus/pci/devices"
/*
 * Time bounds. udev kills a RUN program after 180 s (event_timeout); one
 * quirks run on one controller waits at most: the quirks lock 60 s, the
 * probe 10 s, udev's workers on the namespaces 5 s, the binds
 * VWC_BIND_TRIES * VWC_BIND_WAIT_MS (2.5 s), the controller 30 s: about
 * 108 s.
 */
#define VWC_QLOCK_WAIT_MS	60000
#define VWC_BIND_TRIES		5
#define VWC_BIND_WAIT_MS	500

/**
 * struct vwc_pcidev - one PCI function and what is bound to it
 * @addr:	"0000:01:00.0" (VMD: "10000:e1:00.0")
 * @dir:	its sysfs directory
 * @vendor:	PCI vendor ID
 * @device:	PCI device ID
 * @subvendor:	subsystem vendor ID
 * @subdevice:	subsystem device ID
 * @modalias:	its modalias
 * @key:	record name: 1b36_0010_1af4_1100
 * @ids:	the IDs for messages
 * @driver:	bound driver, "" when unbound
 * @ctrl:	nvmeN, "" when none
 * @label:	"nvme0 (0000:01:00.0)"
 */
struct vwc_pcidev {
	char addr[20];
	char dir[VWC_PATH_LEN];
	unsigned int vendor, device, subvendor, subdevice;
	char modalias[128];
	char key[40];
	char ids[64];
	char driver[64];
	char ctrl[VWC_NAME_LEN];
	char label[96];
};

/**
 * struct vwc_nslist - the block devices of a controller's namespaces
 * @name:	"nvme0n1" (multipath heads for paths)
 * @n:		how many
 */
struct vwc_nslist {
	char (*name)[VWC_NAME_LEN];
	int n;
};

/**
 * vwc_dynid_nslist_free() - free what vwc_dynid_ctrl_namespaces() allocated
 * @l:	list (empty after)
 */
void vwc_dynid_nslist_free(struct vwc_nslist *l);

/* a list freed when it goes out of scope */
#define VWC_NSLIST_AUTO	__attribute__((cleanup(vwc_dynid_nslist_free)))

/**
 * vwc_dynid_is_pci_addr() - is @s a PCI address "dddd:bb:dd.f" (pure)
 * @s:	string
 *
 * Return: true if it is.
 */
bool vwc_dynid_is_pci_addr(const char *s);

/**
 * vwc_dynid_pcidev_load() - read a PCI function from sysfs
 * @d:		result
 * @addr:	its address
 *
 * Return: 0, or -ENODEV.
 */
int vwc_dynid_pcidev_load(struct vwc_pcidev *d, const char *addr);

/**
 * vwc_dynid_ctrl_pci_addr() - the PCI function of a controller
 * @ctrl:	"nvme0"
 * @addr:	on return, "0000:01:00.0"
 * @len:	size of @addr
 *
 * Return: 0, -ENODEV for a controller not on PCI, or a negative errno.
 */
int vwc_dynid_ctrl_pci_addr(const char *ctrl, char *addr, size_t len);

/**
 * vwc_dynid_ctrl_namespaces() - block devices of a controller's namespaces
 * @ctrl:	"nvme0" ("" gives none)
 * @l:		result, every namespace (freed and refilled when it holds
 *		some); vwc_dynid_nslist_free() when done
 */
void vwc_dynid_ctrl_namespaces(const char *ctrl, struct vwc_nslist *l);

/**
 * vwc_dynid_wz_summary() - "nvme0n1 524288, nvme0n2 524288"
 * @l:		namespaces
 * @out:	text (write_zeroes_max_bytes of each)
 * @len:	size of @out
 */
void vwc_dynid_wz_summary(const struct vwc_nslist *l, char *out, size_t len);

/**
 * vwc_dynid_wz_enabled() - has any namespace Write Zeroes
 * @l:	namespaces
 *
 * Return: 1 some namespace has, 0 none has, -ENOENT no namespace.
 */
int vwc_dynid_wz_enabled(const struct vwc_nslist *l);

/**
 * vwc_dynid_kernel_quirks() - /sys/class/nvme/@ctrl/quirks (7.x)
 * @ctrl:	"nvme0"
 * @buf:	its text
 * @len:	size of @buf
 *
 * Return: 0, or a negative errno (no such attribute, no controller).
 */
int vwc_dynid_kernel_quirks(const char *ctrl, char *buf, size_t len);

/**
 * vwc_dynid_parse() - read a dynamic-ID record (pure)
 * @rec:	"1b36 0010 1af4 1100 0 0 200\ndriver-inode 1234"
 * @val:	on 0, the driver_data
 * @ino:	on 0, the nvme driver directory's inode when added, 0 if the
 *		record does not say
 *
 * Return: 0, or -EINVAL.
 */
int vwc_dynid_parse(const char *rec, unsigned long *val,
		    unsigned long long *ino);

/**
 * vwc_dynid_recorded() - is a dynamic ID recorded for @key, and alive
 * @key:	vwc_pcidev key
 * @val:	on true, its driver_data
 *
 * A record made under an earlier registration of the nvme driver (rmmod,
 * modprobe: the driver's sysfs directory has another inode) is stale: the
 * dynamic ID went with the driver. It is removed and not reported.
 *
 * Return: true if recorded.
 */
bool vwc_dynid_recorded(const char *key, unsigned long *val);

/**
 * vwc_dynid_held_back() - did 'restore' hand @addr back in this boot
 * @addr:	PCI address
 *
 * Return: true if so.
 */
bool vwc_dynid_held_back(const char *addr);

/**
 * vwc_dynid_hold_set() - mark or unmark @addr as handed back
 * @addr:	PCI address
 * @set:	mark
 */
void vwc_dynid_hold_set(const char *addr, bool set);

/**
 * vwc_dynid_remove_ids() - remove every dynamic ID for these IDs, and the
 *			    record
 * @v:		vendor
 * @dv:		device
 * @sv:		subsystem vendor
 * @sd:		subsystem device
 * @key:	record name; NULL keeps the record (a rebind still to come:
 *		vwc_dynid_forget() once it is done)
 *
 * Return: how many were removed, or a negative errno.
 */
int vwc_dynid_remove_ids(unsigned int v, unsigned int dv, unsigned int sv,
			 unsigned int sd, const char *key);

/**
 * vwc_dynid_forget() - remove the record of a dynamic ID
 * @key:	record name
 *
 * Once the controller runs without the ID (bound again after its
 * removal): a process ended between the removal and the bind leaves the
 * record, so that the next restore still knows the quirk is its own.
 */
void vwc_dynid_forget(const char *key);

/**
 * vwc_dynid_add() - add (and record) a dynamic ID for @d's exact IDs
 * @d:		PCI function
 * @val:	driver_data
 *
 * Unbound devices with the same IDs (other than @d) get a driver_override
 * naming no driver for the time of the new_id write, so that the PCI
 * core's attach does not bind them; the admin's own overrides stay.
 *
 * Return: 0, or a negative errno (printed).
 */
int vwc_dynid_add(const struct vwc_pcidev *d, unsigned long val);

/**
 * vwc_dynid_wait_ctrl() - wait for a live controller on @d
 * @d:		PCI function (reloaded)
 * @want_ns:	with at least this many namespaces, each with its queue
 *		(write_zeroes_max_bytes readable)
 * @timeout_ms:	how long
 *
 * Return: 0, or -ETIMEDOUT.
 */
int vwc_dynid_wait_ctrl(struct vwc_pcidev *d, int want_ns, int timeout_ms);

/**
 * vwc_dynid_bind() - write @addr to the nvme driver's bind or unbind
 * @what:	"bind" or "unbind"
 * @addr:	PCI address
 *
 * Return: 0, or a negative errno.
 */
int vwc_dynid_bind(const char *what, const char *addr);

/**
 * vwc_dynid_override() - would a driver_override keep @d from nvme
 * @d:		PCI function
 * @why:	on 1, the reason
 * @len:	size of @why
 *
 * Return: 1 its driver_override names another driver, 0 not.
 */
int vwc_dynid_override(const struct vwc_pcidev *d, char *why, size_t len);

/**
 * vwc_dynid_bind_retry() - bind @addr to nvme, retrying
 * @addr:	PCI address
 * @label:	for messages
 *
 * VWC_BIND_TRIES binds VWC_BIND_WAIT_MS apart, then the PCI core's
 * drivers_probe; says loudly when the device stays unbound. Bound, the
 * record of its unbind goes (vwc_unbound_clear()).
 *
 * Return: 0 bound to nvme, or a negative errno.
 */
int vwc_dynid_bind_retry(const char *addr, const char *label);

/**
 * vwc_dynid_rebind() - unbind and bind @d, releasing @h between the two
 * @d:		PCI function
 * @h:		handles on its block devices
 * @nr_ns:	namespaces to wait for
 *
 * The checks of @h again (vwc_holds_recheck()), a record of the unbind
 * (vwc_unbound_mark()), the unbind, the bind, the wait for the controller;
 * from the check to the end of the wait, signals are held (sigdefer.h).
 *
 * Return: 0, or a negative errno (printed).
 */
int vwc_dynid_rebind(struct vwc_pcidev *d, struct vwc_holds *h, int nr_ns);

/**
 * vwc_dynid_qlock_take() - take <rundir>/quirks.lock, waiting up to 60 s
 *
 * Dynamic IDs and rebinds are serialized by this lock, not by the
 * writers' lock (see dynid.c). Every unbind happens under it, so once it
 * is had no other unbinder of ours is at work: the records of rebinds cut
 * short are acted on first (vwc_unbound_recover()).
 *
 * Return: 0, or a negative errno (printed).
 */
int vwc_dynid_qlock_take(void);

/**
 * vwc_dynid_qlock_try() - vwc_dynid_qlock_take() without waiting
 *
 * Return: 0, -EWOULDBLOCK when another process holds it (nothing
 * printed), or a negative errno (printed).
 */
int vwc_dynid_qlock_try(void);

/**
 * vwc_dynid_qlock_release() - release the lock vwc_dynid_qlock_take() took
 */
void vwc_dynid_qlock_release(void);

#endif
