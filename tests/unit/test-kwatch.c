// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kwatch's logic without a kernel: the event formats read by
 * libtraceevent, the perf record decoder (tracepoints and kprobes), the
 * pairing of a passthrough Set Features with its return, io_uring's two
 * command places and completions, and the sidecar's own Get Features
 * (how it learns a controller's admin queue). Regression for a crash tests/fuzz found: a
 * negative offset in a format line made the decoder read before the
 * record.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include <bpf/btf.h>

#include "kwatch-int.h"
#include "tap.h"

#define RAWMAX 128

/* one PERF_RECORD_SAMPLE (TIME | RAW) holding @raw */
static uint8_t *mkrec(const uint8_t *raw, uint32_t rawlen, uint64_t time,
		      size_t *n)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	uint8_t *buf;

	h.size = sizeof(h) + 12 + rawlen;
	buf = malloc(h.size);	/* exact size: ASan sees a read outside */
	if (!buf)
		abort();
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &time, 8);
	memcpy(buf + sizeof(h) + 8, &rawlen, 4);
	memcpy(buf + sizeof(h) + 12, raw, rawlen);
	*n = h.size;
	return buf;
}

static void feed(const struct kw_event_fmt *fmt, const uint8_t *raw,
		 uint32_t rawlen, uint64_t time, struct kw_recs *out)
{
	size_t n;
	uint8_t *rec = mkrec(raw, rawlen, time, &n);

	vwc_kw_decode(fmt, KW_NR_ROLES, rec, n, out);
	free(rec);
}

static void parse(struct kw_event_fmt *f, const char *text)
{
	vwc_kw_fmt_parse(text, strlen(text), "nvme", f);
}

#define COMMON \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
	"\n"

/* events/nvme/nvme_setup_cmd/format as 6.1 to 7.2 have it */
#define FMT(cdw10_off, cdw10_size) \
	"name: nvme_setup_cmd\n" \
	"ID: 257\n" \
	COMMON \
	"\tfield:char disk[32];\toffset:8;\tsize:32;\tsigned:1;\n" \
	"\tfield:int ctrl_id;\toffset:40;\tsize:4;\tsigned:1;\n" \
	"\tfield:int qid;\toffset:44;\tsize:4;\tsigned:1;\n" \
	"\tfield:u8 opcode;\toffset:48;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 flags;\toffset:49;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 fctype;\toffset:50;\tsize:1;\tsigned:0;\n" \
	"\tfield:u16 cid;\toffset:52;\tsize:2;\tsigned:0;\n" \
	"\tfield:u32 nsid;\toffset:56;\tsize:4;\tsigned:0;\n" \
	"\tfield:bool metadata;\toffset:60;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 cdw10[24];\toffset:" cdw10_off ";\tsize:" cdw10_size ";\tsigned:0;\n" \
	"\n" \
	"print fmt: \"nvme%d: qid=%d, cmdid=%u\", REC->ctrl_id, REC->qid, REC->cid\n"

/* events/vwc_<pid>/admin/format as 6.12 shows it (seen in a guest) */
#define ADMIN_FIELDS \
	"name: admin\n" \
	"ID: 1637\n" \
	COMMON \
	"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:u64 q;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:u8 op;\toffset:24;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 fid;\toffset:25;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 wce;\toffset:26;\tsize:1;\tsigned:0;\n"

static const char FMT_ADMIN[] =
	ADMIN_FIELDS
	"\n"
	"print fmt: \"(%lx) q=0x%Lx op=%u fid=%u wce=%u\", REC->__probe_ip, REC->q, REC->op, REC->fid, REC->wce\n";

/* ... with queuedata (BTF): packed after wce */
static const char FMT_ADMIN_QD[] =
	ADMIN_FIELDS
	"\tfield:u64 qd;\toffset:27;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"(%lx) q=0x%Lx op=%u fid=%u wce=%u qd=0x%Lx\", REC->__probe_ip, REC->q, REC->op, REC->fid, REC->wce, REC->qd\n";

