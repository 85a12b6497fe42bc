// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vwc_aside_held() on a fake sysfs tree (queue/write_cache and queue/fua
 * as plain files): a kernel that holds no write cache for a namespace
 * while its controller reported the cache on is given the grace, then
 * judged again on WCE read now. A Set Features that turned the cache off
 * during the wait makes the kernel's write through right (no error);
 * with the cache still on, or no second look, it is an error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aside.h"
#include "blk.h"
#include "policy.h"
#include "tap.h"

static char root[64];
static int rereads;

static void put(const char *file, const char *val)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/nvme0n1/queue/%s", root, file);
	f = fopen(p, "w");
	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

/* an admin's Set Features turned the cache off while we waited */
static bool cache_off_now(void *arg, const struct vwc_ns *ns)
{
	struct vwc_topo *t = arg;

	rereads++;
	t->ctrls[ns->ctrl[0]].facts.wce = VWC_TRI_NO;
	return true;
}

/* read again: still on */
static bool cache_still_on(void *arg, const struct vwc_ns *ns)
{
	rereads++;
	return true;
}

int main(void)
{
	static int ctrl0[] = { 0 };
	struct vwc_ctrl ctrl = { 0 };
	struct vwc_ns ns = { 0 }, *nsv[1] = { &ns };
	struct vwc_topo t = { 0 };
	struct vwc_decision wb;
	char dir[128], nspath[192];
	int failed;

	strcpy(root, "/tmp/vwc-aside-XXXXXX");
	ok(mkdtemp(root) != NULL, "setup");
	snprintf(dir, sizeof(dir), "%s/nvme0n1", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/nvme0n1/queue", root);
	ok(!mkdir(dir, 0755), "a fake queue/ directory");

	strcpy(ctrl.name, "nvme0");
	ctrl.probed = true;
	ctrl.facts.present = VWC_TRI_YES;
	ctrl.facts.wce = VWC_TRI_YES;
	ctrl.facts.backup_failed = VWC_TRI_NO;
	t.ctrls = &ctrl;
	t.nr_ctrls = 1;
	strcpy(ns.name, "nvme0n1");
	snprintf(nspath, sizeof(nspath), "%s/nvme0n1", root);
	ns.syspath = nspath;
	ns.ctrl = ctrl0;
	ns.nr_ctrl = 1;
	t.ns = &ns;
	t.nr_ns = 1;
	wb = vwc_policy_decide(&ctrl.facts);
	ok(wb.mode == VWC_MODE_WRITE_BACK, "the cache on: write back");

	/* the kernel holds no cache (fua 0) and stays so */
	put("write_cache", "write through\n");
	put("fua", "0\n");
	ns.before = ns.after = VWC_MODE_WRITE_THROUGH;
	ns.kernel_held = true;
	failed = vwc_aside_held(&t, nsv, &wb, 1, false, cache_off_now, &t);
	ok(failed == 0 && rereads == 1 && ns.action == VWC_ACT_UNCHANGED &&
	   !ns.errmsg[0],
	   "the cache off again during the wait: the kernel's write through stands, no error");

	ctrl.facts.wce = VWC_TRI_YES;
	ns.kernel_held = true;
	failed = vwc_aside_held(&t, nsv, &wb, 1, false, cache_still_on, NULL);
	ok(failed == 1 && rereads == 2 && ns.action == VWC_ACT_FAILED &&
	   strstr(ns.errmsg, "holds no write cache"),
	   "the cache still on: an error naming the kernel");

	ns.kernel_held = true;
	failed = vwc_aside_held(&t, nsv, &wb, 1, false, NULL, NULL);
	ok(failed == 1 && ns.action == VWC_ACT_FAILED,
	   "no second look: an error");

	snprintf(dir, sizeof(dir), "rm -rf %s", root);
	ok(!system(dir), "cleanup");
	return tap_done();
}
