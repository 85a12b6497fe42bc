// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "quirk-db.h"
#include "report.h"

#define HYGON_ADVISORY "Hygon CPU: NVMe IRQ completion batching can cause an interrupt storm (kernel patch 'nvme-pci: Fix performance regression with completion batching for Hygon processors' measured +15% to +25% 4k randread IOPS without it). Check 'nvme vwc irq-stat' under load; optional mitigation: irq-coalescing in nvme-vwc-sync.conf(5)."

#define HYGON_KERNEL_HAS_IT "Hygon CPU: this kernel's nvme driver turns IRQ completion batching off on Hygon itself (it carries the kernel patch 'nvme-pci: Fix performance regression with completion batching for Hygon processors'): nothing to do."

const char *vwc_hygon_advisory(void)
{
	return vwc_cpu_kernel_unbatched() == 1 ? HYGON_KERNEL_HAS_IT :
						 HYGON_ADVISORY;
}

bool vwc_ns_drift(const struct vwc_ns *ns)
{
	/* a kernel that reads WCE itself and holds no cache: its choice */
	if (ns->kernel_held && ns->action != VWC_ACT_FAILED)
		return false;
	return ns->decision.mode != VWC_MODE_NONE &&
	       ns->after != ns->decision.mode;
}

int vwc_format_parse(const char *s, enum vwc_format *fmt)
{
	if (!strcmp(s, "normal"))
		*fmt = VWC_FMT_NORMAL;
	else if (!strcmp(s, "json"))
		*fmt = VWC_FMT_JSON;
	else if (!strcmp(s, "prometheus"))
		*fmt = VWC_FMT_PROMETHEUS;
	else
		return -EINVAL;
	return 0;
}

const char *vwc_action_str(enum vwc_action a)
{
	switch (a) {
	case VWC_ACT_CHANGED:
		return "changed";
	case VWC_ACT_UNCHANGED:
		return "unchanged";
	case VWC_ACT_WOULD_CHANGE:
		return "would-change";
	case VWC_ACT_SKIPPED:
		return "skipped";
	case VWC_ACT_FAILED:
		return "failed";
	default:
		return "none";
	}
}

const char *vwc_override_str(enum vwc_override o)
{
	switch (o) {
	case VWC_OVERRIDE_WRITE_BACK:
		return "write-back";
	case VWC_OVERRIDE_IGNORE:
		return "ignore";
	default:
		return "auto";
	}
}

static const char *cache_str(const struct vwc_ctrl *c)
{
	if (c->facts.present == VWC_TRI_NO)
		return "no volatile write cache";
	if (c->facts.present == VWC_TRI_UNKNOWN)
		return "cache presence unknown";
	switch (c->facts.wce) {
	case VWC_TRI_YES:
		return "cache present, enabled";
	case VWC_TRI_NO:
		return "cache present, disabled";
	default:
		return "cache present, enable state unknown";
	}
}

/*
 * The wanted namespaces listed under each controller, by their first one,
 * in namespace order: @idx[@start[c]] to @idx[@start[c + 1] - 1]. One pass
 * instead of a walk of every namespace for each controller. Return: 0, or
 * -ENOMEM (the caller walks).
 */
static int ns_by_first(const struct vwc_run *r, int **start, int **idx)
{
	const struct vwc_topo *t = &r->topo;
	int *st, *ix, *at, i;

	st = calloc(t->nr_ctrls + 2, sizeof(*st));
	at = calloc(t->nr_ctrls + 1, sizeof(*at));
	ix = malloc((t->nr_ns + 1) * sizeof(*ix));
	if (!st || !at || !ix) {
		free(st);
		free(at);
		free(ix);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_ns; i++)
		if (t->ns[i].wanted && t->ns[i].nr_ctrl)
			st[t->ns[i].ctrl[0] + 1]++;
	for (i = 0; i < t->nr_ctrls; i++) {
		st[i + 1] += st[i];
		at[i] = st[i];
	}
	for (i = 0; i < t->nr_ns; i++)
		if (t->ns[i].wanted && t->ns[i].nr_ctrl)
			ix[at[t->ns[i].ctrl[0]]++] = i;
	free(at);
	*start = st;
	*idx = ix;
	return 0;
}