static const char FMT_DONE[] =
	"name: done\n"
	"ID: 1638\n"
	COMMON
	"\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 ret;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"(%lx <- %lx) ret=0x%Lx\", REC->__probe_func, REC->__probe_ret_ip, REC->ret\n";

/* "done" where a return probe fetches the arguments (6.12, 7.2) */
static const char FMT_DONE_CMD[] =
	"name: done\n"
	"ID: 1638\n"
	COMMON
	"\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u8 op;\toffset:24;\tsize:1;\tsigned:0;\n"
	"\tfield:u8 fid;\toffset:25;\tsize:1;\tsigned:0;\n"
	"\tfield:u64 qd;\toffset:26;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"(%lx <- %lx) op=%u fid=%u qd=0x%Lx\", REC->__probe_func, REC->__probe_ret_ip, REC->op, REC->fid, REC->qd\n";

/* the io_uring event's fields up to bwce */
#define URING_FIELDS \
	"name: uring\n" \
	"ID: 1639\n" \
	COMMON \
	"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:u8 aop;\toffset:16;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 afid;\toffset:17;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 awce;\toffset:18;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 bop;\toffset:19;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 bfid;\toffset:20;\tsize:1;\tsigned:0;\n" \
	"\tfield:u8 bwce;\toffset:21;\tsize:1;\tsigned:0;\n"

static const char FMT_URING[] =
	URING_FIELDS
	"\n"
	"print fmt: \"(%lx) aop=%u\", REC->__probe_ip, REC->aop\n";

/* the same with the queue BTF names (kwatch-btf.c): packed after bwce */
static const char FMT_URING_Q[] =
	URING_FIELDS
	"\tfield:u64 q;\toffset:22;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"(%lx) aop=%u q=0x%Lx\", REC->__probe_ip, REC->aop, REC->q\n";

static const char FMT_URING_DONE[] =
	"name: uring_done\n"
	"ID: 1640\n"
	COMMON
	"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 q;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"(%lx) q=0x%Lx\", REC->__probe_ip, REC->q\n";

static void tp_raw(uint8_t *raw, uint16_t type, int ctrl, uint16_t cid,
		   uint32_t cdw10, uint32_t cdw11)
{
	memset(raw, 0, 88);
	memcpy(raw, &type, 2);
	memcpy(raw + 40, &ctrl, 4);
	raw[48] = 9;
	memcpy(raw + 52, &cid, 2);
	memcpy(raw + 61, &cdw10, 4);
	memcpy(raw + 65, &cdw11, 4);
}

static void admin_raw(uint8_t *raw, int pid, uint64_t q, uint8_t op,
		      uint8_t fid, uint8_t wce)
{
	uint16_t type = 1637;

	memset(raw, 0, 27);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &pid, 4);
	memcpy(raw + 16, &q, 8);
	raw[24] = op;
	raw[25] = fid;
	raw[26] = wce;
}

static void done_raw(uint8_t *raw, int pid)
{
	uint16_t type = 1638;

	memset(raw, 0, 32);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &pid, 4);
}

static void uring_raw(uint8_t *raw, int pid, const uint8_t ab[6])
{
	uint16_t type = 1639;

	memset(raw, 0, 22);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &pid, 4);
	memcpy(raw + 16, ab, 6);
}

static struct vwc_kw_event got[16];
static int nr_got;

static void collect(void *arg, const struct vwc_kw_event *ev)
{
	(void)arg;
	if (nr_got < 16)
		got[nr_got++] = *ev;
}

static void deliver(struct kw_open *open, struct kw_recs *recs)
{
	nr_got = 0;
	vwc_kw_deliver(open, recs, 42, collect, NULL);
}

