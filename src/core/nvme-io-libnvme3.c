// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnvme3 backend of nvme-io.c (nvme-cli 3.x): transport handles.
 *
 * The rest of the tree holds plain file descriptors from vwc_nvme_open()
 * and closes them with vwc_nvme_close(). libnvme3 sends commands through a
 * transport handle that it opens itself, by device name, and no call turns
 * an existing descriptor into a handle. So each descriptor gets a handle of
 * its own, opened on first use on the node the descriptor refers to and
 * kept in a table indexed by the descriptor number. An entry is trusted
 * only while the descriptor still refers to the same file (device and
 * inode, from fstat): once the caller closed it and the number was reused,
 * the stale handle is closed (it owns a separate descriptor, the caller's
 * is never touched) and a new one is opened. At most one handle per
 * descriptor number exists at any time. vwc_nvme_close() closes the
 * handle with the descriptor (vwc_io_release()): a handle left open keeps
 * the node open after the caller let it go, pinning the nvme module and
 * keeping a removed controller alive. libnvme3 opens nodes by name under
 * /dev only (nvmeX, nvmeXnY, ngXnY): a node elsewhere works when /dev has
 * the same device under its basename, else the command fails with -EINVAL
 * (libnvme 1.x would send it through the descriptor).
 *
 * Commands are built with libnvme3's nvme_init_*() helpers and run with
 * the synchronous libnvme_exec_*_passthru() calls, each admin command with
 * VWC_ADMIN_TIMEOUT_MS. libnvme3 already returns > 0 NVMe status, < 0
 * -errno: the convention of nvme-io.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvme-io.h"
#include "nvme-io-backend.h"

struct vwc_hdl_slot {
	struct libnvme_transport_handle *hdl;
	dev_t dev;
	ino_t ino;
};

static struct libnvme_global_ctx *vwc_ctx;
static struct vwc_hdl_slot *vwc_slots;
static size_t vwc_nslots;

/* The same device node (any path to it), or else the same file. */
static bool same_file(const struct stat *a, const struct stat *b)
{
	if ((a->st_mode & S_IFMT) != (b->st_mode & S_IFMT))
		return false;
	if (S_ISCHR(a->st_mode) || S_ISBLK(a->st_mode))
		return a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static struct vwc_hdl_slot *slot_of(int fd)
{
	struct vwc_hdl_slot *s;
	size_t n;

	if ((size_t)fd < vwc_nslots)
		return &vwc_slots[fd];
	n = (size_t)fd + 16;
	s = realloc(vwc_slots, n * sizeof(*s));
	if (!s)
		return NULL;
	memset(s + vwc_nslots, 0, (n - vwc_nslots) * sizeof(*s));
	vwc_slots = s;
	vwc_nslots = n;
	return &vwc_slots[fd];
}

/*
 * open_handle() - a handle on the node @fd refers to, checked to be the
 * same file. Errors: the node is gone (-ENODEV, as an ioctl on a removed
 * controller reports), or libnvme3 refused the name (its -errno).
 */
static int open_handle(int fd, const struct stat *st,
		       struct libnvme_transport_handle **hdlp)
{
	struct libnvme_transport_handle *hdl = NULL;
	char link[64], path[PATH_MAX];
	struct stat hst;
	ssize_t n;
	int r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';

	r = libnvme_open(vwc_ctx, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK,
			 &hdl);
	if (r == -ENOENT)
		return -ENODEV;
	if (r)
		return r < 0 ? r : -EIO;
	if (fstat(libnvme_transport_handle_get_fd(hdl), &hst) < 0 ||
	    !same_file(st, &hst)) {
		libnvme_close(hdl);
		return -ENODEV;
	}
	*hdlp = hdl;
	return 0;
}

static int get_handle(int fd, struct libnvme_transport_handle **hdlp)
{
	struct vwc_hdl_slot *s;
	struct stat st;
	int r;

	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!vwc_ctx) {
		vwc_ctx = libnvme_create_global_ctx();
		if (!vwc_ctx)
			return -ENOMEM;
		/* Callers report every failure themselves, once. */
		libnvme_set_logging_level(vwc_ctx, LIBNVME_LOG_ERR, false,
					  false);
	}
	s = slot_of(fd);
	if (!s)
		return -ENOMEM;
	if (s->hdl && s->dev == st.st_dev && s->ino == st.st_ino) {
		*hdlp = s->hdl;
		return 0;
	}
	if (s->hdl) {
		libnvme_close(s->hdl);
		s->hdl = NULL;
	}
	r = open_handle(fd, &st, &s->hdl);
	if (r)
		return r;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	*hdlp = s->hdl;
	return 0;
}

