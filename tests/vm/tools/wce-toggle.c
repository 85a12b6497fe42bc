// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wce-toggle: toggle an NVMe controller's volatile write cache (Set Features
 * 06h) through ONE descriptor held open for the whole run, so no close event
 * reaches a watcher, and time how long the block layer takes to follow.
 * A test tool for the VM guests.
 *
 * Usage:
 *   wce-toggle [-u] [-n COUNT] [-d DELAY_MS] [-s NS] [-t TIMEOUT_MS]
 *              [-N NSID] [-f FINAL] DEV
 *     DEV      /dev/nvmeX (or /dev/ngXnY with -N 0xffffffff), opened once
 *     -u       send the commands through io_uring passthrough
 *              (IORING_OP_URING_CMD, NVME_URING_CMD_ADMIN) instead of
 *              NVME_IOCTL_ADMIN_CMD; SKIP (exit 3) when the kernel refuses
 *     -n COUNT rounds (default 10); each round sets WCE=1, then WCE=0
 *     -d DELAY_MS   pause after each toggle once the block layer followed
 *                   (default 100)
 *     -s NS    after each toggle, read /sys/block/NS/queue/write_cache every
 *              1 ms until it reads write back (WCE=1) or write through
 *              (WCE=0), at most TIMEOUT_MS (default 5000)
 *     -N NSID  NSID in the command (default 0)
 *     -f FINAL WCE value to leave behind at the end (default 0)
 * Output (one line each):
 *   WCT toggle via=ioctl i=0 wce=1 ms=12.345 timeout=0
 *   WCT toggle via=ioctl i=1 wce=1 unmeasured=1 (already write back ...)
 *   WCT summary via=ioctl wce=1 n=10 p50=12.345 p99=20.000 max=20.000
 *       timeouts=0 unmeasured=0
 *   WCT skip via=uring reason=...
 * ms counts from the Set Features completion to the first sample reading the
 * mode that follows the new WCE. A toggle is timed only when write_cache
 * read the other mode just before it; otherwise it counts as unmeasured (the
 * previous toggle was never followed). Exit status: 0 done, 1 a toggle timed
 * out or was unmeasured, or a command failed, 2 usage or setup error, 3 not
 * supported (io_uring).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS	10000

static const char *prog = "wce-toggle";

struct ring {
	int fd;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	unsigned char *sqes;		/* 128-byte entries */
	unsigned char *cqes;		/* 32-byte entries */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/**
 * ring_setup() - a 4-entry io_uring with 128-byte SQEs and 32-byte CQEs
 * @r: filled on success
 * @why: on failure, a reason for the SKIP line
 *
 * Return: 0, or -errno.
 */
static int ring_setup(struct ring *r, const char **why)
{
	struct io_uring_params p;
	size_t sq_sz, cq_sz;
	unsigned char *sq, *cq;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	r->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0) {
		*why = "io_uring_setup with SQE128|CQE32 failed";
		return -errno;
	}
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_sz = p.cq_off.cqes + p.cq_entries * 32;
	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * 128, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		*why = "mmap of the io_uring rings failed";
		return -errno;
	}
	r->sq_head = (void *)(sq + p.sq_off.head);
	r->sq_tail = (void *)(sq + p.sq_off.tail);
	r->sq_mask = (void *)(sq + p.sq_off.ring_mask);
	r->sq_array = (void *)(sq + p.sq_off.array);
	r->cq_head = (void *)(cq + p.cq_off.head);
	r->cq_tail = (void *)(cq + p.cq_off.tail);
	r->cq_mask = (void *)(cq + p.cq_off.ring_mask);
	r->cqes = cq + p.cq_off.cqes;
	return 0;
}

/**
 * ring_admin() - one admin command through IORING_OP_URING_CMD, waited for
 * @r: ring from ring_setup()
 * @dfd: descriptor of the controller's character device
 * @c: the command; @c->result receives CQE dword 0 (big_cqe[0])
 *
 * Return: the CQE's res: 0, an NVMe status (> 0) or -errno.
 */
