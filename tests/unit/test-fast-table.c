// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's table (vwc_watch_fast_table(), src/watch/watch-act.c),
 * over hand-made topologies of many controllers and namespaces, against
 * what it must hold, written here the plain way: for each controller the
 * model follows, in the topology's order, every namespace that reaches it
 * (in theirs), unless it is ignored through any of its controllers or has
 * its own "no volatile write cache" bit; its sysfs directory and paths
 * copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "watch-act.h"
#include "watch-fast.h"
#include "watch-model.h"
#include "tap.h"

static void f_ctrl_added(struct vwc_model *w, struct vwc_wctrl *c,
			 const struct vwc_ctrl *tc)
{
	(void)w;
	(void)c;
	(void)tc;
}

static void f_ctrl_gone(struct vwc_model *w, struct vwc_wctrl *c)
{
	(void)w;
	(void)c;
}

static void f_ns(struct vwc_model *w, const char *name)
{
	(void)w;
	(void)name;
}

static uint64_t f_ident(const struct vwc_ctrl *tc)
{
	return (uint64_t)atoi(tc->name + 4) + 1;
}

static uint64_t f_ns_ident(const struct vwc_ns *tn)
{
	return (uint64_t)atoi(tn->name + 4) * 100 + (uint64_t)tn->nr_ctrl + 1;
}

static const struct vwc_model_ops ops = {
	f_ctrl_added, f_ctrl_gone, f_ns, f_ns, f_ident, f_ns_ident,
};

#define MAX_C	24
#define MAX_N	120

static char nspath[MAX_N][64], pathv[MAX_N][3][64];
static const char *paths[MAX_N][3];
static int nsctrl[MAX_N][3];
static unsigned int seed = 1;

/* the first difference, said as a TAP comment: 1 */
#define diag(...) (printf("# " __VA_ARGS__), printf("\n"), 1)

static int rnd(int n)
{
	seed = seed * 1103515245 + 12345;
	return (int)((seed >> 16) % (unsigned int)n);
}

/* @nc controllers, @nn namespaces each reached by one to three of them */
static void make(struct vwc_topo *t, int nc, int nn)
{
	int i, j, k;

	memset(t, 0, sizeof(*t));
	t->ctrls = calloc(nc, sizeof(*t->ctrls));
	t->ns = calloc(nn, sizeof(*t->ns));
	t->nr_ctrls = nc;
	t->nr_ns = nn;
	for (i = 0; i < nc; i++) {
		snprintf(t->ctrls[i].name, sizeof(t->ctrls[i].name), "nvme%d", i);
		snprintf(t->ctrls[i].devnode, sizeof(t->ctrls[i].devnode),
			 "/dev/nvme%d", i);
		snprintf(t->ctrls[i].serial, sizeof(t->ctrls[i].serial), "S%d", i);
	}
	for (j = 0; j < nn; j++) {
		struct vwc_ns *ns = &t->ns[j];
		int want = 1 + rnd(nc < 3 ? nc : 3);

		snprintf(ns->name, sizeof(ns->name), "nvme%dn%d", j / 10, j % 10 + 1);
		snprintf(nspath[j], sizeof(nspath[j]), "/sys/x/%s", ns->name);
		ns->syspath = nspath[j];
		ns->ctrl = nsctrl[j];
		while (ns->nr_ctrl < want) {
			int c = rnd(nc);

			if (!vwc_ns_has_ctrl(ns, c))
				nsctrl[j][ns->nr_ctrl++] = c;
		}
		for (k = 0; k < ns->nr_ctrl && ns->nr_ctrl > 1; k++) {
			snprintf(pathv[j][k], sizeof(pathv[j][k]), "/sys/x/%sp%d",
				 ns->name, k);
			paths[j][k] = pathv[j][k];
		}
		ns->path_syspath = ns->nr_ctrl > 1 ? paths[j] : NULL;
		ns->nr_paths = ns->nr_ctrl > 1 ? ns->nr_ctrl : 0;
		ns->no_vwc = rnd(5) ? VWC_TRI_UNKNOWN : VWC_TRI_YES;
	}
}

static bool ignored(const struct vwc_run *run, const struct vwc_ns *ns)
{
	int k;

	for (k = 0; k < ns->nr_ctrl; k++)
		if (vwc_config_override(run->cfg, &run->topo.ctrls[ns->ctrl[k]]) ==
		    VWC_OVERRIDE_IGNORE)
			return true;
	return false;
}

/* every controller the model follows: an admin queue of its own */
static void queues(struct vwc_model *w)
{
	int i;

	for (i = 0; i < w->nr_ctrl; i++)
		w->ctrl[i].admin_q = 0xffff888000000000ULL + 0x1000ULL * (uint64_t)i;
}