void vwc_io_release(int fd)
{
	struct vwc_hdl_slot *s;

	if (fd < 0 || (size_t)fd >= vwc_nslots)
		return;
	s = &vwc_slots[fd];
	if (s->hdl)
		libnvme_close(s->hdl);
	memset(s, 0, sizeof(*s));
}

static int admin(int fd, struct libnvme_passthru_cmd *cmd)
{
	struct libnvme_transport_handle *hdl;
	int r = get_handle(fd, &hdl);

	if (r)
		return r;
	cmd->timeout_ms = VWC_ADMIN_TIMEOUT_MS;
	return libnvme_exec_admin_passthru(hdl, cmd);
}

int vwc_io_identify_ctrl(int fd, struct nvme_id_ctrl *id)
{
	struct libnvme_passthru_cmd cmd;

	nvme_init_identify_ctrl(&cmd, id);
	return admin(fd, &cmd);
}

int vwc_io_identify_active_ns(int fd, __u32 nsid, struct nvme_ns_list *list)
{
	struct libnvme_passthru_cmd cmd;

	nvme_init_identify_active_ns_list(&cmd, nsid, list);
	return admin(fd, &cmd);
}

int vwc_io_identify_ns_indep(int fd, __u32 nsid,
			     struct nvme_id_independent_id_ns *id)
{
	struct libnvme_passthru_cmd cmd;

	nvme_init_identify_csi_independent_identify_id_ns(&cmd, nsid, id);
	return admin(fd, &cmd);
}

int vwc_io_get_features(int fd, __u8 fid, __u32 *result)
{
	struct libnvme_passthru_cmd cmd;
	int r;

	nvme_init_get_features(&cmd, fid, NVME_GET_FEATURES_SEL_CURRENT);
	r = admin(fd, &cmd);
	if (!r)
		*result = (__u32)cmd.result;
	return r;
}

int vwc_io_set_features(int fd, __u8 fid, __u32 cdw11)
{
	struct libnvme_passthru_cmd cmd;

	nvme_init_set_features(&cmd, fid, false);
	cmd.cdw11 = cdw11;
	return admin(fd, &cmd);
}

int vwc_io_get_log_smart(int fd, struct nvme_smart_log *log)
{
	struct libnvme_passthru_cmd cmd;

	/* RAE stays clear: reading the log re-arms SMART events. */
	nvme_init_get_log_smart(&cmd, NVME_NSID_ALL, log);
	return admin(fd, &cmd);
}

int vwc_io_flush(int fd, __u32 nsid)
{
	struct libnvme_transport_handle *hdl;
	struct libnvme_passthru_cmd cmd;
	int r = get_handle(fd, &hdl);

	if (r)
		return r;
	nvme_init_flush(&cmd, nsid);
	return libnvme_exec_io_passthru(hdl, &cmd);
}

int vwc_io_get_nsid(int fd, __u32 *nsid)
{
	struct libnvme_transport_handle *hdl;
	int r = get_handle(fd, &hdl);

	if (r)
		return r;
	return libnvme_get_nsid(hdl, nsid);
}

const char *vwc_io_status_string(int status)
{
	return libnvme_status_to_string(status, false);
}
