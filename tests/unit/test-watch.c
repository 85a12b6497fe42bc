// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's model (src/watch/watch-model.c) driven with a hand-made
 * topology and fake effects: what is probed, what is pending, identity,
 * late completions, multipath paths joining, open retries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwatch.h"
#include "watch-model.h"
#include "watch-model-int.h"
#include "tap.h"
#include "watch-fast.h"

static int added, gone, ns_added, ns_gone, next_fd = 10, open_fails;
static uint64_t idents[4];
static double fake_now;

static void f_ctrl_added(struct vwc_model *w, struct vwc_wctrl *c,
			 const struct vwc_ctrl *tc)
{
	(void)w;
	(void)tc;
	added++;
	vwc_model_open_result(c, open_fails ? -ENXIO : next_fd++, fake_now);
}

static void f_ctrl_gone(struct vwc_model *w, struct vwc_wctrl *c)
{
	(void)w;
	(void)c;
	gone++;
}

static void f_ns_added(struct vwc_model *w, const char *name)
{
	(void)w;
	(void)name;
	ns_added++;
}

static void f_ns_gone(struct vwc_model *w, const char *name)
{
	(void)w;
	(void)name;
	ns_gone++;
}

static uint64_t f_ident(const struct vwc_ctrl *tc)
{
	return idents[tc->name[4] - '0'];
}

static uint64_t ns_idents[2] = { 500, 600 };

static uint64_t f_ns_ident(const struct vwc_ns *tn)
{
	return ns_idents[tn->name[4] == '2'];
}

static const struct vwc_model_ops ops = {
	f_ctrl_added, f_ctrl_gone, f_ns_added, f_ns_gone, f_ident, f_ns_ident,
};

static struct vwc_ctrl ctrls[3];
static struct vwc_ns nss[2];
static int ns0_ctrl[2] = { 0, 1 }, ns1_ctrl[1] = { 2 };

/* nvme0, nvme1, nvme2; nvme0n1 through nvme0 (and nvme1 if @shared) */
static void topo(struct vwc_topo *t, bool shared)
{
	int i;

	memset(ctrls, 0, sizeof(ctrls));
	memset(nss, 0, sizeof(nss));
	for (i = 0; i < 3; i++) {
		snprintf(ctrls[i].name, sizeof(ctrls[i].name), "nvme%d", i);
		snprintf(ctrls[i].devnode, sizeof(ctrls[i].devnode),
			 "/dev/nvme%d", i);
	}
	snprintf(nss[0].name, sizeof(nss[0].name), "nvme0n1");
	nss[0].ctrl = ns0_ctrl;
	nss[0].nr_ctrl = shared ? 2 : 1;
	snprintf(nss[1].name, sizeof(nss[1].name), "nvme2n1");
	nss[1].ctrl = ns1_ctrl;
	nss[1].nr_ctrl = 1;
	t->ctrls = ctrls;
	t->nr_ctrls = 3;
	t->ns = nss;
	t->nr_ns = 2;
}

static void clear_marks(struct vwc_model *w)
{
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].full = w->ctrl[i].wce = w->ctrl[i].arm_smart = false;
	w->rescan = w->recheck = false;
}

static void know(struct vwc_wctrl *c, enum vwc_tri present, enum vwc_tri wce)
{
	struct vwc_ctrl tc = { 0 };

	tc.facts.present = present;
	tc.facts.wce = wce;
	tc.facts.backup_failed = VWC_TRI_NO;
	vwc_model_learn(c, &tc);
}

/*
 * Many namespaces, named in no order: each found after a sync, after some
 * went and others came (the model bisects its namespaces by name).
 */
static void test_find_ns(void)
{
	static struct vwc_ns many[64];
	struct vwc_model w;
	struct vwc_topo t;
	char name[VWC_NAME_LEN];
	int i, found = 0, absent = 0;

	memset(&t, 0, sizeof(t));
	memset(many, 0, sizeof(many));
	for (i = 0; i < 64; i++)	/* nvme37n1, nvme2n1, nvme31n1, ... */
		snprintf(many[i].name, sizeof(many[i].name), "nvme%dn1",
			 (i * 35) % 64);
	t.ns = many;
	t.nr_ns = 40;
	vwc_model_init(&w, &t, NULL, NULL);
	vwc_model_sync(&w, 0);
	for (i = 0; i < 40; i++)
		found += vwc_model_find_ns(&w, many[i].name) != NULL &&
			 !strcmp(vwc_model_find_ns(&w, many[i].name)->name,
				 many[i].name);
	ok(found == 40 && w.nr_ns == 40, "find_ns: 40 of 40 found after a sync (%d)",
	   found);
	/* the first 16 go, 24 more come */
	t.ns = many + 16;
	t.nr_ns = 48;
	vwc_model_sync(&w, 0);
	for (i = found = 0; i < 64; i++) {
		struct vwc_wns *n = vwc_model_find_ns(&w, many[i].name);

		if (i < 16)
			absent += !n;
		else
			found += n && !strcmp(n->name, many[i].name);
	}
	snprintf(name, sizeof(name), "nvme64n1");
	ok(found == 48 && absent == 16 && w.nr_ns == 48 &&
	   !vwc_model_find_ns(&w, name),
	   "find_ns: after 16 went and 24 came, 48 found and 16 gone (%d, %d)",
	   found, absent);
	vwc_model_free(&w);
}

/*
 * Many controllers: each found by its name (the model remembers where by
 * instance number, and checks), after some went (the last entry moves
 * into a hole: what was remembered for it is wrong then) and others
 * came; names that are no controller's (a namespace, no number, one too
 * large to remember, a leading zero) are not found.
 */
