// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Write through that another writer turns to write back between our write
 * and its read-back (the sidecar does, without the lock, while a Set
 * Features 06h is in flight: set-cache off's own WCE=0 included). On a fake
 * sysfs tree (queue/write_cache as plain files), the other writer is this
 * test's wrapper of open(): at the chosen namespace's read-back after a
 * write, it writes "write back" first. vwc_run_apply() says so by name,
 * leaves write back, reads WCE again and writes once more, then reads it
 * after that write too; a second overtaking leaves write back and fails
 * the run. Get Features 06h is the wrapper's too (vwc_nvme_get_wce()).
 *
 * Linked with --wrap of open, open64 and vwc_nvme_get_wce
 * (tests/meson.build).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk.h"
#include "engine.h"
#include "lock.h"
#include "fake-wc.h"
#include "tap.h"

static char root[64];
static char target[300];	/* the write_cache whose read-backs are hit */
static bool after_write;	/* a write of it since its last read */
static int overtake;		/* how many read-backs still to overtake */
static int overtaken;		/* how many were */
static int seq;			/* the order of the two below */
static int wrote_at;		/* the last write of nvme0n1's write_cache */
static int other_writes;	/* writes of nvme1n1's */
static int read_at;		/* the last Get Features 06h */
static int overtaken_at;	/* the last overtaking */
static bool fast_path;		/* the overtaking is this process's fast path's */
static bool wce_now;		/* what Get Features 06h reads ... */
static int wce_once;		/* ... and once overtaken, if not -1 */

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);

int __wrap_vwc_nvme_get_wce(int fd, bool *wce)
{
	(void)fd;
	read_at = ++seq;
	*wce = overtaken && wce_once >= 0 ? wce_once : wce_now;
	return 0;
}

/* a write_cache of nvme0n1: its own or its path node's (nvme0c0n1) */
static bool is_wc(const char *path)
{
	size_t n = strlen(path), m = strlen("/queue/write_cache");

	return n > m && !strcmp(path + n - m, "/queue/write_cache") &&
	       strstr(path, "/sys/nvme0");
}

static void other_writer(const char *path, int flags)
{
	int fd;

	if ((flags & O_ACCMODE) != O_RDONLY && is_wc(path))
		wrote_at = ++seq;
	if ((flags & O_ACCMODE) != O_RDONLY && strstr(path, "/sys/nvme1n1/"))
		other_writes++;
	if (strcmp(path, target))
		return;
	if ((flags & O_ACCMODE) != O_RDONLY) {
		after_write = true;
		return;
	}
	if (!after_write || !overtake)
		return;
	after_write = false;
	overtake--;
	overtaken++;
	overtaken_at = ++seq;
	if (fast_path)
		vwc_blk_wb_bump();
	fd = __real_open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "write back\n", 11) != 11)
			overtaken = -1000;
		close(fd);
	}
}

static mode_t mode_arg(int flags, va_list ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? va_arg(ap, mode_t) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	other_writer(path, flags);
	return __real_open(path, flags, m);
}

int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	other_writer(path, flags);
	return __real_open64(path, flags, m);
}



/*
 * Two controllers with no volatile cache, one namespace each, both in
 * write back: the policy says write through for both, on the
 * controllers' word, under the lock. nvme0n1's read-backs are hit.
 */
static char nspath[2][256];
static int idx[2];

static void make_run(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	char p[128];
	int i;

	memset(r, 0, sizeof(*r));
	r->command = "test";
	r->lock_wait_ms = VWC_LOCK_TIMEOUT_MS;
	t->ctrls = calloc(2, sizeof(*t->ctrls));
	t->ns = calloc(2, sizeof(*t->ns));
	t->nr_ctrls = t->nr_ns = 2;
	for (i = 0; i < 2; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		struct vwc_ns *ns = &t->ns[i];

		snprintf(c->name, sizeof(c->name), "nvme%d", i);
		snprintf(c->devnode, sizeof(c->devnode), "%s/dev/nvme%d", root,
			 i);
		snprintf(c->serial, sizeof(c->serial), "S%d", i);
		c->probed = true;
		c->wanted = true;
		c->facts.present = VWC_TRI_NO;
		c->facts.wce = VWC_TRI_UNKNOWN;
		c->facts.backup_failed = VWC_TRI_NO;
		snprintf(ns->name, sizeof(ns->name), "nvme%dn1", i);
		snprintf(nspath[i], sizeof(nspath[i]), "%s/sys/%s", root,
			 ns->name);
		ns->syspath = nspath[i];
		idx[i] = i;
		ns->ctrl = &idx[i];
		ns->nr_ctrl = 1;
		ns->wanted = true;
		fake_wc_put(root, ns->name, "write back");
	}
	snprintf(p, sizeof(p), "%s/dev", root);
	vwc_mkdir_p(p);
	snprintf(target, sizeof(target), "%s/queue/write_cache", nspath[0]);
	after_write = false;
	overtaken = seq = wrote_at = read_at = overtaken_at = other_writes = 0;
	wce_now = false;
	wce_once = -1;
	fast_path = false;
}

