// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The JSON report: built from a run, serialized, parsed back with json-c
 * and checked field by field (never compared as a string).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "report.h"
#include "tap.h"

static const char *get_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

static bool is_null(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && !v;
}

int main(void)
{
	struct vwc_ctrl ctrls[2];
	struct vwc_ns ns[2];
	struct vwc_arg_error err = { "/dev/null", "not an NVMe device" };
	struct vwc_run r;
	struct json_object *o, *back, *a, *c0, *c1, *n0, *v;
	const char *text;

	static int ctrl0;	/* index of nvme0 */

	memset(&r, 0, sizeof(r));
	memset(ctrls, 0, sizeof(ctrls));
	memset(ns, 0, sizeof(ns));
	r.command = "sync";
	r.topo.ctrls = ctrls;
	r.topo.nr_ctrls = 2;
	r.topo.ns = ns;
	r.topo.nr_ns = 2;
	r.errs = &err;
	r.nr_errs = 1;

	strcpy(ctrls[0].name, "nvme0");
	strcpy(ctrls[0].model, "QEMU NVMe Ctrl");
	strcpy(ctrls[0].serial, "VWC0 \"quoted\"");
	strcpy(ctrls[0].pci_id, "1b36:0010");
	ctrls[0].probed = true;
	ctrls[0].facts = (struct vwc_facts){ VWC_TRI_YES, VWC_TRI_NO,
					     VWC_TRI_NO, 0 };
	ctrls[0].decision = vwc_policy_decide(&ctrls[0].facts);
	strcpy(ctrls[1].name, "nvme1");
	ctrls[1].probed = true;
	ctrls[1].facts = (struct vwc_facts){ VWC_TRI_YES, VWC_TRI_UNKNOWN,
					     VWC_TRI_UNKNOWN, 0 };
	ctrls[1].decision = vwc_policy_decide(&ctrls[1].facts);
	strcpy(ctrls[1].errmsg, "Get Features 06h failed: NVMe status 0x2");

	strcpy(ns[0].name, "nvme0n1");
	ns[0].wanted = true;
	ns[0].ctrl = &ctrl0;
	ns[0].nr_ctrl = 1;
	ns[0].before = VWC_MODE_WRITE_BACK;
	ns[0].after = VWC_MODE_WRITE_THROUGH;
	ns[0].action = VWC_ACT_CHANGED;
	ns[0].decision = ctrls[0].decision;
	strcpy(ns[1].name, "nvme1n1");	/* not selected: not reported */

	o = vwc_report_json(&r);
	ok(o != NULL, "report built");
	text = json_object_to_json_string(o);
	back = json_tokener_parse(text);
	ok(back != NULL, "report parses back");

	ok(json_object_object_get_ex(back, "schema_version", &v) &&
	   json_object_get_int(v) == 1, "schema_version 1");
	is_str(get_str(back, "command"), "sync", "command");
	ok(json_object_object_get_ex(back, "dry_run", &v) &&
	   !json_object_get_boolean(v), "dry_run false");

	ok(json_object_object_get_ex(back, "controllers", &a) &&
	   json_object_array_length(a) == 2, "two controllers");
	c0 = json_object_array_get_idx(a, 0);
	c1 = json_object_array_get_idx(a, 1);
	is_str(get_str(c0, "name"), "nvme0", "controller name");
	is_str(get_str(c0, "serial"), "VWC0 \"quoted\"", "serial escaped");
	is_str(get_str(c0, "pci_id"), "1b36:0010", "pci_id");
	ok(json_object_object_get_ex(c0, "vwc_present", &v) &&
	   json_object_get_boolean(v), "vwc_present true");
	is_str(get_str(c0, "wce"), "disabled", "wce disabled");
	is_str(get_str(c0, "recommended"), "write through", "recommended");
	ok(is_null(c0, "error"), "no error is null");
	is_str(get_str(c1, "wce"), "unknown", "wce unknown");
	is_str(get_str(c1, "recommended"), "write back",
	       "unknown means write back");
	ok(is_null(c1, "pci_id"), "no PCI id is null (fabrics)");
	ok(is_null(c1, "backup_failed"), "SMART unknown is null");
	is_str(get_str(c1, "error"), "Get Features 06h failed: NVMe status 0x2",
	       "controller error");

	ok(json_object_object_get_ex(back, "namespaces", &a) &&
	   json_object_array_length(a) == 1, "only selected namespaces");
	n0 = json_object_array_get_idx(a, 0);
	is_str(get_str(n0, "name"), "nvme0n1", "namespace name");
	is_str(get_str(n0, "write_cache_before"), "write back", "before");
	is_str(get_str(n0, "write_cache_after"), "write through", "after");
	is_str(get_str(n0, "action"), "changed", "action");
	ok(json_object_object_get_ex(n0, "controllers", &v) &&
	   json_object_array_length(v) == 1 &&
	   !strcmp(json_object_get_string(json_object_array_get_idx(v, 0)),
		   "nvme0"), "namespace controllers");

	/* every member report.h's schema names, in the writer's objects */
	{
		static const char *const top[] = { "schema_version", "command",
			"dry_run", "host", "controllers", "namespaces", "errors" };
		static const char *const ck[] = { "name", "model", "serial",
			"firmware", "transport", "subsysnqn", "pci_id",
			"vwc_present", "wce", "backup_failed", "override",
			"recommended", "reason", "irq_coalescing", "quirks_hwdb",
			"quirks_kernel", "write_zeroes_quirk_ignored", "error" };
		static const char *const nk[] = { "name", "controllers",
			"write_cache_before", "write_cache_after",
			"ns_no_volatile_cache", "recommended", "action",
			"reason", "drift", "error" };
		struct json_object *h = NULL;
		size_t k, miss = 0;

		for (k = 0; k < sizeof(top) / sizeof(top[0]); k++)
			miss += !json_object_object_get_ex(back, top[k], NULL);
		for (k = 0; k < sizeof(ck) / sizeof(ck[0]); k++)
			miss += !json_object_object_get_ex(c0, ck[k], NULL) +
				!json_object_object_get_ex(c1, ck[k], NULL);
		for (k = 0; k < sizeof(nk) / sizeof(nk[0]); k++)
			miss += !json_object_object_get_ex(n0, nk[k], NULL);
		miss += !json_object_object_get_ex(back, "host", &h) ||
			!json_object_object_get_ex(h, "cpu_vendor", NULL) ||
			!json_object_object_get_ex(h, "advisories", NULL);
		ok(miss == 0 && json_object_object_length(c0) ==
		   (int)(sizeof(ck) / sizeof(ck[0])) &&
		   json_object_object_length(n0) ==
		   (int)(sizeof(nk) / sizeof(nk[0])),
		   "every member of the schema, and no other (%zu missing)",
		   miss);
	}

	ok(json_object_object_get_ex(back, "errors", &a) &&
	   json_object_array_length(a) == 1, "one error");
	is_str(get_str(json_object_array_get_idx(a, 0), "device"), "/dev/null",
	       "error names the device");

	json_object_put(o);
	json_object_put(back);

	/*
	 * What -o json prints is written as the report is walked: JSON that
	 * json-c reads back whole, every kind of value (escapes, control
	 * bytes, a slash, UTF-8, nulls, lists, empty ones) as it was, in
	 * the same pretty text on every distribution (json-c 0.17 and later
	 * print an empty array in one line; this writer does not follow the
	 * library's version)
	 */
	{
		static int two[] = { 0, 1 };
		static const char why[] = "tab\there/slash \\ \x01\x1f \xc3\xa9";
		static const char err[] = "cannot read \"x\"\r\b\f";
		struct json_tokener *tok = json_tokener_new();
		struct json_object *doc = NULL, *cs = NULL, *nss = NULL, *q;
		struct json_object *c0j = NULL, *c1j = NULL, *ns1 = NULL;
		char *mem = NULL;
		size_t len = 0;
		FILE *f;

		strcpy(ctrls[0].hwdb_quirks, "disable_write_zeroes,other");
		ctrls[0].has_kernel_quirks = true;
		strcpy(ctrls[0].kernel_quirks, "a\nb c");
		ctrls[0].wz_ignored = true;
		strcpy(ctrls[0].wz_ignored_why, why);
		strcpy(ctrls[0].subsysnqn, "nqn.2014-08.org.nvmexpress:uuid/x");
		strcpy(ctrls[1].irqc, "threshold 1 time 2: set");
		ctrls[1].has_kernel_quirks = true;	/* an empty list */
		ns[1].wanted = true;
		ns[1].ctrl = two;
		ns[1].nr_ctrl = 2;
		ns[1].no_vwc = VWC_TRI_YES;
		strcpy(ns[1].errmsg, err);
		r.dry_run = true;
		f = open_memstream(&mem, &len);
		if (f) {
			vwc_report_print(&r, VWC_FMT_JSON, f);
			fclose(f);
		}
		/* (json-c 0.17's strict mode takes no UTF-8 in strings) */
		if (tok && mem && len)
			doc = json_tokener_parse_ex(tok, mem, (int)len - 1);
		ok(doc && json_tokener_get_parse_end(tok) == len - 1 &&
		   mem[len - 1] == '\n',
		   "-o json: JSON read back whole, then a newline (%zu bytes)",
		   len);
		/* (json-c 0.18 asserts on a lookup in what is not an array) */
		if (json_object_object_get_ex(doc, "controllers", &cs) &&
		    json_object_is_type(cs, json_type_array) &&
		    json_object_array_length(cs) == 2) {
			c0j = json_object_array_get_idx(cs, 0);
			c1j = json_object_array_get_idx(cs, 1);
		}
		if (json_object_object_get_ex(doc, "namespaces", &nss) &&
		    json_object_is_type(nss, json_type_array) &&
		    json_object_array_length(nss) == 2)
			ns1 = json_object_array_get_idx(nss, 1);
		ok(mem && !strncmp(mem, "{\n  \"schema_version\": 1,\n  \"command\": \"sync\",\n", 45) &&
		   strstr(mem, "\"quirks_kernel\": [\n      ]") &&
		   strstr(mem, "uuid/x\""),
		   "-o json: the writer's pretty text (two spaces an indent, an empty list on two lines, '/' as it is)");
		is_str(c0j ? get_str(c0j, "write_zeroes_quirk_ignored") : "",
		       why,
		       "-o json: tab, backslash, control bytes, UTF-8 read back as they were");
		ok(json_object_object_get_ex(c0j, "quirks_kernel", &q) &&
		   json_object_is_type(q, json_type_array) &&
		   json_object_array_length(q) == 3 &&
		   !strcmp(json_object_get_string(json_object_array_get_idx(q, 2)), "c"),
		   "-o json: a list cut at newlines and spaces");
		ok(json_object_object_get_ex(c1j, "quirks_kernel", &q) &&
		   json_object_is_type(q, json_type_array) &&
		   json_object_array_length(q) == 0, "-o json: an empty list");
		is_str(ns1 ? get_str(ns1, "error") : "", err,
		       "-o json: quote, CR, BS and FF read back as they were");
		ok(json_object_object_get_ex(ns1, "ns_no_volatile_cache", &q) &&
		   json_object_get_boolean(q) &&
		   json_object_object_get_ex(ns1, "controllers", &q) &&
		   json_object_is_type(q, json_type_array) &&
		   json_object_array_length(q) == 2,
		   "-o json: the namespace's own bit, its two controllers");
		json_object_put(doc);
		json_tokener_free(tok);
		free(mem);
		r.nr_errs = 0;
		o = vwc_report_json(&r);
		ok(o && json_object_object_get_ex(o, "errors", &q) &&
		   json_object_is_type(q, json_type_array) &&
		   json_object_array_length(q) == 0,
		   "-o json: no error, an empty list (vwc_report_json() reads the text back)");
		json_object_put(o);
		r.nr_errs = 1;
		r.dry_run = false;
		ns[1].wanted = false;
	}

	/* Prometheus text: every sample line in the exposition grammar */
	{
		static const char *sample_re =
			"^[a-zA-Z_:][a-zA-Z0-9_:]*"
			"(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\""
			"(,[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\")*\\})?"
			" -?[0-9]+$";
		char *buf = NULL, *line, *save = NULL;
		size_t len = 0;
		int samples = 0, bad = 0, typed = 0, rc;
		regex_t re;
		FILE *f = open_memstream(&buf, &len);

		ns[0].after = VWC_MODE_WRITE_BACK;	/* drift */
		strcpy(ctrls[0].hwdb_quirks, "disable_write_zeroes");
		vwc_report_print(&r, VWC_FMT_PROMETHEUS, f);
		fclose(f);
		ok(strstr(buf, "nvme_vwc_namespace_drift{namespace=\"nvme0n1\",controller=\"nvme0\"} 1") != NULL,
		   "prometheus: drift sample");
		ok(strstr(buf, "serial=\"VWC0 \\\"quoted\\\"\"") != NULL,
		   "prometheus: label value escaped");
		/* once: ok() evaluates its condition twice */
		rc = regcomp(&re, sample_re, REG_EXTENDED | REG_NOSUB);
		ok(!rc, "sample regex compiles");
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(line, "# TYPE ", 7))
				typed++;
			if (line[0] == '#')
				continue;
			samples++;
			if (regexec(&re, line, 0, NULL, 0)) {
				bad++;
				printf("# bad sample: %s\n", line);
			}
		}
		ok(samples > 10 && !bad, "prometheus: %d samples, all well formed",
		   samples);
		ok(typed >= 12, "prometheus: a TYPE line per family (%d)", typed);
		regfree(&re);
		free(buf);
	}
	return tap_done();
}
