// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Command dispatch and option parsing, shared by the standalone binary
 * and the nvme-cli plugin (whose callbacks are shims over vwc_cli_run()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "engine.h"
#include "log.h"
#include "report.h"
#include "sigdefer.h"
#include "verbs.h"

const char *vwc_prog = "nvme-vwc-sync";

void vwc_cli_set_prog(const char *prog)
{
	vwc_prog = prog;
}

int vwc_opts_parse(int argc, char **argv, struct vwc_opts *o,
		   const char *usage_fn)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "output-format", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "config", required_argument, NULL, 'C' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "keep-restored", no_argument, NULL, 'K' },
		{ "deactivate-lvm", no_argument, NULL, 'L' },
		{ "textfile", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int ch;

	memset(o, 0, sizeof(*o));
	o->interval = 1.0;
	o->count = 100;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "ano:vqC:i:c:h", longopts,
				 NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->all = true;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case 'o':
			if (vwc_format_parse(optarg, &o->fmt)) {
				vwc_err("invalid output format '%s' (normal, json, prometheus)",
					optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			o->verbose++;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'C':
			o->config = optarg;
			break;
		case 'i':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || *end || o->interval <= 0 ||
			    o->interval > 3600) {
				vwc_err("invalid interval '%s' (seconds, > 0, <= 3600)",
					optarg);
				return -EINVAL;
			}
			o->interval_set = true;
			break;
		case 'c':
			errno = 0;
			o->count = strtol(optarg, &end, 10);
			if (errno || *end || o->count < 1 ||
			    o->count > 1000000) {
				vwc_err("invalid count '%s' (1 to 1000000)",
					optarg);
				return -EINVAL;
			}
			break;
		case 'K':
			o->keep_restored = true;
			break;
		case 'L':
			o->deactivate_lvm = true;
			break;
		case 'T':
			if (optarg[0] != '/' ||
			    strlen(optarg) >= VWC_PATH_LEN) {
				vwc_err("invalid textfile '%s' (an absolute path)",
					optarg);
				return -EINVAL;
			}
			o->textfile = optarg;
			break;
		case 'h':
			o->help = true;
			return 0;
		default:
			vwc_err("%s: unknown option '%s'", usage_fn,
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	o->args = argv + optind;
	o->nr_args = argc - optind;
	if (o->verbose == 1)
		vwc_log_level = LOG_NOTICE;
	else if (o->verbose == 2)
		vwc_log_level = LOG_INFO;
	else if (o->verbose > 2)
		vwc_log_level = LOG_DEBUG;
	return 0;
}

int vwc_load_config(const struct vwc_opts *o, struct vwc_config *cfg)
{
	char err[300];
	int r = vwc_config_load(o->config, cfg, err, sizeof(err));

	if (r)
		vwc_err("%s; nothing applied", err);
	return r;
}

int vwc_cmd_start(struct vwc_run *r, const char *cmd,
		  const struct vwc_opts *o, const struct vwc_config *cfg)
{
	int ret;

	if (o->all && o->nr_args) {
		vwc_err("%s: --all and device names are exclusive", cmd);
		return VWC_EXIT_USAGE;
	}
	ret = vwc_run_init(r, cmd, cfg);
	if (ret) {
		vwc_err("cannot scan NVMe devices: %s", strerror(-ret));
		return VWC_EXIT_ERROR;
	}
	r->dry_run = o->dry_run;
	r->keep_restored = o->keep_restored;
	vwc_run_select(r, o->args, o->nr_args);
	return 0;
}

/*
 * sync: the heart. Probe, decide, apply, report.
 */
int cmd_sync(int argc, char **argv)
{
	struct vwc_config cfg;
	struct vwc_opts o;
	struct vwc_run r;
	int ret;

	if (vwc_opts_parse(argc, argv, &o, "sync"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s sync [<device>...|--all] [--dry-run] [-o normal|json] [-v] [--config=<file>]\n\n"
		       "Make each namespace's block-layer write cache mode follow what its\n"
		       "controller reports: write through when the controller has no volatile\n"
		       "write cache or reports it disabled (WCE=0), write back otherwise.\n"
		       "<device>: /dev/nvme0, /dev/nvme0n1, /dev/ng0n1, nvme0, nvme0n1;\n"
		       "none means every NVMe controller. See nvme-vwc-sync(8).\n", vwc_prog);
		return 0;
	}
	if (o.fmt == VWC_FMT_PROMETHEUS) {
		vwc_err("sync: -o prometheus is for 'audit'");
		return VWC_EXIT_USAGE;
	}
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;
	/* write back at once; the writers' lock only for write through */
	ret = vwc_cmd_start(&r, "sync", &o, &cfg);
	if (ret)
		return ret;
	vwc_run_probe(&r);
	vwc_run_apply(&r);
	vwc_run_irq_coalesce(&r);
	if (!o.quiet)
		vwc_report_print(&r, o.fmt, stdout);
	ret = vwc_run_exit_status(&r);
	vwc_run_free(&r);
	return ret;
}

struct vwc_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

#define VWC_VERB_ENTRY(n, ident, s) { n, cmd_##ident, s },
static const struct vwc_verb verbs[] = {
	VWC_VERBS(VWC_VERB_ENTRY)
};

void vwc_cli_list(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-14s %s\n", verbs[i].name, verbs[i].summary);
}

int vwc_cli_run(const char *verb, int argc, char **argv)
{
	size_t i;

	int ret;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(verbs[i].name, verb))
			continue;
		/* a closed output stops nothing: a rebind, a re-sync */
		vwc_sigpipe_defer();
		ret = verbs[i].fn(argc, argv);
		vwc_sigpipe_finish();
		return ret;
	}
	vwc_err("unknown command '%s'", verb);
	return VWC_EXIT_USAGE;
}
