// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The JSON report (-o json, schema in report.h): written as the run is
 * walked, the one writer of the schema, in the pretty text json-c 0.16
 * prints (two spaces an indent, "key": value, '/' as it is, an empty
 * array on two lines), the same on every distribution whatever json-c it
 * has (0.17 and later print an empty array on one line). A json-c tree of
 * a thousand namespaces, built, printed and freed, cost an audit more
 * than its scan of sysfs did. vwc_report_json() reads this text back for
 * the callers that want a tree, so that the unit test json checks this
 * writer's document.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "report.h"

/*
 * Objects and arrays open and close through jw_open() and jw_close(); a
 * member is a jw_key() then one value.
 */
struct jw {
	FILE *out;
	int level;
	bool any[16];	/* by level: a member or an item written */
};

/* the stream is locked once for the document (vwc_report_print_json()) */
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
	jw_kstr(w, "override", vwc_override_str(c->facts.override));
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

void vwc_report_print_json(const struct vwc_run *r, FILE *out)
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
		jw_str(&w, vwc_hygon_advisory());
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

struct json_object *vwc_report_json(const struct vwc_run *r)
{
	struct json_object *o;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	vwc_report_print_json(r, f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	o = json_tokener_parse(text);
	free(text);
	return o;
}