static void tracepoints(void)
{
	struct kw_event_fmt fmt[KW_NR_ROLES];
	struct kw_recs recs = { 0 };
	uint8_t raw[RAWMAX];

	memset(fmt, 0, sizeof(fmt));
	parse(&fmt[KW_TP_SETUP], FMT("61", "24"));
	ok(fmt[KW_TP_SETUP].id == 257 && fmt[KW_TP_SETUP].ctrl_id.offset == 40 &&
	   fmt[KW_TP_SETUP].ctrl_id.size == 4 && fmt[KW_TP_SETUP].cid.offset == 52 &&
	   fmt[KW_TP_SETUP].cid.size == 2 && fmt[KW_TP_SETUP].opcode.offset == 48 &&
	   fmt[KW_TP_SETUP].cdw10.offset == 61 && fmt[KW_TP_SETUP].cdw10.size == 24,
	   "tracepoint format read by libtraceevent: id, offsets and sizes");
	fmt[KW_TP_SETUP].id = 0x101;
	tp_raw(raw, 0x101, 3, 7, 0x06, 0x1);
	feed(fmt, raw, 88, 42, &recs);
	ok(recs.n == 1 && recs.v[0].ev.kind == VWC_KW_SET_FEATURES &&
	   recs.v[0].ev.ctrl == 3 && recs.v[0].ev.cid == 7 &&
	   recs.v[0].ev.fid == 6 && recs.v[0].ev.cdw11 == 1,
	   "tracepoint: Set Features 06h decoded");
	recs.n = 0;

	/* CDW10/CDW11 are the command's little-endian dwords on any host */
	{
		uint8_t le[8] = { 0x06, 0, 0, 0, 0x01, 0, 0, 0x80 };

		memcpy(raw + 61, le, 8);
		feed(fmt, raw, 88, 42, &recs);
		ok(recs.n == 1 && recs.v[0].ev.fid == 6 &&
		   recs.v[0].ev.cdw11 == 0x80000001u,
		   "cdw10/cdw11 read as little endian bytes");
		recs.n = 0;
	}
	/* ctrl_id is the host's int: -1 stays -1 */
	{
		int m1 = -1;

		memcpy(raw + 40, &m1, 4);
		feed(fmt, raw, 88, 42, &recs);
		ok(recs.n == 1 && recs.v[0].ev.ctrl == -1,
		   "ctrl_id read in host byte order, sign kept");
		recs.n = 0;
		m1 = 3;
		memcpy(raw + 40, &m1, 4);
	}

	/* the fuzzer's crash: a negative offset must not be taken */
	parse(&fmt[KW_TP_SETUP], FMT("-61", "24"));
	ok(fmt[KW_TP_SETUP].cdw10.size == 0 && fmt[KW_TP_SETUP].cdw10.offset == 0,
	   "negative offset rejected");
	parse(&fmt[KW_TP_SETUP], FMT("99999999999", "24"));
	ok(fmt[KW_TP_SETUP].cdw10.size == 0, "offset out of range rejected");
	fmt[KW_TP_SETUP].id = 0x101;
	feed(fmt, raw, 88, 42, &recs);	/* ASan: no read before the record */
	ok(recs.n == 0,
	   "without a cdw10 field nothing is decoded, nothing read outside");
	parse(&fmt[KW_TP_SETUP], FMT("61", "4"));
	fmt[KW_TP_SETUP].id = 0x101;
	feed(fmt, raw, 88, 42, &recs);
	ok(recs.n == 0, "cdw10 too short for CDW11: not decoded");
	ok(vwc_kw_fmt_parse("garbage", 7, "nvme", &fmt[KW_TP_SETUP]) != 0,
	   "not a format: refused");
	free(recs.v);
}

