// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's model (watch-model.h): controllers, namespaces, what is pending.
 * No I/O here; unit tests drive it with a hand-made topology.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwatch.h"
#include "log.h"
#include "watch-model.h"
#include "watch-model-int.h"

static const double settle_delay[VWC_MODEL_SETTLE_N] = { 0.3, 1.5, 5.0 };

/* instance numbers vwc_model_find_ctrl() remembers (ida-allocated: small) */
#define VWC_MODEL_INST_MAX	65536

/* Grow *arr (of *nr elements of size sz) by one zeroed element. */
static void *grow(void *arr_p, int *nr, size_t sz)
{
	void **arr = arr_p;
	char *p = realloc(*arr, (*nr + 1) * sz);

	if (!p)
		return NULL;
	*arr = p;
	memset(p + *nr * sz, 0, sz);
	return p + (*nr)++ * sz;
}

void vwc_model_init(struct vwc_model *w, struct vwc_topo *topo,
		    const struct vwc_model_ops *ops, void *arg)
{
	memset(w, 0, sizeof(*w));
	w->topo = topo;
	w->ops = ops;
	w->arg = arg;
}

/* N of "nvmeN", -1 for any other name or VWC_MODEL_INST_MAX and over */
static int inst_of(const char *name)
{
	int n = 0;

	if (strncmp(name, "nvme", 4) || !isdigit((unsigned char)name[4]))
		return -1;
	for (name += 4; isdigit((unsigned char)*name); name++) {
		n = n * 10 + (*name - '0');
		if (n >= VWC_MODEL_INST_MAX)
			return -1;
	}
	return *name ? -1 : n;
}

/* remember where @name's entry is (no memory: not remembered) */
static void note_at(struct vwc_model *w, int inst, int i)
{
	if (inst >= w->nr_at_inst) {
		int nr = inst < 64 ? 128 : 2 * inst, j;
		int *arr = realloc(w->at_inst, nr * sizeof(*arr));

		if (!arr)
			return;
		for (j = w->nr_at_inst; j < nr; j++)
			arr[j] = -1;
		w->at_inst = arr;
		w->nr_at_inst = nr;
	}
	w->at_inst[inst] = i;
}

struct vwc_wctrl *vwc_model_find_ctrl(struct vwc_model *w, const char *name)
{
	int inst = inst_of(name), i;

	if (inst >= 0 && inst < w->nr_at_inst) {
		i = w->at_inst[inst];
		if (i >= 0 && i < w->nr_ctrl && !strcmp(w->ctrl[i].name, name))
			return &w->ctrl[i];
	}
	for (i = 0; i < w->nr_ctrl; i++)
		if (!strcmp(w->ctrl[i].name, name)) {
			if (inst >= 0)
				note_at(w, inst, i);
			return &w->ctrl[i];
		}
	return NULL;
}

struct vwc_wctrl *vwc_model_find_instance(struct vwc_model *w, int instance)
{
	bool known = instance >= 0 && instance < VWC_MODEL_INST_MAX;
	int i;

	/* the same place vwc_model_find_ctrl() remembers, checked */
	if (known && instance < w->nr_at_inst) {
		i = w->at_inst[instance];
		if (i >= 0 && i < w->nr_ctrl && w->ctrl[i].instance == instance)
			return &w->ctrl[i];
	}
	for (i = 0; i < w->nr_ctrl; i++)
		if (w->ctrl[i].instance == instance) {
			if (known)
				note_at(w, instance, i);
			return &w->ctrl[i];
		}
	return NULL;
}

static int cmp_wns(const void *a, const void *b)
{
	return strcmp(((const struct vwc_wns *)a)->name,
		      ((const struct vwc_wns *)b)->name);
}

static int cmp_wns_name(const void *key, const void *e)
{
	return strcmp(key, ((const struct vwc_wns *)e)->name);
}

