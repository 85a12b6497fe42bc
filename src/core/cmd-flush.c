// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * flush-latency: time NVMe Flush commands sent through the passthrough
 * interface, as the review of the kernel patch "nvme: honor the volatile
 * write cache enable state" measured them. Never writes data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "resolve.h"
#include "log.h"
#include "nvme-io.h"


static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

int cmd_flush_latency(int argc, char **argv)
{
	unsigned long long *lat, sum = 0;
	struct vwc_target tg;
	struct vwc_opts o;
	struct udev *udev;
	char err[200], node[64];
	uint32_t nsid;
	long i;
	int fd, r;

	if (vwc_opts_parse(argc, argv, &o, "flush-latency"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s flush-latency <namespace> [--count=<N>] [-o normal|json]\n\n"
		       "Send N (default 100, at most 1000000) NVMe Flush commands to the namespace\n"
		       "through the passthrough interface and print average, p50, p99 and max.\n"
		       "Writes no data.\n", vwc_prog);
		return 0;
	}
	if (o.nr_args != 1) {
		vwc_err("flush-latency: give exactly one namespace");
		return VWC_EXIT_USAGE;
	}
	udev = udev_new();
	if (!udev)
		return VWC_EXIT_ERROR;
	r = vwc_resolve(udev, o.args[0], &tg, err, sizeof(err));
	udev_unref(udev);
	if (r) {
		vwc_err("%s: %s", o.args[0], err);
		return VWC_EXIT_ERROR;
	}
	if (tg.kind != VWC_KIND_NS) {
		vwc_err("%s: is a controller; give one of its namespaces (e.g. %sn1)",
			o.args[0], tg.name);
		return VWC_EXIT_ERROR;
	}
	snprintf(node, sizeof(node), "/dev/%s", tg.name);
	fd = vwc_nvme_open(node);
	if (fd < 0) {
		vwc_err("%s: cannot open %s: %s", o.args[0], node,
			strerror(-fd));
		return VWC_EXIT_ERROR;
	}
	r = vwc_nvme_nsid(fd, &nsid);
	if (r) {
		vwc_err("%s: cannot get its namespace id: %s", node,
			strerror(-r));
		vwc_nvme_close(fd);
		return VWC_EXIT_ERROR;
	}
	lat = calloc((size_t)o.count, sizeof(*lat));
	if (!lat) {
		vwc_nvme_close(fd);
		return VWC_EXIT_ERROR;
	}
	for (i = 0; i < o.count; i++) {
		unsigned long long t0 = now_ns();

		r = vwc_nvme_flush(fd, nsid);
		lat[i] = now_ns() - t0;
		if (r) {
			vwc_err("%s: Flush failed: %s", node,
				vwc_nvme_strerror(r, err, sizeof(err)));
			free(lat);
			vwc_nvme_close(fd);
			return VWC_EXIT_ERROR;
		}
		sum += lat[i];
	}
	vwc_nvme_close(fd);
	qsort(lat, (size_t)o.count, sizeof(*lat), cmp_u64);
#define US(x) ((double)(x) / 1000.0)
	if (o.fmt == VWC_FMT_JSON)
		printf("{\"device\": \"%s\", \"count\": %ld, \"avg_us\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}\n",
		       tg.name, o.count, US(sum) / (double)o.count,
		       US(lat[o.count / 2]), US(lat[(o.count * 99) / 100]),
		       US(lat[o.count - 1]));
	else
		printf("%s: %ld flushes: avg %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n",
		       tg.name, o.count, US(sum) / (double)o.count,
		       US(lat[o.count / 2]), US(lat[(o.count * 99) / 100]),
		       US(lat[o.count - 1]));
	free(lat);
	return VWC_EXIT_OK;
}
