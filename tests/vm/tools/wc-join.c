// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wc-join: bind an NVMe PCI function to the nvme driver and watch, every
 * period, when its controller's path to each given multipath head appears
 * and when that head's write_cache reads write back. A test tool for the
 * VM guests: the exposure of a shared namespace to a controller that joins
 * it (a path whose cache may be on, while the head drops flushes).
 *
 * Usage:
 *   wc-join -a PCI_ADDR [-d DURATION_MS] [-p PERIOD_US] HEAD...
 *     Writes PCI_ADDR to /sys/bus/pci/drivers/nvme/bind (time 0), waits
 *     for its controller nvmeX to appear, then samples until DURATION_MS
 *     (default 10000) or until every head has its path through nvmeX and
 *     reads write back. HEAD is a multipath head, nvmeSnN; its path
 *     through nvmeX is nvmeScXnN. Prints one line per head:
 *       WCJ head=nvme0n3 path_ms=123.4 wb_ms=140.2 exposure_ms=16.8
 *     (path_ms: the path node first seen; wb_ms: the first sample reading
 *     write back at or after it, -1 if none; exposure_ms: wb_ms - path_ms,
 *     0 when the head read write back as the path appeared, -1 if never)
 *     and last:
 *       WCJ ctrl=nvmeX heads=16 joined=16 wb=16 never=0 max_exposure_ms=..
 *           p50_exposure_ms=.. wt_with_path=N samples=N period_ms=..
 *     (wt_with_path: samples of a head in write through while its path
 *     through nvmeX existed; period_ms: the mean time a round of samples
 *     took.) A head is no longer sampled once it read write back after
 *     its path appeared: what it reads later is the caller's to check.
 * Exit status: 0 done (the figures say what happened), 2 usage or setup
 * error (the bind failed, no controller came).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "wc-join";

struct head {
	char name[32];
	char path[96];		/* /sys/block/nvmeScXnN, once X is known */
	int fd;			/* queue/write_cache of the head */
	double path_ms;		/* -1: not seen yet */
	double wb_ms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* 1 write back, 0 write through, -1 unreadable */
static int read_wb(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!strncmp(buf, "write back", 10))
		return 1;
	return strncmp(buf, "write through", 13) ? -1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the controller nvmeX under the PCI function, -1 if none yet */
static int ctrl_of(const char *addr)
{
	char dir[128];
	struct dirent *de;
	int x = -1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/nvme", addr);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (sscanf(de->d_name, "nvme%d", &x) == 1)
			break;
	closedir(d);
	return x;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	double dur = 10000, t0, t, *exp;
	long period_us = 1000, samples = 0, wt_path = 0, rounds = 0;
	int opt, i, n, x = -1, joined, wb, never, nexp = 0, fd;
	struct head *h;
	char p[160];

	while ((opt = getopt(argc, argv, "a:d:p:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'd': dur = atof(optarg); break;
		case 'p': period_us = atol(optarg); break;
		default: goto usage;
		}
	}
	n = argc - optind;
	if (!addr || n < 1 || period_us < 0)
		goto usage;
	h = calloc(n, sizeof(*h));
	exp = calloc(n, sizeof(*exp));
	if (!h || !exp)
		return 2;
	for (i = 0; i < n; i++) {
		struct head *e = &h[i];

		snprintf(e->name, sizeof(e->name), "%s", argv[optind + i]);
		snprintf(p, sizeof(p), "/sys/block/%s/queue/write_cache", e->name);
		e->fd = open(p, O_RDONLY | O_CLOEXEC);
		if (e->fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, p, strerror(errno));
			return 2;
		}
		e->path_ms = e->wb_ms = -1;
	}
	fd = open("/sys/bus/pci/drivers/nvme/bind", O_WRONLY | O_CLOEXEC);
	t0 = now_ms();
	if (fd < 0 || write(fd, addr, strlen(addr)) < 0) {
		fprintf(stderr, "%s: bind %s: %s\n", prog, addr, strerror(errno));
		return 2;
	}
	close(fd);
	while ((t = now_ms() - t0) < dur) {
		bool done = x >= 0;

		if (x < 0) {
			x = ctrl_of(addr);
			for (i = 0; x >= 0 && i < n; i++) {
				unsigned int s, nn;

				if (sscanf(h[i].name, "nvme%un%u", &s, &nn) != 2) {
					fprintf(stderr, "%s: %s is not a head name\n",
						prog, h[i].name);
					return 2;
				}
				snprintf(h[i].path, sizeof(h[i].path),
					 "/sys/block/nvme%uc%dn%u", s, x, nn);
			}
		}
		for (i = 0; x >= 0 && i < n; i++) {
			struct head *e = &h[i];
			struct stat st;
			int m;

			/* done with: the case reads every head again after */
			if (e->wb_ms >= 0)
				continue;
			m = read_wb(e->fd);

			samples++;
			if (e->path_ms < 0 && !stat(e->path, &st))
				e->path_ms = t;
			if (e->path_ms >= 0 && m == 0)
				wt_path++;
			if (e->path_ms >= 0 && e->wb_ms < 0 && m == 1)
				e->wb_ms = t;
			done &= e->wb_ms >= 0;
		}
		rounds++;
		if (done)
			break;
		if (period_us)
			usleep(period_us);
	}
	t = now_ms() - t0;
	joined = wb = never = 0;
	for (i = 0; i < n; i++) {
		struct head *e = &h[i];
		double ex = e->wb_ms < 0 ? -1 : e->wb_ms - e->path_ms;

		joined += e->path_ms >= 0;
		wb += e->wb_ms >= 0;
		never += e->path_ms >= 0 && e->wb_ms < 0;
		if (ex >= 0)
			exp[nexp++] = ex;
		printf("WCJ head=%s path_ms=%.1f wb_ms=%.1f exposure_ms=%.1f\n",
		       e->name, e->path_ms, e->wb_ms, ex);
	}
	qsort(exp, nexp, sizeof(*exp), cmp_double);
	printf("WCJ ctrl=nvme%d heads=%d joined=%d wb=%d never=%d max_exposure_ms=%.1f p50_exposure_ms=%.1f wt_with_path=%ld samples=%ld period_ms=%.2f\n",
	       x, n, joined, wb, never, nexp ? exp[nexp - 1] : -1.0,
	       nexp ? exp[nexp / 2] : -1.0, wt_path, samples,
	       rounds ? t / rounds : 0.0);
	return x < 0 ? 2 : 0;
usage:
	fprintf(stderr, "usage: %s -a PCI_ADDR [-d DURATION_MS] [-p PERIOD_US] HEAD...\n",
		prog);
	return 2;
}