/*
 * @name among the first @nr of the model's namespaces: those the last
 * sync sorted (the ones this sync adds go after them, unsorted until its
 * end). Bisection: a thousand namespaces looked up one by one in a walk
 * of all of them was half a million name comparisons a scan.
 */
static struct vwc_wns *find_ns_in(struct vwc_model *w, int nr,
				  const char *name)
{
	if (!nr)
		return NULL;
	return bsearch(name, w->ns, nr, sizeof(*w->ns), cmp_wns_name);
}

/* in name order (vwc_model_sync() sorts them): at array scale an
 * evaluation looks up each of its namespaces among thousands */
struct vwc_wns *vwc_model_find_ns(struct vwc_model *w, const char *name)
{
	return find_ns_in(w, w->nr_ns, name);
}

static void forget_ctrl(struct vwc_model *w, int i)
{
	struct vwc_wctrl *c = &w->ctrl[i];

	if (w->ops && w->ops->ctrl_gone)
		w->ops->ctrl_gone(w, c);
	c->fd = -1;
	/* the last entry moves into the hole, its slot is cleared */
	w->ctrl[i] = w->ctrl[--w->nr_ctrl];
	memset(&w->ctrl[w->nr_ctrl], 0, sizeof(*w->ctrl));
}

void vwc_model_free(struct vwc_model *w)
{
	int i;

	while (w->nr_ctrl)
		forget_ctrl(w, 0);
	for (i = 0; i < w->nr_ns; i++)
		if (w->ops && w->ops->ns_gone)
			w->ops->ns_gone(w, w->ns[i].name);
	free(w->ctrl);
	free(w->ns);
	free(w->at_inst);
	w->ctrl = NULL;
	w->ns = NULL;
	w->at_inst = NULL;
	w->nr_ns = w->nr_at_inst = 0;
}

/* @fn(c, now) for every watched controller reaching namespace @name */
static void each_reacher(struct vwc_model *w, const char *name,
			 void (*fn)(struct vwc_wctrl *c, double now), double now)
{
	const struct vwc_topo *t = w->topo;
	int i = t ? vwc_topo_find_ns(t, name) : -1, j;

	for (j = 0; i >= 0 && j < t->ns[i].nr_ctrl; j++) {
		struct vwc_wctrl *c =
			vwc_model_find_ctrl(w, t->ctrls[t->ns[i].ctrl[j]].name);

		if (c)
			fn(c, now);
	}
}

static void read_wce(struct vwc_wctrl *c, double now)
{
	(void)now;
	c->wce = true;
}

void vwc_model_note_ns(struct vwc_model *w, const char *name)
{
	each_reacher(w, name, read_wce, 0);
}

static void schedule_settle(struct vwc_wctrl *c, double now)
{
	int i;

	for (i = 0; i < VWC_MODEL_SETTLE_N; i++)
		c->settle[i] = now + settle_delay[i];
}

bool vwc_model_note_ctrl(struct vwc_model *w, const char *name, bool full,
			 bool settle, double now)
{
	struct vwc_wctrl *c = vwc_model_find_ctrl(w, name);

	if (!c)
		return false;
	if (full) {
		c->full = true;
		/* what happened may have changed a namespace's answer */
		c->own_bits = true;
	} else {
		c->wce = true;
	}
	if (settle) {
		schedule_settle(c, now);
		c->arm_smart = true;
		/* a reset or reconnect may bring multipath paths: no uevent */
		w->recheck = true;
	}
	return true;
}

void vwc_model_note_gone(struct vwc_model *w, const char *name)
{
	struct vwc_wctrl *c = vwc_model_find_ctrl(w, name);

	/* fewer controllers call for no write back: gathered unless at stake */
	w->recheck = true;
	w->reshape = true;
	if (!c)
		return;
	vwc_info("%s: removed", name);
	forget_ctrl(w, (int)(c - w->ctrl));
}

void vwc_model_note_all(struct vwc_model *w)
{
	int i;

	w->rescan = true;
	w->reshape = true;
	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].full = w->ctrl[i].own_bits = true;
}

