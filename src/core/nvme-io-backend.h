/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: nvme-io-backend.h - what a libnvme backend provides to nvme-io.c
 *
 * nvme-io.c decodes and encodes the fields; a backend only sends the
 * commands. Exactly one backend is compiled, chosen when meson configures
 * (option "libnvme"): nvme-io-libnvme1.c for libnvme 1.x (fd based),
 * nvme-io-libnvme3.c for libnvme3 (transport handles). Private to these
 * three files.
 *
 * Every function returns 0 on success, a negative errno when the command
 * could not be sent or timed out, and a positive NVMe status when the
 * controller answered with an error. Admin commands carry
 * VWC_ADMIN_TIMEOUT_MS; the I/O Flush uses the kernel's I/O timeout.
 */
#ifndef VWC_NVME_IO_BACKEND_H
#define VWC_NVME_IO_BACKEND_H

#include <libnvme.h>

/**
 * vwc_io_release() - let go of what the backend holds for a descriptor
 * @fd:		a descriptor from vwc_nvme_open(), about to be closed
 *
 * libnvme 1.x holds nothing; libnvme3 closes the transport handle (and
 * its own descriptor of the node) it opened for @fd.
 */
void vwc_io_release(int fd);

/**
 * vwc_io_identify_ctrl() - Identify Controller (CNS 01h)
 * @fd:		controller fd
 * @id:		result
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_identify_ctrl(int fd, struct nvme_id_ctrl *id);

/**
 * vwc_io_identify_active_ns() - Identify Active Namespace ID list (CNS 02h)
 * @fd:		controller fd
 * @nsid:	the list starts after this namespace id
 * @list:	result: up to 1024 ids in increasing order, 0 after the last
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_identify_active_ns(int fd, __u32 nsid, struct nvme_ns_list *list);

/**
 * vwc_io_identify_ns_indep() - I/O Command Set Independent Identify
 *				Namespace (CNS 08h)
 * @fd:		controller fd
 * @nsid:	namespace id
 * @id:		result
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_identify_ns_indep(int fd, __u32 nsid,
			     struct nvme_id_independent_id_ns *id);

/**
 * vwc_io_get_features() - Get Features, current value, NSID 0
 * @fd:		controller fd
 * @fid:	feature identifier
 * @result:	completion dword 0
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_get_features(int fd, __u8 fid, __u32 *result);

/**
 * vwc_io_set_features() - Set Features, not saved, NSID 0
 * @fd:		controller fd
 * @fid:	feature identifier
 * @cdw11:	value
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_set_features(int fd, __u8 fid, __u32 cdw11);

/**
 * vwc_io_get_log_smart() - SMART / Health log, all namespaces, RAE cleared
 * @fd:		controller fd
 * @log:	result
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_get_log_smart(int fd, struct nvme_smart_log *log);

/**
 * vwc_io_flush() - NVMe Flush through the I/O passthrough
 * @fd:		controller, namespace or generic fd
 * @nsid:	namespace id
 *
 * Return: 0, -errno or an NVMe status.
 */
int vwc_io_flush(int fd, __u32 nsid);

/**
 * vwc_io_get_nsid() - namespace id of a namespace or generic fd
 * @fd:		fd
 * @nsid:	result
 *
 * Return: 0 or -errno.
 */
int vwc_io_get_nsid(int fd, __u32 *nsid);

/**
 * vwc_io_status_string() - libnvme's text for a positive NVMe status
 * @status:	NVMe status
 *
 * Return: a static string.
 */
const char *vwc_io_status_string(int status);

#endif
