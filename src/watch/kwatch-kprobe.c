// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kwatch's dynamic events: kprobes on the nvme admin passthrough entry
 * points only, so that nothing is added to the I/O path (see kwatch.h).
 * Made and removed through libtracefs under the system "vwc_<pid>";
 * those of a sidecar that died without removing them are removed by the
 * next one.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "kwatch-int.h"
#include "log.h"

#define KP_PREFIX	"vwc_"

/*
 * nvme_submit_user_cmd(struct request_queue *q, struct nvme_command *cmd,
 * ...) in 6.1 to 7.2: every NVME_IOCTL_ADMIN_CMD (and IO_CMD, SUBMIT_IO),
 * from /dev/nvmeN, a namespace's block device or its ng node, with the
 * kernel's copy of the command. For an admin command q is the
 * controller's admin queue, which the sidecar learns from its own Get
 * Features (VWC_KW_OWN_GET); for an I/O command it is the namespace's
 * queue, and an I/O command can carry Set Features' bytes (Dataset
 * Management is opcode 09h too: 7 ranges and the IDR bit read as FID 06h,
 * WCE=1). Where the kernel's BTF gives the offset of struct
 * request_queue's queuedata (kwatch-btf.c) the probe fetches it too, as
 * "qd", and the kernel's filter keeps qd == 0 only: the admin queue, by
 * nvme_core's own rule. Without BTF nothing the probe can reach tells an
 * admin queue from an I/O queue without assuming a kernel's layout, and a
 * queue not learned may be a controller's admin queue (a real Set
 * Features 06h on it must put its namespaces in write back): the filter
 * stays on the command's bytes, and such an I/O command is taken as a Set
 * Features 06h on a controller not known by its queue (every
 * controller's: safe, writes that were not needed; kwatch.h).
 */
static const char KP_ADMIN_SYM[] = "nvme_submit_user_cmd";
static const char KP_ADMIN_ARGS[] =
	"q=$arg1:x64 op=+0($arg2):u8 fid=+40($arg2):u8 wce=+44($arg2):u8";
/*
 * Its return. Every passthrough ioctl returns through it, I/O too; where
 * the kernel lets a return probe fetch the function's arguments (stored
 * at entry: 6.12 and 7.2 do, 6.1 does not; tried, not assumed by
 * version), the return carries the command and queuedata and the
 * kernel's filter keeps the returns of Set Features 06h on an admin
 * queue. Elsewhere (6.1) it carries nothing to filter on: its records
 * wake no one (wakeup_events 0, vwc_kw_role_wakes()) and are read with
 * the next event, or every KW_OPEN_POLL_MS while a thread's Set Features
 * 06h is outstanding. On 6.1 only CAP_SYS_ADMIN may send passthrough.
 */
static const char KP_DONE_ARGS[] = "op=+0($arg2):u8 fid=+40($arg2):u8";
static const char KP_DONE_RET[] = "ret=$retval";
/*
 * nvme_dev_uring_cmd(struct io_uring_cmd *ioucmd, ...): admin commands
 * through io_uring on /dev/nvmeN. The command is at ioucmd's second
 * pointer (6.1: the SQE's command area; 6.5 and later: the SQE, whose
 * command area is at 48): both places are read, a match at either counts.
 * Where the kernel has BTF, the controller's admin queue too
 * (ioucmd->file->private_data->admin_q, kwatch-btf.c), as "q".
 */
static const char KP_URING_SYM[] = "nvme_dev_uring_cmd";
static const char KP_URING_ARGS[] =
	"aop=+0(+8($arg1)):u8 afid=+40(+8($arg1)):u8 awce=+44(+8($arg1)):u8 "
	"bop=+48(+8($arg1)):u8 bfid=+88(+8($arg1)):u8 bwce=+92(+8($arg1)):u8";

/*
 * nvme_uring_cmd_end_io(struct request *req, ...): an io_uring
 * passthrough command completed; req->q is struct request's first member.
 * Every io_uring passthrough completion (ng I/O too) passes it: the
 * kernel's filter keeps the learned admin queues only.
 */