/* the table against the plain way; the first difference said */
static void check(struct vwc_sidecar *wr, const char *what)
{
	struct vwc_topo *t = &wr->run.topo;
	struct vwc_fast_ctrl *tab;
	int nr, i, j, k, e = 0, bad = 0, entries = 0;

	tab = vwc_watch_fast_table(wr, &nr);
	if (!tab) {
		ok(0, "%s: a table", what);
		return;
	}
	for (i = 0; i < t->nr_ctrls && !bad; i++) {
		const struct vwc_fast_ctrl *fc;
		const struct vwc_wctrl *c;
		int n = 0;

		if (!vwc_model_find_ctrl(&wr->model, t->ctrls[i].name))
			continue;
		if (e >= nr) {
			bad = diag("%s: no entry for %s", what, t->ctrls[i].name);
			break;
		}
		c = vwc_model_find_ctrl(&wr->model, t->ctrls[i].name);
		fc = &tab[e++];
		if (strcmp(fc->name, t->ctrls[i].name))
			bad = diag("%s: entry %d is %s, not %s", what, e - 1,
				   fc->name, t->ctrls[i].name);
		/* what the fast path finds a controller's events by */
		if (fc->instance != c->instance || fc->q != c->admin_q)
			bad = diag("%s: %s: instance %d queue %llx, not %d %llx",
				   what, fc->name, fc->instance,
				   (unsigned long long)fc->q, c->instance,
				   (unsigned long long)c->admin_q);
		for (j = 0; j < t->nr_ns && !bad; j++) {
			const struct vwc_ns *ns = &t->ns[j];
			const struct vwc_fast_ns *fn;

			if (!vwc_ns_has_ctrl(ns, i) || ignored(&wr->run, ns) ||
			    ns->no_vwc == VWC_TRI_YES)
				continue;
			if (n >= fc->nr_ns) {
				bad = diag("%s: %s lacks %s", what, fc->name, ns->name);
				break;
			}
			fn = &fc->ns[n++];
			if (strcmp(fn->name, ns->name) ||
			    !fn->syspath || strcmp(fn->syspath, ns->syspath) ||
			    fn->nr_paths != ns->nr_paths)
				bad = diag("%s: %s: %s where %s was due", what,
					   fc->name, fn->name, ns->name);
			for (k = 0; !bad && k < ns->nr_paths; k++)
				if (strcmp(fn->paths[k], ns->path_syspath[k]))
					bad = diag("%s: %s: a path differs", what,
						   ns->name);
		}
		if (!bad && n != fc->nr_ns)
			bad = diag("%s: %s has %d namespaces, not %d", what,
				   fc->name, fc->nr_ns, n);
		entries += n;
	}
	if (!bad && e != nr)
		bad = diag("%s: %d entries, not %d", what, nr, e);
	vwc_fast_free_table(tab, nr);
	ok(!bad, "%s (%d controllers, %d namespace entries)", what, e,
	   entries);
}

int main(void)
{
	static struct vwc_sidecar wr;
	struct vwc_config cfg;
	char err[256];
	int round;

	make(&wr.run.topo, MAX_C, MAX_N);
	vwc_model_init(&wr.model, &wr.run.topo, &ops, &wr);
	vwc_model_sync(&wr.model, 1);
	queues(&wr.model);
	check(&wr, "every controller, shared namespaces, some with their own bit");

	if (vwc_config_parse("device serial=S3 write-cache=ignore\n"
			     "device serial=S17 write-cache=ignore\n", "t",
			     &cfg, err, sizeof(err)))
		ok(0, "config: %s", err);
	wr.run.cfg = &cfg;
	check(&wr, "two controllers ignored: their namespaces out everywhere");
	wr.run.cfg = NULL;

	/* other sizes, each controller shared by other namespaces */
	for (round = 0; round < 3; round++) {
		vwc_model_free(&wr.model);
		free(wr.run.topo.ctrls);
		free(wr.run.topo.ns);
		memset(nsctrl, 0, sizeof(nsctrl));
		make(&wr.run.topo, 1 + rnd(MAX_C), 1 + rnd(MAX_N));
		vwc_model_init(&wr.model, &wr.run.topo, &ops, &wr);
		vwc_model_sync(&wr.model, 1);
		queues(&wr.model);
		check(&wr, round == 0 ? "another size" :
			   round == 1 ? "another size again" : "a third size");
	}
	/* a controller the model lost: the table leaves it out */
	snprintf(wr.run.topo.ctrls[0].name, sizeof(wr.run.topo.ctrls[0].name),
		 "nvme999");
	check(&wr, "a controller the model does not follow");
	vwc_model_free(&wr.model);
	free(wr.run.topo.ctrls);
	free(wr.run.topo.ns);
	return tap_done();
}