static void add_ctrl(struct vwc_model *w, const struct vwc_ctrl *tc,
		     uint64_t ident, double now)
{
	struct vwc_wctrl *c = grow(&w->ctrl, &w->nr_ctrl, sizeof(*c));

	if (!c) {
		vwc_err("%s: out of memory: not watched", tc->name);
		return;
	}
	snprintf(c->name, sizeof(c->name), "%s", tc->name);
	if (sscanf(c->name, "nvme%d", &c->instance) != 1)
		c->instance = -1;
	c->ident = ident;
	c->fd = -1;
	c->full = c->own_bits = true;
	c->open_at = now;	/* the caller's ctrl_added tries at once */
	c->open_delay = VWC_MODEL_OPEN_MIN_S;
	c->seen = true;
	/* its namespaces and paths come with the kernel's scan, later */
	schedule_settle(c, now);
	if (w->ops && w->ops->ctrl_added)
		w->ops->ctrl_added(w, c, tc);
	vwc_info("%s: watching", c->name);
}

/* which controllers reach @ns, as one number (FNV-1a over their names) */
static uint64_t paths_sig(const struct vwc_topo *t, const struct vwc_ns *ns)
{
	uint64_t sig = 0;
	int i;

	for (i = 0; i < ns->nr_ctrl; i++) {
		const char *p = t->ctrls[ns->ctrl[i]].name;
		uint64_t h = 14695981039346656037ULL;

		for (; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		sig += h;	/* order does not matter */
	}
	return sig + (uint64_t)ns->nr_ctrl;
}

void vwc_model_sync(struct vwc_model *w, double now)
{
	struct vwc_topo *t = w->topo;
	int i, nr_sorted = w->nr_ns;

	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].seen = false;
	for (i = 0; i < w->nr_ns; i++)
		w->ns[i].seen = false;

	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *tc = &t->ctrls[i];
		struct vwc_wctrl *c = vwc_model_find_ctrl(w, tc->name);
		uint64_t ident = w->ops && w->ops->ident ? w->ops->ident(tc) : 0;

		if (c && c->ident != ident) {
			vwc_info("%s: a new controller under the same name",
				 c->name);
			forget_ctrl(w, (int)(c - w->ctrl));
			c = NULL;
		}
		if (!c) {
			add_ctrl(w, tc, ident, now);
			c = vwc_model_find_ctrl(w, tc->name);
			if (!c)
				continue;
		}
		c->seen = true;
		tc->held_fd = c->fd;
		if (c->known) {
			tc->probed = true;
			tc->facts = c->facts;
			tc->vwc = c->vwc;
			tc->ver = c->ver;
			tc->ns_indep_refused = c->ns_indep_refused;
			tc->critical_warning = c->critical_warning;
			tc->decision = vwc_policy_decide(&tc->facts);
		}
	}
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_wns *n = find_ns_in(w, nr_sorted, t->ns[i].name);
		uint64_t paths = paths_sig(t, &t->ns[i]), ident;

		ident = w->ops && w->ops->ns_ident ?
			w->ops->ns_ident(&t->ns[i]) : 0;
		if (n && n->ident != ident) {
			/* another disk under the same name: nothing carried */
			n->ident = ident;
			n->no_vwc = VWC_TRI_UNKNOWN;
			n->expected = VWC_MODE_NONE;
			n->own_bit = false;
			/* its device nodes are new too: watched again */
			if (w->ops && w->ops->ns_added)
				w->ops->ns_added(w, n->name);
			vwc_model_note_ns(w, n->name);
		}
		if (n) {
			n->seen = true;
			if (n->ident && n->no_vwc != VWC_TRI_UNKNOWN)
				t->ns[i].no_vwc = n->no_vwc;
			/* a path joined or left: its controllers look again,
			 * and read its own bit again (another target may
			 * answer now) */
			if (n->paths != paths) {
				n->paths = paths;
				n->no_vwc = VWC_TRI_UNKNOWN;
				t->ns[i].no_vwc = VWC_TRI_UNKNOWN;
				vwc_model_note_ns(w, n->name);
			}
			continue;
		}
		n = grow(&w->ns, &w->nr_ns, sizeof(*n));
		if (!n) {
			vwc_err("%s: out of memory: not watched", t->ns[i].name);
			continue;
		}
		n->seen = true;
		n->paths = paths;
		n->ident = ident;
		n->no_vwc = VWC_TRI_UNKNOWN;
		n->expected = VWC_MODE_NONE;
		n->own_bit = false;
		snprintf(n->name, sizeof(n->name), "%s", t->ns[i].name);
		if (w->ops && w->ops->ns_added)
			w->ops->ns_added(w, n->name);
		/* a new namespace: its controllers decide for it */
		vwc_model_note_ns(w, n->name);
	}
	for (i = 0; i < w->nr_ctrl; i++)
		if (!w->ctrl[i].seen) {
			vwc_info("%s: gone", w->ctrl[i].name);
			forget_ctrl(w, i--);
		}
	for (i = 0; i < w->nr_ns; i++) {
		if (w->ns[i].seen)
			continue;
		if (w->ops && w->ops->ns_gone)
			w->ops->ns_gone(w, w->ns[i].name);
		w->ns[i--] = w->ns[--w->nr_ns];
	}
	if (w->nr_ns)
		qsort(w->ns, w->nr_ns, sizeof(*w->ns), cmp_wns);
}

