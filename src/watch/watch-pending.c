// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's model (watch-model.h), its part for the kernel-side
 * detection's events: each Set Features 06h submitted and not completed,
 * by cid (tracepoints), thread (kprobes) or io_uring, given up on after
 * VWC_MODEL_PENDING_S and still listened to, and the admin queues the
 * kprobes name controllers by. No I/O here.
 */
#include <stdint.h>

#include "kwatch.h"
#include "log.h"
#include "watch-model.h"
#include "watch-model-int.h"

/* Pending entry @i given up on: its completion is still listened to. */
static void expire_one(struct vwc_wctrl *c, int i)
{
	c->expired[c->expired_next] = (int64_t)c->pending[i].cid + 1;
	c->expired_next = (c->expired_next + 1) % VWC_MODEL_EXPIRED_N;
	c->pending[i] = c->pending[--c->nr_pending];
}

void vwc_model_expire(struct vwc_wctrl *c)
{
	while (c->nr_pending)
		expire_one(c, c->nr_pending - 1);
}

/* One controller's part of a kernel event. Return: write back it now. */
static bool note_one(struct vwc_wctrl *c, const struct vwc_kw_event *ev,
		     double now)
{
	bool uring = ev->ctrl < 0 && !ev->cid;
	struct vwc_wpending *p;
	int i;

	if (ev->kind == VWC_KW_SET_FEATURES) {
		if (ev->fid != 0x06)
			return false;
		if (!uring)
			vwc_info("%s: Set Features 06h WCE=%u submitted (%s %u)",
				 c->name, ev->cdw11 & 1,
				 ev->ctrl < 0 ? "thread" : "cid", ev->cid);
		else
			vwc_info("%s: Set Features 06h WCE=%u submitted through io_uring",
				 c->name, ev->cdw11 & 1);
		/* full: the oldest entry goes, its late completion still
		 * counts; any entry left keeps the controller "unknown" */
		if (c->nr_pending == VWC_MODEL_PENDING_N)
			expire_one(c, 0);
		p = &c->pending[c->nr_pending++];
		p->cid = ev->cid;
		p->wce = ev->cdw11 & 1;
		p->uring = uring;
		c->pending_since = now;
		c->wce = true;
		if (!(ev->cdw11 & 1))
			return false;
		c->wb_since = (double)ev->time / 1e9;
		return true;
	}
	for (i = 0; i < c->nr_pending; i++) {
		if (c->pending[i].uring != uring ||
		    c->pending[i].cid != ev->cid)
			continue;
		c->wce = true;
		if (uring) {	/* it ends when WCE reads its value */
			vwc_info("%s: an io_uring command completed: reading WCE",
				 c->name);
			return false;
		}
		c->pending[i] = c->pending[--c->nr_pending];
		vwc_info("%s: Set Features 06h completed (%s %u)", c->name,
			 ev->ctrl < 0 ? "thread" : "cid", ev->cid);
		return false;
	}
	/* late: the pending timeout had given up on it; once per cid */
	for (i = 0; i < VWC_MODEL_EXPIRED_N; i++) {
		if (c->expired[i] != (int64_t)ev->cid + 1)
			continue;
		c->expired[i] = 0;
		c->wce = true;
		vwc_info("%s: late completion of a Set Features 06h (%s %u): reading WCE",
			 c->name, ev->ctrl < 0 ? "thread" : "cid", ev->cid);
		break;
	}
	return false;
}

void vwc_model_confirm(struct vwc_wctrl *c, enum vwc_tri wce)
{
	int i;

	if (wce == VWC_TRI_UNKNOWN)
		return;
	for (i = 0; i < c->nr_pending; i++) {
		if (!c->pending[i].uring ||
		    c->pending[i].wce != (wce == VWC_TRI_YES))
			continue;
		vwc_info("%s: WCE reads %u: the io_uring Set Features 06h took effect",
			 c->name, c->pending[i].wce);
		c->pending[i--] = c->pending[--c->nr_pending];
	}
}

static struct vwc_wctrl *find_queue(struct vwc_model *w, uint64_t q)
{
	int i;

	for (i = 0; q && i < w->nr_ctrl; i++)
		if (w->ctrl[i].admin_q == q)
			return &w->ctrl[i];
	return NULL;
}

/*
 * A cache turned on while adds wait for their gathered scan: scanned now,
 * so that a namespace not in the topology yet (the udev rule's sync may
 * have put it in write through, and the fast path's table does not have
 * it) is evaluated with the rest, not up to the gathering's longest wait
 * later. Return: @n.
 */
static int wb_scan(struct vwc_model *w, int n)
{
	if (n && w->rescan_at)
		w->rescan = true;
	return n;
}

int vwc_model_note_kernel(struct vwc_model *w, const struct vwc_kw_event *ev,
			  double now)
{
	struct vwc_wctrl *c;
	int i, n = 0;

	w->kernel_events++;
	if (ev->kind == VWC_KW_LOST) {
		vwc_warn("kernel events lost: reading every cache state again");
		for (i = 0; i < w->nr_ctrl; i++)
			w->ctrl[i].wce = true;
		return 0;
	}
	if (ev->ctrl >= 0) {		/* tracepoints: the instance */
		c = vwc_model_find_instance(w, ev->ctrl);
		if (!c)
			return 0;
	} else {			/* kprobes: the admin queue */
		c = find_queue(w, ev->q);
	}
	if (c) {
		c->wb_now = note_one(c, ev, now);
		return wb_scan(w, c->wb_now);
	}
	/*
	 * A controller not known by its queue (not learned yet, or io_uring
	 * on a kernel without BTF): it may be any of them. Each takes the
	 * event as its own: WCE=1 puts every one in write back now, and each
	 * reads WCE again.
	 */
	if (ev->kind == VWC_KW_SET_FEATURES && ev->fid == 0x06)
		vwc_info("Set Features 06h WCE=%u on a controller not known by its queue (%s): taken as every controller's",
			 ev->cdw11 & 1, ev->cid || ev->q ? "not learned yet" :
			 "io_uring, no queue named");
	for (i = 0; i < w->nr_ctrl; i++) {
		c = &w->ctrl[i];
		c->wb_now = note_one(c, ev, now);
		n += c->wb_now;
	}
	return wb_scan(w, n);
}

void vwc_model_learn_queue(struct vwc_model *w, struct vwc_wctrl *c,
			   uint64_t q)
{
	int i;

	/* a queue freed and allocated again belongs to the last learner */
	for (i = 0; i < w->nr_ctrl; i++)
		if (&w->ctrl[i] != c && w->ctrl[i].admin_q == q)
			w->ctrl[i].admin_q = 0;
	if (c->admin_q != q)
		vwc_dbg("%s: admin queue learned", c->name);
	c->admin_q = q;
}
