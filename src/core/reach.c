// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Who reaches what: the controllers of a namespace (its paths, its
 * subsystem's peers by their active namespace lists), discovery
 * controllers, and a controller that joined a subsystem since the scan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "fileio.h"
#include "topo.h"

bool vwc_ns_has_ctrl(const struct vwc_ns *ns, int c)
{
	int i;

	for (i = 0; i < ns->nr_ctrl; i++)
		if (ns->ctrl[i] == c)
			return true;
	return false;
}

/* The NQN every discovery controller reports: no namespaces, no peers */
#define DISCOVERY_NQN	"nqn.2014-08.org.nvmexpress.discovery"

bool vwc_ctrl_peers(const struct vwc_ctrl *a, const struct vwc_ctrl *b)
{
	return a != b && a->subsysnqn[0] &&
	       strcmp(a->subsysnqn, DISCOVERY_NQN) &&
	       !strcmp(a->subsysnqn, b->subsysnqn);
}

bool vwc_ctrl_is_discovery(const struct vwc_topo *t, int c)
{
	const struct vwc_ctrl *ctrl = &t->ctrls[c];
	int i;

	if (strcmp(ctrl->subsysnqn, DISCOVERY_NQN) &&
	    strcmp(ctrl->cntrltype, "discovery"))
		return false;
	for (i = 0; i < t->nr_ns; i++)
		if (vwc_ns_has_ctrl(&t->ns[i], c))
			return false;
	return true;
}

bool vwc_topo_has_peers(const struct vwc_topo *t, int c)
{
	int i;

	for (i = 0; i < t->nr_ctrls; i++)
		if (vwc_ctrl_peers(&t->ctrls[c], &t->ctrls[i]))
			return true;
	return false;
}

static bool ctrl_names(const struct vwc_ctrl *c, uint32_t nsid)
{
	int lo = 0, hi = c->nr_nsids - 1;

	if (!c->nsids_known)
		return true;	/* not known: it may reach any */
	while (lo <= hi) {	/* the list is in increasing order */
		int mid = lo + (hi - lo) / 2;

		if (c->nsids[mid] == nsid)
			return true;
		if (c->nsids[mid] < nsid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

static uint32_t read_nsid(const char *syspath)
{
	char buf[16], path[VWC_PATH_LEN + 8];
	unsigned long v;
	char *end;

	snprintf(path, sizeof(path), "%s/nsid", syspath);
	vwc_read_attr(path, buf, sizeof(buf));
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || *end || !v || v >= 0xffffffffUL)
		return 0;
	return (uint32_t)v;
}

uint32_t vwc_ns_read_nsid(const struct vwc_ns *ns)
{
	return read_nsid(ns->syspath);
}

/* Peers of a controller: the others of its subsystem (vwc_ctrl_peers()). */
struct peers {
	int *first;	/* by controller: the lowest index of its subsystem */
	int *next;	/* by controller: the next higher one, -1 after the last */
};

static int cmp_by_nqn(const void *a, const void *b, void *arg)
{
	const struct vwc_topo *t = arg;
	int i = *(const int *)a, j = *(const int *)b;
	int r = strcmp(t->ctrls[i].subsysnqn, t->ctrls[j].subsysnqn);

	return r ? r : i - j;
}

/*
 * The subsystems' controllers as lists in index order, from one sort by
 * NQN: O(C log C) instead of comparing every pair. A controller with no
 * peer (no NQN, the discovery NQN, alone) is a list of one. Return: 0, or
 * -ENOMEM (the caller walks every controller instead).
 */
static int peers_make(const struct vwc_topo *t, struct peers *p)
{
	int *order, i, k;

	p->first = malloc((t->nr_ctrls + 1) * sizeof(*p->first));
	p->next = malloc((t->nr_ctrls + 1) * sizeof(*p->next));
	order = malloc((t->nr_ctrls + 1) * sizeof(*order));
	if (!p->first || !p->next || !order) {
		free(p->first);
		free(p->next);
		free(order);
		p->first = p->next = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_ctrls; i++)
		order[i] = i;
	if (t->nr_ctrls)
		qsort_r(order, t->nr_ctrls, sizeof(*order), cmp_by_nqn,
			(void *)t);
	for (k = 0; k < t->nr_ctrls; k++) {
		i = order[k];
		p->next[i] = -1;
		if (k && vwc_ctrl_peers(&t->ctrls[i], &t->ctrls[order[k - 1]])) {
			p->first[i] = p->first[order[k - 1]];
			p->next[order[k - 1]] = i;
		} else {
			p->first[i] = i;
		}
	}
	free(order);
	return 0;
}

static void peers_free(struct peers *p)
{
	free(p->first);
	free(p->next);
}

void vwc_topo_link_reach(struct vwc_topo *t)
{
	struct peers p;
	bool walk = peers_make(t, &p) < 0;
	int i, j;

	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		const struct vwc_ctrl *first;

		/* made again from the controllers with a node of it */
		ns->nr_ctrl -= ns->nr_joining;
		ns->nr_joining = 0;
		if (!ns->nr_ctrl)
			continue;	/* no controller: write back anyway */
		first = &t->ctrls[ns->ctrl[0]];
		/* its subsystem's controllers in index order, or all */
		for (j = walk ? 0 : p.first[ns->ctrl[0]];
		     j >= 0 && j < t->nr_ctrls; j = walk ? j + 1 : p.next[j]) {
			if (vwc_ns_has_ctrl(ns, j) ||
			    !vwc_ctrl_peers(first, &t->ctrls[j]))
				continue;
			if (!ns->nsid)
				ns->nsid = read_nsid(ns->syspath);
			/* an id that cannot be read: any peer may reach it */
			if (ns->nsid && !ctrl_names(&t->ctrls[j], ns->nsid))
				continue;
			if (!vwc_ns_add_ctrl(ns, j)) {
				ns->nr_joining++;
				continue;
			}
			/* no memory to count it: no controller known, which
			 * the policy takes as write back */
			ns->nr_ctrl = ns->nr_joining = 0;
			break;
		}
	}
	if (!walk)
		peers_free(&p);
}

static bool is_other(const struct vwc_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_others; i++)
		if (!strcmp(t->others[i], name))
			return true;
	return false;
}

