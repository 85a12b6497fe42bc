// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What one topology scan of the sidecar costs on the host, without a
 * guest: vwc_topo_scan_sysfs() over a sysfs tree (bench/host/scan-cost.sh
 * makes a fake one of fabrics shape), then N - 1 scans each carrying what
 * the one before found (vwc_topo_rescan_sysfs(), as vwc_run_rescan()
 * does), each followed by vwc_model_sync() of the model to it, as
 * vwc_watch_rescan() does; the mean CPU time and page faults of the later
 * scans (a fault costs tens of microseconds under emulation), and the
 * scan's system calls are for strace -c to count. Then the fast path's
 * table of that topology (vwc_watch_fast_table(), which
 * vwc_watch_publish_fast() makes after each scan), and the
 * node_exporter textfile of that topology (vwc_watch_write_textfile(), as
 * the sidecar writes it after each change: every namespace's write_cache
 * read, the Prometheus text, rename), its CPU and wall time, N
 * times, every controller probed with a volatile cache present and
 * enabled.
 * Usage: scan-cost SYSFS N [TEXTFILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <libudev.h>

#include "classdir.h"
#include "quirk-db.h"
#include "topo.h"
#include "watch-act.h"
#include "watch-fast.h"
#include "watch-model.h"
#include "watch-textfile.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* page faults so far (a fault is dear under emulation) */
static long faults_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/* the textfile of @t, @n times: mean CPU and wall milliseconds */
static void textfile_cost(struct vwc_topo *t, const char *path, int n)
{
	struct vwc_sidecar wr;
	double cpu = 0, wall = 0, c0, w0;
	struct stat st;
	int i;

	memset(&wr, 0, sizeof(wr));
	wr.run.command = "watch";
	wr.run.topo = *t;
	wr.textfile = path;
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];

		c->probed = true;
		c->vwc = 1;
		c->facts.present = VWC_TRI_YES;
		c->facts.wce = VWC_TRI_YES;
	}
	for (i = 0; i < n; i++) {
		c0 = cpu_now();
		w0 = clock_s(CLOCK_MONOTONIC);
		vwc_watch_write_textfile(&wr);
		wall += clock_s(CLOCK_MONOTONIC) - w0;
		cpu += cpu_now() - c0;
	}
	printf("textfile of %d namespaces (%lld bytes): %.2f ms CPU, %.2f ms wall (mean of %d, %s)\n",
	       t->nr_ns, stat(path, &st) ? -1LL : (long long)st.st_size,
	       cpu * 1000 / n, wall * 1000 / n, n, path);
}

/* the fast path's table of @w's topology (vwc_watch_fast_table(), as
 * vwc_watch_publish_fast() makes after each scan), @n times: mean CPU ms */
static double fast_table_cost(struct vwc_model *w, int n)
{
	static struct vwc_sidecar wr;
	struct vwc_fast_ctrl *tab;
	double cpu = 0, c0;
	int i, nr;

	wr.run.topo = *w->topo;
	wr.model = *w;
	for (i = 0; i < n; i++) {
		c0 = cpu_now();
		tab = vwc_watch_fast_table(&wr, &nr);
		vwc_fast_free_table(tab, nr);
		cpu += cpu_now() - c0;
	}
	return cpu * 1000 / n;
}

/* the sidecar's identities (watch-act.c): the class entry's inode from
 * the scan's readdir, the sysfs directory's where there is none */
static uint64_t ident(const struct vwc_ctrl *tc)
{
	struct stat st;

	if (tc->ino)
		return tc->ino;
	return stat(tc->syspath, &st) ? 0 : (uint64_t)st.st_ino;
}

static uint64_t ns_ident(const struct vwc_ns *tn)
{
	struct stat st;

	if (tn->ino)
		return tn->ino;
	return stat(tn->syspath, &st) ? 0 : (uint64_t)st.st_ino;
}

static const struct vwc_model_ops ops = {
	.ident = ident,
	.ns_ident = ns_ident,
};

