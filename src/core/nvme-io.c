// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libnvme edge: field decoding and encoding for the commands the
 * project sends. The commands themselves go through the one backend meson
 * configured (nvme-io-libnvme1.c or nvme-io-libnvme3.c, see
 * nvme-io-backend.h); nothing outside these files knows which.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme-io.h"
#include "nvme-io-backend.h"

_Static_assert(VWC_NVME_CTRL_VWC_PRESENT == NVME_CTRL_VWC_PRESENT,
	       "Identify VWC present bit");
_Static_assert(VWC_NVME_SMART_CW_VOLATILE_MEMORY ==
	       NVME_SMART_CRIT_VOLATILE_MEMORY, "SMART volatile memory bit");

/* admin commands sent, by kind (vwc_nvme_sent()): relaxed atomics, as
 * the sidecar's threads may share them */
static unsigned long sent[VWC_NVME_SENT_N];

static void count(enum vwc_nvme_sent_kind k)
{
	__atomic_fetch_add(&sent[k], 1, __ATOMIC_RELAXED);
}

unsigned long vwc_nvme_sent(enum vwc_nvme_sent_kind k)
{
	return __atomic_load_n(&sent[k], __ATOMIC_RELAXED);
}

int vwc_nvme_open(const char *devnode)
{
	int fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

void vwc_nvme_close(int fd)
{
	if (fd < 0)
		return;
	vwc_io_release(fd);
	close(fd);
}

static void copy_trimmed(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

int vwc_nvme_identify_ctrl(int fd, uint8_t *vwc, uint32_t *ver, char mn[41],
			   char sn[21], char fr[9])
{
	struct nvme_id_ctrl id;
	int r;

	memset(&id, 0, sizeof(id));
	count(VWC_NVME_SENT_ID_CTRL);
	r = vwc_io_identify_ctrl(fd, &id);
	if (r)
		return r;
	*vwc = id.vwc;
	*ver = le32toh(id.ver);
	copy_trimmed(mn, id.mn, sizeof(id.mn));
	copy_trimmed(sn, id.sn, sizeof(id.sn));
	copy_trimmed(fr, id.fr, sizeof(id.fr));
	return 0;
}

int vwc_nvme_active_nsids(int fd, uint32_t **ids, int *n)
{
	struct nvme_ns_list *page = malloc(sizeof(*page));
	uint32_t *all = NULL, *tmp, last = 0;
	int i, r = 0, nr = 0;

	*ids = NULL;
	*n = 0;
	if (!page)
		return -ENOMEM;
	for (;;) {
		memset(page, 0, sizeof(*page));
		count(VWC_NVME_SENT_NS_LIST);
		r = vwc_io_identify_active_ns(fd, last, page);
		if (r)
			break;
		for (i = 0; i < NVME_ID_NS_LIST_MAX; i++) {
			uint32_t id = le32toh(page->ns[i]);

			/* 0 ends the list; ids only ever increase */
			if (!id || id <= last || id >= NVME_NSID_ALL)
				break;
			tmp = realloc(all, (nr + 1) * sizeof(*all));
			if (!tmp) {
				r = -ENOMEM;
				goto out;
			}
			all = tmp;
			all[nr++] = last = id;
		}
		if (i < NVME_ID_NS_LIST_MAX)
			break;	/* a page not full: that was the last */
	}
out:
	free(page);
	if (r) {
		free(all);
		return r;
	}
	*ids = all;
	*n = nr;
	return 0;
}

int vwc_nvme_ns_no_vwc(int fd, uint32_t nsid, bool *no_vwc)
{
	struct nvme_id_independent_id_ns id;
	int r;

	memset(&id, 0, sizeof(id));
	count(VWC_NVME_SENT_ID_NS);
	r = vwc_io_identify_ns_indep(fd, nsid, &id);
	if (!r)
		*no_vwc = id.nsfeat & VWC_NVME_NS_FEAT_VWC_NOT_PRESENT;
	return r;
}

int vwc_nvme_get_wce(int fd, bool *wce)
{
	__u32 result = 0;
	int r;

	count(VWC_NVME_SENT_WCE);
	r = vwc_io_get_features(fd, NVME_FEAT_FID_VOLATILE_WC, &result);

	if (!r)
		*wce = NVME_FEAT_VWC_WCE(result);
	return r;
}

int vwc_nvme_set_wce(int fd, bool wce)
{
	count(VWC_NVME_SENT_OTHER);
	return vwc_io_set_features(fd, NVME_FEAT_FID_VOLATILE_WC,
				   NVME_SET(wce ? 1 : 0, FEAT_VWC_WCE));
}

int vwc_nvme_smart_warning(int fd, uint8_t *cw)
{
	struct nvme_smart_log log;
	int r;

	memset(&log, 0, sizeof(log));
	count(VWC_NVME_SENT_SMART);
	r = vwc_io_get_log_smart(fd, &log);
	if (!r)
		*cw = log.critical_warning;
	return r;
}

int vwc_nvme_get_aec(int fd, uint32_t *aec)
{
	count(VWC_NVME_SENT_OTHER);
	return vwc_io_get_features(fd, NVME_FEAT_FID_ASYNC_EVENT, aec);
}

int vwc_nvme_set_aec(int fd, uint32_t aec)
{
	count(VWC_NVME_SENT_OTHER);
	return vwc_io_set_features(fd, NVME_FEAT_FID_ASYNC_EVENT, aec);
}

int vwc_nvme_flush(int fd, uint32_t nsid)
{
	count(VWC_NVME_SENT_OTHER);
	return vwc_io_flush(fd, nsid);
}

int vwc_nvme_get_irq_coalesce(int fd, uint8_t *thr, uint8_t *time)
{
	__u32 result = 0;
	int r;

	count(VWC_NVME_SENT_OTHER);
	r = vwc_io_get_features(fd, NVME_FEAT_FID_IRQ_COALESCE, &result);

	if (!r) {
		*thr = NVME_GET(result, FEAT_IRQC_THR);
		*time = NVME_GET(result, FEAT_IRQC_TIME);
	}
	return r;
}

int vwc_nvme_set_irq_coalesce(int fd, uint8_t thr, uint8_t time)
{
	count(VWC_NVME_SENT_OTHER);
	return vwc_io_set_features(fd, NVME_FEAT_FID_IRQ_COALESCE,
				   NVME_SET(thr, FEAT_IRQC_THR) |
				   NVME_SET(time, FEAT_IRQC_TIME));
}

int vwc_nvme_nsid(int fd, uint32_t *nsid)
{
	return vwc_io_get_nsid(fd, nsid);
}

const char *vwc_nvme_strerror(int r, char *buf, size_t len)
{
	if (r > 0)
		snprintf(buf, len, "NVMe status 0x%x: %s", r,
			 vwc_io_status_string(r));
	else
		snprintf(buf, len, "%s", strerror(-r));
	return buf;
}
