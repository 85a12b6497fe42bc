// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnvme 1.x edge. Every libnvme call of the project is in this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libnvme.h>

#include "nvme-io.h"

/* libnvme: > 0 NVMe status, -1 with errno. Ours: > 0 status, -errno. */
static int nvme_ret(int r)
{
	if (r < 0)
		return errno ? -errno : -EIO;
	return r;
}

int vwc_nvme_open(const char *devnode)
{
	int fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

static void copy_trimmed(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

int vwc_nvme_identify_ctrl(int fd, uint8_t *vwc, char mn[41], char sn[21],
			   char fr[9])
{
	struct nvme_id_ctrl id;
	int r;

	memset(&id, 0, sizeof(id));
	errno = 0;
	r = nvme_ret(nvme_identify_ctrl(fd, &id));
	if (r)
		return r;
	*vwc = id.vwc;
	copy_trimmed(mn, id.mn, sizeof(id.mn));
	copy_trimmed(sn, id.sn, sizeof(id.sn));
	copy_trimmed(fr, id.fr, sizeof(id.fr));
	return 0;
}

static int get_feature(int fd, __u8 fid, __u32 *result)
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

static int set_feature(int fd, __u8 fid, __u32 cdw11)
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

int vwc_nvme_get_wce(int fd, bool *wce)
{
	__u32 result = 0;
	int r = get_feature(fd, NVME_FEAT_FID_VOLATILE_WC, &result);

	if (!r)
		*wce = NVME_FEAT_VWC_WCE(result);
	return r;
}

int vwc_nvme_set_wce(int fd, bool wce)
{
	return set_feature(fd, NVME_FEAT_FID_VOLATILE_WC,
			   NVME_SET(wce ? 1 : 0, FEAT_VWC_WCE));
}

int vwc_nvme_smart_warning(int fd, uint8_t *cw)
{
	struct nvme_smart_log log;
	int r;

	memset(&log, 0, sizeof(log));
	errno = 0;
	r = nvme_ret(nvme_get_log_smart(fd, NVME_NSID_ALL, false, &log));
	if (!r)
		*cw = log.critical_warning;
	return r;
}

int vwc_nvme_get_aec(int fd, uint32_t *aec)
{
	return get_feature(fd, NVME_FEAT_FID_ASYNC_EVENT, aec);
}

int vwc_nvme_set_aec(int fd, uint32_t aec)
{
	return set_feature(fd, NVME_FEAT_FID_ASYNC_EVENT, aec);
}

int vwc_nvme_flush(int fd, uint32_t nsid)
{
	errno = 0;
	return nvme_ret(nvme_flush(fd, nsid));
}

int vwc_nvme_get_irq_coalesce(int fd, uint8_t *thr, uint8_t *time)
{
	__u32 result = 0;
	int r = get_feature(fd, NVME_FEAT_FID_IRQ_COALESCE, &result);

	if (!r) {
		*thr = NVME_GET(result, FEAT_IRQC_THR);
		*time = NVME_GET(result, FEAT_IRQC_TIME);
	}
	return r;
}

int vwc_nvme_set_irq_coalesce(int fd, uint8_t thr, uint8_t time)
{
	return set_feature(fd, NVME_FEAT_FID_IRQ_COALESCE,
			   NVME_SET(thr, FEAT_IRQC_THR) |
			   NVME_SET(time, FEAT_IRQC_TIME));
}

int vwc_nvme_nsid(int fd, uint32_t *nsid)
{
	errno = 0;
	return nvme_ret(nvme_get_nsid(fd, nsid));
}

const char *vwc_nvme_strerror(int r, char *buf, size_t len)
{
	if (r > 0)
		snprintf(buf, len, "NVMe status 0x%x: %s", r,
			 nvme_status_to_string(r, false));
	else
		snprintf(buf, len, "%s", strerror(-r));
	return buf;
}
