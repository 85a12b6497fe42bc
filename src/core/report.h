/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: report.h - what a run found and did, for people and for programs
 *
 * JSON schema (version 1), stable; documented in nvme-vwc-sync(8):
 *
 *	{ "schema_version": 1, "command": "sync", "dry_run": false,
 *	  "controllers": [ { "name", "model", "serial", "firmware",
 *	      "transport", "subsysnqn" (string or null), "pci_id" (string
 *	      or null), "vwc_present"
 *	      (true/false/null), "wce" ("enabled"|"disabled"|"unknown"),
 *	      "backup_failed" (true/false/null), "override",
 *	      "recommended" ("write back"|"write through"|"none"),
 *	      "reason", "irq_coalescing" (outcome or null when not
 *	      configured), "quirks_hwdb": [names], "quirks_kernel": [names]
 *	      or null when the kernel does not say,
 *	      "write_zeroes_quirk_ignored" (why the kernel ignores
 *	      disable_write_zeroes on it, or null), "error" } ],
 *	  "host": { "cpu_vendor", "advisories": [text] },
 *	  "namespaces": [ { "name", "controllers": [names],
 *	      "write_cache_before", "write_cache_after",
 *	      "ns_no_volatile_cache" (true/false/null), "recommended",
 *	      "action" ("changed"|"unchanged"|"would-change"|"skipped"|
 *	      "failed"), "reason", "drift" (bool), "error" (string or null) } ],
 *	  "errors": [ { "device", "error" } ] }
 */
#ifndef VWC_REPORT_H
#define VWC_REPORT_H

#include <stdio.h>

#include <json-c/json.h>

#include "engine.h"

/** enum vwc_format - output formats (-o) */
enum vwc_format {
	VWC_FMT_NORMAL,
	VWC_FMT_JSON,
	VWC_FMT_PROMETHEUS,
};

/**
 * vwc_format_parse() - parse an -o value
 * @s:		"normal", "json" or "prometheus"
 * @fmt:	result
 *
 * Return: 0 or -EINVAL.
 */
int vwc_format_parse(const char *s, enum vwc_format *fmt);

/**
 * vwc_action_str() - JSON spelling of an action
 * @a:	action
 *
 * Return: a static string.
 */
const char *vwc_action_str(enum vwc_action a);

/**
 * vwc_ns_drift() - does a namespace differ from what the policy says
 * @ns:	namespace (decision and after filled)
 *
 * Return: true on drift.
 */
bool vwc_ns_drift(const struct vwc_ns *ns);

/**
 * vwc_override_str() - JSON and report spelling of an override
 * @o:	override
 *
 * Return: a static string ("auto", "write-back" or "ignore").
 */
const char *vwc_override_str(enum vwc_override o);

/**
 * vwc_hygon_advisory() - the Hygon advisory for this host
 *
 * What the running kernel does about IRQ completion batching on Hygon,
 * where it can tell, and what an admin can do.
 *
 * Return: a static string.
 */
const char *vwc_hygon_advisory(void);

/**
 * vwc_report_print_json() - print the run as JSON (schema above)
 * @r:		run
 * @out:	stream
 *
 * Written as the run is walked, in one pretty text on every distribution
 * (report-json.c), then a newline.
 */
void vwc_report_print_json(const struct vwc_run *r, FILE *out);

/**
 * vwc_report_json() - the run as a JSON object (schema above)
 * @r:	run
 *
 * vwc_report_print_json()'s text, read back by json-c.
 *
 * Return: a new object, or NULL on allocation failure.
 */
struct json_object *vwc_report_json(const struct vwc_run *r);

/**
 * vwc_report_print() - print the run
 * @r:		run
 * @fmt:	format
 * @out:	stream
 */
void vwc_report_print(const struct vwc_run *r, enum vwc_format fmt,
		      FILE *out);

#endif