void vwc_model_safety_net(struct vwc_model *w)
{
	int i;

	/* Get Features 06h only to controllers that report a cache */
	for (i = 0; i < w->nr_ctrl; i++) {
		struct vwc_wctrl *c = &w->ctrl[i];

		if (!c->known || c->facts.present == VWC_TRI_YES)
			c->wce = true;
	}
	/*
	 * A namespace's own "no cache" bit is read again: a target may
	 * have given it a cache since (its controllers read it at their
	 * evaluation, as for a new namespace).
	 */
	for (i = 0; i < w->nr_ns; i++) {
		struct vwc_wns *n = &w->ns[i];
		int ti;

		if (n->no_vwc != VWC_TRI_YES)
			continue;
		n->no_vwc = VWC_TRI_UNKNOWN;
		ti = w->topo ? vwc_topo_find_ns(w->topo, n->name) : -1;
		if (ti >= 0)
			w->topo->ns[ti].no_vwc = VWC_TRI_UNKNOWN;
		vwc_model_note_ns(w, n->name);
	}
	w->attach = true;
}

static void close_later(struct vwc_wctrl *c, double now)
{
	if (!c->close_at)
		c->close_at = now + VWC_MODEL_CLOSE_S;
}

void vwc_model_note_close(struct vwc_model *w, const char *name,
			  bool gathered, double now)
{
	struct vwc_wctrl *c = vwc_model_find_ctrl(w, name);

	if (!gathered && c)
		vwc_model_note_ctrl(w, name, false, false, 0);
	else if (c)
		close_later(c, now);
	else
		each_reacher(w, name, gathered ? close_later : read_wce, now);
}

/* a scan once the adds pause, or the first has waited long enough */
static void gather(struct vwc_model *w, double now)
{
	double max = VWC_MODEL_ADD_MAX_S, quiet = VWC_MODEL_ADD_QUIET_S;

	if (4 * w->rescan_cost > max)
		max = 4 * w->rescan_cost;
	if (w->rescan_cost > quiet)
		quiet = w->rescan_cost;
	if (!w->rescan_first)
		w->rescan_first = now;
	w->rescan_at = now + quiet;
	if (w->rescan_at > w->rescan_first + max)
		w->rescan_at = w->rescan_first + max;
}

void vwc_model_note_ns_added(struct vwc_model *w, double now)
{
	w->reshape = true;
	gather(w, now);
}