static const char KP_URING_DONE_SYM[] = "nvme_uring_cmd_end_io";
static const char KP_URING_DONE_ARGS[] = "q=+0($arg1):x64";

static const char *const role_event[KW_NR_ROLES] = {
	[KW_KP_ADMIN] = "admin",
	[KW_KP_DONE] = "done",
	[KW_KP_URING] = "uring",
	[KW_KP_URING_DONE] = "uring_done",
};

/*
 * The kernel's filter of each event. Set Features 06h from anyone; Get
 * Features 06h from the sidecar itself only (how it learns each
 * controller's admin queue); both on an admin queue alone where the probe
 * fetches queuedata (KW_FETCH_QD). The return of every passthrough ioctl
 * but its own, of a Set Features 06h only where the return probe fetches
 * the command (KW_FETCH_DONE_CMD); otherwise read only for a thread with
 * a Set Features 06h outstanding.
 */
const char *vwc_kw_kprobe_filter(enum kw_role role, int self,
				 unsigned int fetch, const uint64_t *queues,
				 int nr_queues, char *buf, size_t len)
{
	const char *admin = fetch & KW_FETCH_QD ? "qd == 0 && " : "";
	size_t at;
	int i;

	switch (role) {
	case KW_KP_ADMIN:
		snprintf(buf, len,
			 "%sfid == 6 && (op == 9 || (op == 10 && common_pid == %d))",
			 admin, self);
		break;
	case KW_KP_DONE:
		if (fetch & KW_FETCH_DONE_CMD)
			snprintf(buf, len,
				 "%sfid == 6 && op == 9 && common_pid != %d",
				 admin, self);
		else
			snprintf(buf, len, "common_pid != %d", self);
		break;
	case KW_KP_URING:
		snprintf(buf, len,
			 "(aop == 9 && afid == 6) || (bop == 9 && bfid == 6)");
		break;
	case KW_KP_URING_DONE:
		/* none learned yet: nothing passes */
		at = (size_t)snprintf(buf, len, "q == 0");
		for (i = 0; i < nr_queues && at < len; i++)
			at += (size_t)snprintf(buf + at, len - at,
					       " || q == 0x%llx",
					       (unsigned long long)queues[i]);
		if (at >= len)	/* too many: every completion passes */
			snprintf(buf, len, "q != 0");
		break;
	default:
		snprintf(buf, len, "0");
		break;
	}
	return buf;
}

/*
 * Whether an event's records wake the thread that reads the rings: all
 * but a return probe that passes every passthrough ioctl's return.
 */
bool vwc_kw_role_wakes(enum kw_role role, unsigned int fetch)
{
	return role != KW_KP_DONE || (fetch & KW_FETCH_DONE_CMD);
}

/* Events left by a sidecar that is gone (killed, crashed) */
static void remove_stale(void)
{
	struct tracefs_dynevent **all;
	int i;

	all = tracefs_dynevent_get_all(TRACEFS_DYNEVENT_KPROBE |
				       TRACEFS_DYNEVENT_KRETPROBE, NULL);
	for (i = 0; all && all[i]; i++) {
		char *sys = NULL, *ev = NULL;
		long pid;
		char *end;

		tracefs_dynevent_info(all[i], &sys, &ev, NULL, NULL, NULL);
		if (sys && !strncmp(sys, KP_PREFIX, strlen(KP_PREFIX))) {
			pid = strtol(sys + strlen(KP_PREFIX), &end, 10);
			if (!*end && pid > 0 &&
			    (pid == getpid() ||
			     (kill((pid_t)pid, 0) && errno == ESRCH))) {
				if (tracefs_dynevent_destroy(all[i], true))
					vwc_dbg("cannot remove the stale kprobe %s/%s",
						sys, ev ? ev : "?");
				else
					vwc_info("removed the kprobe %s/%s of a sidecar that is gone",
						 sys, ev ? ev : "?");
			}
		}
		free(sys);
		free(ev);
	}
	tracefs_dynevent_list_free(all);
}

