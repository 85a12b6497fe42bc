// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "quirk-db.h"
#include "report.h"

#define HYGON_ADVISORY "Hygon CPU: NVMe IRQ completion batching can cause an interrupt storm (kernel patch 'nvme-pci: Fix performance regression with completion batching for Hygon processors' measured +15% to +25% 4k randread IOPS without it). Check 'nvme vwc irq-stat' under load; optional mitigation: irq-coalescing in nvme-vwc-sync.conf(5)."

#define HYGON_KERNEL_HAS_IT "Hygon CPU: this kernel's nvme driver turns IRQ completion batching off on Hygon itself (it carries the kernel patch 'nvme-pci: Fix performance regression with completion batching for Hygon processors'): nothing to do."

/* the advisory for this host: what the kernel does, where it can tell */
static const char *hygon_advisory(void)
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

static struct json_object *list_json(const char *list)
{
	struct json_object *a = json_object_new_array();
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",\n ", &save); tok;
	     tok = strtok_r(NULL, ",\n ", &save))
		json_object_array_add(a, json_object_new_string(tok));
	return a;
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

static const char *override_str(enum vwc_override o)
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

static struct json_object *tri_json(enum vwc_tri t)
{
	if (t == VWC_TRI_UNKNOWN)
		return NULL;
	return json_object_new_boolean(t == VWC_TRI_YES);
}

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v ? v : ""));
}

static struct json_object *ctrl_json(const struct vwc_ctrl *c)
{
	struct json_object *o = json_object_new_object();

	add_str(o, "name", c->name);
	add_str(o, "model", c->model);
	add_str(o, "serial", c->serial);
	add_str(o, "firmware", c->firmware);
	add_str(o, "transport", c->transport);
	json_object_object_add(o, "subsysnqn", str_or_null(c->subsysnqn));
	json_object_object_add(o, "pci_id", str_or_null(c->pci_id));
	json_object_object_add(o, "vwc_present", tri_json(c->facts.present));
	add_str(o, "wce", vwc_tri_wce_str(c->facts.wce));
	json_object_object_add(o, "backup_failed",
			       tri_json(c->facts.backup_failed));
	add_str(o, "override", override_str(c->facts.override));
	add_str(o, "recommended", vwc_mode_str(c->decision.mode));
	add_str(o, "reason", vwc_reason_str(c->decision.reason));
	json_object_object_add(o, "irq_coalescing", str_or_null(c->irqc));
	json_object_object_add(o, "quirks_hwdb", list_json(c->hwdb_quirks));
	json_object_object_add(o, "quirks_kernel", c->has_kernel_quirks ?
			       list_json(c->kernel_quirks) : NULL);
	/* null, or why the kernel ignores disable_write_zeroes on it */
	json_object_object_add(o, "write_zeroes_quirk_ignored",
			       c->wz_ignored ?
			       json_object_new_string(c->wz_ignored_why) : NULL);
	json_object_object_add(o, "error", str_or_null(c->errmsg));
	return o;
}

static struct json_object *ns_json(const struct vwc_run *r,
				   const struct vwc_ns *ns)
{
	struct json_object *o = json_object_new_object();
	struct json_object *ctrls = json_object_new_array();
	int i;

	add_str(o, "name", ns->name);
	for (i = 0; i < ns->nr_ctrl; i++)
		json_object_array_add(ctrls, json_object_new_string(
				r->topo.ctrls[ns->ctrl[i]].name));
	json_object_object_add(o, "controllers", ctrls);
	add_str(o, "write_cache_before", vwc_mode_str(ns->before));
	add_str(o, "write_cache_after", vwc_mode_str(ns->after));
	json_object_object_add(o, "ns_no_volatile_cache",
			       tri_json(ns->no_vwc));
	add_str(o, "recommended", vwc_mode_str(ns->decision.mode));
	add_str(o, "action", vwc_action_str(ns->action));
	add_str(o, "reason", vwc_reason_str(ns->decision.reason));
	json_object_object_add(o, "drift",
			       json_object_new_boolean(vwc_ns_drift(ns)));
	json_object_object_add(o, "error", str_or_null(ns->errmsg));
	return o;
}

struct json_object *vwc_report_json(const struct vwc_run *r)
{
	struct json_object *root = json_object_new_object();
	struct json_object *ctrls = json_object_new_array();
	struct json_object *nss = json_object_new_array();
	struct json_object *errs = json_object_new_array();
	int i;

