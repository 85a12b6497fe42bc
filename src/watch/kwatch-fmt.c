// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kwatch: where tracefs is, the events' "format" files read by
 * libtraceevent, and the perf records decoded with them (see kwatch.h and
 * kwatch-int.h).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs/tracefs.h>
#include <traceevent/event-parse.h>

#include "kwatch-int.h"

/*
 * A field's place in a record, from libtraceevent's parse of the format:
 * 0 to 65535 (a record is at most 64 KiB), so that the decoder's bound
 * checks cannot be bypassed (found by tests/fuzz/fuzz-kwatch.c).
 */
static void take_field(struct tep_event *ev, const char *name,
		       struct kw_field *f)
{
	struct tep_format_field *tf = tep_find_any_field(ev, name);

	memset(f, 0, sizeof(*f));
	if (!tf || tf->offset < 0 || tf->offset > 65535 || tf->size <= 0 ||
	    tf->size > 65535)
		return;
	f->offset = tf->offset;
	f->size = tf->size;
}

static void fmt_of_event(struct tep_event *ev, struct kw_event_fmt *f)
{
	memset(f, 0, sizeof(*f));
	f->id = ev->id;
	take_field(ev, "ctrl_id", &f->ctrl_id);
	take_field(ev, "qid", &f->qid);
	take_field(ev, "cid", &f->cid);
	take_field(ev, "opcode", &f->opcode);
	take_field(ev, "cdw10", &f->cdw10);
	take_field(ev, "common_pid", &f->pid);
	take_field(ev, "q", &f->q);
	take_field(ev, "op", &f->op);
	take_field(ev, "fid", &f->fid);
	take_field(ev, "wce", &f->wce);
	take_field(ev, "qd", &f->qd);
	take_field(ev, "aop", &f->aop);
	take_field(ev, "afid", &f->afid);
	take_field(ev, "awce", &f->awce);
	take_field(ev, "bop", &f->bop);
	take_field(ev, "bfid", &f->bfid);
	take_field(ev, "bwce", &f->bwce);
}

/*
 * The text is printable ASCII, tabs and newlines, and every line that
 * names a field has the kernel's own shape,
 * "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;". libtraceevent 1.7's
 * field reader crashes (a NULL strcmp) on some texts that are not (found by
 * fuzz-kwatch: a vertical tab inside a field line); the kernel never writes
 * one, so such a text is refused before it reaches the library.
 */
static bool fmt_shape_ok(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c != '\t' && c != '\n' && (c < 0x20 || c > 0x7e))
			return false;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[512];
		int used = -1;

		if (n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
		}
		if (memmem(p, n, "field:", 6)) {
			if (n >= sizeof(line) ||
			    sscanf(line, "\tfield:%*[^;];\toffset:%*[0-9];\tsize:%*[0-9];\tsigned:%*[01];%n",
				   &used) != 0 ||
			    used < 0 || (size_t)used != n)
				return false;
		}
		p += n + 1;
	}
	return true;
}

/*
 * A tracefs "format" text (as events/<system>/<event>/format holds it)
 * read by libtraceevent (also what the tests and the fuzzer feed).
 * Return: 0 with @f filled (fields the text lacks have size 0), or a
 * negative errno.
 */
int vwc_kw_fmt_parse(const char *text, size_t len, const char *system,
		     struct kw_event_fmt *f)
{
	struct tep_handle *tep;
	struct tep_event *ev = NULL;
	int r = -EPROTO;

	memset(f, 0, sizeof(*f));
	if (!fmt_shape_ok(text, len))
		return -EPROTO;
	tep = tep_alloc();
	if (!tep)
		return -ENOMEM;
	if (tep_parse_format(tep, &ev, text, len, system) == 0 && ev) {
		fmt_of_event(ev, f);
		r = f->id > 0 && f->id <= 0xffff ? 0 : -EPROTO;
	}
	tep_free(tep);
	if (r)
		memset(f, 0, sizeof(*f));
	return r;
}

/*
 * Where a tracefs is mounted, per /proc/mounts (the first one), into @dir
 * if not NULL. Return: true if one is.
 */
bool vwc_kw_tracefs_mounted(char *dir, size_t len)
{
	char line[512], src[256], mnt[256], type[64];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %255s %63s", src, mnt, type) != 3 ||
		    strcmp(type, "tracefs"))
			continue;
		found = true;
		if (dir)
			snprintf(dir, len, "%s", mnt);
	}
	fclose(f);
	return found;
}