/*
 * nvme_core a module: "nvme_core:SYM", so that the probe comes back when
 * the module is loaded again (a built-in nvme_core has no initstate).
 */
static void addr_of(const char *sym, char *buf, size_t len)
{
	if (!access("/sys/module/nvme_core/initstate", F_OK))
		snprintf(buf, len, "nvme_core:%s", sym);
	else
		snprintf(buf, len, "%s", sym);
}

static int make(struct kw_kprobes *kp, enum kw_role role, const char *sym,
		const char *args, struct kw_event_fmt *f)
{
	char addr[96];
	struct tracefs_dynevent *d;
	int r;

	addr_of(sym, addr, sizeof(addr));
	if (role == KW_KP_DONE)
		d = tracefs_kretprobe_alloc(kp->system, role_event[role], addr,
					    args, 0);
	else
		d = tracefs_kprobe_alloc(kp->system, role_event[role], addr,
					 args);
	if (!d)
		return -ENOMEM;
	if (tracefs_dynevent_create(d)) {
		r = errno ? -errno : -EINVAL;
		tracefs_dynevent_free(d);
		return r;
	}
	kp->dev[role] = d;
	r = vwc_kw_load_fmt(kp->system, role_event[role], f);
	if (!r && !f->pid.size)
		r = -EPROTO;
	return r;
}

/* one event made by make(), removed again */
static void drop(struct kw_kprobes *kp, enum kw_role role,
		 struct kw_event_fmt *fmt)
{
	if (kp->dev[role]) {
		tracefs_dynevent_destroy(kp->dev[role], true);
		tracefs_dynevent_free(kp->dev[role]);
		kp->dev[role] = NULL;
	}
	memset(&fmt[role], 0, sizeof(*fmt));
}

/*
 * The ioctl's probe and its return, with queuedata where BTF gives it
 * (@qd, else "") and the return's arguments where the kernel takes them.
 */
static int make_ioctl(struct kw_kprobes *kp, struct kw_event_fmt *fmt,
		      const char *qd)
{
	char args[sizeof(KP_ADMIN_ARGS) + 64];
	int r = -ENOENT;

	if (*qd) {
		snprintf(args, sizeof(args), "%s %s", KP_ADMIN_ARGS, qd);
		r = make(kp, KW_KP_ADMIN, KP_ADMIN_SYM, args,
			 &fmt[KW_KP_ADMIN]);
		if (!r && !fmt[KW_KP_ADMIN].qd.size)
			r = -EPROTO;
		if (r) {
			snprintf(kp->qd_why, sizeof(kp->qd_why),
				 "kprobe on %s with %s: %s", KP_ADMIN_SYM, qd,
				 strerror(-r));
			drop(kp, KW_KP_ADMIN, fmt);
		} else {
			kp->fetch |= KW_FETCH_QD;
		}
	}
	if (!(kp->fetch & KW_FETCH_QD)) {
		r = make(kp, KW_KP_ADMIN, KP_ADMIN_SYM, KP_ADMIN_ARGS,
			 &fmt[KW_KP_ADMIN]);
		if (r)
			return r;
		vwc_warn("ioctl passthrough: I/O commands cannot be told apart from admin commands (%s): one with Set Features 06h's bytes is taken as a Set Features 06h on a controller not known by its queue",
			 kp->qd_why);
	}
	/* 6.1's return probes take no $argN: EINVAL */
	snprintf(args, sizeof(args), "%s%s%s", KP_DONE_ARGS,
		 kp->fetch & KW_FETCH_QD ? " " : "",
		 kp->fetch & KW_FETCH_QD ? qd : "");
	r = make(kp, KW_KP_DONE, KP_ADMIN_SYM, args, &fmt[KW_KP_DONE]);
	if (!r && (!fmt[KW_KP_DONE].op.size || !fmt[KW_KP_DONE].fid.size ||
		   ((kp->fetch & KW_FETCH_QD) && !fmt[KW_KP_DONE].qd.size)))
		r = -EPROTO;
	if (!r) {
		kp->fetch |= KW_FETCH_DONE_CMD;
		return 0;
	}
	drop(kp, KW_KP_DONE, fmt);
	vwc_dbg("return probe on %s with %s: %s: every passthrough return is read, without a wakeup",
		KP_ADMIN_SYM, args, strerror(-r));
	return make(kp, KW_KP_DONE, KP_ADMIN_SYM, KP_DONE_RET,
		    &fmt[KW_KP_DONE]);
}