static int ring_admin(struct ring *r, int dfd, struct nvme_passthru_cmd *c)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct nvme_uring_cmd *uc;
	unsigned int tail, head, idx;
	int ret;

	tail = *r->sq_tail;
	idx = tail & *r->sq_mask;
	sqe = (void *)(r->sqes + idx * 128);
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = dfd;
	sqe->cmd_op = NVME_URING_CMD_ADMIN;
	sqe->user_data = 1;
	uc = (void *)sqe->cmd;
	uc->opcode = c->opcode;
	uc->nsid = c->nsid;
	uc->cdw10 = c->cdw10;
	uc->cdw11 = c->cdw11;
	uc->timeout_ms = c->timeout_ms;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	do {
		ret = syscall(__NR_io_uring_enter, r->fd, 1, 1,
			      IORING_ENTER_GETEVENTS, NULL, 0);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	head = *r->cq_head;
	while (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
		ret = syscall(__NR_io_uring_enter, r->fd, 0, 1,
			      IORING_ENTER_GETEVENTS, NULL, 0);
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
	cqe = (void *)(r->cqes + (head & *r->cq_mask) * 32);
	ret = cqe->res;
	c->result = (uint32_t)cqe->big_cqe[0];
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return ret;
}

static int set_wce(struct ring *r, int dfd, unsigned int nsid, int val)
{
	struct nvme_passthru_cmd c = {
		.opcode = 0x09,		/* Set Features */
		.nsid = nsid,
		.cdw10 = 0x06,		/* FID 06h */
		.cdw11 = val,
	};

	if (r)
		return ring_admin(r, dfd, &c);
	return ioctl(dfd, NVME_IOCTL_ADMIN_CMD, &c) < 0 ? -errno : 0;
}

static int get_wce(struct ring *r, int dfd, unsigned int nsid)
{
	struct nvme_passthru_cmd c = {
		.opcode = 0x0a,		/* Get Features, current */
		.nsid = nsid,
		.cdw10 = 0x06,
	};
	int ret;

	if (r)
		ret = ring_admin(r, dfd, &c);
	else
		ret = ioctl(dfd, NVME_IOCTL_ADMIN_CMD, &c) < 0 ? -errno : 0;
	return ret ? (ret > 0 ? -1000 - ret : ret) : (int)(c.result & 1);
}

/* first sample (every 1 ms) reading @want, in ms from @t0; -1 on timeout */
static double follow(int wfd, const char *want, double t0, long timeout_ms)
{
	char buf[32];
	double t;
	ssize_t n;

	for (;;) {
		n = pread(wfd, buf, sizeof(buf) - 1, 0);
		t = now_ms() - t0;
		if (n > 0) {
			buf[n] = '\0';
			if (!strncmp(buf, want, strlen(want)))
				return t;
		}
		if (t >= timeout_ms)
			return -1;
		usleep(1000);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double q)
{
	int i = (int)(q * n + 0.999999) - 1;

	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void summary(const char *via, int wce, double *v, int n, int timeouts,
		    int unmeasured)
{
	if (!n) {
		printf("WCT summary via=%s wce=%d n=0 timeouts=%d unmeasured=%d\n",
		       via, wce, timeouts, unmeasured);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	printf("WCT summary via=%s wce=%d n=%d p50=%.3f p99=%.3f max=%.3f timeouts=%d unmeasured=%d\n",
	       via, wce, n, pct(v, n, 0.5), pct(v, n, 0.99), v[n - 1], timeouts,
	       unmeasured);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: %s [-u] [-n COUNT] [-d DELAY_MS] [-s NS] [-t TIMEOUT_MS] [-N NSID] [-f FINAL] DEV\n",
		prog);
	return 2;
}

int main(int argc, char **argv)
{
	static double on_ms[MAX_ROUNDS], off_ms[MAX_ROUNDS];
	long count = 10, delay_ms = 100, timeout_ms = 5000;
	int dfd, wfd = -1, opt, i, ret, v, final = 0, rc = 0;
	int n_on = 0, n_off = 0, to_on = 0, to_off = 0, un_on = 0, un_off = 0;
	unsigned int nsid = 0;
	struct ring ring, *r = NULL;
	const char *ns = NULL, *dev, *via = "ioctl", *why = NULL;
	bool uring = false;
	char path[256];

	while ((opt = getopt(argc, argv, "un:d:s:t:N:f:")) != -1) {
		switch (opt) {
		case 'u':
			uring = true;
			via = "uring";
			break;
		case 'n':
			count = strtol(optarg, NULL, 10);
			break;
		case 'd':
			delay_ms = strtol(optarg, NULL, 10);
			break;
		case 's':
			ns = optarg;
			break;
		case 't':
			timeout_ms = strtol(optarg, NULL, 10);
			break;
		case 'N':
			nsid = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			final = atoi(optarg) ? 1 : 0;
			break;
		default:
			return usage();
		}
	}
	if (optind != argc - 1 || count < 1 || count > MAX_ROUNDS ||
	    delay_ms < 0 || timeout_ms <= 0)
		return usage();
	dev = argv[optind];
	dfd = open(dev, O_RDONLY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dev, strerror(errno));
		return 2;
	}
	if (ns) {
		if (!strncmp(ns, "/dev/", 5))
			ns += 5;
		snprintf(path, sizeof(path), "/sys/block/%s/queue/write_cache", ns);
		wfd = open(path, O_RDONLY | O_CLOEXEC);
		if (wfd < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			return 2;
		}
	}
	if (uring) {
		ret = ring_setup(&ring, &why);
		if (ret) {
			printf("WCT skip via=uring reason=\"%s: %s\"\n", why, strerror(-ret));
			return 3;
		}
		r = &ring;
		/* probe with a harmless Get Features: is admin uring_cmd there? */
		ret = get_wce(r, dfd, nsid);
		if (ret < 0 && ret > -1000) {
			printf("WCT skip via=uring reason=\"NVME_URING_CMD_ADMIN on %s: %s\"\n",
			       dev, strerror(-ret));
			return 3;
		}
	}
	v = get_wce(r, dfd, nsid);
	printf("WCT start via=%s dev=%s wce=%d\n", via, dev, v);
	for (i = 0; i < count; i++) {
		int val;

		for (val = 1; val >= 0; val--) {
			double t0, ms, pre;

			/*
			 * A toggle is timed only from the opposite mode: when
			 * write_cache already reads the mode WCE=val calls for
			 * (the last toggle was never followed), the time says
			 * nothing and the toggle counts as unmeasured.
			 */
			pre = wfd >= 0 ? follow(wfd, val ? "write back" :
						"write through", now_ms(), 0) : -1;
			ret = set_wce(r, dfd, nsid, val);
			t0 = now_ms();
			if (ret) {
				printf("WCT error via=%s i=%d wce=%d ret=%d (%s)\n", via,
				       i, val, ret, ret < 0 ? strerror(-ret) : "NVMe status");
				rc = 1;
				goto out;
			}
			if (wfd >= 0 && pre >= 0) {
				printf("WCT toggle via=%s i=%d wce=%d unmeasured=1 (already %s before the toggle)\n",
				       via, i, val, val ? "write back" : "write through");
				val ? un_on++ : un_off++;
				rc = 1;
			} else if (wfd >= 0) {
				ms = follow(wfd, val ? "write back" : "write through", t0,
					    timeout_ms);
				printf("WCT toggle via=%s i=%d wce=%d ms=%.3f timeout=%d\n",
				       via, i, val, ms < 0 ? now_ms() - t0 : ms, ms < 0);
				if (ms < 0) {
					rc = 1;
					val ? to_on++ : to_off++;
				} else if (val) {
					on_ms[n_on++] = ms;
				} else {
					off_ms[n_off++] = ms;
				}
			}
			fflush(stdout);
			if (delay_ms)
				usleep(delay_ms * 1000);
		}
	}
out:
	if (wfd >= 0) {
		summary(via, 1, on_ms, n_on, to_on, un_on);
		summary(via, 0, off_ms, n_off, to_off, un_off);
	}
	if (set_wce(r, dfd, nsid, final))
		rc = 1;
	printf("WCT end via=%s wce=%d\n", via, get_wce(r, dfd, nsid));
	return rc;
}
