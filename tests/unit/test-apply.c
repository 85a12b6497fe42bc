// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The safe direction never waits (lock.h): vwc_run_apply() on a fake
 * sysfs tree (queue/write_cache as plain files) while another process
 * holds the writers' lock. Write back lands while the lock is still held;
 * write through waits for it, and is decided again on WCE read under it;
 * a lock that cannot be had leaves write back in place and says so;
 * vwc_run_write_back() writes at once and leaves "ignore" alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "nvme-io.h"
#include "config.h"
#include "engine.h"
#include "lock.h"
#include "fake-wc.h"
#include "tap.h"

static char root[64];

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}



/*
 * Three controllers, one namespace each:
 *   nvme0 no cache       -> nvme0n1 write through
 *   nvme1 WCE=1          -> nvme1n1 write back
 *   nvme2 WCE=0          -> nvme2n1 write through, unless WCE read again
 *                           (its node does not open: unknown, write back)
 * Every namespace starts in the other mode.
 */
/* the namespaces' sysfs directories (struct vwc_ns points at a string) */
static char nspath[3][256];

static void make_run(struct vwc_run *r, int idx[3])
{
	static const char *names[3] = { "nvme0", "nvme1", "nvme2" };
	struct vwc_topo *t = &r->topo;
	int i;

	memset(r, 0, sizeof(*r));
	r->command = "test";
	r->lock_wait_ms = VWC_LOCK_TIMEOUT_MS;
	t->ctrls = calloc(3, sizeof(*t->ctrls));
	t->ns = calloc(3, sizeof(*t->ns));
	t->nr_ctrls = t->nr_ns = 3;
	for (i = 0; i < 3; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		struct vwc_ns *ns = &t->ns[i];

		snprintf(c->name, sizeof(c->name), "%s", names[i]);
		snprintf(c->devnode, sizeof(c->devnode), "%s/dev/%s", root,
			 names[i]);
		snprintf(c->serial, sizeof(c->serial), "S%d", i);
		c->probed = true;
		c->wanted = true;
		c->facts.present = i ? VWC_TRI_YES : VWC_TRI_NO;
		c->facts.wce = i == 1 ? VWC_TRI_YES : i == 2 ? VWC_TRI_NO :
			       VWC_TRI_UNKNOWN;
		c->facts.backup_failed = VWC_TRI_NO;
		snprintf(ns->name, sizeof(ns->name), "%sn1", names[i]);
		snprintf(nspath[i], sizeof(nspath[i]), "%s/sys/%s", root,
			 ns->name);
		ns->syspath = nspath[i];
		idx[i] = i;
		ns->ctrl = &idx[i];
		ns->nr_ctrl = 1;
		ns->wanted = true;
	}
	fake_wc_put(root, "nvme0n1", "write back");
	fake_wc_put(root, "nvme1n1", "write through");
	fake_wc_put(root, "nvme2n1", "write back");
}

static void free_run(struct vwc_run *r)
{
	free(r->topo.ctrls);
	free(r->topo.ns);
}

/*
 * A child that holds the lock, says 'L' on @ready, then watches nvme1n1:
 * it reports 'B' if nvme1n1 reads write back (while nvme0n1 still reads
 * write back, i.e. not yet written through) before @hold_ms, 'T' if not,
 * and releases the lock after @hold_ms.
 */
static pid_t watcher(int hold_ms, int *ready_rd)
{
	int ready[2];
	pid_t pid;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		double end;
		char c = vwc_lock_take(1000) ? 'E' : 'L';

		close(ready[0]);
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		end = now_ms() + hold_ms;
		c = 'T';
		while (now_ms() < end) {
			if (c == 'T' && !strcmp(fake_wc_get(root, "nvme1n1"), "write back") &&
			    !strcmp(fake_wc_get(root, "nvme0n1"), "write back"))
				c = 'B';
			usleep(2000);
		}
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		vwc_lock_release();
		_exit(0);
	}
	close(ready[1]);
	*ready_rd = ready[0];
	return pid;
}

static const char *mark_path(void)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", vwc_rundir(), VWC_WT_MARK);
	return p;
}

static bool mark_exists(void)
{
	return !access(mark_path(), F_OK);
}

