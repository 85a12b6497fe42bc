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

/**
 * struct kw_field - a field's place in a record
 * @offset:	from the start of the record's raw data
 * @size:	in bytes; 0: the format has no such field
 */
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

/**
 * struct kw_event_fmt - one event's format
 * @id:		common_type; 0: not in use
 * @ctrl_id:	tracepoints: the controller's instance
 * @qid:	tracepoints: the queue's id (0: the admin queue)
 * @cid:	tracepoints: the command's id
 * @opcode:	tracepoints: the command's opcode
 * @cdw10:	tracepoints: the command's dwords from cdw10 on
 * @pid:	kprobes (names given in kwatch-kprobe.c): common_pid
 * @q:		kprobes: the queue
 * @op:		kprobes: the opcode
 * @fid:	kprobes: the feature id
 * @wce:	kprobes: the WCE bit of cdw11
 * @qd:		kprobes: the queue's queuedata
 * @aop:	io_uring: the opcode at the first place kernels keep the
 *		command (struct io_uring_cmd's second pointer is the
 *		command itself up to 6.4, the SQE after)
 * @afid:	io_uring: the feature id there
 * @awce:	io_uring: the WCE bit there
 * @bop:	io_uring: the opcode at the second place
 * @bfid:	io_uring: the feature id there
 * @bwce:	io_uring: the WCE bit there
 */
struct kw_event_fmt {
	int id;
	struct kw_field ctrl_id, qid, cid, opcode, cdw10;
	struct kw_field pid, q, op, fid, wce, qd;
	struct kw_field aop, afid, awce, bop, bfid, bwce;
};

/**
 * struct kw_rec - a decoded record before the read pairs it (kwatch.c)
 * @ev:		time, and what the role fills
 * @role:	the event it came from; KW_TP_*: @ev is final
 * @pid:	the thread (kprobes)
 * @op:		KW_KP_ADMIN: opcode
 */
struct kw_rec {
	struct vwc_kw_event ev;
	enum kw_role role;
	int pid;
	uint8_t op;
};

/**
 * struct kw_recs - a growing array of records
 * @v:		the records
 * @n:		how many
 * @cap:	room for how many
 */
struct kw_recs {
	struct kw_rec *v;
	int n, cap;
};

#define KW_OPEN_N	64
/**
 * struct kw_open - a passthrough ioctl's Set Features 06h whose return is
 *		    not seen yet
 * @pid:	the thread; 0: a free slot
 * @q:		the queue
 * @time:	when it was submitted (the kernel's clock, ns)
 */
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

/**
 * vwc_kw_open_wait_ms() - how soon to read the rings again
 * @open:	the KW_OPEN_N slots
 * @now:	the kernel's clock, ns
 *
 * Return: KW_OPEN_POLL_MS while a Set Features 06h of a thread is
 * outstanding for less than KW_OPEN_WAIT_NS, else -1 (wait for a wakeup).
 */
int vwc_kw_open_wait_ms(const struct kw_open *open, uint64_t now);

/**
 * vwc_kw_deliver() - the records (oldest first) to events (kwatch.c)
 * @open:	the KW_OPEN_N slots: submissions whose return is not seen
 * @recs:	the records, paired here (a return with its submission)
 * @self:	our pid: our own Get Features 06h names an admin queue
 * @cb:		called with each event
 * @arg:	for @cb
 *
 * Return: the number of events handed to @cb.
 */
int vwc_kw_deliver(struct kw_open *open, struct kw_recs *recs, int self,
		   void (*cb)(void *arg, const struct vwc_kw_event *ev),
		   void *arg);

/* kwatch-fmt.c */

/**
 * vwc_kw_fmt_parse() - a tracefs "format" text read by libtraceevent
 * @text:	as events/<system>/<event>/format holds it (also what the
 *		tests and the fuzzer feed)
 * @len:	its length
 * @system:	the event's system
 * @f:		result: fields the text lacks have size 0
 *
 * Return: 0, or a negative errno (@f zeroed).
 */
int vwc_kw_fmt_parse(const char *text, size_t len, const char *system,
		     struct kw_event_fmt *f);

/**
 * vwc_kw_tracefs_mounted() - where a tracefs is mounted, per /proc/mounts
 * @dir:	result (the first one), may be NULL
 * @len:	size of @dir
 *
 * Return: true if one is.
 */
bool vwc_kw_tracefs_mounted(char *dir, size_t len);

/**
 * vwc_kw_load_fmt() - one event's format file, through libtracefs, parsed
 * @system:	the event's system
 * @event:	its name
 * @f:		result
 *
 * Return: 0, or a negative errno (-ENOENT: no such event).
 */
int vwc_kw_load_fmt(const char *system, const char *event,
		    struct kw_event_fmt *f);

/**
 * vwc_kw_tracefs_dir() - find tracefs, or mount it where systemd does
 * @dir:	result (libtracefs keeps it)
 * @how:	"tracefs at DIR" or "tracefs was not mounted: mounted at DIR"
 * @hlen:	size of @how
 * @why:	on failure, why
 * @len:	size of @why
 *
 * Return: 0, or -ENOENT.
 */