bool vwc_model_wt_at_stake(const struct vwc_model *w)
{
	int i;

	for (i = 0; i < w->nr_ns; i++)
		if (w->ns[i].expected == VWC_MODE_WRITE_THROUGH &&
		    !w->ns[i].own_bit)
			return true;
	for (i = 0; i < w->nr_ctrl; i++)
		if (w->ctrl[i].known &&
		    vwc_policy_decide(&w->ctrl[i].facts).mode ==
		    VWC_MODE_WRITE_THROUGH)
			return true;
	return false;
}

static void rescan_done(struct vwc_model *w)
{
	w->rescan = false;
	w->reshape = false;
	w->rescan_at = 0;
	w->rescan_first = 0;
}

bool vwc_model_scan_skips(struct vwc_model *w, bool names_changed)
{
	if (w->reshape || names_changed)
		return false;
	rescan_done(w);
	w->rescans_skipped++;
	return true;
}

void vwc_model_rescanned(struct vwc_model *w, double cost)
{
	rescan_done(w);
	w->rescan_cost = cost;
	w->rescans++;
	w->rescan_total += cost;
}

static void due_min(double *due, double t)
{
	if (t && (!*due || t < *due))
		*due = t;
}

/* nothing to read through its descriptor */
static bool idle(const struct vwc_wctrl *c)
{
	return !c->full && !c->wce && !c->close_check && !c->arm_smart &&
	       !c->nr_pending;
}

double vwc_model_timers(struct vwc_model *w, double now)
{
	double due = 0;
	int i, j;

	for (i = 0; i < w->nr_ctrl; i++) {
		struct vwc_wctrl *c = &w->ctrl[i];

		for (j = 0; j < VWC_MODEL_SETTLE_N; j++) {
			if (!c->settle[j])
				continue;
			if (c->settle[j] <= now) {
				c->settle[j] = 0;
				c->full = true;
				/* the kernel rewrites 0Bh when it resets */
				c->arm_smart = true;
				w->recheck = true;
			} else {
				due_min(&due, c->settle[j]);
			}
		}
		if (c->close_at && c->close_at <= now) {
			c->close_at = 0;
			c->close_check = true;
		} else {
			due_min(&due, c->close_at);
		}
		if (c->fd < 0)
			due_min(&due, c->open_at);
		else if (idle(c) && c->used_at)
			due_min(&due, c->used_at + VWC_MODEL_HOLD_S);
		if (!c->nr_pending)
			continue;
		if (c->pending_since + VWC_MODEL_PENDING_S <= now) {
			vwc_info("%s: no completion seen for %d Set Features 06h: reading WCE",
				 c->name, c->nr_pending);
			vwc_model_expire(c);
			c->wce = true;
		} else {
			due_min(&due, c->pending_since + VWC_MODEL_PENDING_S);
		}
	}
	if (w->recheck) {
		w->recheck = false;
		if (vwc_model_wt_at_stake(w))
			w->rescan = true;
		else
			gather(w, now);
	}
	if (w->rescan_at && w->rescan_at <= now)
		w->rescan = true;
	else
		due_min(&due, w->rescan_at);
	due_min(&due, w->lock_retry);
	return due;
}

bool vwc_model_open_due(const struct vwc_wctrl *c, double now)
{
	return c->fd < 0 && c->open_at && c->open_at <= now;
}

bool vwc_model_release_due(const struct vwc_wctrl *c, double now)
{
	return c->fd >= 0 && idle(c) && c->used_at &&
	       c->used_at + VWC_MODEL_HOLD_S <= now;
}

void vwc_model_released(struct vwc_wctrl *c)
{
	c->fd = -1;
	c->released = true;
	c->open_at = 0;
	c->used_at = 0;
}

