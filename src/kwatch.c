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
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracefs/tracefs.h>
#include <traceevent/event-parse.h>

#include "kwatch.h"
#include "log.h"

#define KW_DATA_PAGES	8	/* ring per CPU: 32 KiB on 4 KiB pages */

struct kw_field {
	int offset;
	int size;
};

struct kw_event_fmt {
	int id;
	struct kw_field ctrl_id, qid, cid, opcode, cdw10;
};

struct kw_ring {
	int fd_setup;		/* owns the ring, -1 if not open */
	int fd_complete;	/* output redirected to fd_setup's ring */
	void *base;
	size_t len;
};

struct vwc_kwatch {
	struct kw_event_fmt setup, complete;
	struct kw_ring *rings;
	int nr_rings;		/* one slot per possible CPU */
	int closed;		/* rings closed since vwc_kwatch_add_cpus() */
	long page;
	char how[160];
	struct vwc_kw_event *evs;
	int nr_evs, cap_evs;
};

/*
 * A field's place in a record, from libtraceevent's parse of the format:
 * 0 to 65535 (a record is at most 64 KiB), so that decode()'s bound
 * checks cannot be bypassed (found by tests/fuzz/fuzz-kwatch.c).
 */
static void take_field(struct tep_event *ev, const char *name,
		       struct kw_field *f)
{
	struct tep_format_field *tf = tep_find_field(ev, name);

	memset(f, 0, sizeof(*f));
	if (!tf || tf->offset < 0 || tf->offset > 65535 || tf->size <= 0 ||
	    tf->size > 65535)
		return;
	f->offset = tf->offset;
	f->size = tf->size;
}

static int fmt_of_event(struct tep_event *ev, struct kw_event_fmt *f)
{
	memset(f, 0, sizeof(*f));
	f->id = ev->id;
	take_field(ev, "ctrl_id", &f->ctrl_id);
	take_field(ev, "qid", &f->qid);
	take_field(ev, "cid", &f->cid);
	take_field(ev, "opcode", &f->opcode);
	take_field(ev, "cdw10", &f->cdw10);
	return f->ctrl_id.size && f->cid.size && f->qid.size ? 0 : -EPROTO;
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
 * A tracefs "format" text (as events/nvme/<event>/format holds it) read
 * by libtraceevent (also what the tests and the fuzzer feed).
 */
static int fmt_parse(const char *text, size_t len, struct kw_event_fmt *f)
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
	if (tep_parse_format(tep, &ev, text, len, "nvme") == 0 && ev)
		r = fmt_of_event(ev, f);
	tep_free(tep);
	return r;
}

/*
 * Where a tracefs is mounted, per /proc/mounts (the first one), into @dir
 * if not NULL. Return: true if one is.
 */
static bool tracefs_in_mounts(char *dir, size_t len)
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

/* One event's format file, through libtracefs, parsed by libtraceevent. */
static int load_one(struct vwc_kwatch *kw, const char *event,
		    struct kw_event_fmt *f)
{
	int size = 0, r;
	char *text;

	(void)kw;
	text = tracefs_event_file_read(NULL, "nvme", event, "format", &size);
	if (!text || size <= 0) {
		free(text);
		return -ENOENT;
	}
	r = fmt_parse(text, (size_t)size, f);
	free(text);
	return r;
}

/*
 * Find tracefs, or mount it where systemd does (libtracefs), and read the
 * nvme events' formats there with libtraceevent.
 */
static int load_formats(struct vwc_kwatch *kw, char *why, size_t len)
{
	bool before = tracefs_in_mounts(NULL, 0);
	const char *dir;
	int r;

	/* found, or mounted at /sys/kernel/tracing; kept by libtracefs */
	dir = tracefs_tracing_dir();
	if (!dir) {
		snprintf(why, len, "tracefs is not mounted and could not be mounted");
		return -ENOENT;
	}
	if (!before && tracefs_in_mounts(NULL, 0))
		snprintf(kw->how, sizeof(kw->how),
			 "nvme tracepoints (tracefs was not mounted: mounted at %s)",
			 dir);
	else
		snprintf(kw->how, sizeof(kw->how), "nvme tracepoints (tracefs at %s)",
			 dir);
	/*
	 * The two formats only, parsed by libtraceevent (not the whole
	 * system with kallsyms: seconds under emulation).
	 */
	r = load_one(kw, "nvme_setup_cmd", &kw->setup);
	if (!r)
		r = load_one(kw, "nvme_complete_rq", &kw->complete);
	if (r == -ENOENT)
		snprintf(why, len, "no nvme:nvme_setup_cmd and nvme:nvme_complete_rq under %s/events (nvme_core not loaded yet?)",
			 dir);
	else if (r || !kw->setup.opcode.size || kw->setup.cdw10.size < 8) {
		snprintf(why, len, "unexpected nvme tracepoint format under %s",
			 dir);
		r = -EPROTO;
	}
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
	/* sample times on CLOCK_MONOTONIC: comparable with the sidecar's */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
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

static void close_ring(struct kw_ring *g)
{
	if (g->fd_complete >= 0)
		close(g->fd_complete);
	if (g->base)
		munmap(g->base, g->len);
	if (g->fd_setup >= 0)
		close(g->fd_setup);
	g->fd_complete = g->fd_setup = -1;
	g->base = NULL;
}

void vwc_kwatch_close(struct vwc_kwatch *kw)
{
	int i;

	if (!kw)
		return;
	for (i = 0; kw->rings && i < kw->nr_rings; i++)
		close_ring(&kw->rings[i]);
	free(kw->rings);
	free(kw->evs);
	free(kw);
}

static int open_ring(struct vwc_kwatch *kw, int cpu, struct kw_ring *g)
{
	int r;

	g->fd_complete = -1;
	g->fd_setup = perf_open(kw->setup.id, cpu, "qid == 0 && opcode == 9");
	if (g->fd_setup < 0) {
		r = g->fd_setup;
		g->fd_setup = -1;
		return r;
	}
	g->len = (1 + KW_DATA_PAGES) * kw->page;
	g->base = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       g->fd_setup, 0);
	if (g->base == MAP_FAILED) {
		g->base = NULL;
		r = -errno;
		goto fail;
	}
	g->fd_complete = perf_open(kw->complete.id, cpu, "qid == 0");
	if (g->fd_complete < 0) {
		r = g->fd_complete;
		g->fd_complete = -1;
		goto fail;
	}
	if (ioctl(g->fd_complete, PERF_EVENT_IOC_SET_OUTPUT, g->fd_setup) < 0 ||
	    ioctl(g->fd_setup, PERF_EVENT_IOC_ENABLE, 0) < 0 ||
	    ioctl(g->fd_complete, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	close_ring(g);
	return r;
}

/*
 * Two descriptors per CPU: the soft RLIMIT_NOFILE (1024 by default) is
 * raised to the hard one (524288 under systemd, and the unit's
 * LimitNOFILE=) so that a host with hundreds of CPUs does not hit EMFILE.
 */
static void raise_nofile(long ncpu)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max ||
	    rl.rlim_cur >= (rlim_t)(2 * ncpu + 256))
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		vwc_dbg("cannot raise RLIMIT_NOFILE: %s", strerror(errno));
}