/* The next namespace of controller @c from @k on: its index, or -1. */
static int next_ns(const struct vwc_run *r, const int *start, const int *idx,
		   int c, int *k)
{
	const struct vwc_topo *t = &r->topo;

	if (start)
		return *k < start[c + 1] ? idx[(*k)++] : -1;
	for (; *k < t->nr_ns; (*k)++)	/* no lists: a walk of them all */
		if (t->ns[*k].wanted && t->ns[*k].nr_ctrl &&
		    t->ns[*k].ctrl[0] == c)
			return (*k)++;
	return -1;
}

static void print_normal(const struct vwc_run *r, FILE *out)
{
	int *start = NULL, *idx = NULL;
	int i, j, k;

	if (ns_by_first(r, &start, &idx))
		start = idx = NULL;
	for (i = 0; i < r->topo.nr_ctrls; i++) {
		const struct vwc_ctrl *c = &r->topo.ctrls[i];

		if (!c->probed)
			continue;
		fprintf(out, "%s: %s (sn %s, fw %s%s%s): %s -> %s\n", c->name,
			c->model, c->serial, c->firmware,
			c->pci_id[0] ? ", pci " : "", c->pci_id,
			cache_str(c), vwc_mode_str(c->decision.mode));
		if (c->facts.backup_failed == VWC_TRI_YES)
			fprintf(out, "  warning: volatile memory backup failed (SMART critical warning bit 4)\n");
		if (c->errmsg[0])
			fprintf(out, "  error: %s\n", c->errmsg);
		if (c->irqc[0])
			fprintf(out, "  interrupt coalescing: %s\n", c->irqc);
		k = start ? start[i] : 0;
		while ((j = next_ns(r, start, idx, i, &k)) >= 0) {
			const struct vwc_ns *ns = &r->topo.ns[j];

			fprintf(out, "  %-12s %s -> %s  (%s%s%s)\n", ns->name,
				vwc_mode_str(ns->before),
				vwc_mode_str(ns->after),
				vwc_action_str(ns->action),
				ns->errmsg[0] ? ": " : "", ns->errmsg);
		}
	}
	if (!r->topo.nr_ctrls && !r->nr_errs)
		fprintf(out, "no NVMe controller found\n");
	free(start);
	free(idx);
}

/* Prometheus label values: escape backslash, quote and newline. */
static void prom_label(FILE *out, const char *k, const char *v, bool last)
{
	fputs(k, out);
	fputs("=\"", out);
	/* most values need no escape: whole, not a character at a time (a
	 * textfile of 1,025 namespaces has about 10,000 labels) */
	if (!strpbrk(v, "\\\"\n")) {
		fputs(v, out);
		fputs(last ? "\"" : "\",", out);
		return;
	}
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n') {
			fputs("\\n", out);
			continue;
		}
		fputc(*v, out);
	}
	fprintf(out, "\"%s", last ? "" : ",");
}

/* "} V" and the line's end: the usual -1, 0 and 1 without a format */
static void prom_value(FILE *out, int v)
{
	static const char *const s[] = { "} -1\n", "} 0\n", "} 1\n" };

	if (v >= -1 && v <= 1)
		fputs(s[v + 1], out);
	else
		fprintf(out, "} %d\n", v);
}

static int tri_num(enum vwc_tri t)
{
	return t == VWC_TRI_UNKNOWN ? -1 : t == VWC_TRI_YES;
}

