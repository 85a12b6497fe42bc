// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The probe of a run: what each wanted controller reports (Identify
 * Controller, Get Features 06h, the SMART log, its active namespace list)
 * and each wanted namespace's own "no volatile write cache" bit, through
 * a descriptor the sidecar holds or one opened for the probe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "log.h"
#include "nvme-io.h"

static enum vwc_tri tri(bool b)
{
	return b ? VWC_TRI_YES : VWC_TRI_NO;
}

static void note(struct vwc_ctrl *c, const char *what, int ret)
{
	char buf[120];
	size_t len = strlen(c->errmsg);

	vwc_nvme_strerror(ret, buf, sizeof(buf));
	snprintf(c->errmsg + len, sizeof(c->errmsg) - len, "%s%s failed: %s",
		 len ? "; " : "", what, buf);
	vwc_warn("%s: %s failed: %s", c->name, what, buf);
}

int vwc_ctrl_fd(const struct vwc_ctrl *c)
{
	return c->held_fd > 0 ? c->held_fd : vwc_nvme_open(c->devnode);
}

void vwc_ctrl_fd_put(const struct vwc_ctrl *c, int fd)
{
	if (fd >= 0 && fd != c->held_fd)
		vwc_nvme_close(fd);
}

/*
 * The namespaces a controller with peers reaches (vwc_topo_link_reach()):
 * read with every probe, since a namespace can be attached at any time.
 * A list that cannot be read leaves it reaching any (nsids_known false).
 */
static void forget_reach(struct vwc_ctrl *c)
{
	free(c->nsids);
	c->nsids = NULL;
	c->nr_nsids = 0;
	c->nsids_known = false;
}

static void probe_reach(struct vwc_run *r, struct vwc_ctrl *c, int fd)
{
	int ret;

	forget_reach(c);
	if (!vwc_topo_has_peers(&r->topo, (int)(c - r->topo.ctrls)))
		return;
	ret = vwc_nvme_active_nsids(fd, &c->nsids, &c->nr_nsids);
	if (ret)
		note(c, "Identify Active Namespace ID list", ret);
	else
		c->nsids_known = true;
}

void vwc_probe_ctrl(struct vwc_run *r, struct vwc_ctrl *c)
{
	char mn[41], sn[21], fr[9];
	uint8_t cw;
	bool wce;
	int fd, ret;

	c->probed = true;
	c->err = 0;
	c->errmsg[0] = '\0';
	forget_reach(c);
	c->facts.present = VWC_TRI_UNKNOWN;
	c->facts.wce = VWC_TRI_UNKNOWN;
	c->facts.backup_failed = VWC_TRI_UNKNOWN;
	c->facts.override = vwc_config_override(r->cfg, c);

	fd = vwc_ctrl_fd(c);
	if (fd < 0) {
		c->err = fd;
		snprintf(c->errmsg, sizeof(c->errmsg), "cannot open %.300s: %s%s",
			 c->devnode, strerror(-fd),
			 fd == -EACCES || fd == -EPERM ? " (must be root)" : "");
		vwc_err("%s: %s", c->name, c->errmsg);
		goto out;
	}
	ret = vwc_nvme_identify_ctrl(fd, &c->vwc, &c->ver, mn, sn, fr);
	if (ret) {
		note(c, "Identify Controller", ret);
		goto close;
	}
	c->facts.present = tri(c->vwc & VWC_NVME_CTRL_VWC_PRESENT);
	/* firmware activation may have changed these: trust the drive */
	snprintf(c->model, sizeof(c->model), "%s", mn);
	snprintf(c->serial, sizeof(c->serial), "%s", sn);
	snprintf(c->firmware, sizeof(c->firmware), "%s", fr);

	if (c->facts.present == VWC_TRI_YES) {
		ret = vwc_nvme_get_wce(fd, &wce);
		if (ret)
			note(c, "Get Features 06h", ret);
		else
			c->facts.wce = tri(wce);
	}
	ret = vwc_nvme_smart_warning(fd, &cw);
	if (ret) {
		note(c, "SMART log", ret);
	} else {
		c->critical_warning = cw;
		c->facts.backup_failed =
			tri(cw & VWC_NVME_SMART_CW_VOLATILE_MEMORY);
	}
	probe_reach(r, c, fd);
close:
	vwc_ctrl_fd_put(c, fd);
out:
	c->decision = vwc_policy_decide(&c->facts);
	vwc_info("%s: vwc=%s wce=%s -> %s (%s)", c->name,
		 c->facts.present == VWC_TRI_UNKNOWN ? "unknown" :
		 c->facts.present == VWC_TRI_YES ? "present" : "absent",
		 vwc_tri_wce_str(c->facts.wce), vwc_mode_str(c->decision.mode),
		 vwc_reason_str(c->decision.reason));
}

int vwc_probe_ctrl_wce(struct vwc_run *r, struct vwc_ctrl *c)
{
	bool wce;
	int fd, ret;

	if (!c->probed || c->err || c->facts.present != VWC_TRI_YES)
		return 0;
	c->facts.wce = VWC_TRI_UNKNOWN;
	forget_reach(c);
	fd = vwc_ctrl_fd(c);
	if (fd < 0) {
		note(c, "open", fd);
		ret = fd;
	} else {
		ret = vwc_nvme_get_wce(fd, &wce);
		if (ret)
			note(c, "Get Features 06h", ret);
		else
			c->facts.wce = tri(wce);
		probe_reach(r, c, fd);
		vwc_ctrl_fd_put(c, fd);
	}
	c->decision = vwc_policy_decide(&c->facts);
	vwc_info("%s: wce=%s -> %s (%s)", c->name,
		 vwc_tri_wce_str(c->facts.wce), vwc_mode_str(c->decision.mode),
		 vwc_reason_str(c->decision.reason));
	return ret;
}

