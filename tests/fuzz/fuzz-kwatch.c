// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kwatch's event formats (read by libtraceevent, vwc_kw_fmt_parse()) and
 * its perf record decoder and pairing (kwatch-int.h). Input: a
 * tracefs "format" text, a NUL, then perf records (struct
 * perf_event_header + TIME + RAW) as the ring would hold them. The one
 * format stands for every role (tracepoint and kprobe), each its own id.
 * Invariant: decoding never reads outside a record, whatever offsets and
 * sizes the format claims.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/watch/kwatch-int.h"
#include "fuzz.h"

/*
 * libtraceevent 1.7 leaks a token (a few bytes) on some malformed formats,
 * inside tep_parse_format(): not this project's memory; the formats the
 * sidecar reads come from the kernel. Leaks with kwatch's own frames are
 * still reported.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static void sink(void *arg, const struct vwc_kw_event *ev)
{
	(void)arg;
	(void)ev;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *z = memchr(data, 0, size), *rec;
	struct kw_event_fmt fmt[KW_NR_ROLES];
	struct kw_open open[KW_OPEN_N];
	struct kw_recs recs = { 0 };
	size_t left;
	char *text;
	int role;

	memset(open, 0, sizeof(open));
	text = fuzz_str(data, z ? (size_t)(z - data) : size);
	vwc_kw_fmt_parse(text, strlen(text), "nvme", &fmt[0]);
	for (role = 0; role < KW_NR_ROLES; role++) {
		fmt[role] = fmt[0];
		fmt[role].id = 0x101 + role;
	}
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
		vwc_kw_decode(fmt, KW_NR_ROLES, copy, h.size, &recs);
		free(copy);
		rec += h.size;
		left -= h.size;
	}
	vwc_kw_deliver(open, &recs, 42, sink, NULL);
	free(recs.v);
	free(text);
	return 0;
}