static void prom_head(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void print_prometheus(const struct vwc_run *r, FILE *out)
{
	static const struct {
		const char *name, *help;
	} cm[] = {
		{ "nvme_vwc_controller_info", "NVMe controller identity (always 1)." },
		{ "nvme_vwc_cache_present", "Identify Controller VWC bit 0: 1 present, 0 absent, -1 unknown." },
		{ "nvme_vwc_cache_enabled", "Get Features 06h WCE: 1 enabled, 0 disabled, -1 unknown or not applicable." },
		{ "nvme_vwc_backup_failed", "SMART critical warning bit 4 (volatile memory backup failed): 1 set, 0 clear, -1 unknown." },
		{ "nvme_vwc_controller_error", "1 if the controller could not be fully probed." },
		{ "nvme_vwc_quirk_match", "1 for each quirk the hwdb quirk database lists for the controller." },
		{ "nvme_vwc_quirk_kernel_active", "1 if the running kernel applies the quirk, 0 if not, -1 if the kernel does not say." },
	};
	int i, j, k;

	for (k = 0; k < (int)(sizeof(cm) / sizeof(cm[0])); k++) {
		prom_head(out, cm[k].name, cm[k].help);
		for (i = 0; i < r->topo.nr_ctrls; i++) {
			const struct vwc_ctrl *c = &r->topo.ctrls[i];
			char buf[128], *q, *save = NULL;
			int v;

			if (!c->probed)
				continue;
			if (k >= 5) {
				snprintf(buf, sizeof(buf), "%s", c->hwdb_quirks);
				for (q = strtok_r(buf, ",", &save); q;
				     q = strtok_r(NULL, ",", &save)) {
					fprintf(out, "%s{", cm[k].name);
					prom_label(out, "controller", c->name, false);
					prom_label(out, "quirk", q, true);
					v = k == 5 ? 1 : !c->has_kernel_quirks ? -1 :
					    vwc_quirk_has(c->kernel_quirks, q);
					fprintf(out, "} %d\n", v);
				}
				continue;
			}
			fprintf(out, "%s{", cm[k].name);
			prom_label(out, "controller", c->name, k != 0);
			if (k == 0) {
				prom_label(out, "model", c->model, false);
				prom_label(out, "serial", c->serial, false);
				prom_label(out, "firmware", c->firmware, false);
				prom_label(out, "transport", c->transport, false);
				prom_label(out, "pci_id", c->pci_id, false);
				prom_label(out, "subsysnqn", c->subsysnqn, true);
			}
			v = k == 0 ? 1 : k == 1 ? tri_num(c->facts.present) :
			    k == 2 ? tri_num(c->facts.wce) :
			    k == 3 ? tri_num(c->facts.backup_failed) :
				     c->errmsg[0] != '\0';
			fprintf(out, "} %d\n", v);
		}
	}
	for (j = 0; j < 4; j++) {
		static const char *const names[][2] = {
			{ "nvme_vwc_namespace_write_back",
			  "Block-layer queue/write_cache: 1 write back, 0 write through." },
			{ "nvme_vwc_namespace_recommended_write_back",
			  "What the policy says: 1 write back, 0 write through, -1 ignored." },
			{ "nvme_vwc_namespace_drift",
			  "1 if write_cache differs from what the policy says." },
			{ "nvme_vwc_namespace_cache_not_present",
			  "The namespace's own NSFEAT bit 5 (no volatile write cache, write through whatever its controllers say): 1 set, 0 clear, -1 unknown." },
		};

		prom_head(out, names[j][0], names[j][1]);
		for (i = 0; i < r->topo.nr_ns; i++) {
			const struct vwc_ns *ns = &r->topo.ns[i];
			int v;

			if (!ns->wanted || ns->action == VWC_ACT_FAILED)
				continue;
			v = j == 0 ? ns->after == VWC_MODE_WRITE_BACK :
			    j == 1 ? (ns->decision.mode == VWC_MODE_NONE ? -1 :
				      ns->decision.mode == VWC_MODE_WRITE_BACK) :
			    j == 2 ? vwc_ns_drift(ns) : tri_num(ns->no_vwc);
			fputs(names[j][0], out);
			fputc('{', out);
			prom_label(out, "namespace", ns->name, false);
			prom_label(out, "controller",
				   ns->nr_ctrl ? r->topo.ctrls[ns->ctrl[0]].name :
						 "", true);
			prom_value(out, v);
		}
	}
	/*
	 * Every controller reaching a namespace (one per multipath path), for
	 * joins with the per-controller gauges: the namespace gauges above
	 * carry only the first controller.
	 */
	prom_head(out, "nvme_vwc_namespace_controller",
		  "1 for every controller reaching the namespace (multipath: one per path).");
	for (i = 0; i < r->topo.nr_ns; i++) {
		const struct vwc_ns *ns = &r->topo.ns[i];

		if (!ns->wanted || ns->action == VWC_ACT_FAILED)
			continue;
		for (j = 0; j < ns->nr_ctrl; j++) {
			fputs("nvme_vwc_namespace_controller{", out);
			prom_label(out, "namespace", ns->name, false);
			prom_label(out, "controller",
				   r->topo.ctrls[ns->ctrl[j]].name, true);
			fputs("} 1\n", out);
		}
	}
	prom_head(out, "nvme_vwc_hygon_cpu",
		  "1 if the CPU is Hygon (IRQ completion batching advisory).");
	fprintf(out, "nvme_vwc_hygon_cpu %d\n", vwc_cpu_is_hygon());
	prom_head(out, "nvme_vwc_audit_errors",
		  "Devices that could not be audited.");
	fprintf(out, "nvme_vwc_audit_errors %d\n", r->nr_errs + r->nr_failed);
}

/* PCI ID, or the transport of a fabrics controller */
static const char *where_str(const struct vwc_ctrl *c)
{
	return c->pci_id[0] ? c->pci_id : c->transport[0] ? c->transport : "-";
}

/* The cache a namespace's row shows: its own when it says it has none. */
static const char *ns_cache_str(const struct vwc_ctrl *c,
				const struct vwc_ns *ns)
{
	return ns->no_vwc == VWC_TRI_YES ? "namespace: no volatile cache" :
					   cache_str(c);
}

static void print_audit(const struct vwc_run *r, FILE *out)
{
	int *start = NULL, *idx = NULL;
	int i, j, k;

	if (ns_by_first(r, &start, &idx))
		start = idx = NULL;

	fprintf(out, "%-10s %-22s %-10s %-26s %-12s %-14s %-14s %s\n",
		"CONTROLLER", "MODEL", "PCI/TRANS", "CACHE", "NAMESPACE", "CURRENT",
		"RECOMMENDED", "STATE");
	for (i = 0; i < r->topo.nr_ctrls; i++) {
		const struct vwc_ctrl *c = &r->topo.ctrls[i];
		bool any = false;

		if (!c->probed)
			continue;
		k = start ? start[i] : 0;
		while ((j = next_ns(r, start, idx, i, &k)) >= 0) {
			const struct vwc_ns *ns = &r->topo.ns[j];

			any = true;
			fprintf(out, "%-10s %-22.22s %-10s %-26s %-12s %-14s %-14s %s\n",
				c->name, c->model, where_str(c),
				ns_cache_str(c, ns), ns->name,
				vwc_mode_str(ns->after),
				vwc_mode_str(ns->decision.mode),
				ns->action == VWC_ACT_FAILED ? "ERROR" :
				vwc_ns_drift(ns) ? "DRIFT" : "ok");
		}
		if (!any)
			fprintf(out, "%-10s %-22.22s %-10s %-26s %-12s\n", c->name,
				c->model, where_str(c), cache_str(c), "-");
		if (!c->pci_id[0] && c->transport[0])
			fprintf(out, "  %s: transport %s, target subsystem %s\n",
				c->name, c->transport,
				c->subsysnqn[0] ? c->subsysnqn : "unknown");
		if (c->hwdb_quirks[0])
			fprintf(out, "  %s: quirk database: %s; kernel: %s\n",
				c->name, c->hwdb_quirks,
				!c->has_kernel_quirks ? "does not say" :
				vwc_quirk_has(c->kernel_quirks, c->hwdb_quirks) ?
				"active" : "NOT active");
		if (c->wz_ignored)
			fprintf(out, "  %s: Write Zeroes quirk IGNORED by the kernel: %s\n",
				c->name, c->wz_ignored_why);
		if (c->facts.backup_failed == VWC_TRI_YES)
			fprintf(out, "  %s: volatile memory backup FAILED (SMART critical warning bit 4): write back forced\n",
				c->name);
		if (c->errmsg[0])
			fprintf(out, "  %s: error: %s\n", c->name, c->errmsg);
	}
	if (vwc_cpu_is_hygon())
		fprintf(out, "advisory: %s\n", vwc_hygon_advisory());
	free(start);
	free(idx);
}

void vwc_report_print(const struct vwc_run *r, enum vwc_format fmt,
		      FILE *out)
{
	if (fmt == VWC_FMT_PROMETHEUS) {
		print_prometheus(r, out);
		return;
	}
	if (fmt == VWC_FMT_NORMAL && !strcmp(r->command, "audit")) {
		print_audit(r, out);
		return;
	}
	if (fmt != VWC_FMT_JSON) {
		print_normal(r, out);
		return;
	}
	vwc_report_print_json(r, out);
}