/*
 * For each controller, the wanted namespaces it reaches, in namespace
 * order: @idx[@start[c]] to @idx[@start[c + 1] - 1]. One pass over the
 * namespaces' controllers, not one over every namespace per controller.
 * Return: 0, or -ENOMEM.
 */
static int ns_by_ctrl(const struct vwc_topo *t, int **start, int **idx)
{
	int *st, *ix, *at, i, k, total = 0;

	st = calloc(t->nr_ctrls + 2, sizeof(*st));
	at = calloc(t->nr_ctrls + 1, sizeof(*at));
	if (!st || !at)
		goto fail;
	for (i = 0; i < t->nr_ns; i++)
		for (k = 0; t->ns[i].wanted && k < t->ns[i].nr_ctrl; k++)
			st[t->ns[i].ctrl[k] + 1]++;
	for (i = 0; i < t->nr_ctrls; i++) {
		st[i + 1] += st[i];
		at[i] = st[i];
	}
	total = st[t->nr_ctrls];
	ix = malloc((total + 1) * sizeof(*ix));
	if (!ix)
		goto fail;
	for (i = 0; i < t->nr_ns; i++)
		for (k = 0; t->ns[i].wanted && k < t->ns[i].nr_ctrl; k++)
			ix[at[t->ns[i].ctrl[k]]++] = i;
	free(at);
	*start = st;
	*idx = ix;
	return 0;
fail:
	free(st);
	free(at);
	return -ENOMEM;
}

/*
 * The namespace's own bit, read once per namespace (it is the same
 * through every path) through the first controller reaching it that
 * answers. Only controllers of NVMe 2.0 or later are asked (CNS 08h came
 * with it), and one that refused is not asked again: each refusal is an
 * entry in its error log. Unknown is no error: the controllers decide.
 */
void vwc_probe_ns(struct vwc_run *r)
{
	struct vwc_topo *t = &r->topo;
	int *start = NULL, *idx = NULL;
	bool walk;
	char buf[120];
	int i, k, fd, ret;

	/* no memory for the lists: every namespace for each controller */
	walk = ns_by_ctrl(t, &start, &idx) < 0;
	for (i = 0; i < t->nr_ctrls; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		bool refused = false, open = false;

		if (!c->wanted || !c->probed || c->err ||
		    c->ver < VWC_NVME_VER_2_0 || c->ns_indep_refused)
			continue;
		fd = -1;
		for (k = walk ? 0 : start[i];
		     k < (walk ? t->nr_ns : start[i + 1]) && !refused; k++) {
			struct vwc_ns *ns = &t->ns[walk ? k : idx[k]];
			bool no_vwc;

			if (!ns->wanted || ns->no_vwc != VWC_TRI_UNKNOWN ||
			    !vwc_ns_has_ctrl(ns, i))
				continue;
			if (!ns->nsid)
				ns->nsid = vwc_ns_read_nsid(ns);
			if (!ns->nsid)
				continue;
			if (!open) {
				fd = vwc_ctrl_fd(c);
				open = true;
				if (fd < 0)
					break;
			}
			ret = vwc_nvme_ns_no_vwc(fd, ns->nsid, &no_vwc);
			if (ret) {
				bool down = vwc_nvme_ctrl_down(ret);

				vwc_info("%s: %s: I/O Command Set Independent Identify Namespace failed: %s; its own cache bit unknown%s",
					 c->name, ns->name,
					 vwc_nvme_strerror(ret, buf,
							   sizeof(buf)),
					 down ? ", and its other namespaces' until the next look" : "");
				/* the controller cannot be asked now (a reset,
				 * a reconnect): the rest would fail the same
				 * way, one line each at fabrics scale */
				if (down)
					break;
				/* a controller that does not know CNS 08h;
				 * not a path's status (an ANA state) nor this
				 * namespace's (Invalid Namespace or Format:
				 * detached since it was listed): asked again
				 * next time */
				refused = c->ns_indep_refused =
					ret > 0 && !vwc_nvme_status_path(ret) &&
					(ret & 0x7ff) != 0x0b;
				continue;
			}
			ns->no_vwc = no_vwc ? VWC_TRI_YES : VWC_TRI_NO;
		}
		if (open)
			vwc_ctrl_fd_put(c, fd);
	}
	free(start);
	free(idx);
}

void vwc_run_probe(struct vwc_run *r)
{
	int i;

	for (i = 0; i < r->topo.nr_ctrls; i++) {
		struct vwc_ctrl *c = &r->topo.ctrls[i];

		if (c->wanted) {
			vwc_probe_ctrl(r, c);
			/* a command that failed leaves a fact unknown: the
			 * mode is safe, but the run did not do all it should */
			if (c->err || c->errmsg[0])
				r->nr_failed++;
		}
	}
	vwc_topo_link_reach(&r->topo);
	vwc_probe_ns(r);
}