static void test_find_ctrl(void)
{
	static struct vwc_ctrl many[48];
	static const char *const odd[] = { "nvme3n1", "nvmeX", "nvme",
					   "nvme99999999999", "nvme07" };
	struct vwc_model w;
	struct vwc_topo t;
	int i, found = 0, absent = 0, twice;

	memset(&t, 0, sizeof(t));
	memset(many, 0, sizeof(many));
	for (i = 0; i < 48; i++)	/* nvme0, nvme29, nvme10, ... */
		snprintf(many[i].name, sizeof(many[i].name), "nvme%d",
			 (i * 29) % 48);
	t.ctrls = many;
	t.nr_ctrls = 40;
	vwc_model_init(&w, &t, NULL, NULL);
	vwc_model_sync(&w, 0);
	for (twice = 0; twice < 2; twice++)	/* walked, then remembered */
		for (i = 0; i < 40; i++)
			found += vwc_model_find_ctrl(&w, many[i].name) &&
				 !strcmp(vwc_model_find_ctrl(&w, many[i].name)->name,
					 many[i].name);
	ok(found == 80 && w.nr_ctrl == 40,
	   "find_ctrl: 40 of 40 found twice (%d)", found);
	/* every third goes (the last entry moves into its place) */
	for (i = 0; i < 40; i += 3)
		vwc_model_note_gone(&w, many[i].name);
	for (i = found = 0; i < 40; i++) {
		struct vwc_wctrl *c = vwc_model_find_ctrl(&w, many[i].name);

		if (i % 3 == 0)
			absent += !c;
		else
			found += c && !strcmp(c->name, many[i].name);
	}
	for (i = 0; i < 5; i++)
		absent += !vwc_model_find_ctrl(&w, odd[i]);
	ok(found == 26 && absent == 14 + 5 && w.nr_ctrl == 26,
	   "find_ctrl: after 14 went, the 26 left found where each is now, the gone and odd names not (%d, %d)",
	   found, absent);
	/* by instance number (kernel events): the same entries, twice */
	for (twice = found = absent = 0; twice < 2; twice++)
		for (i = 0; i < 40; i++) {
			struct vwc_wctrl *c = vwc_model_find_instance(&w,
							(i * 29) % 48);

			if (i % 3 == 0)
				absent += !c;
			else
				found += c && !strcmp(c->name, many[i].name);
		}
	absent += !vwc_model_find_instance(&w, -1) +
		  !vwc_model_find_instance(&w, 1 << 30);
	ok(found == 52 && absent == 28 + 2,
	   "find_instance: the 26 left found by number twice, the gone and out of range not (%d, %d)",
	   found, absent);
	/* the 14 and 8 more come back (at the end), every one found */
	t.nr_ctrls = 48;
	vwc_model_sync(&w, 0);
	for (i = found = 0; i < w.nr_ctrl; i++)
		found += vwc_model_find_ctrl(&w, w.ctrl[i].name) == &w.ctrl[i];
	ok(found == 48 && w.nr_ctrl == 48,
	   "find_ctrl: 22 came, each of the 48 found at its place (%d)", found);
	vwc_model_free(&w);
}