void vwc_kwatch_cpu_gone(struct vwc_kwatch *kw, int cpu)
{
	if (!kw || cpu < 0 || cpu >= kw->nr_rings || !kw->rings[cpu].base)
		return;
	close_ring(&kw->rings[cpu]);
	kw->closed++;
}

int vwc_kwatch_add_cpus(struct vwc_kwatch *kw)
{
	int cpu, r, added = kw ? kw->closed : 0;

	if (kw)
		kw->closed = 0;

	for (cpu = 0; kw && cpu < kw->nr_rings; cpu++) {
		struct kw_ring *g = &kw->rings[cpu];

		if (g->base)
			continue;
		r = open_ring(kw, cpu, g);
		if (!r)
			added++;
		else if (r != -ENODEV)	/* ENODEV: the CPU is offline */
			vwc_warn("nvme tracepoints on CPU %d: %s", cpu,
				 strerror(-r));
	}
	return added;
}

int vwc_kwatch_open(struct vwc_kwatch **out, char *why, size_t len)
{
	struct vwc_kwatch *kw;
	long ncpu, cpu;
	int r;

	*out = NULL;
	kw = calloc(1, sizeof(*kw));
	if (!kw)
		return -ENOMEM;
	kw->page = sysconf(_SC_PAGESIZE);
	r = load_formats(kw, why, len);
	if (r)
		goto fail;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	raise_nofile(ncpu);
	kw->rings = calloc(ncpu, sizeof(*kw->rings));
	if (!kw->rings) {
		r = -ENOMEM;
		snprintf(why, len, "%s", strerror(-r));
		goto fail;
	}
	kw->nr_rings = (int)ncpu;
	for (cpu = 0; cpu < ncpu; cpu++)
		kw->rings[cpu].fd_setup = kw->rings[cpu].fd_complete = -1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		r = open_ring(kw, (int)cpu, &kw->rings[cpu]);
		if (r == -ENODEV)	/* CPU offline: vwc_kwatch_add_cpus() */
			continue;
		if (r) {
			snprintf(why, len, "perf_event_open on the nvme tracepoints (CPU %ld): %s%s",
				 cpu, strerror(-r),
				 r == -EMFILE ? " (raise LimitNOFILE=)" : "");
			goto fail;
		}
	}
	if (!vwc_kwatch_nr_fds(kw)) {
		r = -ENODEV;
		snprintf(why, len, "no CPU online");
		goto fail;
	}
	*out = kw;
	return 0;
fail:
	vwc_kwatch_close(kw);
	return r;
}

void vwc_kwatch_describe(char *buf, size_t len)
{
	char dir[256], path[512];

	if (!tracefs_in_mounts(dir, sizeof(dir))) {
		snprintf(buf, len, "tracefs is not mounted: watch mounts it at /sys/kernel/tracing and uses the nvme tracepoints");
		return;
	}
	snprintf(path, sizeof(path), "%s/events/nvme/nvme_setup_cmd/format",
		 dir);
	if (access(path, F_OK))
		snprintf(buf, len, "tracefs at %s, no nvme tracepoints (nvme_core not loaded): close events, udev and the safety net until they appear",
			 dir);
	else
		snprintf(buf, len, "nvme tracepoints (tracefs at %s)", dir);
}

const char *vwc_kwatch_how(const struct vwc_kwatch *kw)
{
	return kw ? kw->how : "none";
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
	case 4:	/* int ctrl_id, int qid: sign-extended */
		memcpy(&u32, raw + f->offset, 4);
		return (uint64_t)(int64_t)(int32_t)u32;
	case 8:
		memcpy(&u64, raw + f->offset, 8);
		return u64;
	}
	return 0;
}

/* cdw10[24] holds the command's dwords as sent: little endian */
static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
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
		uint32_t cdw10;

		if (c->size < 8 || c->offset + 8 > (int)rawlen)
			return;
		cdw10 = le32_at(raw + c->offset);
		ev.cdw11 = le32_at(raw + c->offset + 4);
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