/*
 * Find tracefs, or mount it where systemd does (libtracefs keeps it).
 * @how gets "tracefs at DIR" or "tracefs was not mounted: mounted at DIR".
 */
int vwc_kw_tracefs_dir(const char **dir, char *how, size_t hlen, char *why,
		       size_t len)
{
	bool before = vwc_kw_tracefs_mounted(NULL, 0);

	*dir = tracefs_tracing_dir();
	if (!*dir) {
		snprintf(why, len, "tracefs is not mounted and could not be mounted");
		return -ENOENT;
	}
	if (!before && vwc_kw_tracefs_mounted(NULL, 0))
		snprintf(how, hlen, "tracefs was not mounted: mounted at %s",
			 *dir);
	else
		snprintf(how, hlen, "tracefs at %s", *dir);
	return 0;
}

/* One event's format file, through libtracefs, parsed by libtraceevent. */
int vwc_kw_load_fmt(const char *system, const char *event,
		    struct kw_event_fmt *f)
{
	int size = 0, r;
	char *text;

	memset(f, 0, sizeof(*f));
	text = tracefs_event_file_read(NULL, system, event, "format", &size);
	if (!text || size <= 0) {
		free(text);
		return -ENOENT;
	}
	r = vwc_kw_fmt_parse(text, (size_t)size, system, f);
	free(text);
	return r;
}

/* A number field of the record, in the host's byte order (perf's). */
static uint64_t get_uint(const uint8_t *raw, uint32_t rawlen,
			 const struct kw_field *f)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	if (!f->size || f->offset + f->size > (int)rawlen)
		return 0;
	switch (f->size) {
	case 1:
		memcpy(&u8, raw + f->offset, 1);
		return u8;
	case 2:
		memcpy(&u16, raw + f->offset, 2);
		return u16;
	case 4:	/* int ctrl_id, int qid, int common_pid: sign-extended */
		memcpy(&u32, raw + f->offset, 4);
		return (uint64_t)(int64_t)(int32_t)u32;
	case 8:
		memcpy(&u64, raw + f->offset, 8);
		return u64;
	}
	return 0;
}

static bool has(const struct kw_field *f, uint32_t rawlen)
{
	return f->size && f->offset + f->size <= (int)rawlen;
}

/* cdw10[24] holds the command's dwords as sent: little endian */
static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void vwc_kw_push(struct kw_recs *out, const struct kw_rec *r)
{
	struct kw_rec *arr;

	if (out->n == out->cap) {
		int cap = out->cap ? out->cap * 2 : 64;

		arr = realloc(out->v, cap * sizeof(*arr));
		if (!arr)
			return;
		out->v = arr;
		out->cap = cap;
	}
	out->v[out->n++] = *r;
}

/* tracepoints: the records are final */
static bool decode_tp(const struct kw_event_fmt *f, enum kw_role role,
		      const uint8_t *raw, uint32_t rawlen, struct kw_rec *r)
{
	if (role == KW_TP_SETUP) {
		const struct kw_field *c = &f->cdw10;
		uint32_t cdw10;

		if (c->size < 8 || c->offset + 8 > (int)rawlen)
			return false;
		cdw10 = le32_at(raw + c->offset);
		r->ev.cdw11 = le32_at(raw + c->offset + 4);
		r->ev.kind = VWC_KW_SET_FEATURES;
		r->ev.fid = cdw10 & 0xff;
	} else {
		r->ev.kind = VWC_KW_COMPLETE;
	}
	r->ev.ctrl = (int)get_uint(raw, rawlen, &f->ctrl_id);
	r->ev.cid = (uint32_t)get_uint(raw, rawlen, &f->cid);
	return true;
}

/*
 * The ioctl probes' second line behind the kernel's filter: where the
 * event fetches queuedata, a command on a queue that has one is an I/O
 * command (kwatch-btf.c), whatever its bytes; where the return probe
 * fetches the command, only a Set Features 06h's return is one.
 */
static bool on_admin_queue(const struct kw_event_fmt *f, const uint8_t *raw,
			   uint32_t rawlen)
{
	if (!f->qd.size)
		return true;
	return has(&f->qd, rawlen) && !get_uint(raw, rawlen, &f->qd);
}