void vwc_model_open_result(struct vwc_wctrl *c, int fd, double now)
{
	c->released = false;
	if (fd >= 0) {
		c->fd = fd;
		c->used_at = now;
		c->open_at = 0;
		c->open_delay = VWC_MODEL_OPEN_MIN_S;
		c->full = c->own_bits = true;
		c->arm_smart = true;
		return;
	}
	c->fd = -1;
	c->open_at = now + c->open_delay;
	c->open_delay *= 2;
	if (c->open_delay > VWC_MODEL_OPEN_MAX_S)
		c->open_delay = VWC_MODEL_OPEN_MAX_S;
}

enum vwc_model_probe vwc_model_plan(const struct vwc_model *w,
				    const struct vwc_wctrl *c)
{
	(void)w;
	/*
	 * WCE alone only while the rest is known and clean: a backup
	 * failure clears without any event, so while one is reported (or
	 * unknown) every look reads SMART again.
	 */
	if (c->full || !c->known ||
	    c->facts.present == VWC_TRI_UNKNOWN ||
	    c->facts.backup_failed != VWC_TRI_NO)
		return VWC_MODEL_PROBE_FULL;
	return VWC_MODEL_PROBE_WCE;
}

void vwc_model_learn(struct vwc_wctrl *c, const struct vwc_ctrl *tc)
{
	c->known = !tc->err && !tc->errmsg[0];
	c->facts = tc->facts;
	c->vwc = tc->vwc;
	c->ver = tc->ver;
	c->ns_indep_refused = tc->ns_indep_refused;
	c->critical_warning = tc->critical_warning;
}

bool vwc_model_busy(const struct vwc_model *w)
{
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		if (w->ctrl[i].full || w->ctrl[i].wce || w->ctrl[i].close_check)
			return true;
	return false;
}

/* WCE alone would do (a backup failure reported reads SMART), the last
 * evaluation left every namespace set, nothing in flight, a cache there */
static bool close_may_rest(const struct vwc_model *w,
			   const struct vwc_wctrl *c)
{
	return vwc_model_plan(w, c) == VWC_MODEL_PROBE_WCE && c->clean &&
	       !c->nr_pending && c->facts.present == VWC_TRI_YES;
}

/*
 * Does a namespace @c reaches stand in write through on its controllers'
 * word (not its own "no volatile write cache" bit), or in no mode set or
 * found yet: then @c's cache being on is what a Set Features 06h could
 * make unsafe. No topology, or @c not in it: yes.
 */
static bool wt_rests_on(struct vwc_model *w, const struct vwc_wctrl *c)
{
	const struct vwc_topo *t = w->topo;
	int ci = t ? vwc_topo_find_ctrl(t, c->name) : -1, i;

	if (ci < 0)
		return true;
	for (i = 0; i < t->nr_ns; i++) {
		const struct vwc_wns *n;

		if (!vwc_ns_has_ctrl(&t->ns[i], ci))
			continue;
		n = vwc_model_find_ns(w, t->ns[i].name);
		if (!n || n->expected == VWC_MODE_NONE ||
		    (n->expected == VWC_MODE_WRITE_THROUGH && !n->own_bit))
			return true;
	}
	return false;
}

bool vwc_model_close_moot(struct vwc_model *w, struct vwc_wctrl *c,
			  bool wt_marked)
{
	if (wt_marked || !close_may_rest(w, c) ||
	    c->facts.wce == VWC_TRI_UNKNOWN || wt_rests_on(w, c))
		return false;
	c->close_check = false;
	w->closes_moot++;
	return true;
}

bool vwc_model_close_reads(struct vwc_model *w, struct vwc_wctrl *c)
{
	if (close_may_rest(w, c))
		return true;
	c->close_check = false;
	c->wce = true;
	return false;
}

bool vwc_model_close_read(struct vwc_model *w, struct vwc_wctrl *c,
			  enum vwc_tri wce)
{
	c->close_check = false;
	if (close_may_rest(w, c) && wce != VWC_TRI_UNKNOWN &&
	    wce == c->facts.wce) {
		w->closes_confirmed++;
		return false;
	}
	c->wce = true;
	return true;
}
