// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The nvme tracepoint format (read by libtraceevent, taken by fmt_parse())
 * and the perf record decoder of src/kwatch.c (static: the file is
 * included). Input: a tracefs "format" text, a NUL, then perf records (struct perf_event_header + TIME + RAW)
 * as the ring would hold them. Invariant: decoding never reads outside a
 * record, whatever offsets and sizes the format claims.
 */
#include "../../src/kwatch.c"
#include "fuzz.h"

/*
 * libtraceevent 1.7 leaks a token (a few bytes) on some malformed formats,
 * inside tep_parse_format(): not this project's memory; the formats the
 * sidecar reads come from the kernel. Leaks with kwatch.c's own frames
 * are still reported.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *z = memchr(data, 0, size), *rec;
	struct vwc_kwatch kw;
	size_t left;
	char *fmt;

	memset(&kw, 0, sizeof(kw));
	fmt = fuzz_str(data, z ? (size_t)(z - data) : size);
	fmt_parse(fmt, strlen(fmt), &kw.setup);
	kw.complete = kw.setup;
	kw.setup.id = 0x101;
	kw.complete.id = 0x102;
	rec = z ? z + 1 : data + size;
	left = (size_t)(data + size - rec);
	/* records back to back, each on the heap at its exact size */
	while (left >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint8_t *copy;

		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || h.size > left)
			break;
		copy = malloc(h.size);
		memcpy(copy, rec, h.size);
		decode(&kw, copy, h.size);
		free(copy);
		rec += h.size;
		left -= h.size;
	}
	free(kw.evs);
	free(fmt);
	return 0;
}
