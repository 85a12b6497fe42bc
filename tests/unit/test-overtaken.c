// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Write through that another writer turns to write back between our write
 * and its read-back (the sidecar does, without the lock, while a Set
 * Features 06h is in flight: set-cache off's own WCE=0 included). On a fake
 * sysfs tree (queue/write_cache as plain files), the other writer is this
 * test's wrapper of open(): at the chosen namespace's read-back after a
 * write, it writes "write back" first. vwc_run_apply() says so by name,
 * leaves write back, reads WCE again and writes once more; a second
 * overtaking leaves write back and fails the run.
 *
 * Linked with -Wl,--wrap=open,--wrap=open64 (tests/meson.build).
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
#include "tap.h"

static char root[64];
static char target[300];	/* the write_cache whose read-backs are hit */
static bool after_write;	/* a write of it since its last read */
static int overtake;		/* how many read-backs still to overtake */
static int overtaken;		/* how many were */

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);

static void other_writer(const char *path, int flags)
{
	int fd;

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

static void put_wc(const char *ns, const char *val)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/sys/%s/queue", root, ns);
	vwc_mkdir_p(p);
	strcat(p, "/write_cache");
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%s\n", val);
		fclose(f);
	}
}

static const char *get_wc(const char *ns)
{
	static char buf[32];
	char p[256];
	enum vwc_mode m;

	snprintf(p, sizeof(p), "%s/sys/%s", root, ns);
	if (vwc_blk_read(p, &m))
		return "?";
	snprintf(buf, sizeof(buf), "%s", vwc_mode_str(m));
	return buf;
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
		put_wc(ns->name, "write back");
	}
	snprintf(target, sizeof(target), "%s/queue/write_cache", nspath[0]);
	after_write = false;
	overtaken = 0;
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
	is_str(get_wc("nvme0n1"), "write through",
	       "overtaken once: WCE read again, write through written again");
	ok(n == 0 && r.nr_failed == 0, "and the run has no failure (%d, %d)",
	   n, r.nr_failed);
	ok(ns->action == VWC_ACT_CHANGED && ns->before == VWC_MODE_WRITE_BACK &&
	   ns->after == VWC_MODE_WRITE_THROUGH && !ns->overtaken &&
	   !ns->errmsg[0],
	   "reported from what the run found: write back -> write through, changed (%d, %s)",
	   ns->action, ns->errmsg);
	is_str(get_wc("nvme1n1"), "write through",
	       "the other namespace: write through, untouched by the retry");
	ok(!vwc_lock_held(), "lock released");
	free_run(&r);

	/* 2. overtaken every time: write back left, the run fails, and the
	 * message says what happened */
	make_run(&r);
	overtake = 1000;
	ns = &r.topo.ns[0];
	n = vwc_run_apply(&r);
	ok(overtaken >= 2, "the other writer wrote write back at each read-back (%d)",
	   overtaken);
	is_str(get_wc("nvme0n1"), "write back",
	       "overtaken twice: left in write back (never half-way to write through)");
	ok(n == 1, "one failure, the namespace overtaken twice (%d)", n);
	ok(ns->action == VWC_ACT_FAILED &&
	   strstr(ns->errmsg, "another writer put write back in its place") &&
	   strstr(ns->errmsg, "Set Features 06h in flight"),
	   "it says another writer put write back in its place: \"%s\"",
	   ns->errmsg);
	ok(ns->before == VWC_MODE_WRITE_BACK && ns->after == VWC_MODE_WRITE_BACK,
	   "before and after: write back (%d, %d)", ns->before, ns->after);
	is_str(get_wc("nvme1n1"), "write through",
	       "the other namespace: write through");
	free_run(&r);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "# cannot remove %s\n", dir);
	return tap_done();
}
