// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel-side detection of admin Set Features through the nvme
 * tracepoints and perf_event_open(2), see kwatch.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kwatch.h"
#include "log.h"

#define KW_DATA_PAGES	8	/* ring per CPU: 32 KiB on 4 KiB pages */

static const char *const tracefs_roots[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

struct kw_field {
	int offset;
	int size;
};

struct kw_event_fmt {
	int id;
	struct kw_field ctrl_id, qid, cid, opcode, cdw10;
};

struct kw_ring {
	int fd_setup;		/* owns the ring */
	int fd_complete;	/* output redirected to fd_setup's ring */
	void *base;
	size_t len;
};

struct vwc_kwatch {
	struct kw_event_fmt setup, complete;
	struct kw_ring *rings;
	int nr_rings;
	long page;
	struct vwc_kw_event *evs;
	int nr_evs, cap_evs;
};

static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * An offset or size of a format line: 0 to 65535 (a record is at most
 * 64 KiB), so that decode()'s bound checks cannot be bypassed by a
 * negative value or overflow (found by tests/fuzz/fuzz-kwatch.c).
 */
static bool parse_int(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 0 || v > 65535)
		return false;
	*out = (int)v;
	return true;
}

/* "\tfield:u8 cdw10[24];\toffset:20;\tsize:24;\tsigned:0;" */
static void parse_field(char *line, struct kw_event_fmt *f)
{
	char *decl = strstr(line, "field:"), *semi, *name, *br, *p;
	struct kw_field fl;

	if (!decl)
		return;
	decl += 6;
	semi = strchr(decl, ';');
	if (!semi)
		return;
	*semi = '\0';
	br = strchr(decl, '[');
	if (br)
		*br = '\0';
	name = strrchr(decl, ' ');
	name = name ? name + 1 : decl;
	p = strstr(semi + 1, "offset:");
	if (!p || !parse_int(p + 7, &fl.offset))
		return;
	p = strstr(semi + 1, "size:");
	if (!p || !parse_int(p + 5, &fl.size) || !fl.size)
		return;
	if (!strcmp(name, "ctrl_id"))
		f->ctrl_id = fl;
	else if (!strcmp(name, "qid"))
		f->qid = fl;
	else if (!strcmp(name, "cid"))
		f->cid = fl;
	else if (!strcmp(name, "opcode"))
		f->opcode = fl;
	else if (!strcmp(name, "cdw10"))
		f->cdw10 = fl;
}

static int load_format(const char *root, const char *event,
		       struct kw_event_fmt *f)
{
	char path[256], *buf, *line, *save;
	int r;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/events/nvme/%s/id", root, event);
	buf = malloc(16384);
	if (!buf)
		return -ENOMEM;
	r = read_text(path, buf, 64);
	if (r)
		goto out;
	f->id = atoi(buf);
	snprintf(path, sizeof(path), "%s/events/nvme/%s/format", root, event);
	r = read_text(path, buf, 16384);
	if (r)
		goto out;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		parse_field(line, f);
	if (!f->ctrl_id.size || !f->cid.size || !f->qid.size)
		r = -EPROTO;
out:
	free(buf);
	return r;
}

static int perf_open(int id, int cpu, const char *filter)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	a.wakeup_events = 1;
	a.disabled = 1;
	fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

void vwc_kwatch_close(struct vwc_kwatch *kw)
{
	int i;

	if (!kw)
		return;
	for (i = 0; kw->rings && i < kw->nr_rings; i++) {
		struct kw_ring *g = &kw->rings[i];

		if (g->fd_complete >= 0)
			close(g->fd_complete);
		if (g->base)
			munmap(g->base, g->len);
		if (g->fd_setup >= 0)
			close(g->fd_setup);
	}
	free(kw->rings);
	free(kw->evs);
	free(kw);
}