	if (!root || !ctrls || !nss || !errs) {
		json_object_put(root);
		json_object_put(ctrls);
		json_object_put(nss);
		json_object_put(errs);
		return NULL;
	}
	json_object_object_add(root, "schema_version",
			       json_object_new_int(1));
	add_str(root, "command", r->command);
	json_object_object_add(root, "dry_run",
			       json_object_new_boolean(r->dry_run));
	for (i = 0; i < r->topo.nr_ctrls; i++)
		if (r->topo.ctrls[i].probed)
			json_object_array_add(ctrls,
					      ctrl_json(&r->topo.ctrls[i]));
	for (i = 0; i < r->topo.nr_ns; i++)
		if (r->topo.ns[i].wanted)
			json_object_array_add(nss,
					      ns_json(r, &r->topo.ns[i]));
	for (i = 0; i < r->nr_errs; i++) {
		struct json_object *e = json_object_new_object();

		add_str(e, "device", r->errs[i].device);
		add_str(e, "error", r->errs[i].msg);
		json_object_array_add(errs, e);
	}
	{
		struct json_object *host = json_object_new_object();
		struct json_object *adv = json_object_new_array();

		add_str(host, "cpu_vendor", vwc_cpu_vendor());
		if (vwc_cpu_is_hygon())
			json_object_array_add(adv,
				json_object_new_string(hygon_advisory()));
		json_object_object_add(host, "advisories", adv);
		json_object_object_add(root, "host", host);
	}
	json_object_object_add(root, "controllers", ctrls);
	json_object_object_add(root, "namespaces", nss);
	json_object_object_add(root, "errors", errs);
	return root;
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
	fprintf(out, "%s=\"", k);
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
			fprintf(out, "%s{", names[j][0]);
			prom_label(out, "namespace", ns->name, false);
			prom_label(out, "controller",
				   ns->nr_ctrl ? r->topo.ctrls[ns->ctrl[0]].name :
						 "", true);
			fprintf(out, "} %d\n", v);
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
			fprintf(out, "nvme_vwc_namespace_controller{");
			prom_label(out, "namespace", ns->name, false);
			prom_label(out, "controller",
				   r->topo.ctrls[ns->ctrl[j]].name, true);
			fprintf(out, "} 1\n");
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
		fprintf(out, "advisory: %s\n", hygon_advisory());
	free(start);
	free(idx);
}

/*
 * The JSON report written as it is walked, byte for byte what json-c
 * prints of vwc_report_json()'s tree with JSON_C_TO_STRING_PRETTY |
 * SPACED | NOSLASHESCAPE (the unit test json compares them): the tree of
 * a thousand namespaces, built, printed and freed, cost the audit more
 * than its scan of sysfs did. Objects and arrays open and close through
 * jw_open() and jw_close(); a member is a jw_key() then one value.
 */
struct jw {
	FILE *out;
	int level;
	bool any[16];	/* by level: a member or an item written */
};

/* the stream is locked once for the document (print_json()) */
static void jw_put(struct jw *w, const char *p, size_t n)
{
	fwrite_unlocked(p, 1, n, w->out);
}

static void jw_puts(struct jw *w, const char *p)
{
	jw_put(w, p, strlen(p));
}

static void jw_indent(struct jw *w, int level)
{
	static const char sp[] = "\n                                ";

	jw_put(w, sp, 1 + (size_t)(level > 0 ? 2 * level : 0));
}

/* the separator and indentation before a member or an array item */
static void jw_next(struct jw *w)
{
	if (w->any[w->level])
		fputc_unlocked(',', w->out);
	w->any[w->level] = true;
	jw_indent(w, w->level);
}

static void jw_open(struct jw *w, char c)
{
	fputc_unlocked(c, w->out);
	if (w->level < (int)(sizeof(w->any) / sizeof(w->any[0])) - 1)
		w->any[++w->level] = false;
}

static void jw_close(struct jw *w, char c)
{
	/* json-c breaks the line before an array's end even when empty */
	if (w->any[w->level] || c == ']')
		jw_indent(w, w->level - 1);
	w->level--;
	fputc_unlocked(c, w->out);
}

static void jw_key(struct jw *w, const char *k)
{
	jw_next(w);
	fputc_unlocked('"', w->out);
	jw_puts(w, k);
	jw_put(w, "\": ", 3);
}

/* a string as json-c escapes it (with '/' left as it is) */
static void jw_str(struct jw *w, const char *v)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)v, *run = p;

	fputc_unlocked('"', w->out);
	for (; *p; p++) {
		const char *e = NULL;
		char u[7];

		switch (*p) {
		case '\b': e = "\\b"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		case '\f': e = "\\f"; break;
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		default:
			if (*p >= ' ')
				continue;
			u[0] = '\\';
			u[1] = 'u';
			u[2] = u[3] = '0';
			u[4] = hex[*p >> 4];
			u[5] = hex[*p & 0xf];
			u[6] = '\0';
			e = u;
		}
		jw_put(w, (const char *)run, p - run);
		jw_puts(w, e);
		run = p + 1;
	}
	jw_put(w, (const char *)run, p - run);
	fputc_unlocked('"', w->out);
}

static void jw_kstr(struct jw *w, const char *k, const char *v)
{
	jw_key(w, k);
	jw_str(w, v ? v : "");
}

static void jw_kstr_or_null(struct jw *w, const char *k, const char *v)
{
	jw_key(w, k);
	if (v && *v)
		jw_str(w, v);
	else
		jw_put(w, "null", 4);
}

static void jw_ktri(struct jw *w, const char *k, enum vwc_tri t)
{
	jw_key(w, k);
	jw_puts(w, t == VWC_TRI_UNKNOWN ? "null" : t == VWC_TRI_YES ? "true" :
		"false");
}