bool vwc_topo_new_peer(const struct vwc_topo *t, const struct vwc_ns *ns)
{
	char dir[VWC_PATH_LEN], nqn[sizeof(t->ctrls->subsysnqn)];
	const struct vwc_ctrl *first = NULL;
	char ctrl_dir[VWC_PATH_LEN + VWC_NAME_LEN + 16];
	bool found = false;
	struct dirent *de;
	DIR *d;
	int i;

	if (!ns->nr_ctrl)
		return true;
	/* its subsystem: the first of its controllers that names one */
	for (i = 0; i < ns->nr_ctrl && !first; i++)
		if (t->ctrls[ns->ctrl[i]].subsysnqn[0])
			first = &t->ctrls[ns->ctrl[i]];
	if (!first || !strcmp(first->subsysnqn, DISCOVERY_NQN))
		return false;	/* in no subsystem: nobody can join it */
	snprintf(dir, sizeof(dir), "%s/class/nvme", t->sysfs[0] ? t->sysfs : "/sys");
	d = opendir(dir);
	if (!d)
		return true;
	while (!found && (de = readdir(d))) {
		char ns_name[VWC_NAME_LEN];
		int k;

		if (vwc_name_classify(de->d_name, ns_name, sizeof(ns_name)) !=
			    VWC_KIND_CTRL || is_other(t, de->d_name))
			continue;
		/* known, unless the scan found it not identified yet: its
		 * subsystem NQN may be there now */
		k = vwc_topo_find_ctrl(t, de->d_name);
		if (k >= 0 && t->ctrls[k].subsysnqn[0])
			continue;
		snprintf(ctrl_dir, sizeof(ctrl_dir), "%s/%.31s/subsysnqn", dir,
			 de->d_name);
		vwc_read_line(ctrl_dir, nqn, sizeof(nqn));
		found = !strcmp(nqn, first->subsysnqn);
	}
	closedir(d);
	return found;
}