static int open_ring(struct vwc_kwatch *kw, int cpu, struct kw_ring *g)
{
	g->fd_complete = -1;
	g->fd_setup = perf_open(kw->setup.id, cpu, "qid == 0 && opcode == 9");
	if (g->fd_setup < 0)
		return g->fd_setup;
	g->len = (1 + KW_DATA_PAGES) * kw->page;
	g->base = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       g->fd_setup, 0);
	if (g->base == MAP_FAILED) {
		g->base = NULL;
		return -errno;
	}
	g->fd_complete = perf_open(kw->complete.id, cpu, "qid == 0");
	if (g->fd_complete < 0)
		return g->fd_complete;
	if (ioctl(g->fd_complete, PERF_EVENT_IOC_SET_OUTPUT, g->fd_setup) < 0)
		return -errno;
	if (ioctl(g->fd_setup, PERF_EVENT_IOC_ENABLE, 0) < 0 ||
	    ioctl(g->fd_complete, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	return 0;
}

int vwc_kwatch_open(struct vwc_kwatch **out, char *why, size_t len)
{
	struct vwc_kwatch *kw;
	const char *root = NULL;
	long ncpu, cpu;
	size_t i;
	int r;

	*out = NULL;
	kw = calloc(1, sizeof(*kw));
	if (!kw)
		return -ENOMEM;
	kw->page = sysconf(_SC_PAGESIZE);
	r = -ENOENT;
	for (i = 0; i < sizeof(tracefs_roots) / sizeof(tracefs_roots[0]); i++) {
		r = load_format(tracefs_roots[i], "nvme_setup_cmd", &kw->setup);
		if (!r) {
			root = tracefs_roots[i];
			break;
		}
	}
	if (!root) {
		snprintf(why, len, "no nvme:nvme_setup_cmd tracepoint under %s or %s: %s",
			 tracefs_roots[0], tracefs_roots[1], strerror(-r));
		goto fail;
	}
	r = load_format(root, "nvme_complete_rq", &kw->complete);
	if (r || !kw->setup.opcode.size || kw->setup.cdw10.size < 8) {
		r = r ? r : -EPROTO;
		snprintf(why, len, "unexpected nvme tracepoint format under %s: %s",
			 root, strerror(-r));
		goto fail;
	}
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	kw->rings = calloc(ncpu > 0 ? ncpu : 1, sizeof(*kw->rings));
	if (!kw->rings) {
		r = -ENOMEM;
		snprintf(why, len, "%s", strerror(-r));
		goto fail;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct kw_ring *g = &kw->rings[kw->nr_rings];

		r = open_ring(kw, (int)cpu, g);
		kw->nr_rings++;
		if (r == -ENODEV && cpu)	/* CPU offline */
			continue;
		if (r) {
			snprintf(why, len, "perf_event_open on the nvme tracepoints (CPU %ld): %s",
				 cpu, strerror(-r));
			goto fail;
		}
	}
	*out = kw;
	return 0;
fail:
	vwc_kwatch_close(kw);
	return r;
}

int vwc_kwatch_nr_fds(const struct vwc_kwatch *kw)
{
	int i, n = 0;

	for (i = 0; kw && i < kw->nr_rings; i++)
		n += kw->rings[i].base != NULL;
	return n;
}

int vwc_kwatch_pollfds(const struct vwc_kwatch *kw, struct pollfd *pfd,
		       int max)
{
	int i, n = 0;

	for (i = 0; kw && i < kw->nr_rings && n < max; i++) {
		if (!kw->rings[i].base)
			continue;
		pfd[n].fd = kw->rings[i].fd_setup;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

static uint64_t get_uint(const uint8_t *raw, uint32_t rawlen,
			 const struct kw_field *f)
{
	uint64_t v = 0;

	if (!f->size || f->offset + f->size > (int)rawlen || f->size > 8)
		return 0;
	memcpy(&v, raw + f->offset, f->size);	/* little endian (x86, arm64) */
	if (f->size == 4 && (int32_t)v < 0)
		v = (uint64_t)(int64_t)(int32_t)v;
	return v;
}

static void push(struct vwc_kwatch *kw, const struct vwc_kw_event *ev)
{
	struct vwc_kw_event *arr;

	if (kw->nr_evs == kw->cap_evs) {
		int cap = kw->cap_evs ? kw->cap_evs * 2 : 64;

		arr = realloc(kw->evs, cap * sizeof(*arr));
		if (!arr)
			return;
		kw->evs = arr;
		kw->cap_evs = cap;
	}
	kw->evs[kw->nr_evs++] = *ev;
}

static void decode(struct vwc_kwatch *kw, const uint8_t *rec, size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	struct vwc_kw_event ev = { .ctrl = -1 };
	const uint8_t *raw;
	uint32_t rawlen;
	uint16_t type;

	if (h->type == PERF_RECORD_LOST) {
		ev.kind = VWC_KW_LOST;
		push(kw, &ev);
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE || size < sizeof(*h) + 12)
		return;
	memcpy(&ev.time, rec + sizeof(*h), 8);
	memcpy(&rawlen, rec + sizeof(*h) + 8, 4);
	raw = rec + sizeof(*h) + 12;
	if (sizeof(*h) + 12 + rawlen > size || rawlen < 2)
		return;
	memcpy(&type, raw, 2);		/* common_type: the event's id */
	if (type == kw->setup.id) {
		const struct kw_field *c = &kw->setup.cdw10;
		uint32_t cdw10 = 0;

		if (c->offset + 8 > (int)rawlen)
			return;
		memcpy(&cdw10, raw + c->offset, 4);
		memcpy(&ev.cdw11, raw + c->offset + 4, 4);
		ev.kind = VWC_KW_SET_FEATURES;
		ev.fid = cdw10 & 0xff;
		ev.ctrl = (int)get_uint(raw, rawlen, &kw->setup.ctrl_id);
		ev.cid = get_uint(raw, rawlen, &kw->setup.cid);
	} else if (type == kw->complete.id) {
		ev.kind = VWC_KW_COMPLETE;
		ev.ctrl = (int)get_uint(raw, rawlen, &kw->complete.ctrl_id);
		ev.cid = get_uint(raw, rawlen, &kw->complete.cid);
	} else {
		return;
	}
	push(kw, &ev);
}

static void drain_ring(struct vwc_kwatch *kw, struct kw_ring *g)
{
	struct perf_event_mmap_page *mp = g->base;
	const uint8_t *data = (const uint8_t *)g->base + kw->page;
	uint64_t size = (uint64_t)KW_DATA_PAGES * kw->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	uint8_t rec[1024];

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size;
		size_t n;

		/* a record may wrap around the end of the ring */
		n = size - off < sizeof(h) ? size - off : sizeof(h);
		memcpy(&h, data + off, n);
		memcpy((uint8_t *)&h + n, data, sizeof(h) - n);
		if (!h.size)
			break;
		if (h.size <= sizeof(rec)) {
			n = size - off < h.size ? size - off : h.size;
			memcpy(rec, data + off, n);
			memcpy(rec + n, data, h.size - n);
			decode(kw, rec, h.size);
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static int cmp_time(const void *a, const void *b)
{
	const struct vwc_kw_event *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

int vwc_kwatch_read(struct vwc_kwatch *kw,
		    void (*cb)(void *arg, const struct vwc_kw_event *ev),
		    void *arg)
{
	int i, n;

	kw->nr_evs = 0;
	for (i = 0; i < kw->nr_rings; i++)
		if (kw->rings[i].base)
			drain_ring(kw, &kw->rings[i]);
	/* a submission on one CPU, its completion on another: by time */
	if (kw->nr_evs)	/* evs may still be NULL: qsort(NULL, 0) is undefined */
		qsort(kw->evs, kw->nr_evs, sizeof(*kw->evs), cmp_time);
	n = kw->nr_evs;
	for (i = 0; i < n; i++)
		cb(arg, &kw->evs[i]);
	return n;
}