int vwc_kw_tracefs_dir(const char **dir, char *how, size_t hlen,
		       char *why, size_t len);

/**
 * vwc_kw_decode() - one perf record to a &struct kw_rec, pushed on @out
 * @fmt:	the formats, by role
 * @nfmt:	how many
 * @rec:	the record, its perf_event_header first
 * @size:	its size
 * @out:	where a decoded record is pushed (a lost-records record as
 *		a VWC_KW_LOST event; one of no known event: nothing)
 */
void vwc_kw_decode(const struct kw_event_fmt *fmt, int nfmt,
		   const uint8_t *rec, size_t size, struct kw_recs *out);

/**
 * vwc_kw_push() - append a record (dropped when memory runs out)
 * @out:	the array
 * @r:		the record, copied
 */
void vwc_kw_push(struct kw_recs *out, const struct kw_rec *r);

/* kwatch-btf.c */
struct btf;

/**
 * struct kw_btf - what the running kernel's BTF gives the probes: each
 *		   fetch argument, or "" with the reason in its why
 * @uring_q:	the io_uring probe's controller queue, "q=+A(+B(+C($arg1))):x64"
 * @uring_why:	why @uring_q is ""
 * @qd:		nvme_submit_user_cmd()'s q->queuedata, "qd=+N($arg1):x64"
 * @qd_why:	why @qd is ""
 */
struct kw_btf {
	char uring_q[96];
	char uring_why[160];
	char qd[48];
	char qd_why[160];
};

/**
 * vwc_kw_btf_ptr_offset() - where a pointer member sits in a struct
 * @btf:	the BTF to look in, may be NULL
 * @sname:	the struct's name
 * @mname:	the member's name (found in nested anonymous members too)
 *
 * Return: its byte offset, -ENOENT (no such struct or member), or
 * -EPROTO (not a pointer, or a bit-field).
 */
long vwc_kw_btf_ptr_offset(const struct btf *btf, const char *sname,
			   const char *mname);

/**
 * vwc_kw_btf_args_of() - the probes' fetch arguments from two BTFs
 * @vmlinux:	the kernel's
 * @mod:	nvme_core's, NULL when it is built in or has none
 * @out:	result
 */
void vwc_kw_btf_args_of(const struct btf *vmlinux, const struct btf *mod,
			struct kw_btf *out);

/**
 * vwc_kw_btf_read() - vwc_kw_btf_args_of() on the running kernel's BTF
 * @out:	result
 */
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

/**
 * struct kw_kprobes - the sidecar's dynamic kprobe events
 * @system:	their event system, vwc_<pid>
 * @dev:	each role's event, NULL for the tracepoints' roles
 * @fetch:	KW_FETCH_*
 * @qd_why:	why not KW_FETCH_QD
 * @uring:	the io_uring probes are there
 * @uring_q:	... and name the admin queue
 * @uring_why:	why they do not
 */
struct kw_kprobes {
	char system[32];
	struct tracefs_dynevent *dev[KW_NR_ROLES];
	unsigned int fetch;
	char qd_why[200];
	bool uring;
	bool uring_q;
	char uring_why[160];
};

/**
 * vwc_kw_kprobes_create() - make the kprobe events (stale ones of a
 *			     sidecar that is gone removed first)
 * @kp:		result
 * @fmt:	the formats by role, filled for the kprobes' roles
 * @why:	on failure, why
 * @len:	size of @why
 *
 * Return: 0 (the io_uring probes may still be missing: @kp->uring), or a
 * negative errno (no kprobe on nvme_submit_user_cmd()).
 */
int vwc_kw_kprobes_create(struct kw_kprobes *kp, struct kw_event_fmt *fmt,
			  char *why, size_t len);

/**
 * vwc_kw_kprobes_destroy() - remove the kprobe events
 * @kp:		as vwc_kw_kprobes_create() made them
 */
void vwc_kw_kprobes_destroy(struct kw_kprobes *kp);

/**
 * vwc_kw_kprobe_filter() - the kernel's filter of an event
 * @role:	the event
 * @self:	our pid
 * @fetch:	KW_FETCH_*
 * @queues:	the admin queues learned, for KW_KP_URING_DONE
 * @nr_queues:	how many
 * @buf:	where the filter is written
 * @len:	size of @buf
 *
 * Set Features 06h from anyone; Get Features 06h from the sidecar itself
 * only (how it learns each controller's admin queue); both on an admin
 * queue alone where the probe fetches queuedata (KW_FETCH_QD). The return
 * of every passthrough ioctl but its own, of a Set Features 06h only where
 * the return probe fetches the command (KW_FETCH_DONE_CMD).
 *
 * Return: @buf.
 */
const char *vwc_kw_kprobe_filter(enum kw_role role, int self,
				 unsigned int fetch, const uint64_t *queues,
				 int nr_queues, char *buf, size_t len);

/**
 * vwc_kw_role_wakes() - do an event's records wake the reading thread
 * @role:	the event
 * @fetch:	KW_FETCH_*
 *
 * Return: true but for a return probe that passes every passthrough
 * ioctl's return.
 */
bool vwc_kw_role_wakes(enum kw_role role, unsigned int fetch);

#endif
