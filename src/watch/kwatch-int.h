/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kwatch's parts (kwatch.c: rings and the read; kwatch-fmt.c: tracefs,
 * event formats and the record decoder; kwatch-kprobe.c: the dynamic
 * kprobe events). Not a public interface: see kwatch.h.
 */
#ifndef VWC_KWATCH_INT_H
#define VWC_KWATCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kwatch.h"

struct tracefs_dynevent;

/* A field's place in a record, 0 size: the format has no such field. */
struct kw_field {
	int offset;
	int size;
};

/**
 * enum kw_role - what an event is to kwatch
 * @KW_TP_SETUP:	tracepoint nvme:nvme_setup_cmd (every command)
 * @KW_TP_COMPLETE:	tracepoint nvme:nvme_complete_rq (every completion)
 * @KW_KP_ADMIN:	kprobe on nvme_submit_user_cmd(q, cmd, ...): every
 *			passthrough ioctl, with the queue and the command
 *			(and, where BTF tells where, q->queuedata: NULL on
 *			an admin queue alone)
 * @KW_KP_DONE:		kretprobe on it: the command completed (it waits);
 *			where the kernel lets a return probe fetch the
 *			function's arguments, the command and queuedata too
 * @KW_KP_URING:	kprobe on nvme_dev_uring_cmd(ioucmd, ...): an
 *			admin command through io_uring, with the queue
 *			where the kernel's BTF tells where it is
 * @KW_KP_URING_DONE:	kprobe on nvme_uring_cmd_end_io(req, ...): an
 *			io_uring passthrough command completed on queue
 *			req->q; filtered to the admin queues learned
 */
enum kw_role {
	KW_TP_SETUP,
	KW_TP_COMPLETE,
	KW_KP_ADMIN,
	KW_KP_DONE,
	KW_KP_URING,
	KW_KP_URING_DONE,
	KW_NR_ROLES,
};

/*
 * One event's format. Tracepoints: ctrl_id, qid, cid, opcode, cdw10.
 * Kprobes (names given in kwatch-kprobe.c): pid (common_pid), q, op, fid,
 * wce, qd (the queue's queuedata); io_uring: aop/afid/awce and
 * bop/bfid/bwce, the command read at the two places kernels keep it
 * (struct io_uring_cmd's second pointer is the command itself up to 6.4,
 * the SQE after).
 */
struct kw_event_fmt {
	int id;			/* common_type; 0: not in use */
	struct kw_field ctrl_id, qid, cid, opcode, cdw10;
	struct kw_field pid, q, op, fid, wce, qd;
	struct kw_field aop, afid, awce, bop, bfid, bwce;
};

/* A decoded record before the read pairs it (kwatch.c) */
struct kw_rec {
	struct vwc_kw_event ev;	/* time, and what the role fills */
	enum kw_role role;	/* KW_TP_*: ev is final */
	int pid;		/* the thread (kprobes) */
	uint8_t op;		/* KW_KP_ADMIN: opcode */
};

struct kw_recs {
	struct kw_rec *v;
	int n, cap;
};

/*
 * A passthrough ioctl's Set Features 06h whose return is not seen yet:
 * the thread, the queue. pid 0: a free slot.
 */
#define KW_OPEN_N	64
struct kw_open {
	int pid;
	uint64_t q;
	uint64_t time;
};

#define KW_QUEUES_N	64	/* admin queues in the io_uring filter */

/*
 * A return probe that is not filtered (the kernel lets it fetch no
 * argument) wakes nobody: while a Set Features 06h of a thread is
 * outstanding, for at most KW_OPEN_WAIT_NS, the rings are read every
 * KW_OPEN_POLL_MS instead.
 */
#define KW_OPEN_POLL_MS	10
#define KW_OPEN_WAIT_NS	2000000000ull

int vwc_kw_open_wait_ms(const struct kw_open *open, uint64_t now);

/* kwatch.c: the records (oldest first) to events; @self: our pid */
int vwc_kw_deliver(struct kw_open *open, struct kw_recs *recs, int self,
		   void (*cb)(void *arg, const struct vwc_kw_event *ev),
		   void *arg);

/* kwatch-fmt.c */
int vwc_kw_fmt_parse(const char *text, size_t len, const char *system,
		     struct kw_event_fmt *f);
bool vwc_kw_tracefs_mounted(char *dir, size_t len);
int vwc_kw_load_fmt(const char *system, const char *event,
		    struct kw_event_fmt *f);
int vwc_kw_tracefs_dir(const char **dir, char *how, size_t hlen,
		       char *why, size_t len);
void vwc_kw_decode(const struct kw_event_fmt *fmt, int nfmt,
		   const uint8_t *rec, size_t size, struct kw_recs *out);
void vwc_kw_push(struct kw_recs *out, const struct kw_rec *r);

/* kwatch-btf.c */
struct btf;

/*
 * What the running kernel's BTF gives the probes: each fetch argument, or
 * "" with the reason in its why.
 * @uring_q:	the io_uring probe's controller queue, "q=+A(+B(+C($arg1))):x64"
 * @qd:		nvme_submit_user_cmd()'s q->queuedata, "qd=+N($arg1):x64"
 */
struct kw_btf {
	char uring_q[96];
	char uring_why[160];
	char qd[48];
	char qd_why[160];
};

long vwc_kw_btf_ptr_offset(const struct btf *btf, const char *sname,
			   const char *mname);
void vwc_kw_btf_args_of(const struct btf *vmlinux, const struct btf *mod,
			struct kw_btf *out);
void vwc_kw_btf_read(struct kw_btf *out);

/* kwatch-kprobe.c */

/*
 * What the kprobes fetch beyond the command's bytes (the kernel's filters
 * follow): KW_FETCH_QD, the ioctl's queue's queuedata (kernel BTF);
 * KW_FETCH_DONE_CMD, the return probe fetches the command (and, with
 * KW_FETCH_QD, queuedata) from the function's arguments.
 */
enum {
	KW_FETCH_QD		= 1 << 0,
	KW_FETCH_DONE_CMD	= 1 << 1,
};

struct kw_kprobes {
	char system[32];		/* vwc_<pid> */
	struct tracefs_dynevent *dev[KW_NR_ROLES];
	unsigned int fetch;		/* KW_FETCH_* */
	char qd_why[200];		/* why not KW_FETCH_QD */
	bool uring;			/* the io_uring probes are there */
	bool uring_q;			/* ... and name the admin queue */
	char uring_why[160];		/* why they do not */
};

int vwc_kw_kprobes_create(struct kw_kprobes *kp, struct kw_event_fmt *fmt,
			  char *why, size_t len);
void vwc_kw_kprobes_destroy(struct kw_kprobes *kp);
const char *vwc_kw_kprobe_filter(enum kw_role role, int self,
				 unsigned int fetch, const uint64_t *queues,
				 int nr_queues, char *buf, size_t len);
bool vwc_kw_role_wakes(enum kw_role role, unsigned int fetch);

#endif