int main(void)
{
	struct vwc_kw_event sf = { VWC_KW_SET_FEATURES, 0, 7, 0x06, 1, 0, 0 };
	struct vwc_kw_event done = { VWC_KW_COMPLETE, 0, 7, 0, 0, 0, 0 };
	struct vwc_wctrl *c0, *c1, *c2;
	struct vwc_topo t;
	struct vwc_model w;
	double due;
	int fd, i;

	topo(&t, false);
	idents[0] = 100;
	idents[1] = 101;
	idents[2] = 102;
	vwc_model_init(&w, &t, &ops, NULL);
	vwc_model_sync(&w, 0);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	ok(w.nr_ctrl == 3 && w.nr_ns == 2 && added == 3 && ns_added == 2,
	   "sync: 3 controllers and 2 namespaces added");
	ok(c0 && c0->full && c0->fd == 10 && ctrls[0].held_fd == 10,
	   "sync: a new controller is probed in full, its descriptor held");
	ok(vwc_model_busy(&w), "busy after the first sync");
	clear_marks(&w);
	due = vwc_model_timers(&w, 0.1);
	ok(due > 0.29 && due < 0.31 && !w.rescan,
	   "a new controller: re-checks scheduled (its paths come later)");
	vwc_model_timers(&w, 0.35);
	ok(c0->full && !w.recheck && !w.rescan &&
	   w.rescan_at > 0.34 + VWC_MODEL_ADD_QUIET_S &&
	   w.rescan_at < 0.36 + VWC_MODEL_ADD_QUIET_S,
	   "a new controller's re-check, nothing in write through: full look, rescan gathered");
	vwc_model_timers(&w, 0.36 + VWC_MODEL_ADD_QUIET_S);
	ok(w.rescan, "a new controller's re-check: the gathered rescan");
	vwc_model_rescanned(&w, 0);

	/* the next re-check (1.5 s): skipped while the names stay */
	clear_marks(&w);
	vwc_model_timers(&w, 1.55);
	vwc_model_timers(&w, 1.56 + VWC_MODEL_ADD_QUIET_S);
	ok(w.rescan && !w.reshape && vwc_model_scan_skips(&w, false) &&
	   !w.rescan && !w.rescan_at && w.rescans_skipped == 1 &&
	   w.rescans == 1,
	   "a re-check's scan, the same names: skipped, the request cleared");
	w.rescan = true;
	ok(!vwc_model_scan_skips(&w, true) && w.rescan,
	   "a re-check's scan, a name came or went: scanned");
	vwc_model_note_ns_added(&w, 1.6 + VWC_MODEL_ADD_QUIET_S);
	ok(!vwc_model_scan_skips(&w, false) && w.rescan_at,
	   "a namespace's add: scanned though the names look the same");
	vwc_model_rescanned(&w, 0);
	ok(!w.reshape && !w.rescan_at, "scanned: the next re-check may skip");
	vwc_model_note_all(&w);
	ok(!vwc_model_scan_skips(&w, false) && w.rescan,
	   "events lost: scanned though the names look the same");
	vwc_model_rescanned(&w, 0);
	clear_marks(&w);

	/* 5: the same name, another kernel object */
	clear_marks(&w);
	know(c0, VWC_TRI_NO, VWC_TRI_UNKNOWN);
	idents[0] = 200;
	vwc_model_sync(&w, 1);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	ok(gone == 1 && added == 4 && c0 && !c0->known && c0->full &&
	   c0->fd == 13 && ctrls[0].held_fd == 13,
	   "identity changed: old one forgotten, a fresh probe and descriptor");
	ok(!ctrls[0].probed, "identity changed: no stale facts handed to the topology");

	/* the same identity: facts kept, nothing reopened */
	clear_marks(&w);
	know(c0, VWC_TRI_YES, VWC_TRI_NO);
	vwc_model_sync(&w, 2);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	ok(added == 4 && !c0->full && ctrls[0].probed &&
	   ctrls[0].facts.wce == VWC_TRI_NO,
	   "same identity: facts kept, no new open");

	/* remove event: forgotten at once, before any rescan */
	vwc_model_note_gone(&w, "nvme0");
	ok(gone == 2 && !vwc_model_find_ctrl(&w, "nvme0") && w.recheck &&
	   !vwc_model_scan_skips(&w, false),
	   "remove: forgotten at once, the topology scanned again");
	vwc_model_sync(&w, 3);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	ok(c0 && c0->full && !c0->known && added == 5,
	   "back under the same name: probed as new");

	/* 4: a path joins nvme0n1 (no uevent): both controllers look */
	clear_marks(&w);
	c1 = vwc_model_find_ctrl(&w, "nvme1");
	know(c0, VWC_TRI_YES, VWC_TRI_NO);
	know(c1, VWC_TRI_YES, VWC_TRI_YES);
	topo(&t, true);
	vwc_model_sync(&w, 4);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	c1 = vwc_model_find_ctrl(&w, "nvme1");
	c2 = vwc_model_find_ctrl(&w, "nvme2");
	ok(c0->wce && c1->wce && !c2->wce,
	   "multipath: a path that joined has both controllers read WCE");
	clear_marks(&w);
	vwc_model_sync(&w, 5);
	ok(!c0->wce && !c1->wce, "multipath: nothing new, nothing read");

	/* 8: a peer of a shared namespace reads WCE, never a cached value */
	ok(vwc_model_plan(&w, c1) == VWC_MODEL_PROBE_WCE,
	   "plan: a known clean peer still reads WCE");
	c1->facts.backup_failed = VWC_TRI_UNKNOWN;
	ok(vwc_model_plan(&w, c1) == VWC_MODEL_PROBE_FULL,
	   "plan: SMART unknown reads everything again");
	c1->facts.backup_failed = VWC_TRI_NO;
	c1->full = true;
	ok(vwc_model_plan(&w, c1) == VWC_MODEL_PROBE_FULL,
	   "plan: asked for full");
	clear_marks(&w);

	/* Set Features 06h on the tracepoints */
	sf.time = 9500000000ULL;
	ok(vwc_model_note_kernel(&w, &sf, 10) == 1 && c0->wb_now &&
	   !c1->wb_now && c0->nr_pending == 1 && c0->wce,
	   "Set Features 06h WCE=1: write back now, pending");
	c0->wb_now = false;
	ok(c0->wb_since > 9.49 && c0->wb_since < 9.51,
	   "the kernel's time of the submission kept for the reaction");
	clear_marks(&w);
	ok(!vwc_model_note_kernel(&w, &done, 10.1) && !c0->nr_pending &&
	   c0->wce, "completion: WCE read again");
	clear_marks(&w);

	/* WCE=1 while adds wait for their gathered scan: scanned now */
	vwc_model_note_ns_added(&w, 10.2);
	ok(!w.rescan && w.rescan_at, "an add: its scan gathered");
	ok(vwc_model_note_kernel(&w, &sf, 10.3) == 1 && w.rescan,
	   "Set Features 06h WCE=1 while a gathered scan waits: scanned now (a namespace added since is not in the fast path's table)");
	vwc_model_note_kernel(&w, &done, 10.35);
	vwc_model_rescanned(&w, 0);
	clear_marks(&w);
	c0->wb_now = false;
	ok(vwc_model_note_kernel(&w, &sf, 10.4) == 1 && !w.rescan,
	   "Set Features 06h WCE=1, no scan waiting: none asked");
	vwc_model_note_kernel(&w, &done, 10.45);
	c0->wb_now = false;
	vwc_model_note_ns_added(&w, 10.5);
	sf.cdw11 = 0;
	ok(!vwc_model_note_kernel(&w, &sf, 10.55) && !w.rescan && w.rescan_at,
	   "Set Features 06h WCE=0 while a gathered scan waits: it waits on");
	vwc_model_note_kernel(&w, &done, 10.6);
	sf.cdw11 = 1;
	vwc_model_rescanned(&w, 0);
	clear_marks(&w);
	sf.cdw11 = 0;
	ok(!vwc_model_note_kernel(&w, &sf, 11) && c0->nr_pending == 1,
	   "Set Features 06h WCE=0: no write back, pending");
	sf.fid = 0x0b;
	sf.cid = 8;
	ok(!vwc_model_note_kernel(&w, &sf, 11) && c0->nr_pending == 1,
	   "another feature: ignored");

	/* 7: its completion after the pending timeout */
	due = vwc_model_timers(&w, 12);
	ok(due > 12.9 && due < 13.1, "timers: the pending timeout is due at 13 s");
	clear_marks(&w);
	vwc_model_timers(&w, 13.5);
	ok(!c0->nr_pending && c0->wce, "timeout: WCE read");
	clear_marks(&w);
	vwc_model_note_kernel(&w, &done, 14);
	ok(c0->wce, "a completion after the timeout is a WCE change");
	clear_marks(&w);
	vwc_model_note_kernel(&w, &done, 14.1);
	ok(!c0->wce, "... taken once");

	/* kprobes: the controller named by its admin queue */
	{
		struct vwc_kw_event ksf = { VWC_KW_SET_FEATURES, -1, 500, 0x06,
					    1, 15000000000ULL, 0xa000 };
		struct vwc_kw_event kdone = { VWC_KW_COMPLETE, -1, 500, 0, 0,
					      0, 0xa000 };

		clear_marks(&w);
		for (i = 0; i < w.nr_ctrl; i++)
			w.ctrl[i].nr_pending = 0;
		ok(vwc_model_note_kernel(&w, &ksf, 15) == 3 && c0->wb_now &&
		   c1->wb_now && c2->wb_now && c0->nr_pending == 1 &&
		   c1->nr_pending == 1 && c2->wce,
		   "kprobes, queue not learned: every controller's (write back, pending)");
		vwc_model_note_kernel(&w, &kdone, 15.1);
		ok(!c0->nr_pending && !c1->nr_pending && !c2->nr_pending,
		   "... and its completion completes it on every one");
		clear_marks(&w);
		vwc_model_learn_queue(&w, c0, 0xa000);
		vwc_model_learn_queue(&w, c1, 0xb000);
		ok(vwc_model_note_kernel(&w, &ksf, 15.2) == 1 && c0->wb_now &&
		   !c1->wb_now && !c2->wb_now && c0->nr_pending == 1 &&
		   !c1->nr_pending && !c1->wce,
		   "kprobes, queue learned: that controller only");
		vwc_model_note_kernel(&w, &kdone, 15.3);
		ok(!c0->nr_pending && c0->wce, "kprobes: completion by thread and queue");
		vwc_model_learn_queue(&w, c1, 0xa000);
		ok(c1->admin_q == 0xa000 && c0->admin_q == 0,
		   "a queue learned again belongs to its last learner");
		clear_marks(&w);
		ksf.q = 0;
		ksf.cid = 0;
		ksf.cdw11 = 0;
		ok(vwc_model_note_kernel(&w, &ksf, 16) == 0 && c0->nr_pending == 1 &&
		   c2->nr_pending == 1 && c0->wce && !c0->wb_now,
		   "io_uring WCE=0: pending on every controller, no write back");
		kdone.cid = 0;
		kdone.q = 0;
		clear_marks(&w);
		vwc_model_note_kernel(&w, &kdone, 16.1);
		ok(c0->nr_pending == 1 && c0->wce,
		   "an io_uring completion: WCE read, still pending (whose completion?)");
		vwc_model_confirm(c0, VWC_TRI_YES);
		ok(c0->nr_pending == 1, "WCE still reads 1: the WCE=0 is still pending");
		vwc_model_confirm(c0, VWC_TRI_UNKNOWN);
		ok(c0->nr_pending == 1, "WCE not read: still pending");
		vwc_model_confirm(c0, VWC_TRI_NO);
		ok(c0->nr_pending == 0, "WCE reads 0: it took effect, no longer pending");
		c1->nr_pending = 0;	/* a tracepoint-style entry is never confirmed */
		sf.fid = 0x06;
		sf.cid = 9;
		sf.cdw11 = 1;
		vwc_model_note_kernel(&w, &sf, 16.2);
		c0->wb_now = false;
		ok(c0->nr_pending == 1, "a cid's entry on c0");
		vwc_model_confirm(c0, VWC_TRI_YES);
		ok(c0->nr_pending == 1, "... is not ended by a read, only by its completion");
		c0->nr_pending = 0;
		vwc_model_timers(&w, 18.5);
		ok(!c2->nr_pending && c2->wce,
		   "not confirmed: the pending timeout reads WCE");
		/* io_uring with the queue the kernel's BTF names */
		clear_marks(&w);
		for (i = 0; i < w.nr_ctrl; i++) {
			w.ctrl[i].nr_pending = 0;
			w.ctrl[i].wb_now = false;
		}
		ksf.q = 0xa000;
		ksf.cid = 0;
		ksf.cdw11 = 1;
		ok(vwc_model_note_kernel(&w, &ksf, 19) == 1 && c1->wb_now &&
		   !c0->wb_now && !c2->wb_now && c1->nr_pending == 1 &&
		   !c0->nr_pending && !c2->nr_pending && !c0->wce && !c2->wce,
		   "io_uring naming its queue: that controller only (write back, pending); no other is touched");
		kdone.q = 0xa000;
		vwc_model_note_kernel(&w, &kdone, 19.1);
		ok(c1->nr_pending == 1 && c1->wce && !c0->wce && !c2->wce,
		   "... its completion: WCE read on that controller only");
		vwc_model_confirm(c1, VWC_TRI_YES);
		ok(!c1->nr_pending, "... WCE reads 1: it took effect");
		ksf.q = 0xc000;	/* a queue not learned yet: every one's */
		clear_marks(&w);
		ok(vwc_model_note_kernel(&w, &ksf, 19.2) == 3 && c0->wb_now &&
		   c2->wb_now && c0->nr_pending == 1,
		   "io_uring naming a queue not learned yet: every controller's");
		for (i = 0; i < w.nr_ctrl; i++) {
			w.ctrl[i].wb_now = false;
			w.ctrl[i].admin_q = 0;
			w.ctrl[i].nr_pending = 0;
		}
		clear_marks(&w);
	}

	/* more Set Features in flight than the model keeps */
	{
		struct vwc_kw_event many = { VWC_KW_SET_FEATURES, 0, 100, 0x06,
					     0, 0, 0 };

		c0->nr_pending = 0;
		for (i = 0; i < VWC_MODEL_PENDING_N + 3; i++) {
			many.cid = 100 + i;
			vwc_model_note_kernel(&w, &many, 17);
		}
		ok(c0->nr_pending == VWC_MODEL_PENDING_N,
		   "more in flight than kept: the oldest go, the controller stays pending");
		many.kind = VWC_KW_COMPLETE;
		many.cid = 100;		/* one that went: a late completion */
		c0->wce = false;
		vwc_model_note_kernel(&w, &many, 17.1);
		ok(c0->wce && c0->nr_pending == VWC_MODEL_PENDING_N,
		   "... its completion still reads WCE");
		c0->nr_pending = 0;
		clear_marks(&w);
	}

	/* the fast path's learning windows */
	{
		struct vwc_fast_win win[3] = {
			{ 0, 100, 200 }, { 1, 300, 400 }, { 2, 500, 0 },
		};

		ok(vwc_fast_window_of(win, 3, 150) == 0 &&
		   vwc_fast_window_of(win, 3, 300) == 1 &&
		   vwc_fast_window_of(win, 3, 250) == -1 &&
		   vwc_fast_window_of(win, 3, 9999) == 2 &&
		   vwc_fast_window_of(win, 2, 9999) == -1,
		   "learning windows: a Get Features is the controller read then; between windows, none");
	}

	/* settle after a reset: re-checks, SMART events, a rescan */
	c2->own_bits = false;
	ok(vwc_model_note_ctrl(&w, "nvme2", true, true, 20) && c2->full &&
	   c2->own_bits && c2->arm_smart && w.recheck,
	   "reset: full look with the namespaces' own bits, SMART armed, the topology re-checked");
	c2->own_bits = false;
	ok(!vwc_model_note_ctrl(&w, "nvme9", false, false, 20),
	   "unknown controller: caller rescans");
	clear_marks(&w);
	due = vwc_model_timers(&w, 20.1);
	ok(due > 20.29 && due < 20.31 && !c2->full, "settle: first re-check at 0.3 s");
	vwc_model_timers(&w, 20.4);
	ok(c2->full && c2->arm_smart && (w.rescan || w.rescan_at),
	   "settle: re-check fired with SMART and a rescan");
	ok(!c2->own_bits,
	   "settle: the re-check keeps the namespaces' own bits as read at the reset's look");

	/* 3: a controller that does not open yet */
	clear_marks(&w);
	open_fails = 1;
	vwc_model_note_gone(&w, "nvme2");
	idents[2] = 300;
	fake_now = 30;
	vwc_model_sync(&w, 30);
	c0 = vwc_model_find_ctrl(&w, "nvme0");
	c1 = vwc_model_find_ctrl(&w, "nvme1");
	c2 = vwc_model_find_ctrl(&w, "nvme2");
	ok(c2 && c2->fd < 0 && !vwc_model_open_due(c2, 30.01) &&
	   vwc_model_open_due(c2, 30.06), "open failed: retried after 50 ms");
	vwc_model_open_result(c2, -ENXIO, 30.06);
	ok(!vwc_model_open_due(c2, 30.1) && vwc_model_open_due(c2, 30.17),
	   "open failed again: the delay doubles");
	due = vwc_model_timers(&w, 30.1);
	ok(due > 30.15 && due < 30.17, "timers: the retry is due");
	clear_marks(&w);
	fd = next_fd++;
	c2->own_bits = false;
	vwc_model_open_result(c2, fd, 30.2);
	ok(c2->fd == fd && c2->full && c2->own_bits && c2->arm_smart &&
	   !vwc_model_open_due(c2, 99),
	   "opened: full probe with the namespaces' own bits, SMART armed, held");
	ok(!vwc_model_release_due(c2, 99),
	   "held while its full probe and SMART arming are to come");
	c2->full = c2->arm_smart = false;
	c2->used_at = 30.3;
	ok(!vwc_model_release_due(c2, 31.2) && vwc_model_release_due(c2, 31.31),
	   "idle: let go 1 s after it served the last probe (rmmod nvme)");
	c0->used_at = c1->used_at = 0;
	for (i = 0; i < w.nr_ctrl; i++)	/* no settle re-check in the way */
		memset(w.ctrl[i].settle, 0, sizeof(w.ctrl[i].settle));
	due = vwc_model_timers(&w, 30.4);
	ok(due > 31.29 && due < 31.31, "timers: the release is due");
	c2->wce = true;
	ok(!vwc_model_release_due(c2, 40), "a WCE read to come: kept");
	c2->wce = false;
	c2->nr_pending = 1;
	ok(!vwc_model_release_due(c2, 40), "a Set Features pending: kept");
	c2->nr_pending = 0;
	vwc_model_released(c2);
	ok(c2->fd < 0 && c2->released && !vwc_model_open_due(c2, 99) &&
	   !vwc_model_release_due(c2, 99),
	   "let go: no open retry (the next probe opens it)");
	fd = next_fd++;
	vwc_model_open_result(c2, fd, 40);
	ok(c2->fd == fd && !c2->released, "opened again");
	open_fails = 0;

	/* safety net and overflow */
	clear_marks(&w);
	know(c0, VWC_TRI_NO, VWC_TRI_UNKNOWN);
	know(c1, VWC_TRI_YES, VWC_TRI_NO);
	c2->known = false;
	vwc_model_safety_net(&w);
	ok(!c0->wce && c1->wce && c2->wce && w.attach,
	   "safety net: WCE where a cache is reported or unknown, attach");
	clear_marks(&w);
	vwc_model_note_all(&w);
	ok(c0->full && c1->full && c2->full && w.rescan,
	   "events lost: everything again");

	/* the namespace's own bit: carried while the disk is the same */
	{
		struct vwc_wns *n0 = vwc_model_find_ns(&w, "nvme0n1");
		struct vwc_wns *n2 = vwc_model_find_ns(&w, "nvme2n1");

		topo(&t, false);	/* the paths as they stay below */
		vwc_model_sync(&w, 40.5);
		n0->no_vwc = VWC_TRI_YES;
		n2->no_vwc = VWC_TRI_NO;
		topo(&t, false);	/* a new scan: every bit unknown */
		nss[0].no_vwc = nss[1].no_vwc = VWC_TRI_UNKNOWN;
		clear_marks(&w);
		vwc_model_sync(&w, 41);
		ok(nss[0].no_vwc == VWC_TRI_YES && nss[1].no_vwc == VWC_TRI_NO,
		   "bit: carried to a new scan of the same disks");
		ns_idents[0] = 501;	/* nvme0n1 is another disk now */
		topo(&t, false);
		nss[0].no_vwc = nss[1].no_vwc = VWC_TRI_UNKNOWN;
		clear_marks(&w);
		i = ns_added;
		vwc_model_sync(&w, 42);
		ok(nss[0].no_vwc == VWC_TRI_UNKNOWN && n0->no_vwc == VWC_TRI_UNKNOWN &&
		   n0->ident == 501 && c0->wce && nss[1].no_vwc == VWC_TRI_NO,
		   "bit: another disk under the name: not carried, its controller reads again");
		ok(ns_added == i + 1,
		   "another disk under the name: its device nodes watched again");
		n0->no_vwc = VWC_TRI_YES;
		nss[0].no_vwc = VWC_TRI_YES;
		ns_idents[0] = 0;	/* identity unknown: never carried */
		topo(&t, false);
		nss[0].no_vwc = VWC_TRI_UNKNOWN;
		vwc_model_sync(&w, 43);
		ok(nss[0].no_vwc == VWC_TRI_UNKNOWN,
		   "bit: a disk of unknown identity: not carried");
		ns_idents[0] = 502;
		topo(&t, false);
		vwc_model_sync(&w, 44);
		n0->no_vwc = nss[0].no_vwc = VWC_TRI_YES;
		n2->no_vwc = nss[1].no_vwc = VWC_TRI_NO;
		clear_marks(&w);
		vwc_model_safety_net(&w);
		ok(n0->no_vwc == VWC_TRI_UNKNOWN && nss[0].no_vwc == VWC_TRI_UNKNOWN &&
		   c0->wce && n2->no_vwc == VWC_TRI_NO,
		   "bit: the safety net reads a \"no cache\" bit again (the target may have given it one)");
	}

	/* a path joins: the bit is read again (another target may answer) */
	{
		struct vwc_wns *n0 = vwc_model_find_ns(&w, "nvme0n1");

		n0->no_vwc = VWC_TRI_YES;
		topo(&t, true);
		nss[0].no_vwc = VWC_TRI_UNKNOWN;
		vwc_model_sync(&w, 45);
		ok(n0->no_vwc == VWC_TRI_UNKNOWN && nss[0].no_vwc == VWC_TRI_UNKNOWN,
		   "bit: a path joined: not carried, read again");
		topo(&t, false);
		vwc_model_sync(&w, 46);
	}

	/* namespace adds gathered into one scan */
	clear_marks(&w);
	w.rescan_at = w.rescan_first = w.rescan_cost = 0;
	for (i = 0; i < w.nr_ctrl; i++) {
		memset(w.ctrl[i].settle, 0, sizeof(w.ctrl[i].settle));
		w.ctrl[i].used_at = 0;
		w.ctrl[i].nr_pending = 0;
	}
	w.lock_retry = 0;
	vwc_model_note_ns_added(&w, 50.0);
	due = vwc_model_timers(&w, 50.0);
	ok(!w.rescan && due > 50.0 + VWC_MODEL_ADD_QUIET_S - 0.01 &&
	   due < 50.0 + VWC_MODEL_ADD_QUIET_S + 0.01,
	   "adds: no scan at the first, one due after the quiet time");
	vwc_model_note_ns_added(&w, 50.08);
	vwc_model_timers(&w, 50.15);
	ok(!w.rescan, "adds: each add pushes it back while they come");
	for (i = 0; i < 12; i++)
		vwc_model_note_ns_added(&w, 50.16 + i * 0.08);
	due = vwc_model_timers(&w, 50.99);
	ok(!w.rescan && due > 50.99 && due < 51.01,
	   "adds: a steady stream is scanned at the latest the longest wait after the first");
	vwc_model_timers(&w, 51.0);
	ok(w.rescan, "adds: the scan is due");
	vwc_model_rescanned(&w, 0.5);
	ok(!w.rescan && !w.rescan_at && !w.rescan_first,
	   "adds: the scan took them all");
	vwc_model_note_ns_added(&w, 60.0);
	for (i = 1; i < 25; i++)
		vwc_model_note_ns_added(&w, 60.0 + i * 0.08);
	due = vwc_model_timers(&w, 61.95);
	ok(!w.rescan && due > 61.99 && due < 62.01,
	   "adds: a scan of 0.5 s waits up to four times that (a stream costs at most a fifth in scans)");
	vwc_model_rescanned(&w, 0.5);
	vwc_model_note_ns_added(&w, 63.0);
	due = vwc_model_timers(&w, 63.2);
	ok(!w.rescan && due > 63.49 && due < 63.51,
	   "adds: after a scan of 0.5 s the quiet time is 0.5 s (adds handed over that far apart are gathered)");
	vwc_model_rescanned(&w, 0.05);
	vwc_model_note_ns_added(&w, 64.0);
	vwc_model_note_ns_added(&w, 64.2);
	due = vwc_model_timers(&w, 64.45);
	ok(!w.rescan && due > 64.49 && due < 64.51,
	   "adds: 0.2 s apart (udevd's pace under emulation) gathered into one scan, after a scan of 0.05 s");
	ok(w.rescans >= 3 && w.rescan_total >= 1.0,
	   "adds: the scans and their cost are counted for the log");

	/* close events: at once without the kernel-side detection, gathered
	 * with it */
	vwc_model_rescanned(&w, 0);
	clear_marks(&w);
	vwc_model_note_close(&w, "nvme0n1", false, 70.0);
	ok(c0->wce && !c0->close_at, "close, no kernel-side detection: WCE read at once");
	clear_marks(&w);
	vwc_model_note_close(&w, "nvme0n1", true, 70.0);
	vwc_model_note_close(&w, "nvme0n1", true, 70.1);
	vwc_model_note_close(&w, "nvme2", true, 70.1);
	due = vwc_model_timers(&w, 70.2);
	ok(!c0->wce && !c2->wce && due > 70.99 && due < 71.01,
	   "closes with the kernel-side detection: gathered, one WCE read due VWC_MODEL_CLOSE_S after the first");
	vwc_model_timers(&w, 71.0);
	ok(c0->close_check && !c0->wce && !c0->close_at && !c2->close_check &&
	   vwc_model_busy(&w),
	   "closes: the controller's close check once, when due (WCE alone, not an evaluation yet)");
	vwc_model_timers(&w, 71.1);
	ok(c2->close_check && !c2->close_at,
	   "closes: a controller's own node the same way");

	/* the close check's read: an evaluation only if WCE is not as known */
	know(c0, VWC_TRI_YES, VWC_TRI_NO);
	ok(vwc_model_close_read(&w, c0, VWC_TRI_NO) && c0->wce,
	   "close check: its last evaluation not clean (a namespace it could not set): evaluated");
	c0->wce = false;
	c0->close_check = true;
	ok(!vwc_model_close_reads(&w, c0) && c0->wce && !c0->close_check,
	   "close check: not clean: evaluated at once, no WCE read sent for nothing");
	c0->wce = false;
	c0->clean = true;
	c0->close_check = true;
	ok(vwc_model_close_reads(&w, c0) && !c0->wce,
	   "close check: clean, facts known, a cache: WCE read first");
	know(c0, VWC_TRI_NO, VWC_TRI_UNKNOWN);
	ok(!vwc_model_close_reads(&w, c0) && c0->wce,
	   "close check: a controller without a cache: no Get Features sent, evaluated as before");
	c0->wce = false;
	know(c0, VWC_TRI_YES, VWC_TRI_NO);
	i = (int)w.closes_confirmed;
	ok(!vwc_model_close_read(&w, c0, VWC_TRI_NO) && !c0->wce &&
	   !c0->close_check && (int)w.closes_confirmed == i + 1,
	   "close check: WCE as known, nothing in flight: no evaluation");
	ok(vwc_model_close_read(&w, c0, VWC_TRI_YES) && c0->wce,
	   "close check: WCE changed (a Set Features the detection missed): evaluated");
	c0->wce = false;
	ok(vwc_model_close_read(&w, c0, VWC_TRI_UNKNOWN) && c0->wce,
	   "close check: WCE could not be read: evaluated (unknown is write back)");
	c0->wce = false;
	vwc_model_note_kernel(&w, &sf, 72.0);
	c0->wce = false;
	ok(c0->nr_pending && vwc_model_close_read(&w, c0, VWC_TRI_NO) && c0->wce,
	   "close check: a Set Features 06h in flight: evaluated though WCE reads as known");
	vwc_model_note_kernel(&w, &done, 72.1);
	c0->wce = false;
	c0->facts.backup_failed = VWC_TRI_YES;
	ok(vwc_model_close_read(&w, c0, VWC_TRI_NO) && c0->wce,
	   "close check: a backup failure reported: evaluated (SMART read again)");
	c0->wce = false;
	c2->known = false;
	ok(vwc_model_close_read(&w, c2, VWC_TRI_NO) && c2->wce,
	   "close check: facts not known yet: evaluated");

	/* no write through on the controller's cache: nothing to read */
	{
		struct vwc_wns *n0 = vwc_model_find_ns(&w, "nvme0n1");
		struct vwc_topo *saved = w.topo;
		int pending;

		know(c0, VWC_TRI_YES, VWC_TRI_YES);
		c0->full = c0->wce = false;
		c0->clean = true;
		pending = c0->nr_pending;	/* what follows had it */
		c0->nr_pending = 0;
		n0->expected = VWC_MODE_WRITE_BACK;
		n0->own_bit = false;
		c0->close_check = true;
		i = (int)w.closes_moot;
		ok(!vwc_model_close_moot(&w, c0, true) && c0->close_check &&
		   (int)w.closes_moot == i,
		   "close check: every namespace in write back, but a run of ours wrote write through this boot (its mark): read as before");
		ok(vwc_model_close_moot(&w, c0, false) && !c0->close_check && !c0->wce &&
		   (int)w.closes_moot == i + 1,
		   "close check: every namespace in write back, no mark: nothing read, no evaluation (counted)");
		n0->expected = VWC_MODE_WRITE_THROUGH;
		n0->own_bit = true;
		c0->close_check = true;
		ok(vwc_model_close_moot(&w, c0, false) && !c0->close_check,
		   "close check: write through by the namespace's own bit (no cache of its own): nothing read");
		n0->own_bit = false;
		c0->close_check = true;
		ok(!vwc_model_close_moot(&w, c0, false) && c0->close_check &&
		   vwc_model_close_reads(&w, c0) && !c0->wce,
		   "close check: write through on the controllers' word: WCE read (a missed Set Features may have turned the cache on)");
		n0->expected = VWC_MODE_NONE;
		ok(!vwc_model_close_moot(&w, c0, false) && c0->close_check,
		   "close check: a namespace in no mode set or found yet: WCE read");
		n0->expected = VWC_MODE_WRITE_BACK;
		c0->clean = false;
		ok(!vwc_model_close_moot(&w, c0, false) && c0->close_check,
		   "close check: the last evaluation not clean: as before (evaluated)");
		c0->clean = true;
		know(c0, VWC_TRI_YES, VWC_TRI_UNKNOWN);
		ok(!vwc_model_close_moot(&w, c0, false) && c0->close_check,
		   "close check: WCE not known: as before (evaluated)");
		know(c0, VWC_TRI_YES, VWC_TRI_YES);
		w.topo = NULL;
		ok(!vwc_model_close_moot(&w, c0, false) && c0->close_check,
		   "close check: no topology to tell what the controller reaches: WCE read");
		w.topo = saved;
		ok(vwc_model_close_moot(&w, c0, false),
		   "close check: the same, the topology back: nothing read");
		c0->nr_pending = 1;
		c0->close_check = true;
		ok(!vwc_model_close_moot(&w, c0, false) && c0->close_check,
		   "close check: a Set Features 06h in flight: as before (evaluated)");
		c0->nr_pending = pending;
		c0->close_check = false;
		n0->expected = VWC_MODE_NONE;
	}

	/*
	 * controllers and paths: a rescan at once while a namespace's write
	 * through rests on a cache being off, else gathered with the adds
	 */
	vwc_model_rescanned(&w, 0);
	clear_marks(&w);
	for (i = 0; i < w.nr_ctrl; i++)
		know(&w.ctrl[i], VWC_TRI_YES, VWC_TRI_YES);
	for (i = 0; i < w.nr_ns; i++) {
		w.ns[i].expected = VWC_MODE_WRITE_BACK;
		w.ns[i].no_vwc = VWC_TRI_NO;
		w.ns[i].own_bit = false;
	}
	ok(!vwc_model_wt_at_stake(&w),
	   "at stake: nothing, every cache on and every namespace in write back");
	w.recheck = true;
	vwc_model_timers(&w, 80);
	ok(!w.recheck && !w.rescan &&
	   w.rescan_at > 79.99 + VWC_MODEL_ADD_QUIET_S &&
	   w.rescan_at < 80.01 + VWC_MODEL_ADD_QUIET_S,
	   "a re-check with nothing at stake: gathered");
	vwc_model_rescanned(&w, 0);
	w.ns[0].expected = VWC_MODE_WRITE_THROUGH;
	w.ns[0].no_vwc = VWC_TRI_YES;
	w.ns[0].own_bit = true;
	ok(!vwc_model_wt_at_stake(&w),
	   "at stake: not a write through by the namespace's own bit");
	w.ns[0].no_vwc = VWC_TRI_UNKNOWN;
	ok(!vwc_model_wt_at_stake(&w),
	   "at stake: nor while its bit is read again (a path joined)");
	w.ns[0].own_bit = false;
	ok(vwc_model_wt_at_stake(&w),
	   "at stake: a write through that a controller's cache could end");
	w.recheck = true;
	vwc_model_timers(&w, 81);
	ok(!w.recheck && w.rescan && !w.rescan_at,
	   "a re-check with a write through at stake: a rescan at once");
	w.rescan = false;
	w.ns[0].expected = VWC_MODE_WRITE_BACK;
	know(&w.ctrl[1], VWC_TRI_YES, VWC_TRI_NO);
	ok(vwc_model_wt_at_stake(&w),
	   "at stake: a controller known with its cache off (its namespaces on their way to write through)");
	know(&w.ctrl[1], VWC_TRI_NO, VWC_TRI_UNKNOWN);
	ok(vwc_model_wt_at_stake(&w), "at stake: a controller without a cache");
	know(&w.ctrl[1], VWC_TRI_YES, VWC_TRI_UNKNOWN);
	ok(!vwc_model_wt_at_stake(&w),
	   "at stake: not a cache in an unknown state (write back)");

	vwc_model_note_ns(&w, "nvme0n1");
	vwc_model_free(&w);
	ok(w.nr_ctrl == 0 && gone == 6 + 0 && ns_gone == 2,
	   "free: every controller and namespace let go");
	test_find_ns();
	test_find_ctrl();
	return tap_done();
}