int main(void)
{
	char dir[] = "/tmp/vwc-apply-XXXXXX", run[128], cmd[160], c = 0;
	struct vwc_config cfg;
	struct vwc_run r;
	int idx[3], rd, n;
	double t0, t;
	pid_t pid;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(root, sizeof(root), "%s", dir);
	snprintf(run, sizeof(run), "%s/run", dir);
	setenv("NVME_VWC_SYNC_RUNDIR", run, 1);

	/* 1. held for 600 ms: write back during the hold, write through after */
	ok(!mark_exists(), "a new run directory: no write-through mark");
	make_run(&r, idx);
	pid = watcher(600, &rd);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L', "another process holds the lock");
	t0 = now_ms();
	n = vwc_run_apply(&r);
	t = now_ms() - t0;
	ok(read(rd, &c, 1) == 1 && c == 'B',
	   "write back landed while the lock was held, write through not yet (%c)",
	   c);
	waitpid(pid, NULL, 0);
	close(rd);
	ok(t >= 400, "write through waited for the lock (%.0f ms)", t);
	is_str(fake_wc_get(root, "nvme1n1"), "write back", "WCE=1: write back");
	is_str(fake_wc_get(root, "nvme0n1"), "write through",
	       "no cache: write through, under the lock");
	is_str(fake_wc_get(root, "nvme2n1"), "write back",
	       "WCE=0 read again under the lock: unknown, so write back");
	ok(r.topo.ns[2].decision.reason == VWC_REASON_WCE_UNKNOWN,
	   "its decision was made again (reason %d)", r.topo.ns[2].decision.reason);
	/* the read under the lock failed: kept in write back, and the run
	 * says it did not do all it should (exit status 1) */
	ok(n == 1 && !r.lock_busy, "one failure, the WCE read under the lock (%d)", n);
	ok(!vwc_lock_held(), "lock released after the run");
	ok(mark_exists(),
	   "write through on a controller's word (no cache present): the mark made");
	free_run(&r);

	/*
	 * 1b. the mark of vwc_blk_mark_wt(), which udev's rule tests:
	 * not made for write through by a namespace's own bit; made for a
	 * namespace found in write through that a controller decides; and
	 * when it cannot be made, no write through on a controller's word
	 */
	unlink(mark_path());
	make_run(&r, idx);
	r.topo.ns[0].no_vwc = VWC_TRI_YES;
	r.topo.ctrls[2].facts.wce = VWC_TRI_YES;
	fake_wc_put(root, "nvme0n1", "write through");	/* the kernel's (6.13+) */
	n = vwc_run_apply(&r);
	is_str(fake_wc_get(root, "nvme0n1"), "write through",
	       "own bit: write through");
	ok(!mark_exists() && !n,
	   "write through the kernel holds by the own bit alone: no mark (%d)",
	   n);
	free_run(&r);
	/* write back wanted where the kernel holds no write cache (fua 0):
	 * left to the kernel, as a sync for a controller's event would:
	 * no mark */
	{
		char fp[256];
		FILE *f;

		make_run(&r, idx);
		r.topo.ns[0].no_vwc = VWC_TRI_YES;
		r.topo.ctrls[2].facts.wce = VWC_TRI_YES;
		fake_wc_put(root, "nvme0n1", "write through");
		snprintf(fp, sizeof(fp), "%s/sys/nvme1n1/queue/fua", root);
		f = fopen(fp, "w");
		if (f) {
			fputs("0\n", f);
			fclose(f);
		}
		n = vwc_run_apply(&r);
		ok(!strcmp(fake_wc_get(root, "nvme1n1"), "write through") && !mark_exists(),
		   "write through the kernel holds with no write cache: left to it, no mark (%d)",
		   n);
		unlink(fp);
		free_run(&r);
	}
	/* a multipath head and its path node, both the kernel's: no mark;
	 * a path node this tool writes: the mark */
	{
		char pp[VWC_PATH_LEN];
		const char *paths[] = { pp };

		make_run(&r, idx);
		r.topo.ns[0].no_vwc = VWC_TRI_YES;
		r.topo.ctrls[2].facts.wce = VWC_TRI_YES;
		fake_wc_put(root, "nvme0n1", "write through");
		fake_wc_put(root, "nvme0c0n1", "write through");
		snprintf(pp, sizeof(pp), "%s/sys/nvme0c0n1", root);
		r.topo.ns[0].path_syspath = paths;
		r.topo.ns[0].nr_paths = 1;
		n = vwc_run_apply(&r);
		ok(!mark_exists() && !n,
		   "head and path node in the kernel's write through: no mark (%d)",
		   n);
		fake_wc_put(root, "nvme0c0n1", "write back");
		n = vwc_run_apply(&r);
		ok(!strcmp(fake_wc_get(root, "nvme0c0n1"), "write through") &&
		   mark_exists(),
		   "a path node this tool puts in write through: the mark made (%d)",
		   n);
		r.topo.ns[0].path_syspath = NULL;
		r.topo.ns[0].nr_paths = 0;
		free_run(&r);
		unlink(mark_path());
	}
	make_run(&r, idx);
	r.topo.ns[0].no_vwc = VWC_TRI_YES;
	r.topo.ctrls[2].facts.wce = VWC_TRI_YES;
	n = vwc_run_apply(&r);
	ok(!strcmp(fake_wc_get(root, "nvme0n1"), "write through") && mark_exists(),
	   "write through this tool writes on the own bit (a kernel that ignores it): the mark made (%d)",
	   n);
	free_run(&r);
	unlink(mark_path());
	ok(vwc_config_parse("device serial=S2 write-cache=ignore\n", "t.conf",
			    &cfg, cmd, sizeof(cmd)) == 0, "config: S2 ignore");
	make_run(&r, idx);
	r.cfg = &cfg;
	r.topo.ns[0].no_vwc = VWC_TRI_YES;
	fake_wc_put(root, "nvme0n1", "write through");	/* the kernel's: nothing written */
	r.topo.ctrls[2].probed = false;	/* facts unknown: the config decides */
	fake_wc_put(root, "nvme2n1", "write through");
	vwc_run_apply(&r);
	is_str(fake_wc_get(root, "nvme2n1"), "write through", "ignored: left in write through");
	ok(mark_exists(),
	   "a namespace found in write through that its controller decides: the mark made");
	free_run(&r);
	unlink(mark_path());
	vwc_mkdir_p(mark_path());	/* a directory: open() cannot make it */
	make_run(&r, idx);
	fake_wc_put(root, "nvme2n1", "write through");	/* someone else's, WCE=0 */
	n = vwc_run_apply(&r);
	ok(!strcmp(fake_wc_get(root, "nvme2n1"), "write through") &&
	   r.topo.ns[2].action == VWC_ACT_FAILED,
	   "one already in write through on a controller's word: kept, and failed (no mark)");
	is_str(fake_wc_get(root, "nvme0n1"), "write back",
	       "the mark cannot be made: no write through on a controller's word");
	/* nvme0n1 (no cache present) and nvme2n1 (WCE=0) */
	ok(n == 2 && r.topo.ns[0].action == VWC_ACT_FAILED &&
	   strstr(r.topo.ns[0].errmsg, VWC_WT_MARK),
	   "both reported failed, naming the mark (%d): %s", n,
	   r.topo.ns[0].errmsg);
	ok(!vwc_lock_held() && !r.lock_busy,
	   "the lock released; not a lock to try again");
	free_run(&r);
	/* ... and a write through on the own bit, without the lock */
	make_run(&r, idx);
	r.topo.ns[0].no_vwc = VWC_TRI_YES;
	r.topo.ctrls[2].facts.wce = VWC_TRI_YES;
	n = vwc_run_apply(&r);
	ok(!strcmp(fake_wc_get(root, "nvme0n1"), "write back") && n == 1 &&
	   r.topo.ns[0].action == VWC_ACT_FAILED &&
	   strstr(r.topo.ns[0].errmsg, VWC_WT_MARK),
	   "own bit, the mark cannot be made: left in write back, failed, naming it (%d): %s",
	   n, r.topo.ns[0].errmsg);
	free_run(&r);
	rmdir(mark_path());

	/* 2. held past lock_wait_ms: write through left undone, named */
	make_run(&r, idx);
	r.lock_wait_ms = 200;
	pid = watcher(1500, &rd);
	ok(pid > 0 && read(rd, &c, 1) == 1 && c == 'L', "held again");
	n = vwc_run_apply(&r);
	is_str(fake_wc_get(root, "nvme1n1"), "write back", "write back all the same");
	is_str(fake_wc_get(root, "nvme0n1"), "write back", "write through left undone");
	ok(r.lock_busy && n == 2, "lock_busy set, two namespaces failed (%d)",
	   n);
	snprintf(cmd, sizeof(cmd), "held by another process (pid %d, test-apply)",
		 (int)pid);
	ok(strstr(r.topo.ns[0].errmsg, cmd) != NULL, "reason names the holder: %s",
	   r.topo.ns[0].errmsg);
	ok(r.topo.ns[0].action == VWC_ACT_FAILED, "reported failed");
	free_run(&r);

	/* 3. one try (the sidecar's 0): at once; a namespace already in
	 * write through is not a failure */
	make_run(&r, idx);
	r.lock_wait_ms = 0;
	fake_wc_put(root, "nvme0n1", "write through");
	t0 = now_ms();
	n = vwc_run_apply(&r);
	t = now_ms() - t0;
	/* one try, not the 30 s wait: a bound far from both, so that a
	 * loaded build host does not fail it (492 ms seen in a package build) */
	ok(t < 10000 && r.lock_busy, "lock_wait_ms 0: one try (%.0f ms)", t);
	ok(r.topo.ns[0].action == VWC_ACT_UNCHANGED,
	   "already write through: unchanged, not failed");
	free_run(&r);

	/* 4. vwc_run_write_back(): at once while held, "ignore" left alone */
	make_run(&r, idx);
	fake_wc_put(root, "nvme1n1", "write through");
	t0 = now_ms();
	n = vwc_run_write_back(&r, 1);
	t = now_ms() - t0;
	ok(n == 0 && t < 10000, "write back while the lock is held: at once (%.0f ms)",
	   t);
	is_str(fake_wc_get(root, "nvme1n1"), "write back", "written");
	is_str(fake_wc_get(root, "nvme0n1"), "write back",
	       "other controllers' namespaces untouched");
	ok(vwc_config_parse("device serial=S2 write-cache=ignore\n", "t.conf",
			    &cfg, cmd, sizeof(cmd)) == 0, "config: S2 ignore");
	r.cfg = &cfg;
	r.topo.ctrls[2].probed = false;	/* facts unknown: the config decides */
	fake_wc_put(root, "nvme2n1", "write through");
	n = vwc_run_write_back(&r, 2);
	is_str(fake_wc_get(root, "nvme2n1"), "write through", "ignored controller: untouched");
	ok(n == 0 && r.topo.ns[2].action == VWC_ACT_SKIPPED, "reported skipped");
	ok(vwc_run_write_back(&r, 7) == 0, "no such controller: nothing");
	free_run(&r);
	waitpid(pid, NULL, 0);
	close(rd);

	/*
	 * 5. a path node that cannot be written: write back still reaches
	 * the head (the node that drops flushes) and every other path node,
	 * and the failure names the node
	 */
	make_run(&r, idx);
	{
		char path0[VWC_PATH_LEN], path1[VWC_PATH_LEN];
		const char *paths[] = { path0, path1 };
		struct vwc_ns *ns = &r.topo.ns[1];
		char p[256];

		fake_wc_put(root, "nvme1n1", "write through");
		fake_wc_put(root, "nvme1c1n1", "write through");
		snprintf(p, sizeof(p), "%s/sys/nvme1c0n1/queue/write_cache",
			 root);
		vwc_mkdir_p(p);	/* a directory: neither read nor written */
		snprintf(path0, sizeof(path0), "%s/sys/nvme1c0n1", root);
		snprintf(path1, sizeof(path1), "%s/sys/nvme1c1n1", root);
		ns->path_syspath = paths;
		ns->nr_paths = 2;
		n = vwc_blk_apply(ns, (struct vwc_decision){
				VWC_MODE_WRITE_BACK, VWC_REASON_WCE_ENABLED },
			      false);
		ok(n != 0 && ns->action == VWC_ACT_FAILED,
		   "a path node failed: reported (%d)", n);
		is_str(fake_wc_get(root, "nvme1n1"), "write back",
		       "the head is write back all the same");
		is_str(fake_wc_get(root, "nvme1c1n1"), "write back",
		       "and the path node after the failing one");
		ok(strstr(ns->errmsg, "nvme1c0n1") != NULL,
		   "the failure names the node: %s", ns->errmsg);
		/* write through that fails on a path: every node back */
		fake_wc_put(root, "nvme1n1", "write back");
		fake_wc_put(root, "nvme1c1n1", "write back");
		n = vwc_blk_apply(ns, (struct vwc_decision){
				VWC_MODE_WRITE_THROUGH, VWC_REASON_WCE_DISABLED },
			      false);
		ok(n != 0, "write through with a failing path node: failed");
		is_str(fake_wc_get(root, "nvme1n1"), "write back",
		       "the head stays write back");
		is_str(fake_wc_get(root, "nvme1c1n1"), "write back",
		       "the other path node back in write back");
		ns->path_syspath = NULL;
		ns->nr_paths = 0;
	}
	free_run(&r);

	/*
	 * 6. a lock error that is not another writer's hold (here the run
	 * directory cannot be made: its parent is a file, as a full or
	 * read-only /run refuses it too): write back all the same, write
	 * through left undone and failed, and lock_busy set so that the
	 * sidecar tries again, with the cause kept
	 */
	{
		char bad[128];
		FILE *f;

		snprintf(bad, sizeof(bad), "%s/afile", dir);
		f = fopen(bad, "w");
		if (f)
			fclose(f);
		strcat(bad, "/run");
		setenv("NVME_VWC_SYNC_RUNDIR", bad, 1);
		make_run(&r, idx);
		r.lock_wait_ms = 0;
		n = vwc_run_apply(&r);
		is_str(fake_wc_get(root, "nvme1n1"), "write back",
		       "lock error: write back all the same");
		is_str(fake_wc_get(root, "nvme0n1"), "write back",
		       "lock error: write through left undone");
		ok(n == 2 && r.topo.ns[0].action == VWC_ACT_FAILED,
		   "lock error: two namespaces failed (%d)", n);
		ok(r.lock_busy, "lock error: lock_busy set, to be tried again");
		ok(r.lock_err == -ENOTDIR, "lock error: its cause kept (%d)",
		   r.lock_err);
		ok(strstr(r.topo.ns[0].errmsg, strerror(ENOTDIR)) != NULL,
		   "lock error: the reason says it: %s", r.topo.ns[0].errmsg);
		free_run(&r);
		setenv("NVME_VWC_SYNC_RUNDIR", run, 1);
	}

	/* a path's status is no refusal (arming SMART events, CNS 08h) */
	ok(vwc_nvme_status_path(0x370) && vwc_nvme_status_path(0x371) &&
	   vwc_nvme_status_path(0x4370) && vwc_nvme_status_path(0x303),
	   "Host Pathing Error, Aborted By Host, with DNR, ANA transition: a path's");
	ok(!vwc_nvme_status_path(0x2) && !vwc_nvme_status_path(0x4002) &&
	   !vwc_nvme_status_path(0x10b) && !vwc_nvme_status_path(-ENODEV) &&
	   !vwc_nvme_status_path(0),
	   "Invalid Field (with DNR), a command-specific status, an errno, success: not a path's");
	/* a controller that cannot be asked now: the rest of a round not sent */
	ok(vwc_nvme_ctrl_down(-EINTR) && vwc_nvme_ctrl_down(-ENODEV) &&
	   vwc_nvme_ctrl_down(0x370) && vwc_nvme_ctrl_down(0x4371) &&
	   vwc_nvme_ctrl_down(0x360) && vwc_nvme_ctrl_down(0x300),
	   "an errno, Host Pathing Error, Aborted By Host (DNR), Controller Pathing Error, Internal Path Error: the controller down");
	ok(!vwc_nvme_ctrl_down(0) && !vwc_nvme_ctrl_down(0x302) &&
	   !vwc_nvme_ctrl_down(0x303) && !vwc_nvme_ctrl_down(0x2) &&
	   !vwc_nvme_ctrl_down(0x10b) && !vwc_nvme_ctrl_down(0x70),
	   "success, ANA inaccessible and transition, Invalid Field, a command-specific status, a generic 70h: not");

	/* the one look that spares a test of every namespace's restore mark */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/restored", run);
	ok(!system(cmd) && !vwc_blk_any_hold(), "no restored/ directory: no mark");
	ok(!vwc_blk_hold("nvme3n1", VWC_HOLD_SET) && vwc_blk_any_hold(),
	   "one namespace marked: a mark is there");
	ok(vwc_blk_hold("nvme3n1", VWC_HOLD_TEST) == 1 &&
	   vwc_blk_hold("nvme4n1", VWC_HOLD_TEST) == 0,
	   "... on that namespace alone");
	ok(!vwc_blk_hold("nvme3n1", VWC_HOLD_CLEAR) && !vwc_blk_any_hold(),
	   "mark cleared: restored/ empty, no mark");

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(!system(cmd), "cleanup");
	return tap_done();
}
