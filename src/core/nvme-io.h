/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: nvme-io.h - the only place that talks to libnvme
 *
 * Thin wrappers over the admin commands the project sends, over libnvme
 * 1.x or libnvme3 (chosen when meson configures, see nvme-io-backend.h);
 * callers cannot tell which, and need no libnvme header: the register bits
 * they read are defined here. One return convention for the rest of the
 * code: 0 on success, a negative errno when the command could not be sent
 * (or timed out), and a positive NVMe status when the controller answered
 * with an error.
 */
#ifndef VWC_NVME_IO_H
#define VWC_NVME_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Admin commands sent from udev must not block it: bound each one. */
#define VWC_ADMIN_TIMEOUT_MS	5000

/* Identify Controller VWC byte, bit 0: a volatile write cache is present. */
#define VWC_NVME_CTRL_VWC_PRESENT		0x01
/*
 * I/O Command Set Independent Identify Namespace (CNS 08h) NSFEAT bit 5
 * (NVMe 2.1): the namespace has no volatile write cache. Linux calls it
 * NVME_NS_VWC_NOT_PRESENT (include/linux/nvme.h, 1 << 5); the host reads
 * it since 6.13, nvmet sets it for a block device without a write cache.
 * libnvme has no name for it yet.
 */
#define VWC_NVME_NS_FEAT_VWC_NOT_PRESENT	0x20
/* Identify Controller VER of NVMe 2.0, the first with CNS 08h. */
#define VWC_NVME_VER_2_0			0x00020000
/* SMART critical warning bit 4: volatile memory backup device failed. */
#define VWC_NVME_SMART_CW_VOLATILE_MEMORY	0x10

/**
 * vwc_nvme_open() - open an NVMe character or block device node
 * @devnode:	path, e.g. /dev/nvme0
 *
 * Return: a file descriptor, or a negative errno.
 */
int vwc_nvme_open(const char *devnode);

/**
 * vwc_nvme_close() - close a descriptor from vwc_nvme_open()
 * @fd:		the descriptor (a negative value is ignored)
 *
 * Closes @fd and whatever the backend holds for it: libnvme3 sends
 * commands through a transport handle with a descriptor of its own on the
 * same node, which would otherwise keep the node open (the nvme module
 * pinned, a removed controller alive) after @fd is closed. Every
 * descriptor from vwc_nvme_open() is closed with this, never close(2).
 */
void vwc_nvme_close(int fd);

/**
 * vwc_nvme_identify_ctrl() - Identify Controller, the fields we use
 * @fd:		controller fd
 * @vwc:	Identify VWC byte
 * @ver:	VER, the NVMe version the controller implements (major in
 *		bits 31:16, minor in 15:8; 0 before NVMe 1.2)
 * @mn:		model number, trimmed (41 bytes)
 * @sn:		serial number, trimmed (21 bytes)
 * @fr:		firmware revision, trimmed (9 bytes)
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_identify_ctrl(int fd, uint8_t *vwc, uint32_t *ver, char mn[41],
			   char sn[21], char fr[9]);

/**
 * vwc_nvme_active_nsids() - every namespace id attached to a controller
 * @fd:		controller fd
 * @ids:	result, increasing, to free(); NULL when there are none
 * @n:		how many
 *
 * Identify Active Namespace ID list (CNS 02h), page after page: the
 * namespaces a controller reaches, including those whose block devices
 * the kernel has not made yet (a path that is joining).
 *
 * Return: 0, -errno or an NVMe status (@ids NULL then).
 */
int vwc_nvme_active_nsids(int fd, uint32_t **ids, int *n);