static void kprobes(void)
{
	struct kw_event_fmt fmt[KW_NR_ROLES];
	struct kw_open open[KW_OPEN_N];
	struct kw_recs recs = { 0 };
	uint8_t raw[RAWMAX];
	uint64_t q = 0xff41f3c8825aa5d0ull, q2 = 0xff41f3c8825ab000ull;
	int i;

	memset(fmt, 0, sizeof(fmt));
	memset(open, 0, sizeof(open));
	ok(!vwc_kw_fmt_parse(FMT_ADMIN, strlen(FMT_ADMIN), "vwc_1",
			     &fmt[KW_KP_ADMIN]) &&
	   fmt[KW_KP_ADMIN].id == 1637 && fmt[KW_KP_ADMIN].pid.offset == 4 &&
	   fmt[KW_KP_ADMIN].q.offset == 16 && fmt[KW_KP_ADMIN].q.size == 8 &&
	   fmt[KW_KP_ADMIN].fid.offset == 25 && fmt[KW_KP_ADMIN].wce.offset == 26,
	   "kprobe format read: common_pid, q, op, fid, wce");
	ok(!vwc_kw_fmt_parse(FMT_DONE, strlen(FMT_DONE), "vwc_1",
			     &fmt[KW_KP_DONE]) && fmt[KW_KP_DONE].id == 1638 &&
	   !vwc_kw_fmt_parse(FMT_URING, strlen(FMT_URING), "vwc_1",
			     &fmt[KW_KP_URING]) && fmt[KW_KP_URING].bwce.offset == 21,
	   "kretprobe and io_uring formats read");

	/* another thread's Set Features 06h WCE=1, its return */
	admin_raw(raw, 500, q, 0x09, 0x06, 1);
	feed(fmt, raw, 27, 100, &recs);
	done_raw(raw, 500);
	feed(fmt, raw, 32, 200, &recs);
	done_raw(raw, 501);		/* a return with nothing outstanding */
	feed(fmt, raw, 32, 300, &recs);
	deliver(open, &recs);
	ok(nr_got == 2 && got[0].kind == VWC_KW_SET_FEATURES &&
	   got[0].ctrl == -1 && got[0].cid == 500 && got[0].q == q &&
	   got[0].fid == 6 && got[0].cdw11 == 1 && got[0].time == 100,
	   "ioctl Set Features 06h: the thread and the queue, WCE=1");
	ok(nr_got == 2 && got[1].kind == VWC_KW_COMPLETE && got[1].cid == 500 &&
	   got[1].q == q && got[1].time == 200,
	   "its return is its completion, with its queue; another thread's return is nothing");
	ok(recs.n == 0 && open[0].pid == 0, "delivered records and the outstanding slot let go");

	/* the return comes in a later read */
	admin_raw(raw, 600, q2, 0x09, 0x06, 0);
	feed(fmt, raw, 27, 400, &recs);
	deliver(open, &recs);
	done_raw(raw, 600);
	feed(fmt, raw, 32, 500, &recs);
	deliver(open, &recs);
	ok(nr_got == 1 && got[0].kind == VWC_KW_COMPLETE && got[0].q == q2,
	   "a return read after its submission's read still pairs");

	/* learning: the sidecar's own Get Features 06h (pid 42) */
	admin_raw(raw, 42, q2, 0x0a, 0x06, 0);
	feed(fmt, raw, 27, 2000, &recs);
	admin_raw(raw, 43, q, 0x0a, 0x06, 0);	/* not ours */
	feed(fmt, raw, 27, 2100, &recs);
	admin_raw(raw, 700, q2, 0x09, 0x06, 1);
	feed(fmt, raw, 27, 2200, &recs);
	deliver(open, &recs);
	ok(nr_got == 2 && got[0].kind == VWC_KW_OWN_GET && got[0].q == q2 &&
	   got[0].time == 2000 && got[1].kind == VWC_KW_SET_FEATURES &&
	   got[1].cid == 700,
	   "its own Get Features 06h: VWC_KW_OWN_GET with the queue; another's Get Features: nothing");
	memset(open, 0, sizeof(open));

	/* io_uring: the command at either place */
	{
		const uint8_t a1[6] = { 0x09, 0x06, 1, 0, 0, 0 };
		const uint8_t b0[6] = { 46, 0, 0, 0x09, 0x06, 0 };
		const uint8_t b1[6] = { 46, 0, 0, 0x09, 0x06, 1 };
		const uint8_t get[6] = { 46, 0, 0, 0x0a, 0x06, 0 };

		uring_raw(raw, 800, a1);
		feed(fmt, raw, 22, 10, &recs);
		uring_raw(raw, 800, b0);
		feed(fmt, raw, 22, 20, &recs);
		uring_raw(raw, 800, b1);
		feed(fmt, raw, 22, 30, &recs);
		uring_raw(raw, 800, get);
		feed(fmt, raw, 22, 40, &recs);
		deliver(open, &recs);
		ok(nr_got == 3 && got[0].cdw11 == 1 && got[1].cdw11 == 0 &&
		   got[2].cdw11 == 1 && got[0].cid == 0 && got[0].q == 0 &&
		   got[0].ctrl == -1 && got[0].kind == VWC_KW_SET_FEATURES,
		   "io_uring: 6.1's place and the SQE's both read; no queue, no completion (cid 0); a Get Features is nothing");
	}

	/* io_uring with the queue BTF names: the event carries it */
	{
		const uint8_t a1[6] = { 0x09, 0x06, 1, 0, 0, 0 };
		struct kw_event_fmt keep = fmt[KW_KP_URING];

		ok(!vwc_kw_fmt_parse(FMT_URING_Q, strlen(FMT_URING_Q), "vwc_1",
				     &fmt[KW_KP_URING]) &&
		   fmt[KW_KP_URING].q.offset == 22 &&
		   fmt[KW_KP_URING].q.size == 8,
		   "io_uring format with the queue read");
		uring_raw(raw, 800, a1);
		memcpy(raw + 22, &q2, 8);
		feed(fmt, raw, 30, 60, &recs);
		deliver(open, &recs);
		ok(nr_got == 1 && got[0].kind == VWC_KW_SET_FEATURES &&
		   got[0].q == q2 && got[0].cid == 0 && got[0].ctrl == -1 &&
		   got[0].cdw11 == 1,
		   "io_uring with BTF: the Set Features names its controller's queue (cid 0 still)");
		fmt[KW_KP_URING] = keep;
	}

	/* an io_uring completion on a queue: cid 0, the queue */
	{
		uint16_t type = 1640;
		int pid = 800;

		ok(!vwc_kw_fmt_parse(FMT_URING_DONE, strlen(FMT_URING_DONE),
				     "vwc_1", &fmt[KW_KP_URING_DONE]) &&
		   fmt[KW_KP_URING_DONE].q.offset == 16,
		   "io_uring completion format read");
		memset(raw, 0, 24);
		memcpy(raw, &type, 2);
		memcpy(raw + 4, &pid, 4);
		memcpy(raw + 16, &q2, 8);
		feed(fmt, raw, 24, 50, &recs);
		deliver(open, &recs);
		ok(nr_got == 1 && got[0].kind == VWC_KW_COMPLETE &&
		   got[0].cid == 0 && got[0].q == q2 && got[0].ctrl == -1,
		   "io_uring completion: cid 0 and its queue");
	}

	/* more outstanding threads than slots: the oldest goes */
	memset(open, 0, sizeof(open));
	recs.n = 0;
	for (i = 0; i < KW_OPEN_N + 1; i++) {
		admin_raw(raw, 1000 + i, q, 0x09, 0x06, 0);
		feed(fmt, raw, 27, 10000 + i, &recs);
	}
	deliver(open, &recs);
	done_raw(raw, 1000);
	feed(fmt, raw, 32, 20000, &recs);
	done_raw(raw, 1000 + KW_OPEN_N);
	feed(fmt, raw, 32, 20001, &recs);
	deliver(open, &recs);
	ok(nr_got == 1 && got[0].cid == 1000 + KW_OPEN_N,
	   "a full table lets the oldest outstanding thread go");

	/* a truncated kprobe record: nothing read outside it */
	recs.n = 0;
	admin_raw(raw, 42, q, 0x09, 0x06, 1);
	feed(fmt, raw, 20, 1, &recs);
	ok(recs.n == 0, "a record shorter than its fields is not decoded");
	free(recs.v);
}