static bool done_wanted(const struct kw_event_fmt *f, const uint8_t *raw,
			uint32_t rawlen)
{
	if (!f->op.size && !f->fid.size)
		return true;	/* a return probe without the command */
	return has(&f->op, rawlen) && has(&f->fid, rawlen) &&
	       get_uint(raw, rawlen, &f->op) == 0x09 &&
	       get_uint(raw, rawlen, &f->fid) == 0x06 &&
	       on_admin_queue(f, raw, rawlen);
}

/*
 * kprobes: the command's bytes are fetched as u8 at their place in the
 * (little-endian) command: FID is CDW10's byte 0, WCE CDW11's bit 0.
 */
static bool decode_kp(const struct kw_event_fmt *f, enum kw_role role,
		      const uint8_t *raw, uint32_t rawlen, struct kw_rec *r)
{
	bool a, b;

	if (!has(&f->pid, rawlen))
		return false;
	r->pid = (int)get_uint(raw, rawlen, &f->pid);
	switch (role) {
	case KW_KP_ADMIN:
		if (!has(&f->q, rawlen) || !has(&f->op, rawlen) ||
		    !has(&f->fid, rawlen) || !has(&f->wce, rawlen) ||
		    !on_admin_queue(f, raw, rawlen))
			return false;
		r->ev.q = get_uint(raw, rawlen, &f->q);
		r->op = (uint8_t)get_uint(raw, rawlen, &f->op);
		r->ev.fid = (uint8_t)get_uint(raw, rawlen, &f->fid);
		r->ev.cdw11 = get_uint(raw, rawlen, &f->wce) & 1;
		return true;
	case KW_KP_DONE:
		return done_wanted(f, raw, rawlen);
	case KW_KP_URING_DONE:
		if (!has(&f->q, rawlen))
			return false;
		r->ev.q = get_uint(raw, rawlen, &f->q);
		return true;
	case KW_KP_URING:
		if (!has(&f->aop, rawlen) || !has(&f->afid, rawlen) ||
		    !has(&f->awce, rawlen) || !has(&f->bop, rawlen) ||
		    !has(&f->bfid, rawlen) || !has(&f->bwce, rawlen))
			return false;
		a = get_uint(raw, rawlen, &f->aop) == 0x09 &&
		    get_uint(raw, rawlen, &f->afid) == 0x06;
		b = get_uint(raw, rawlen, &f->bop) == 0x09 &&
		    get_uint(raw, rawlen, &f->bfid) == 0x06;
		if (!a && !b)
			return false;
		r->op = 0x09;
		r->ev.fid = 0x06;
		/* the controller's admin queue, where BTF told the probe */
		r->ev.q = has(&f->q, rawlen) ? get_uint(raw, rawlen, &f->q) : 0;
		/* both places read as Set Features 06h: either WCE=1 is */
		r->ev.cdw11 = (a && (get_uint(raw, rawlen, &f->awce) & 1)) ||
			      (b && (get_uint(raw, rawlen, &f->bwce) & 1));
		return true;
	default:
		return false;
	}
}

void vwc_kw_decode(const struct kw_event_fmt *fmt, int nfmt,
		   const uint8_t *rec, size_t size, struct kw_recs *out)
{
	const struct perf_event_header *h = (const void *)rec;
	struct kw_rec r;
	const uint8_t *raw;
	uint32_t rawlen;
	uint16_t type;
	int role;
	bool ok;

	memset(&r, 0, sizeof(r));
	r.ev.ctrl = -1;
	if (h->type == PERF_RECORD_LOST) {
		r.ev.kind = VWC_KW_LOST;
		r.role = KW_TP_SETUP;	/* final as it is */
		vwc_kw_push(out, &r);
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE || size < sizeof(*h) + 12)
		return;
	memcpy(&r.ev.time, rec + sizeof(*h), 8);
	memcpy(&rawlen, rec + sizeof(*h) + 8, 4);
	raw = rec + sizeof(*h) + 12;
	if (sizeof(*h) + 12 + rawlen > size || rawlen < 2)
		return;
	memcpy(&type, raw, 2);		/* common_type: the event's id */
	for (role = 0; role < nfmt; role++)
		if (fmt[role].id && fmt[role].id == type)
			break;
	if (role == nfmt)
		return;
	r.role = (enum kw_role)role;
	if (role == KW_TP_SETUP || role == KW_TP_COMPLETE)
		ok = decode_tp(&fmt[role], r.role, raw, rawlen, &r);
	else
		ok = decode_kp(&fmt[role], r.role, raw, rawlen, &r);
	if (ok)
		vwc_kw_push(out, &r);
}
