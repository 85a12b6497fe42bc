// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnvme 1.x backend of nvme-io.c (libnvme 1.3 to 1.16): file descriptors
 * and the args-struct calls, each admin command with VWC_ADMIN_TIMEOUT_MS.
 */
#include <errno.h>

#include "nvme-io.h"
#include "nvme-io-backend.h"

/* libnvme: > 0 NVMe status, -1 with errno. Ours: > 0 status, -errno. */
static int nvme_ret(int r)
{
	if (r < 0)
		return errno ? -errno : -EIO;
	return r;
}

void vwc_io_release(int fd)
{
	(void)fd;	/* commands go through @fd itself */
}

/* Identify with @cns and @nsid into @data (4 KiB), the rest left "none" */
static int identify(int fd, enum nvme_identify_cns cns, __u32 nsid,
		    void *data)
{
	struct nvme_identify_args args = {
		.args_size = sizeof(args),
		.fd = fd,
		.timeout = VWC_ADMIN_TIMEOUT_MS,
		.data = data,
		.cns = cns,
		.csi = NVME_CSI_NVM,
		.nsid = nsid,
		.cntid = NVME_CNTLID_NONE,
		.cns_specific_id = NVME_CNSSPECID_NONE,
		.uuidx = NVME_UUID_NONE,
	};

	errno = 0;
	return nvme_ret(nvme_identify(&args));
}

int vwc_io_identify_ctrl(int fd, struct nvme_id_ctrl *id)
{
	return identify(fd, NVME_IDENTIFY_CNS_CTRL, NVME_NSID_NONE, id);
}

int vwc_io_identify_active_ns(int fd, __u32 nsid, struct nvme_ns_list *list)
{
	return identify(fd, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, nsid, list);
}

int vwc_io_identify_ns_indep(int fd, __u32 nsid,
			     struct nvme_id_independent_id_ns *id)
{
	return identify(fd, NVME_IDENTIFY_CNS_CSI_INDEPENDENT_ID_NS, nsid, id);
}

int vwc_io_get_features(int fd, __u8 fid, __u32 *result)
{
	struct nvme_get_features_args args = {
		.args_size = sizeof(args),
		.fd = fd,
		.timeout = VWC_ADMIN_TIMEOUT_MS,
		.nsid = 0,
		.sel = NVME_GET_FEATURES_SEL_CURRENT,
		.fid = fid,
		.result = result,
	};

	errno = 0;
	return nvme_ret(nvme_get_features(&args));
}

int vwc_io_set_features(int fd, __u8 fid, __u32 cdw11)
{
	__u32 result = 0;
	struct nvme_set_features_args args = {
		.args_size = sizeof(args),
		.fd = fd,
		.timeout = VWC_ADMIN_TIMEOUT_MS,
		.nsid = 0,
		.cdw11 = cdw11,
		.save = false,
		.fid = fid,
		.result = &result,
	};

	errno = 0;
	return nvme_ret(nvme_set_features(&args));
}

int vwc_io_get_log_smart(int fd, struct nvme_smart_log *log)
{
	struct nvme_get_log_args args = {
		.args_size = sizeof(args),
		.fd = fd,
		.timeout = VWC_ADMIN_TIMEOUT_MS,
		.lid = NVME_LOG_LID_SMART,
		.nsid = NVME_NSID_ALL,
		.csi = NVME_CSI_NVM,
		.lsp = NVME_LOG_LSP_NONE,
		.uuidx = NVME_UUID_NONE,
		.rae = false,
		.ot = false,
		.len = sizeof(*log),
		.log = log,
	};

	errno = 0;
	return nvme_ret(nvme_get_log(&args));
}

int vwc_io_flush(int fd, __u32 nsid)
{
	errno = 0;
	return nvme_ret(nvme_flush(fd, nsid));
}

int vwc_io_get_nsid(int fd, __u32 *nsid)
{
	errno = 0;
	return nvme_ret(nvme_get_nsid(fd, nsid));
}

const char *vwc_io_status_string(int status)
{
	return nvme_status_to_string(status, false);
}