/*
 * kwatch-btf.c's reader on a BTF made here: members found in anonymous
 * unions and structs, through typedefs, pointers only.
 */
static void btf_offsets(void)
{
	struct btf *b = btf__new_empty();
	int lng, vp, tvp, un, st;

	lng = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	vp = btf__add_ptr(b, 0);
	tvp = btf__add_typedef(b, "vp_t", vp);
	/* union { long u; void *x; } */
	un = btf__add_union(b, NULL, 8);
	btf__add_field(b, "u", lng, 0, 0);
	btf__add_field(b, "x", vp, 0, 0);
	/* struct { long pad; vp_t admin_q; } */
	st = btf__add_struct(b, NULL, 16);
	btf__add_field(b, "pad", lng, 0, 0);
	btf__add_field(b, "admin_q", tvp, 64, 0);
	/* struct file { long f_count; union; void *private_data; } */
	btf__add_struct(b, "file", 24);
	btf__add_field(b, "f_count", lng, 0, 0);
	btf__add_field(b, NULL, un, 64, 0);
	btf__add_field(b, "private_data", vp, 128, 0);
	/* struct nvme_ctrl { long state; long n; struct; } */
	btf__add_struct(b, "nvme_ctrl", 32);
	btf__add_field(b, "state", lng, 0, 0);
	btf__add_field(b, "n", lng, 64, 0);
	btf__add_field(b, NULL, st, 128, 0);

	ok(vwc_kw_btf_ptr_offset(b, "file", "private_data") == 16,
	   "BTF: a pointer member's byte offset");
	ok(vwc_kw_btf_ptr_offset(b, "file", "x") == 8,
	   "BTF: a member of an anonymous union, at the union's offset");
	ok(vwc_kw_btf_ptr_offset(b, "nvme_ctrl", "admin_q") == 24,
	   "BTF: a member of an anonymous struct, through a typedef");
	ok(vwc_kw_btf_ptr_offset(b, "file", "f_count") == -EPROTO &&
	   vwc_kw_btf_ptr_offset(b, "file", "u") == -EPROTO,
	   "BTF: a member that is not a pointer is refused");
	ok(vwc_kw_btf_ptr_offset(b, "file", "f_op") == -ENOENT &&
	   vwc_kw_btf_ptr_offset(b, "io_uring_cmd", "file") == -ENOENT &&
	   vwc_kw_btf_ptr_offset(NULL, "file", "private_data") == -ENOENT,
	   "BTF: no such member, no such struct, no BTF: -ENOENT");
	btf__free(b);
}

