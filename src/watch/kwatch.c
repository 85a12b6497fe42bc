// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel-side detection of admin Set Features 06h: the events (kprobes on
 * the admin passthrough entry points, else the nvme tracepoints) opened
 * with perf_event_open(2) on every CPU, their rings, and the pairing of
 * submissions with completions. See kwatch.h.
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

#include "kwatch-int.h"
#include "log.h"

#define KW_DATA_PAGES	8	/* ring per CPU: 32 KiB on 4 KiB pages */

struct kw_ring {
	int fd[KW_NR_ROLES];	/* -1 if not open; the first open owns the ring */
	int owner;		/* index in fd of the ring's owner, -1: closed */
	void *base;
	size_t len;
};

struct vwc_kwatch {
	struct kw_event_fmt fmt[KW_NR_ROLES];
	bool kprobes;
	struct kw_kprobes kp;
	struct kw_ring *rings;
	int nr_rings;		/* one slot per possible CPU */
	int closed;		/* rings closed since vwc_kwatch_add_cpus() */
	long page;
	int self;		/* our pid (single-threaded: our thread) */
	char how[600];
	struct kw_recs recs;
	struct kw_open open[KW_OPEN_N];
	uint64_t queues[KW_QUEUES_N];	/* learned admin queues (a ring) */
	int nr_queues, next_queue;
};

uint64_t vwc_kwatch_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* @wakes: each record wakes the reader, else only a ring half full */
static int perf_open(int id, int cpu, const char *filter, bool wakes)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	a.wakeup_events = wakes ? 1 : 0;
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

static const char *filter_of(const struct vwc_kwatch *kw, enum kw_role role,
			     char *buf, size_t len)
{
	if (role == KW_TP_SETUP)
		return "qid == 0 && opcode == 9";
	if (role == KW_TP_COMPLETE)
		return "qid == 0";
	return vwc_kw_kprobe_filter(role, kw->self, kw->kp.fetch, kw->queues,
				    kw->nr_queues, buf, len);
}

static void close_ring(struct kw_ring *g)
{
	int i;

	/* the owner last: the others write into its ring */
	for (i = KW_NR_ROLES - 1; i >= 0; i--) {
		if (i == g->owner || g->fd[i] < 0)
			continue;
		close(g->fd[i]);
		g->fd[i] = -1;
	}
	if (g->base)
		munmap(g->base, g->len);
	if (g->owner >= 0 && g->fd[g->owner] >= 0)
		close(g->fd[g->owner]);
	for (i = 0; i < KW_NR_ROLES; i++)
		g->fd[i] = -1;
	g->owner = -1;
	g->base = NULL;
}

void vwc_kwatch_close(struct vwc_kwatch *kw)
{
	int i;

	if (!kw)
		return;
	for (i = 0; kw->rings && i < kw->nr_rings; i++)
		close_ring(&kw->rings[i]);
	/* once no perf event holds them */
	if (kw->kprobes)
		vwc_kw_kprobes_destroy(&kw->kp);
	free(kw->rings);
	free(kw->recs.v);
	free(kw);
}

static int open_ring(struct vwc_kwatch *kw, int cpu, struct kw_ring *g)
{
	char buf[KW_QUEUES_N * 28 + 64];
	int role, r;

	for (role = 0; role < KW_NR_ROLES; role++)
		g->fd[role] = -1;
	g->owner = -1;
	for (role = 0; role < KW_NR_ROLES; role++) {
		if (!kw->fmt[role].id)
			continue;
		r = perf_open(kw->fmt[role].id, cpu,
			      filter_of(kw, (enum kw_role)role, buf,
					sizeof(buf)),
			      vwc_kw_role_wakes((enum kw_role)role,
						kw->kp.fetch));
		if (r < 0)
			goto fail;
		g->fd[role] = r;
		if (g->owner < 0) {
			g->owner = role;
			g->len = (1 + KW_DATA_PAGES) * kw->page;
			g->base = mmap(NULL, g->len, PROT_READ | PROT_WRITE,
				       MAP_SHARED, r, 0);
			if (g->base == MAP_FAILED) {
				g->base = NULL;
				r = -errno;
				goto fail;
			}
		} else if (ioctl(r, PERF_EVENT_IOC_SET_OUTPUT,
				 g->fd[g->owner]) < 0) {
			r = -errno;
			goto fail;
		}
	}
	if (g->owner < 0)
		return -ENOENT;
	for (role = 0; role < KW_NR_ROLES; role++)
		if (g->fd[role] >= 0 &&
		    ioctl(g->fd[role], PERF_EVENT_IOC_ENABLE, 0) < 0) {
			r = -errno;
			goto fail;
		}
	return 0;
fail:
	close_ring(g);
	return r;
}

