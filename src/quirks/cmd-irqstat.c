// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * irq-stat: interrupts per NVMe queue and completions per interrupt over
 * a sampling window, the figures of the kernel patch "nvme-pci: Fix
 * performance regression with completion batching for Hygon processors".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "irqstat.h"
#include "log.h"
#include "cpu.h"

#define MAX_QUEUES 1024

struct sample {
	char queue[MAX_QUEUES][32];
	unsigned long long irq[MAX_QUEUES];
	int nr;
	unsigned long long *compl;	/* per controller */
};

static int read_interrupts(struct sample *s)
{
	char *line = NULL;
	size_t cap = 0;
	int ncpu = 0;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -1;
	s->nr = 0;
	while (getline(&line, &cap, f) > 0) {
		if (!ncpu) {
			ncpu = vwc_irq_count_cpus(line);
			continue;
		}
		if (s->nr < MAX_QUEUES &&
		    vwc_irq_parse_line(line, ncpu, s->queue[s->nr],
				       sizeof(s->queue[0]), &s->irq[s->nr]))
			s->nr++;
	}
	free(line);
	fclose(f);
	return 0;
}

static void read_completions(const struct vwc_run *r, unsigned long long *c)
{
	int i, j;

	for (i = 0; i < r->topo.nr_ctrls; i++)
		c[i] = 0;
	for (i = 0; i < r->topo.nr_ns; i++) {
		const struct vwc_ns *ns = &r->topo.ns[i];
		char path[VWC_PATH_LEN + 8], buf[512];
		unsigned long long v;
		FILE *f;

		snprintf(path, sizeof(path), "%s/stat", ns->syspath);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && !vwc_stat_completions(buf, &v))
			for (j = 0; j < ns->nr_ctrl; j++)
				c[ns->ctrl[j]] += v;
		fclose(f);
	}
}

/* "nvme0q3" -> controller index */
static int queue_ctrl(const struct vwc_run *r, const char *queue)
{
	char name[VWC_NAME_LEN];
	size_t n = strcspn(queue, "q");

	if (n >= sizeof(name))
		return -1;
	memcpy(name, queue, n);
	name[n] = '\0';
	return vwc_topo_find_ctrl(&r->topo, name);
}

int cmd_irq_stat(int argc, char **argv)
{
	struct sample *a, *b;
	struct json_object *root = NULL, *qs = NULL, *cs = NULL;
	struct vwc_opts o;
	struct vwc_run r;
	struct timespec ts;
	int i, j, ret = VWC_EXIT_ERROR;

	if (vwc_opts_parse(argc, argv, &o, "irq-stat"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s irq-stat [--interval=<seconds>] [-o normal|json]\n\n"
		       "Sample /proc/interrupts and the namespaces' stat files over the interval\n"
		       "(default 1 s) and print interrupts per NVMe queue and, per controller,\n"
		       "completed requests per interrupt (low values under load: an interrupt\n"
		       "storm, as measured on Hygon CPUs with IRQ completion batching; see the\n"
		       "Hygon advisory of 'nvme vwc audit').\n", vwc_prog);
		return 0;
	}
	if (o.fmt == VWC_FMT_PROMETHEUS) {
		vwc_err("irq-stat: -o prometheus is for 'audit'");
		return VWC_EXIT_USAGE;
	}
	if (vwc_run_init(&r, "irq-stat", NULL))
		return VWC_EXIT_ERROR;
	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	if (!a || !b)
		goto out;
	a->compl = calloc(r.topo.nr_ctrls + 1, sizeof(*a->compl));
	b->compl = calloc(r.topo.nr_ctrls + 1, sizeof(*b->compl));
	if (!a->compl || !b->compl)
		goto out;
	if (read_interrupts(a)) {
		vwc_err("cannot read /proc/interrupts");
		goto out;
	}
	read_completions(&r, a->compl);
	ts.tv_sec = (time_t)o.interval;
	ts.tv_nsec = (long)((o.interval - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	read_interrupts(b);
	read_completions(&r, b->compl);

	if (o.fmt == VWC_FMT_JSON) {
		root = json_object_new_object();
		qs = json_object_new_array();
		cs = json_object_new_array();
		json_object_object_add(root, "interval_s",
				       json_object_new_double(o.interval));
		json_object_object_add(root, "cpu_vendor",
				       json_object_new_string(vwc_cpu_vendor()));
		json_object_object_add(root, "hygon",
				       json_object_new_boolean(vwc_cpu_is_hygon()));
	} else {
		printf("interval %.2f s, CPU vendor %s%s\n", o.interval,
		       vwc_cpu_vendor()[0] ? vwc_cpu_vendor() : "unknown",
		       vwc_cpu_is_hygon() ? " (Hygon: see the completion batching advisory in 'nvme vwc audit')" : "");
		printf("%-12s %12s %12s\n", "QUEUE", "INTERRUPTS", "PER SECOND");
	}
	for (i = 0; i < b->nr; i++) {
		unsigned long long before = 0, d;

		for (j = 0; j < a->nr; j++)
			if (!strcmp(a->queue[j], b->queue[i]))
				before = a->irq[j];
		d = b->irq[i] - before;
		if (qs) {
			struct json_object *q = json_object_new_object();

			json_object_object_add(q, "queue",
					       json_object_new_string(b->queue[i]));
			json_object_object_add(q, "interrupts",
					       json_object_new_int64((int64_t)d));
			json_object_array_add(qs, q);
		} else {
			printf("%-12s %12llu %12.0f\n", b->queue[i], d,
			       (double)d / o.interval);
		}
	}
	if (!qs)
		printf("\n%-12s %12s %12s %16s\n", "CONTROLLER", "INTERRUPTS",
		       "COMPLETIONS", "COMPL/INTERRUPT");
	for (i = 0; i < r.topo.nr_ctrls; i++) {
		unsigned long long irqs = 0, done;

		for (j = 0; j < b->nr; j++) {
			unsigned long long before = 0;
			int k;

			if (queue_ctrl(&r, b->queue[j]) != i)
				continue;
			for (k = 0; k < a->nr; k++)
				if (!strcmp(a->queue[k], b->queue[j]))
					before = a->irq[k];
			irqs += b->irq[j] - before;
		}
		done = b->compl[i] - a->compl[i];
		if (cs) {
			struct json_object *c = json_object_new_object();

			json_object_object_add(c, "controller",
				json_object_new_string(r.topo.ctrls[i].name));
			json_object_object_add(c, "interrupts",
				json_object_new_int64((int64_t)irqs));
			json_object_object_add(c, "completions",
				json_object_new_int64((int64_t)done));
			json_object_object_add(c, "completions_per_interrupt",
				irqs ? json_object_new_double((double)done /
							      (double)irqs) : NULL);
			json_object_array_add(cs, c);
		} else if (irqs) {
			printf("%-12s %12llu %12llu %16.2f\n",
			       r.topo.ctrls[i].name, irqs, done,
			       (double)done / (double)irqs);
		} else {
			printf("%-12s %12llu %12llu %16s\n",
			       r.topo.ctrls[i].name, irqs, done, "-");
		}
	}
	if (root) {
		json_object_object_add(root, "queues", qs);
		json_object_object_add(root, "controllers", cs);
		printf("%s\n", json_object_to_json_string_ext(root,
				JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
		json_object_put(root);
	}
	ret = VWC_EXIT_OK;
out:
	if (a)
		free(a->compl);
	if (b)
		free(b->compl);
	free(a);
	free(b);
	vwc_run_free(&r);
	return ret;
}