/*
 * The kernel's filters: Set Features 06h on an admin queue only where
 * queuedata is fetched; the return filtered where it fetches the command,
 * and then alone waking the reader.
 */
static void filters(void)
{
	static const uint64_t qs[2] = { 0xff41f3c8825aa5d0ull, 0x10 };
	char buf[KW_QUEUES_N * 28 + 64];

	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_ADMIN, 42, 0, NULL, 0, buf,
					sizeof(buf)),
		   "fid == 6 && (op == 9 || (op == 10 && common_pid == 42))"),
	   "filter: ioctl without BTF: the command's bytes only");
	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_ADMIN, 42, KW_FETCH_QD, NULL, 0,
					buf, sizeof(buf)),
		   "qd == 0 && fid == 6 && (op == 9 || (op == 10 && common_pid == 42))"),
	   "filter: ioctl with BTF: on an admin queue (no queuedata) only");
	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_ADMIN, 42,
					KW_FETCH_QD | KW_FETCH_DONE_CMD, NULL,
					0, buf, sizeof(buf)),
		   "qd == 0 && fid == 6 && (op == 9 || (op == 10 && common_pid == 42))"),
	   "filter: ioctl: the return's fetch changes nothing");
	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_DONE, 42, 0, NULL, 0, buf,
					sizeof(buf)), "common_pid != 42") &&
	   !strcmp(vwc_kw_kprobe_filter(KW_KP_DONE, 42, KW_FETCH_QD, NULL, 0,
					buf, sizeof(buf)), "common_pid != 42"),
	   "filter: a return probe without the arguments: every return but ours");
	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_DONE, 42, KW_FETCH_DONE_CMD,
					NULL, 0, buf, sizeof(buf)),
		   "fid == 6 && op == 9 && common_pid != 42"),
	   "filter: a return probe with the command: Set Features 06h's returns");
	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_DONE, 42,
					KW_FETCH_DONE_CMD | KW_FETCH_QD, NULL,
					0, buf, sizeof(buf)),
		   "qd == 0 && fid == 6 && op == 9 && common_pid != 42"),
	   "filter: ... and with BTF, on an admin queue only");
	ok(!strcmp(vwc_kw_kprobe_filter(KW_KP_URING_DONE, 42, KW_FETCH_QD, qs,
					2, buf, sizeof(buf)),
		   "q == 0 || q == 0xff41f3c8825aa5d0 || q == 0x10") &&
	   !strcmp(vwc_kw_kprobe_filter(KW_KP_URING_DONE, 42, 0, NULL, 0, buf,
					sizeof(buf)), "q == 0"),
	   "filter: io_uring completions on the learned queues (none: nothing)");
	ok(!vwc_kw_role_wakes(KW_KP_DONE, 0) &&
	   !vwc_kw_role_wakes(KW_KP_DONE, KW_FETCH_QD) &&
	   vwc_kw_role_wakes(KW_KP_DONE, KW_FETCH_DONE_CMD) &&
	   vwc_kw_role_wakes(KW_KP_ADMIN, 0) &&
	   vwc_kw_role_wakes(KW_KP_URING_DONE, 0) &&
	   vwc_kw_role_wakes(KW_TP_SETUP, 0),
	   "an unfiltered return wakes no reader; every other event does");
}