/* list_json()'s array: the words of @list, cut where it cuts them */
static void jw_list(struct jw *w, const char *list)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	jw_open(w, '[');
	for (tok = strtok_r(buf, ",\n ", &save); tok;
	     tok = strtok_r(NULL, ",\n ", &save)) {
		jw_next(w);
		jw_str(w, tok);
	}
	jw_close(w, ']');
}

static void ctrl_jw(struct jw *w, const struct vwc_ctrl *c)
{
	jw_open(w, '{');
	jw_kstr(w, "name", c->name);
	jw_kstr(w, "model", c->model);
	jw_kstr(w, "serial", c->serial);
	jw_kstr(w, "firmware", c->firmware);
	jw_kstr(w, "transport", c->transport);
	jw_kstr_or_null(w, "subsysnqn", c->subsysnqn);
	jw_kstr_or_null(w, "pci_id", c->pci_id);
	jw_ktri(w, "vwc_present", c->facts.present);
	jw_kstr(w, "wce", vwc_tri_wce_str(c->facts.wce));
	jw_ktri(w, "backup_failed", c->facts.backup_failed);
	jw_kstr(w, "override", override_str(c->facts.override));
	jw_kstr(w, "recommended", vwc_mode_str(c->decision.mode));
	jw_kstr(w, "reason", vwc_reason_str(c->decision.reason));
	jw_kstr_or_null(w, "irq_coalescing", c->irqc);
	jw_key(w, "quirks_hwdb");
	jw_list(w, c->hwdb_quirks);
	jw_key(w, "quirks_kernel");
	if (c->has_kernel_quirks)
		jw_list(w, c->kernel_quirks);
	else
		jw_put(w, "null", 4);
	jw_key(w, "write_zeroes_quirk_ignored");
	if (c->wz_ignored)
		jw_str(w, c->wz_ignored_why);
	else
		jw_put(w, "null", 4);
	jw_kstr_or_null(w, "error", c->errmsg);
	jw_close(w, '}');
}

static void ns_jw(struct jw *w, const struct vwc_run *r,
		  const struct vwc_ns *ns)
{
	int i;

	jw_open(w, '{');
	jw_kstr(w, "name", ns->name);
	jw_key(w, "controllers");
	jw_open(w, '[');
	for (i = 0; i < ns->nr_ctrl; i++) {
		jw_next(w);
		jw_str(w, r->topo.ctrls[ns->ctrl[i]].name);
	}
	jw_close(w, ']');
	jw_kstr(w, "write_cache_before", vwc_mode_str(ns->before));
	jw_kstr(w, "write_cache_after", vwc_mode_str(ns->after));
	jw_ktri(w, "ns_no_volatile_cache", ns->no_vwc);
	jw_kstr(w, "recommended", vwc_mode_str(ns->decision.mode));
	jw_kstr(w, "action", vwc_action_str(ns->action));
	jw_kstr(w, "reason", vwc_reason_str(ns->decision.reason));
	jw_key(w, "drift");
	jw_puts(w, vwc_ns_drift(ns) ? "true" : "false");
	jw_kstr_or_null(w, "error", ns->errmsg);
	jw_close(w, '}');
}

/* vwc_report_json()'s document, in its order, then a newline */
static void print_json(const struct vwc_run *r, FILE *out)
{
	struct jw w = { .out = out };
	int i;

	flockfile(out);
	jw_open(&w, '{');
	jw_key(&w, "schema_version");
	jw_puts(&w, "1");
	jw_kstr(&w, "command", r->command);
	jw_key(&w, "dry_run");
	jw_puts(&w, r->dry_run ? "true" : "false");
	jw_key(&w, "host");
	jw_open(&w, '{');
	jw_kstr(&w, "cpu_vendor", vwc_cpu_vendor());
	jw_key(&w, "advisories");
	jw_open(&w, '[');
	if (vwc_cpu_is_hygon()) {
		jw_next(&w);
		jw_str(&w, hygon_advisory());
	}
	jw_close(&w, ']');
	jw_close(&w, '}');
	jw_key(&w, "controllers");
	jw_open(&w, '[');
	for (i = 0; i < r->topo.nr_ctrls; i++) {
		if (!r->topo.ctrls[i].probed)
			continue;
		jw_next(&w);
		ctrl_jw(&w, &r->topo.ctrls[i]);
	}
	jw_close(&w, ']');
	jw_key(&w, "namespaces");
	jw_open(&w, '[');
	for (i = 0; i < r->topo.nr_ns; i++) {
		if (!r->topo.ns[i].wanted)
			continue;
		jw_next(&w);
		ns_jw(&w, r, &r->topo.ns[i]);
	}
	jw_close(&w, ']');
	jw_key(&w, "errors");
	jw_open(&w, '[');
	for (i = 0; i < r->nr_errs; i++) {
		jw_next(&w);
		jw_open(&w, '{');
		jw_kstr(&w, "device", r->errs[i].device);
		jw_kstr(&w, "error", r->errs[i].msg);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_close(&w, '}');
	fputc_unlocked('\n', out);
	funlockfile(out);
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
	print_json(r, out);
}