/**
 * vwc_nvme_ns_no_vwc() - does a namespace report no volatile write cache
 * @fd:		controller (or namespace) fd
 * @nsid:	namespace id
 * @no_vwc:	true if NSFEAT of the I/O Command Set Independent Identify
 *		Namespace data (CNS 08h) has VWC_NVME_NS_FEAT_VWC_NOT_PRESENT
 *
 * CNS 08h came with NVMe 2.0: ask only a controller whose VER says 2.0
 * or later (VWC_NVME_VER_2_0); one that does not know it answers with an
 * NVMe status (and logs an error entry), and the bit is unknown.
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_ns_no_vwc(int fd, uint32_t nsid, bool *no_vwc);

/**
 * vwc_nvme_get_wce() - Get Features 06h, current value
 * @fd:		controller fd
 * @wce:	true if the volatile write cache is enabled
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_get_wce(int fd, bool *wce);

/**
 * vwc_nvme_set_wce() - Set Features 06h (not saved across power cycles)
 * @fd:		controller fd
 * @wce:	enable or disable the volatile write cache
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_set_wce(int fd, bool wce);

/**
 * vwc_nvme_smart_warning() - SMART / Health log critical warning byte
 * @fd:		controller fd
 * @cw:		critical warning
 *
 * Reading the log with RAE cleared also re-arms SMART asynchronous events.
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_smart_warning(int fd, uint8_t *cw);

/**
 * vwc_nvme_get_aec() - Get Features 0Bh (Asynchronous Event Configuration)
 * @fd:		controller fd
 * @aec:	current value
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_get_aec(int fd, uint32_t *aec);

/**
 * vwc_nvme_set_aec() - Set Features 0Bh
 * @fd:		controller fd
 * @aec:	new value
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_set_aec(int fd, uint32_t aec);

/**
 * vwc_nvme_flush() - one NVMe Flush command through the passthrough ioctl
 * @fd:		controller, namespace or generic fd
 * @nsid:	namespace id (0xffffffff for all)
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_flush(int fd, uint32_t nsid);

/**
 * vwc_nvme_get_irq_coalesce() - Get Features 08h, current value
 * @fd:		controller fd
 * @thr:	aggregation threshold (0's based)
 * @time:	aggregation time (100 us units)
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_get_irq_coalesce(int fd, uint8_t *thr, uint8_t *time);

/**
 * vwc_nvme_set_irq_coalesce() - Set Features 08h
 * @fd:		controller fd
 * @thr:	aggregation threshold (0's based)
 * @time:	aggregation time (100 us units)
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_nvme_set_irq_coalesce(int fd, uint8_t thr, uint8_t time);

/**
 * vwc_nvme_nsid() - namespace id of a namespace or generic fd
 * @fd:		fd
 * @nsid:	result
 *
 * Return: 0 or -errno.
 */
int vwc_nvme_nsid(int fd, uint32_t *nsid);

/**
 * enum vwc_nvme_sent_kind - commands by kind, as vwc_nvme_sent() counts
 * @VWC_NVME_SENT_ID_CTRL:	Identify Controller
 * @VWC_NVME_SENT_NS_LIST:	Identify Active Namespace ID list (a page)
 * @VWC_NVME_SENT_ID_NS:	I/O Command Set Independent Identify Namespace
 *				(a namespace's own bit)
 * @VWC_NVME_SENT_WCE:		Get Features 06h
 * @VWC_NVME_SENT_SMART:	the SMART / Health log
 * @VWC_NVME_SENT_OTHER:	the rest (Set Features, features 0Bh and 08h, and
 *				the I/O command Flush)
 * @VWC_NVME_SENT_N:		how many kinds
 */
enum vwc_nvme_sent_kind {
	VWC_NVME_SENT_ID_CTRL,
	VWC_NVME_SENT_NS_LIST,
	VWC_NVME_SENT_ID_NS,
	VWC_NVME_SENT_WCE,
	VWC_NVME_SENT_SMART,
	VWC_NVME_SENT_OTHER,
	VWC_NVME_SENT_N,
};

/**
 * vwc_nvme_sent() - commands this process sent so far, of one kind
 * @k:		the kind
 *
 * Counted when sent, answered or not; for the sidecar's account of
 * where its time went.
 *
 * Return: how many.
 */
unsigned long vwc_nvme_sent(enum vwc_nvme_sent_kind k);

/**
 * vwc_nvme_strerror() - describe a result of the functions above
 * @r:		result
 * @buf:	buffer
 * @len:	its size
 *
 * Return: @buf.
 */
const char *vwc_nvme_strerror(int r, char *buf, size_t len);

/**
 * vwc_nvme_status_path() - is a result a path-related NVMe status
 * @r:		result of the functions above
 *
 * Status Code Type 3h: the host's own while a controller resets or
 * reconnects (Host Pathing Error 70h, Command Aborted By Host 71h), or an
 * ANA state of the path. It says nothing of what the controller
 * supports: ask again later, never take it for a refusal.
 *
 * Return: true for such a status.
 */
static inline bool vwc_nvme_status_path(int r)
{
	return r > 0 && ((r >> 8) & 0x7) == 3;
}

/**
 * vwc_nvme_ctrl_down() - does a result say the controller cannot be asked now
 * @r:		result of the functions above
 *
 * An errno (the descriptor, the transport, a timeout) or a path status
 * of the host or of the controller itself (Internal Path Error 00h,
 * Controller Pathing Error 60h, Host Pathing Error 70h, Command Aborted
 * By Host 71h): every command to the controller fails the same way until
 * it is back, so the rest of a round's commands to it are not sent. An
 * ANA state (01h-03h) is one namespace group's: the others may answer.
 *
 * Return: true for such a result.
 */
static inline bool vwc_nvme_ctrl_down(int r)
{
	int sc = r & 0xff;

	if (r < 0)
		return true;
	return vwc_nvme_status_path(r) &&
	       (sc == 0x00 || sc == 0x60 || sc == 0x70 || sc == 0x71);
}

#endif
