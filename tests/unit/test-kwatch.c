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
	char *copy = strdup(text), *line, *save;

	memset(f, 0, sizeof(*f));
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		parse_field(line, f);
	free(copy);
}

#define FMT(cdw10_off) \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:int ctrl_id;\toffset:40;\tsize:4;\tsigned:1;\n" \
	"\tfield:int qid;\toffset:44;\tsize:4;\tsigned:1;\n" \
	"\tfield:u8 opcode;\toffset:48;\tsize:1;\tsigned:0;\n" \
	"\tfield:u16 cid;\toffset:52;\tsize:2;\tsigned:0;\n" \
	"\tfield:u8 cdw10[24];\toffset:" cdw10_off ";\tsize:24;\tsigned:0;\n"

int main(void)
{
	struct vwc_kwatch kw;
	uint8_t buf[256], *rec;
	size_t n;

	memset(&kw, 0, sizeof(kw));
	parse(&kw.setup, FMT("61"));
	ok(kw.setup.ctrl_id.offset == 40 && kw.setup.ctrl_id.size == 4 &&
	   kw.setup.cid.offset == 52 && kw.setup.cdw10.offset == 61 &&
	   kw.setup.cdw10.size == 24, "format: offsets and sizes");
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

	/* the fuzzer's crash: offset:-61 must not be taken */
	parse(&kw.setup, FMT("-61"));
	ok(kw.setup.cdw10.size == 0 && kw.setup.cdw10.offset == 0,
	   "negative offset rejected");
	parse(&kw.setup, FMT("99999999999"));
	ok(kw.setup.cdw10.size == 0, "offset out of range rejected");
	kw.setup.id = 0x101;
	kw.nr_evs = 0;
	decode(&kw, rec, n);	/* ASan: no read before the record */
	ok(kw.nr_evs == 1 && kw.evs[0].ctrl == 3,
	   "decoded without a cdw10 field: nothing read outside");
	parse(&kw.setup,
	      "\tfield:int ctrl_id;\toffset:40;\tsize:-4;\tsigned:1;\n");
	ok(kw.setup.ctrl_id.size == 0, "negative size rejected");
	free(rec);
	free(kw.evs);
	return tap_done();
}