int main(int argc, char **argv)
{
	struct vwc_topo t[2];
	struct vwc_model w;
	double scan = 0, sync = 0, sig = 0, cls[2] = { 0, 0 }, t0;
	long flt = 0, f0;
	int n, i, r;

	if ((argc != 3 && argc != 4) || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: scan-cost SYSFS N [TEXTFILE]\n");
		return 2;
	}
	memset(t, 0, sizeof(t));
	for (i = 0; i < n; i++) {
		struct vwc_topo *cur = &t[i & 1];

		/* the first scan reads everything; the sidecar's later ones
		 * carry what the last found (vwc_run_rescan()) */
		t0 = cpu_now();
		f0 = faults_now();
		r = i ? vwc_topo_rescan_sysfs(argv[1], &t[(i + 1) & 1], cur) :
			vwc_topo_scan_sysfs(argv[1], cur);
		if (i)
			flt += faults_now() - f0;
		if (r) {
			fprintf(stderr, "scan-cost: cannot scan %s\n", argv[1]);
			return 1;
		}
		if (i)
			scan += cpu_now() - t0;
		else
			printf("first scan: %.2f ms CPU, %ld page faults\n",
			       (cpu_now() - t0) * 1000, faults_now() - f0);
		if (!i)
			vwc_model_init(&w, cur, &ops, NULL);
		w.topo = cur;
		t0 = cpu_now();
		vwc_model_sync(&w, 1.0 + i);
		sync += cpu_now() - t0;
		/* the scan before, as the sidecar's run keeps one */
		vwc_topo_free(&t[(i + 1) & 1]);
	}
	printf("%d controllers, %d namespaces: rescan %.2f ms, %ld page faults (mean of %d, each after the one before, as the sidecar's); vwc_model_sync() %.2f ms (CPU, mean of %d; the first sync sees every namespace new)\n",
	       w.topo->nr_ctrls, w.topo->nr_ns,
	       n > 1 ? scan * 1000 / (n - 1) : 0.0, n > 1 ? flt / (n - 1) : 0L,
	       n - 1, sync * 1000 / n, n);
	for (i = 0; i < n; i++) {
		struct vwc_topo_link *e;
		char dir[VWC_PATH_LEN];
		int ne, nh;

		t0 = cpu_now();
		vwc_topo_names_sig(argv[1]);
		sig += cpu_now() - t0;
		/* what a rescan reads: every controller's link, and the
		 * block devices' entries with their links carried */
		snprintf(dir, sizeof(dir), "%s/class/nvme", argv[1]);
		t0 = cpu_now();
		if (!vwc_classdir_read(dir, true, NULL, NULL, NULL, 0, &e, &ne,
				       &nh, NULL))
			vwc_classdir_free(e, ne);
		cls[0] += cpu_now() - t0;
		snprintf(dir, sizeof(dir), "%s/class/block", argv[1]);
		t0 = cpu_now();
		if (!vwc_classdir_read(dir, false, NULL, NULL, w.topo->links[1],
				       w.topo->nr_links[1], &e, &ne, &nh, NULL))
			vwc_classdir_free(e, ne);
		cls[1] += cpu_now() - t0;
	}
	{
		struct udev *udev = udev_new();
		double q = 0;

		for (i = 0; udev && i < n; i++) {
			t0 = cpu_now();
			vwc_quirks_fill(udev, w.topo);
			q += cpu_now() - t0;
		}
		printf("after a scan, each controller's quirks (vwc_quirks_fill(), as vwc_run_rescan() does): %.2f ms CPU (mean of %d)\n",
		       q * 1000 / n, n);
		udev_unref(udev);
	}
	printf("of a rescan: class/nvme read (every link) %.2f ms, class/block read (links carried) %.2f ms; the names' signature alone (vwc_topo_names_sig()) %.2f ms (CPU, means of %d)\n",
	       cls[0] * 1000 / n, cls[1] * 1000 / n, sig * 1000 / n, n);
	printf("the fast path's table after a scan: %.2f ms CPU (mean of %d)\n",
	       fast_table_cost(&w, n), n);
	if (argc == 4)
		textfile_cost(w.topo, argv[3], n);
	vwc_model_free(&w);
	vwc_topo_free(&t[(n - 1) & 1]);
	return 0;
}