int vwc_kw_kprobes_create(struct kw_kprobes *kp, struct kw_event_fmt *fmt,
			  char *why, size_t len)
{
	char uargs[sizeof(KP_URING_ARGS) + 96];
	struct kw_btf btf;
	int r, i;

	memset(kp, 0, sizeof(*kp));
	snprintf(kp->system, sizeof(kp->system), KP_PREFIX "%d", (int)getpid());
	remove_stale();
	vwc_kw_btf_read(&btf);
	snprintf(kp->qd_why, sizeof(kp->qd_why), "%s", btf.qd_why);
	snprintf(kp->uring_why, sizeof(kp->uring_why), "%s", btf.uring_why);
	r = make_ioctl(kp, fmt, btf.qd);
	if (r) {
		snprintf(why, len, "kprobe on %s: %s", KP_ADMIN_SYM,
			 strerror(-r));
		vwc_kw_kprobes_destroy(kp);
		memset(&fmt[KW_KP_ADMIN], 0, 2 * sizeof(*fmt));
		kp->fetch = 0;
		return r;
	}
	if (btf.uring_q[0]) {
		snprintf(uargs, sizeof(uargs), "%s %s", KP_URING_ARGS,
			 btf.uring_q);
		r = make(kp, KW_KP_URING, KP_URING_SYM, uargs,
			 &fmt[KW_KP_URING]);
		if (!r && !fmt[KW_KP_URING].q.size)
			r = -EPROTO;
		if (r) {
			snprintf(kp->uring_why, sizeof(kp->uring_why),
				 "kprobe on %s with %s: %s", KP_URING_SYM,
				 btf.uring_q, strerror(-r));
			drop(kp, KW_KP_URING, fmt);
		} else {
			kp->uring_q = true;
		}
	}
	if (!kp->uring_q) {
		vwc_warn("io_uring Set Features 06h will be taken as every controller's: %s",
			 kp->uring_why);
		r = make(kp, KW_KP_URING, KP_URING_SYM, KP_URING_ARGS,
			 &fmt[KW_KP_URING]);
	}
	if (!r)
		r = make(kp, KW_KP_URING_DONE, KP_URING_DONE_SYM,
			 KP_URING_DONE_ARGS, &fmt[KW_KP_URING_DONE]);
	if (r) {
		/* io_uring admin passthrough: 6.1 and later */
		vwc_warn("kprobes on %s and %s: %s: Set Features through io_uring is seen by the safety net only",
			 KP_URING_SYM, KP_URING_DONE_SYM, strerror(-r));
		for (i = KW_KP_URING; i <= KW_KP_URING_DONE; i++)
			drop(kp, (enum kw_role)i, fmt);
		kp->uring_q = false;
	} else {
		kp->uring = true;
	}
	return 0;
}

void vwc_kw_kprobes_destroy(struct kw_kprobes *kp)
{
	int i;

	for (i = 0; i < KW_NR_ROLES; i++) {
		if (!kp->dev[i])
			continue;
		if (tracefs_dynevent_destroy(kp->dev[i], true))
			vwc_dbg("cannot remove the kprobe %s/%s", kp->system,
				role_event[i]);
		tracefs_dynevent_free(kp->dev[i]);
		kp->dev[i] = NULL;
	}
}