/* the decoder's second line: queuedata, and the return's command */
static void io_queue(void)
{
	struct kw_event_fmt fmt[KW_NR_ROLES];
	struct kw_open open[KW_OPEN_N];
	struct kw_recs recs = { 0 };
	uint8_t raw[RAWMAX];
	uint64_t q = 0xff41f3c8825aa5d0ull, ioq = 0xff41f3c8825ac000ull;
	uint64_t ns = 0xff41f3c8a0001000ull, zero = 0;
	uint16_t type = 1638;
	int pid = 900;

	memset(fmt, 0, sizeof(fmt));
	memset(open, 0, sizeof(open));
	ok(!vwc_kw_fmt_parse(FMT_ADMIN_QD, strlen(FMT_ADMIN_QD), "vwc_1",
			     &fmt[KW_KP_ADMIN]) &&
	   fmt[KW_KP_ADMIN].qd.offset == 27 && fmt[KW_KP_ADMIN].qd.size == 8 &&
	   !vwc_kw_fmt_parse(FMT_DONE_CMD, strlen(FMT_DONE_CMD), "vwc_1",
			     &fmt[KW_KP_DONE]) &&
	   fmt[KW_KP_DONE].op.offset == 24 && fmt[KW_KP_DONE].fid.offset == 25 &&
	   fmt[KW_KP_DONE].qd.offset == 26,
	   "formats with queuedata and the return's command read");

	/* Dataset Management, 7 ranges, IDR, on a namespace's queue */
	admin_raw(raw, pid, ioq, 0x09, 0x06, 1);
	memcpy(raw + 27, &ns, 8);
	feed(fmt, raw, 35, 100, &recs);
	ok(recs.n == 0,
	   "an I/O command with Set Features 06h WCE=1's bytes (queuedata set) is not decoded");
	/* the same bytes on an admin queue: Set Features 06h */
	admin_raw(raw, pid, q, 0x09, 0x06, 1);
	memcpy(raw + 27, &zero, 8);
	feed(fmt, raw, 35, 200, &recs);
	ok(recs.n == 1 && recs.v[0].ev.q == q && recs.v[0].ev.cdw11 == 1,
	   "on an admin queue (no queuedata) it is Set Features 06h");
	/* a record cut before qd: refused, not taken as admin */
	feed(fmt, raw, 30, 250, &recs);
	ok(recs.n == 1, "a record without its queuedata is not decoded");

	/* the returns: an I/O command's, a Get Features', then the Set's */
	memset(raw, 0, 34);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &pid, 4);
	raw[24] = 0x09;
	raw[25] = 0x06;
	memcpy(raw + 26, &ns, 8);
	feed(fmt, raw, 34, 300, &recs);
	raw[24] = 0x0a;
	memcpy(raw + 26, &zero, 8);
	feed(fmt, raw, 34, 310, &recs);
	raw[24] = 0x09;
	feed(fmt, raw, 34, 320, &recs);
	ok(recs.n == 2, "returns: an I/O command's and a Get Features' are not decoded");
	deliver(open, &recs);
	ok(nr_got == 2 && got[0].kind == VWC_KW_SET_FEATURES &&
	   got[0].cid == 900 && got[1].kind == VWC_KW_COMPLETE &&
	   got[1].cid == 900 && got[1].q == q && got[1].time == 320,
	   "the Set Features 06h's return pairs with it, the I/O command's did not end it");

	/* without queuedata in the format: the bytes decide (no BTF) */
	ok(!vwc_kw_fmt_parse(FMT_ADMIN, strlen(FMT_ADMIN), "vwc_1",
			     &fmt[KW_KP_ADMIN]) && !fmt[KW_KP_ADMIN].qd.size,
	   "a format without queuedata");
	admin_raw(raw, pid, ioq, 0x09, 0x06, 1);
	feed(fmt, raw, 27, 400, &recs);
	ok(recs.n == 1 && recs.v[0].ev.q == ioq,
	   "without BTF an I/O command with those bytes still reads as Set Features 06h (its queue not learned: every controller's)");
	free(recs.v);
}

