// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <string.h>

#include "report.h"

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
	json_object_object_add(o, "pci_id", str_or_null(c->pci_id));
	json_object_object_add(o, "vwc_present", tri_json(c->facts.present));
	add_str(o, "wce", vwc_tri_wce_str(c->facts.wce));
	json_object_object_add(o, "backup_failed",
			       tri_json(c->facts.backup_failed));
	add_str(o, "override", override_str(c->facts.override));
	add_str(o, "recommended", vwc_mode_str(c->decision.mode));
	add_str(o, "reason", vwc_reason_str(c->decision.reason));
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
	add_str(o, "recommended", vwc_mode_str(ns->decision.mode));
	add_str(o, "action", vwc_action_str(ns->action));
	add_str(o, "reason", vwc_reason_str(ns->decision.reason));
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

static void print_normal(const struct vwc_run *r, FILE *out)
{
	int i, j;

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
		for (j = 0; j < r->topo.nr_ns; j++) {
			const struct vwc_ns *ns = &r->topo.ns[j];

			if (!ns->wanted || ns->ctrl[0] != i)
				continue;
			fprintf(out, "  %-12s %s -> %s  (%s%s%s)\n", ns->name,
				vwc_mode_str(ns->before),
				vwc_mode_str(ns->after),
				vwc_action_str(ns->action),
				ns->errmsg[0] ? ": " : "", ns->errmsg);
		}
	}
	if (!r->topo.nr_ctrls && !r->nr_errs)
		fprintf(out, "no NVMe controller found\n");
}

void vwc_report_print(const struct vwc_run *r, enum vwc_format fmt,
		      FILE *out)
{
	struct json_object *o;

	if (fmt != VWC_FMT_JSON) {
		print_normal(r, out);
		return;
	}
	o = vwc_report_json(r);
	if (!o)
		return;
	fprintf(out, "%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}
