// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kwatch's BTF reader: which controller an io_uring admin command is for,
 * and whether an ioctl's command is on an admin queue.
 *
 * nvme_dev_uring_cmd(ioucmd, ...) takes its controller from
 * ioucmd->file->private_data (the struct nvme_ctrl that nvme_dev_open()
 * put there), and that controller's admin_q is the queue the sidecar
 * learns from its own Get Features (VWC_KW_OWN_GET). The io_uring kprobe
 * fetches that queue with three dereferences, at offsets read from the
 * running kernel's BTF (/sys/kernel/btf/vmlinux, and nvme_core's own when
 * it is a module) through libbpf: no kernel version's layout is assumed.
 * Without BTF (or with VWC_KWATCH=nobtf, for tests), the event names no
 * queue and the sidecar takes it as every controller's (kwatch.h).
 *
 * nvme_submit_user_cmd(q, ...) gets ns ? ns->queue : ctrl->admin_q from
 * nvme_user_cmd() and nvme_user_cmd64() (6.1, 6.12, 7.2), and the queue's
 * queuedata tells which: blk_mq_alloc_disk(..., ns) sets it to the
 * namespace, the admin queue is made with none (blk_mq_init_queue() on
 * 6.1, blk_mq_alloc_queue(set, lim, NULL) on 6.12 and 7.2), and nvme_core
 * itself reads "no queuedata" as "admin queue" (nvme_req_qid(), the qid
 * of its tracepoints; nvme_init_request()). The offset of queuedata in
 * struct request_queue differs between kernels (after a mutex on 6.1,
 * the first member on 6.12 and 7.2): it is read from BTF too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kwatch-int.h"

/* anonymous structs and unions nest this deep at most */
#define KW_BTF_DEPTH	8

/* @t's member @name (in anonymous members too): its byte offset, its type */
static long find_member(const struct btf *btf, const struct btf_type *t,
			const char *name, int depth, __u32 *type)
{
	const struct btf_member *m = btf_members(t);
	int i, n = btf_vlen(t);
	long r;

	for (i = 0; i < n; i++) {
		const char *mn = btf__name_by_offset(btf, m[i].name_off);
		__u32 bits = btf_member_bit_offset(t, i);
		const struct btf_type *mt;
		int id;

		if (mn && *mn) {
			if (strcmp(mn, name))
				continue;
			if (bits % 8)
				return -EPROTO;
			*type = m[i].type;
			return (long)(bits / 8);
		}
		id = btf__resolve_type(btf, m[i].type);
		mt = id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
		if (!mt || !btf_is_composite(mt) || depth >= KW_BTF_DEPTH)
			continue;
		r = find_member(btf, mt, name, depth + 1, type);
		if (r >= 0)
			return bits % 8 ? -EPROTO : (long)(bits / 8) + r;
	}
	return -ENOENT;
}

long vwc_kw_btf_ptr_offset(const struct btf *btf, const char *sname,
			   const char *mname)
{
	const struct btf_type *t;
	__u32 type = 0;
	long off;
	int id;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, (__u32)id);
	if (!t)
		return -ENOENT;
	off = find_member(btf, t, mname, 0, &type);
	if (off < 0)
		return off;
	/* a pointer (through typedefs and qualifiers), or not what we think */
	id = btf__resolve_type(btf, type);
	t = id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
	if (!t || !btf_is_ptr(t))
		return -EPROTO;
	return off;
}

/* libbpf's own messages (no BTF here, and so on) would go to stderr */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

void vwc_kw_btf_args_of(const struct btf *vmlinux, const struct btf *mod,
			struct kw_btf *out)
{
	long file, priv, adminq, qd;

	memset(out, 0, sizeof(*out));
	file = vwc_kw_btf_ptr_offset(vmlinux, "io_uring_cmd", "file");
	priv = vwc_kw_btf_ptr_offset(vmlinux, "file", "private_data");
	/* built in, nvme_core's types are the kernel's; else its module's */
	adminq = vwc_kw_btf_ptr_offset(vmlinux, "nvme_ctrl", "admin_q");
	if (adminq == -ENOENT)
		adminq = vwc_kw_btf_ptr_offset(mod, "nvme_ctrl", "admin_q");
	if (file < 0 || priv < 0 || adminq < 0) {
		long r = file < 0 ? file : priv < 0 ? priv : adminq;

		snprintf(out->uring_why, sizeof(out->uring_why),
			 "kernel BTF: %s: %s",
			 file < 0 ? "struct io_uring_cmd's file" :
			 priv < 0 ? "struct file's private_data" :
			 mod ? "struct nvme_ctrl's admin_q" :
			 "struct nvme_ctrl's admin_q (no BTF of nvme_core)",
			 strerror((int)-r));
	} else {
		snprintf(out->uring_q, sizeof(out->uring_q),
			 "q=+%ld(+%ld(+%ld($arg1))):x64", adminq, priv, file);
	}
	/*
	 * The block layer's struct request_queue (vmlinux, nvme_core or
	 * not): 6.1 has queuedata after a mutex, 6.12 and 7.2 first.
	 */
	qd = vwc_kw_btf_ptr_offset(vmlinux, "request_queue", "queuedata");
	if (qd < 0)
		snprintf(out->qd_why, sizeof(out->qd_why),
			 "kernel BTF: struct request_queue's queuedata: %s",
			 strerror((int)-qd));
	else
		snprintf(out->qd, sizeof(out->qd), "qd=+%ld($arg1):x64", qd);
}

void vwc_kw_btf_read(struct kw_btf *out)
{
	struct btf *vmlinux, *mod = NULL;
	const char *want = getenv("VWC_KWATCH");
	int r;

	if (want && !strcmp(want, "nobtf")) {
		memset(out, 0, sizeof(*out));
		snprintf(out->uring_why, sizeof(out->uring_why),
			 "VWC_KWATCH=nobtf");
		snprintf(out->qd_why, sizeof(out->qd_why), "VWC_KWATCH=nobtf");
		return;
	}
	libbpf_set_print(quiet);
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		r = errno ? errno : ENOENT;
		memset(out, 0, sizeof(*out));
		snprintf(out->uring_why, sizeof(out->uring_why),
			 "no kernel BTF (/sys/kernel/btf/vmlinux): %s",
			 strerror(r));
		snprintf(out->qd_why, sizeof(out->qd_why), "%s",
			 out->uring_why);
		return;
	}
	if (vwc_kw_btf_ptr_offset(vmlinux, "nvme_ctrl", "admin_q") == -ENOENT)
		mod = btf__load_module_btf("nvme_core", vmlinux);
	vwc_kw_btf_args_of(vmlinux, mod, out);
	btf__free(mod);
	btf__free(vmlinux);
}