/* the reader's timeout while a return that wakes no one is awaited */
static void open_wait(void)
{
	struct kw_open open[KW_OPEN_N];

	memset(open, 0, sizeof(open));
	ok(vwc_kw_open_wait_ms(open, 5000000000ull) == -1,
	   "nothing outstanding: no timeout");
	open[7].pid = 500;
	open[7].time = 4000000000ull;
	ok(vwc_kw_open_wait_ms(open, 5000000000ull) == KW_OPEN_POLL_MS,
	   "a Set Features 06h outstanding for 1 s: read every KW_OPEN_POLL_MS");
	ok(vwc_kw_open_wait_ms(open, 4000000000ull + KW_OPEN_WAIT_NS) == -1,
	   "outstanding past KW_OPEN_WAIT_NS: left to the pending timeout");
	ok(vwc_kw_open_wait_ms(open, 3000000000ull) == -1,
	   "a time ahead of now: no timeout");
}

/*
 * The probes' fetch arguments from a BTF made here: struct
 * request_queue's queuedata (6.1 keeps it after a mutex), and the io_uring
 * chain; what is missing says why.
 */
static void btf_args(void)
{
	struct btf *b = btf__new_empty();
	struct kw_btf a;
	int lng, vp, mtx;

	lng = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	vp = btf__add_ptr(b, 0);
	mtx = btf__add_struct(b, "mutex", 32);
	btf__add_field(b, "owner", lng, 0, 0);
	btf__add_struct(b, "request_queue", 128);
	btf__add_field(b, "last_merge", vp, 0, 0);
	btf__add_field(b, "rq_qos_mutex", mtx, 64, 0);
	btf__add_field(b, "queue_depth", lng, 320, 0);
	btf__add_field(b, "queuedata", vp, 384, 0);
	vwc_kw_btf_args_of(b, NULL, &a);
	ok(!strcmp(a.qd, "qd=+48($arg1):x64") && !a.qd_why[0],
	   "BTF: queuedata's offset in struct request_queue, as a fetch of $arg1");
	ok(!a.uring_q[0] && strstr(a.uring_why, "io_uring_cmd"),
	   "BTF: without struct io_uring_cmd, the io_uring probe names no queue, and says why");
	btf__free(b);

	b = btf__new_empty();
	lng = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	btf__add_struct(b, "request_queue", 16);
	btf__add_field(b, "queuedata", lng, 0, 0);
	vwc_kw_btf_args_of(b, NULL, &a);
	ok(!a.qd[0] && strstr(a.qd_why, "queuedata"),
	   "BTF: a queuedata that is not a pointer is not fetched");
	btf__free(b);
	vwc_kw_btf_args_of(NULL, NULL, &a);
	ok(!a.qd[0] && !a.uring_q[0] && a.qd_why[0] && a.uring_why[0],
	   "no BTF: neither fetch, both say why");
}

int main(void)
{
	tracepoints();
	kprobes();
	filters();
	io_queue();
	open_wait();
	btf_offsets();
	btf_args();
	return tap_done();
}
