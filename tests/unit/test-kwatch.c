// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The nvme tracepoint format parser and the perf record decoder (static in
 * src/kwatch.c, hence included). Regression for a crash tests/fuzz found:
 * a negative offset in a format line made decode() read before the record.
 */
#include <linux/perf_event.h>

#include "../../src/kwatch.c"
#include "tap.h"

/* one PERF_RECORD_SAMPLE (TIME | RAW) with a Set Features at the offsets */
static size_t mkrec(uint8_t *buf, uint16_t type, int ctrl, uint16_t cid,
		    uint32_t cdw10, uint32_t cdw11)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	uint8_t raw[88] = { 0 };
	uint64_t time = 42;
	uint32_t rawlen = sizeof(raw);

	memcpy(raw, &type, 2);
	memcpy(raw + 40, &ctrl, 4);
	raw[48] = 9;
	memcpy(raw + 52, &cid, 2);
	memcpy(raw + 61, &cdw10, 4);
	memcpy(raw + 65, &cdw11, 4);
	h.size = sizeof(h) + 12 + sizeof(raw);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &time, 8);
	memcpy(buf + sizeof(h) + 8, &rawlen, 4);
	memcpy(buf + sizeof(h) + 12, raw, sizeof(raw));
	return h.size;
}

static void parse(struct kw_event_fmt *f, const char *text)
{
	fmt_parse(text, strlen(text), f);
}

/* events/nvme/nvme_setup_cmd/format as 6.1 to 7.2 have it */
#define FMT(cdw10_off, cdw10_size) \
	"name: nvme_setup_cmd\n" \
	"ID: 257\n" \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
	"\n" \
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

int main(void)
{
	struct vwc_kwatch kw;
	uint8_t buf[256], *rec;
	size_t n;

	memset(&kw, 0, sizeof(kw));
	parse(&kw.setup, FMT("61", "24"));
	ok(kw.setup.id == 257 && kw.setup.ctrl_id.offset == 40 &&
	   kw.setup.ctrl_id.size == 4 && kw.setup.cid.offset == 52 &&
	   kw.setup.cid.size == 2 && kw.setup.opcode.offset == 48 &&
	   kw.setup.cdw10.offset == 61 && kw.setup.cdw10.size == 24,
	   "format read by libtraceevent: id, offsets and sizes");
	kw.setup.id = 0x101;
	n = mkrec(buf, 0x101, 3, 7, 0x06, 0x1);
	rec = malloc(n);	/* exact size: ASan sees a read outside */
	if (!rec) {
		ok(0, "malloc");
		return tap_done();
	}
	memcpy(rec, buf, n);
	decode(&kw, rec, n);
	ok(kw.nr_evs == 1 && kw.evs[0].kind == VWC_KW_SET_FEATURES &&
	   kw.evs[0].ctrl == 3 && kw.evs[0].cid == 7 && kw.evs[0].fid == 6 &&
	   kw.evs[0].cdw11 == 1, "Set Features 06h decoded");

	/* CDW10/CDW11 are the command's little-endian dwords on any host */
	{
		uint8_t le[8] = { 0x06, 0, 0, 0, 0x01, 0, 0, 0x80 };

		memcpy(rec + sizeof(struct perf_event_header) + 12 + 61, le, 8);
		kw.nr_evs = 0;
		decode(&kw, rec, n);
		ok(kw.nr_evs == 1 && kw.evs[0].fid == 6 &&
		   kw.evs[0].cdw11 == 0x80000001u,
		   "cdw10/cdw11 read as little endian bytes");
	}
	/* ctrl_id is the host's int: -1 stays -1 */
	{
		int m1 = -1;

		memcpy(rec + sizeof(struct perf_event_header) + 12 + 40, &m1, 4);
		kw.nr_evs = 0;
		decode(&kw, rec, n);
		ok(kw.nr_evs == 1 && kw.evs[0].ctrl == -1,
		   "ctrl_id read in host byte order, sign kept");
		m1 = 3;
		memcpy(rec + sizeof(struct perf_event_header) + 12 + 40, &m1, 4);
	}

	/* the fuzzer's crash: a negative offset must not be taken */
	parse(&kw.setup, FMT("-61", "24"));
	ok(kw.setup.cdw10.size == 0 && kw.setup.cdw10.offset == 0,
	   "negative offset rejected");
	parse(&kw.setup, FMT("99999999999", "24"));
	ok(kw.setup.cdw10.size == 0, "offset out of range rejected");
	kw.setup.id = 0x101;
	kw.nr_evs = 0;
	decode(&kw, rec, n);	/* ASan: no read before the record */
	ok(kw.nr_evs == 0,
	   "without a cdw10 field nothing is decoded, nothing read outside");
	parse(&kw.setup, FMT("61", "4"));
	kw.setup.id = 0x101;
	kw.nr_evs = 0;
	decode(&kw, rec, n);
	ok(kw.nr_evs == 0, "cdw10 too short for CDW11: not decoded");
	ok(fmt_parse("garbage", 7, &kw.setup) != 0, "not a format: refused");
	free(rec);
	free(kw.evs);
	return tap_done();
}