/*
 * Up to four descriptors per CPU (one per kprobe): the soft RLIMIT_NOFILE
 * (1024 by default) is raised to the hard one (524288 under systemd, and
 * the unit's LimitNOFILE=) so that a host with hundreds of CPUs does not
 * hit EMFILE.
 */
static void raise_nofile(long ncpu)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max ||
	    rl.rlim_cur >= (rlim_t)(KW_NR_ROLES * ncpu + 256))
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
			vwc_warn("kernel events on CPU %d: %s", cpu,
				 strerror(-r));
	}
	return added;
}

/* The nvme tracepoints: the fallback, and VWC_KWATCH=tracepoints */
static int load_tracepoints(struct vwc_kwatch *kw, const char *dir,
			    char *why, size_t len)
{
	int r;

	r = vwc_kw_load_fmt("nvme", "nvme_setup_cmd", &kw->fmt[KW_TP_SETUP]);
	if (!r)
		r = vwc_kw_load_fmt("nvme", "nvme_complete_rq",
				    &kw->fmt[KW_TP_COMPLETE]);
	if (r == -ENOENT) {
		snprintf(why, len, "no nvme:nvme_setup_cmd and nvme:nvme_complete_rq under %.200s/events (nvme_core not loaded yet?)",
			 dir);
	} else if (r || !kw->fmt[KW_TP_SETUP].opcode.size ||
		   kw->fmt[KW_TP_SETUP].cdw10.size < 8 ||
		   !kw->fmt[KW_TP_SETUP].ctrl_id.size ||
		   !kw->fmt[KW_TP_SETUP].cid.size ||
		   !kw->fmt[KW_TP_SETUP].qid.size ||
		   !kw->fmt[KW_TP_COMPLETE].qid.size) {
		snprintf(why, len, "unexpected nvme tracepoint format under %s",
			 dir);
		r = -EPROTO;
	}
	if (r)
		memset(kw->fmt, 0, sizeof(kw->fmt));
	return r;
}

/*
 * The events: kprobes on the admin passthrough entry points (nothing on
 * the I/O path), else the nvme tracepoints (they fire for every I/O).
 * Both need nvme_core (its symbols, its events).
 */
