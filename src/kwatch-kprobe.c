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
 * Features (VWC_KW_OWN_GET).
 */
static const char KP_ADMIN_SYM[] = "nvme_submit_user_cmd";
static const char KP_ADMIN_ARGS[] =
	"q=$arg1:x64 op=+0($arg2):u8 fid=+40($arg2):u8 wce=+44($arg2):u8";
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
 * controller's admin queue); the return of every passthrough ioctl but
 * its own (read only for a thread with a Set Features 06h outstanding).
 */
const char *vwc_kw_kprobe_filter(enum kw_role role, int self,
				 const uint64_t *queues, int nr_queues,
				 char *buf, size_t len)
{
	size_t at;
	int i;

	switch (role) {
	case KW_KP_ADMIN:
		snprintf(buf, len,
			 "fid == 6 && (op == 9 || (op == 10 && common_pid == %d))",
			 self);
		break;
	case KW_KP_DONE:
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

int vwc_kw_kprobes_create(struct kw_kprobes *kp, struct kw_event_fmt *fmt,
			  char *why, size_t len)
{
	char qarg[96], uargs[sizeof(KP_URING_ARGS) + 96];
	int r, i;

	memset(kp, 0, sizeof(*kp));
	snprintf(kp->system, sizeof(kp->system), KP_PREFIX "%d", (int)getpid());
	remove_stale();
	r = make(kp, KW_KP_ADMIN, KP_ADMIN_SYM, KP_ADMIN_ARGS,
		 &fmt[KW_KP_ADMIN]);
	if (!r)
		r = make(kp, KW_KP_DONE, KP_ADMIN_SYM, "ret=$retval",
			 &fmt[KW_KP_DONE]);
	if (r) {
		snprintf(why, len, "kprobe on %s: %s", KP_ADMIN_SYM,
			 strerror(-r));
		vwc_kw_kprobes_destroy(kp);
		memset(&fmt[KW_KP_ADMIN], 0, 2 * sizeof(*fmt));
		return r;
	}
	if (!vwc_kw_btf_uring_queue(qarg, sizeof(qarg), kp->uring_why,
				    sizeof(kp->uring_why))) {
		snprintf(uargs, sizeof(uargs), "%s %s", KP_URING_ARGS, qarg);
		r = make(kp, KW_KP_URING, KP_URING_SYM, uargs,
			 &fmt[KW_KP_URING]);
		if (!r && !fmt[KW_KP_URING].q.size)
			r = -EPROTO;
		if (r) {
			snprintf(kp->uring_why, sizeof(kp->uring_why),
				 "kprobe on %s with %s: %s", KP_URING_SYM, qarg,
				 strerror(-r));
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