/* controller 0 with a cache, WCE=0 read, its node openable */
static void with_cache(struct vwc_run *r)
{
	struct vwc_ctrl *c = &r->topo.ctrls[0];
	FILE *f;

	c->facts.present = VWC_TRI_YES;
	c->facts.wce = VWC_TRI_NO;
	f = fopen(c->devnode, "w");
	if (f)
		fclose(f);
}

static void free_run(struct vwc_run *r)
{
	free(r->topo.ctrls);
	free(r->topo.ns);
}

int main(void)
{
	char dir[] = "/tmp/vwc-overtaken-XXXXXX", run[128], cmd[160];
	struct vwc_ns *ns;
	struct vwc_run r;
	int n;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(root, sizeof(root), "%s", dir);
	snprintf(run, sizeof(run), "%s/run", dir);
	setenv("NVME_VWC_SYNC_RUNDIR", run, 1);

	/* 1. overtaken once: the second write through holds */
	make_run(&r);
	overtake = 1;
	ns = &r.topo.ns[0];
	n = vwc_run_apply(&r);
	ok(overtaken == 1, "the other writer wrote write back once (%d)",
	   overtaken);
	is_str(fake_wc_get(root, "nvme0n1"), "write through",
	       "overtaken once: WCE read again, write through written again");
	ok(n == 0 && r.nr_failed == 0, "and the run has no failure (%d, %d)",
	   n, r.nr_failed);
	ok(ns->action == VWC_ACT_CHANGED && ns->before == VWC_MODE_WRITE_BACK &&
	   ns->after == VWC_MODE_WRITE_THROUGH && !ns->overtaken &&
	   !ns->errmsg[0],
	   "reported from what the run found: write back -> write through, changed (%d, %s)",
	   ns->action, ns->errmsg);
	ok(!strcmp(fake_wc_get(root, "nvme1n1"), "write through") &&
	   other_writes == 1,
	   "the other namespace: write through, written once, not again by the retry (%d)",
	   other_writes);
	ok(!vwc_lock_held(), "lock released");
	free_run(&r);

	/* 2. overtaken every time: write back left, the run fails, and the
	 * message says what happened */
	make_run(&r);
	overtake = 1000;
	ns = &r.topo.ns[0];
	n = vwc_run_apply(&r);
	ok(overtaken == 2, "the other writer wrote write back at both read-backs (%d)",
	   overtaken);
	is_str(fake_wc_get(root, "nvme0n1"), "write back",
	       "overtaken twice: left in write back (never half-way to write through)");
	ok(n == 1, "one failure, the namespace overtaken twice (%d)", n);
	ok(ns->action == VWC_ACT_FAILED &&
	   strstr(ns->errmsg, "another writer put write back in its place") &&
	   strstr(ns->errmsg, "Set Features 06h in flight"),
	   "it says another writer put write back in its place: \"%s\"",
	   ns->errmsg);
	ok(ns->before == VWC_MODE_WRITE_BACK && ns->after == VWC_MODE_WRITE_BACK,
	   "before and after: write back (%d, %d)", ns->before, ns->after);
	is_str(fake_wc_get(root, "nvme1n1"), "write through",
	       "the other namespace: write through");
	free_run(&r);

	/* 3. the second write decided on WCE read again: the cache came on
	 * meanwhile (the Set Features 06h the other writer answered) */
	make_run(&r);
	with_cache(&r);
	wce_once = 1;
	overtake = 1;
	ns = &r.topo.ns[0];
	n = vwc_run_apply(&r);
	ok(overtaken == 1, "overtaken once, the cache on at the next read (%d)",
	   overtaken);
	is_str(fake_wc_get(root, "nvme0n1"), "write back",
	       "WCE read again as 1: write back, not write through on the first read");
	ok(n == 0 && ns->decision.mode == VWC_MODE_WRITE_BACK &&
	   ns->action == VWC_ACT_UNCHANGED,
	   "and no failure: write back is what WCE=1 calls for (%d, action %d)",
	   n, ns->action);
	ok(wrote_at < overtaken_at,
	   "nothing written after the overtaking: decided again on the new read first (write %d, overtaken %d)",
	   wrote_at, overtaken_at);
	free_run(&r);

	/*
	 * 4. a head already in write through, its path node not: the path
	 * node is overtaken, everything goes back to write back, the second
	 * write puts both in write through, and WCE is read after that
	 * write (the run found the head in write through and left it so,
	 * which it reports as unchanged)
	 */
	make_run(&r);
	with_cache(&r);
	ns = &r.topo.ns[0];
	{
		static char pp[256];
		static const char *paths[1];

		snprintf(pp, sizeof(pp), "%s/sys/nvme0c0n1", root);
		paths[0] = pp;
		ns->path_syspath = paths;
		ns->nr_paths = 1;
		fake_wc_put(root, "nvme0c0n1", "write back");
		fake_wc_put(root, "nvme0n1", "write through");
		snprintf(target, sizeof(target), "%s/queue/write_cache", pp);
		overtake = 1;
		n = vwc_run_apply(&r);
		ns->path_syspath = NULL;
		ns->nr_paths = 0;
	}
	ok(overtaken == 1, "the path node overtaken once (%d)", overtaken);
	ok(!strcmp(fake_wc_get(root, "nvme0n1"), "write through") &&
	   !strcmp(fake_wc_get(root, "nvme0c0n1"), "write through") && n == 0,
	   "head and path node in write through at the end, no failure (%d)",
	   n);
	ok(read_at > wrote_at && wrote_at > 0,
	   "WCE read after the last write of write through (read %d, write %d)",
	   read_at, wrote_at);
	ok(ns->before == VWC_MODE_WRITE_THROUGH &&
	   ns->after == VWC_MODE_WRITE_THROUGH &&
	   ns->action == VWC_ACT_UNCHANGED,
	   "reported from what the run found: the head in write through, unchanged (%d, %d, action %d)",
	   ns->before, ns->after, ns->action);
	free_run(&r);

	/*
	 * 5. write through by the namespace's own bit (step 1, no lock),
	 * overtaken once (a kernel's rescan): written once more
	 */
	make_run(&r);
	r.topo.ns[0].no_vwc = VWC_TRI_YES;
	overtake = 1;
	ns = &r.topo.ns[0];
	n = vwc_run_apply(&r);
	ok(overtaken == 1 && !strcmp(fake_wc_get(root, "nvme0n1"), "write through") &&
	   n == 0 && ns->action == VWC_ACT_CHANGED,
	   "own bit, overtaken once: write through written again, no failure (%d, %d, action %d)",
	   overtaken, n, ns->action);
	free_run(&r);

	/*
	 * 6. the overtaking was this process's own fast path (the sidecar's
	 * thread: a Set Features 06h with WCE=1 submitted): not written
	 * again, left in write back, and the run fails
	 */
	make_run(&r);
	with_cache(&r);
	fast_path = true;
	overtake = 1;
	ns = &r.topo.ns[0];
	n = vwc_run_apply(&r);
	ok(overtaken == 1 && wrote_at < overtaken_at,
	   "the fast path's write back: nothing written after it (%d, write %d, overtaken %d)",
	   overtaken, wrote_at, overtaken_at);
	ok(!strcmp(fake_wc_get(root, "nvme0n1"), "write back") && n == 1 &&
	   ns->action == VWC_ACT_FAILED,
	   "left in write back, the run fails (%d, action %d)", n, ns->action);
	free_run(&r);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "# cannot remove %s\n", dir);
	return tap_done();
}