static int load_events(struct vwc_kwatch *kw, char *why, size_t len)
{
	const char *want = getenv("VWC_KWATCH"), *dir;
	char where[300], kwhy[200], path[512];
	int r;

	r = vwc_kw_tracefs_dir(&dir, where, sizeof(where), why, len);
	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/events/nvme", dir);
	if (access(path, F_OK)) {
		snprintf(why, len, "no nvme events under %.200s/events (nvme_core not loaded yet?)",
			 dir);
		return -ENOENT;
	}
	if (!want || strcmp(want, "tracepoints")) {
		r = vwc_kw_kprobes_create(&kw->kp, kw->fmt, kwhy, sizeof(kwhy));
		if (!r) {
			kw->kprobes = true;
			snprintf(kw->how, sizeof(kw->how),
				 "kprobes on the nvme admin passthrough (ioctl %s, returns %s%s; %s)",
				 kw->kp.fetch & KW_FETCH_QD ? "on admin queues" :
				 "on any queue",
				 kw->kp.fetch & KW_FETCH_DONE_CMD ? "filtered" :
				 "read in batches",
				 !kw->kp.uring ? "" : kw->kp.uring_q ?
				 ", io_uring by controller" :
				 ", io_uring as any controller's", where);
			return 0;
		}
		vwc_warn("%s: falling back to the nvme tracepoints, which every I/O passes",
			 kwhy);
	} else {
		snprintf(kwhy, sizeof(kwhy), "VWC_KWATCH=tracepoints");
	}
	r = load_tracepoints(kw, dir, why, len);
	if (!r)
		snprintf(kw->how, sizeof(kw->how), "nvme tracepoints (%s; %.200s)",
			 where, kwhy);
	return r;
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
	kw->self = (int)getpid();
	r = load_events(kw, why, len);
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
	for (cpu = 0; cpu < ncpu; cpu++) {
		int role;

		for (role = 0; role < KW_NR_ROLES; role++)
			kw->rings[cpu].fd[role] = -1;
		kw->rings[cpu].owner = -1;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		r = open_ring(kw, (int)cpu, &kw->rings[cpu]);
		if (r == -ENODEV)	/* CPU offline: vwc_kwatch_add_cpus() */
			continue;
		if (r) {
			snprintf(why, len, "perf_event_open on the kernel events (CPU %ld): %s%s",
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
	const char *want;

	if (!vwc_kw_tracefs_mounted(dir, sizeof(dir))) {
		snprintf(buf, len, "tracefs is not mounted: watch mounts it at /sys/kernel/tracing and puts kprobes on the nvme admin passthrough (else the nvme tracepoints)");
		return;
	}
	snprintf(path, sizeof(path), "%s/events/nvme", dir);
	if (access(path, F_OK)) {
		snprintf(buf, len, "tracefs at %s, nvme_core not loaded: close events, udev and the safety net until it is",
			 dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/kprobe_events", dir);
	want = getenv("VWC_KWATCH");
	if (!access(path, F_OK) && (!want || strcmp(want, "tracepoints"))) {
		struct kw_btf btf;

		vwc_kw_btf_read(&btf);
		snprintf(buf, len, "kprobes on the nvme admin passthrough (ioctl on %s: %s; io_uring %s: %s; tracefs at %s)",
			 btf.qd[0] ? "admin queues" : "any queue",
			 btf.qd[0] ? "kernel BTF" : btf.qd_why,
			 btf.uring_q[0] ? "by controller" : "as any controller's",
			 btf.uring_q[0] ? "kernel BTF" : btf.uring_why, dir);
	} else
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
		const struct kw_ring *g = &kw->rings[i];

		if (!g->base)
			continue;
		pfd[n].fd = g->fd[g->owner];
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
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
			vwc_kw_decode(kw->fmt, KW_NR_ROLES, rec, h.size,
				      &kw->recs);
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static int cmp_time(const void *a, const void *b)
{
	const struct kw_rec *x = a, *y = b;

	return x->ev.time < y->ev.time ? -1 : x->ev.time > y->ev.time;
}

/* every ring into kw->recs, oldest first */
static void drain(struct vwc_kwatch *kw)
{
	int i;

	for (i = 0; i < kw->nr_rings; i++)
		if (kw->rings[i].base)
			drain_ring(kw, &kw->rings[i]);
	/* a submission on one CPU, its completion on another: by time */
	if (kw->recs.n)	/* v may still be NULL: qsort(NULL, 0) is undefined */
		qsort(kw->recs.v, kw->recs.n, sizeof(*kw->recs.v), cmp_time);
}

int vwc_kw_open_wait_ms(const struct kw_open *open, uint64_t now)
{
	int i;

	for (i = 0; i < KW_OPEN_N; i++)
		if (open[i].pid && open[i].time <= now &&
		    now - open[i].time < KW_OPEN_WAIT_NS)
			return KW_OPEN_POLL_MS;
	return -1;
}

int vwc_kwatch_timeout_ms(const struct vwc_kwatch *kw)
{
	if (!kw || !kw->kprobes || (kw->kp.fetch & KW_FETCH_DONE_CMD))
		return -1;
	return vwc_kw_open_wait_ms(kw->open, vwc_kwatch_clock());
}

static struct kw_open *open_find(struct kw_open *open, int pid)
{
	int i;

	for (i = 0; i < KW_OPEN_N; i++)
		if (open[i].pid == pid)
			return &open[i];
	return NULL;
}

int vwc_kw_deliver(struct kw_open *open, struct kw_recs *recs, int self,
		   void (*cb)(void *arg, const struct vwc_kw_event *ev),
		   void *arg)
{
	int i, j, n = 0;

	for (i = 0; i < recs->n; i++) {
		struct kw_rec *r = &recs->v[i];
		struct vwc_kw_event ev = r->ev;
		struct kw_open *o;

		switch (r->role) {
		case KW_KP_ADMIN:
			if (r->op == 0x0a && r->pid == self && ev.q) {
				/* the sidecar's own Get Features 06h */
				ev.kind = VWC_KW_OWN_GET;
				ev.ctrl = -1;
				ev.cid = 0;
				break;
			}
			if (r->op != 0x09)
				continue;
			ev.kind = VWC_KW_SET_FEATURES;
			ev.ctrl = -1;
			ev.cid = (uint32_t)r->pid;
			/* the thread's outstanding command (replaces one whose
			 * return was missed), else a free or the oldest slot */
			o = open_find(open, r->pid);
			if (!o)
				o = open_find(open, 0);
			if (!o) {
				o = &open[0];
				for (j = 1; j < KW_OPEN_N; j++)
					if (open[j].time < o->time)
						o = &open[j];
			}
			o->pid = r->pid;
			o->q = ev.q;
			o->time = ev.time;
			break;
		case KW_KP_DONE:
			o = r->pid ? open_find(open, r->pid) : NULL;
			if (!o)
				continue;
			ev.kind = VWC_KW_COMPLETE;
			ev.ctrl = -1;
			ev.cid = (uint32_t)r->pid;
			ev.q = o->q;
			memset(o, 0, sizeof(*o));
			break;
		case KW_KP_URING:
			/* the queue where BTF names it, else 0; its
			 * completion is an io_uring one: cid 0 */
			ev.kind = VWC_KW_SET_FEATURES;
			ev.ctrl = -1;
			ev.cid = 0;
			break;
		case KW_KP_URING_DONE:
			ev.kind = VWC_KW_COMPLETE;
			ev.ctrl = -1;
			ev.cid = 0;
			break;
		default:
			break;
		}
		cb(arg, &ev);
		n++;
	}
	recs->n = 0;
	return n;
}

void vwc_kwatch_add_queue(struct vwc_kwatch *kw, uint64_t q)
{
	char buf[KW_QUEUES_N * 28 + 64];
	int i;

	if (!kw || !q)
		return;
	for (i = 0; i < kw->nr_queues; i++)
		if (kw->queues[i] == q)
			return;
	kw->queues[kw->next_queue] = q;
	kw->next_queue = (kw->next_queue + 1) % KW_QUEUES_N;
	if (kw->nr_queues < KW_QUEUES_N)
		kw->nr_queues++;
	if (!kw->fmt[KW_KP_URING_DONE].id)
		return;
	/*
	 * A perf event's filter cannot be replaced (EEXIST): each CPU's
	 * event is opened anew with the new filter, then the old one closed
	 * (both deliver for a moment: a completion twice is harmless).
	 */
	filter_of(kw, KW_KP_URING_DONE, buf, sizeof(buf));
	for (i = 0; i < kw->nr_rings; i++) {
		struct kw_ring *g = &kw->rings[i];
		int fd;

		if (!g->base || g->owner == KW_KP_URING_DONE)
			continue;
		fd = perf_open(kw->fmt[KW_KP_URING_DONE].id, i, buf, true);
		if (fd >= 0 &&
		    (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, g->fd[g->owner]) < 0 ||
		     ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)) {
			int e = errno;

			close(fd);
			fd = -e;
		}
		if (fd < 0) {
			vwc_warn("io_uring completions on CPU %d: %s: the pending timeout reads WCE",
				 i, strerror(-fd));
			continue;
		}
		if (g->fd[KW_KP_URING_DONE] >= 0)
			close(g->fd[KW_KP_URING_DONE]);
		g->fd[KW_KP_URING_DONE] = fd;
	}
}

int vwc_kwatch_read(struct vwc_kwatch *kw,
		    void (*cb)(void *arg, const struct vwc_kw_event *ev),
		    void *arg)
{
	drain(kw);
	return vwc_kw_deliver(kw->open, &kw->recs, kw->self, cb, arg);
}
