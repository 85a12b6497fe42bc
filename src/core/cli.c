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

/* verbs.h as data: the functions are the program's (vwc_cli_run()) */
struct vwc_verb {
	const char *name;
	const char *summary;
	unsigned int opts;
};

#define VWC_VERB_ENTRY(n, ident, s, o, where) { n, s, o },
static const struct vwc_verb verbs[] = {
	VWC_VERBS(VWC_VERB_ENTRY)
};

static const struct vwc_verb *verb_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, name))
			return &verbs[i];
	return NULL;
}

/* The option of getopt's @ch, as verbs.h's VWC_OPT_* (0: every command). */
static unsigned int opt_bit(int ch)
{
	switch (ch) {
	case 'a': return VWC_OPT_ALL;
	case 'n': return VWC_OPT_DRY_RUN;
	case 'o': return VWC_OPT_FORMAT;
	case 'q': return VWC_OPT_QUIET;
	case 'C': return VWC_OPT_CONFIG;
	case 'i': return VWC_OPT_INTERVAL;
	case 'c': return VWC_OPT_COUNT;
	case 'K': return VWC_OPT_KEEP_RESTORED;
	case 'L': return VWC_OPT_DEACTIVATE_LVM;
	case 'T': return VWC_OPT_TEXTFILE;
	default: return 0;
	}
}


/* The word getopt took last: "--name" of it, without "=value". */
static const char *long_typed(char **argv, char *buf, size_t len)
{
	const char *w = optind > 0 ? argv[optind - 1] : "?";

	snprintf(buf, len, "%.*s", (int)strcspn(w, "="), w);
	return buf;
}

/*
 * getopt said "?" for @optopt: was it "--name=value" for a long
 * option that takes none (the last word names it), not an unknown letter?
 */
static bool given_value(char **argv, const struct option *longopts)
{
	const char *w = argv[optind - 1];
	size_t n = strcspn(w, "=");
	const struct option *lo;

	if (strncmp(w, "--", 2) || !w[n])
		return false;
	for (lo = longopts; lo->name; lo++)
		if (lo->val == optopt && lo->has_arg == no_argument &&
		    !strncmp(lo->name, w + 2, n - 2))
			return true;
	return false;
}

int vwc_opts_parse(int argc, char **argv, struct vwc_opts *o,
		   const char *cmd)
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
	const struct vwc_verb *v = verb_find(cmd);
	char typed[64];
	char *end;
	int ch, li;

	memset(o, 0, sizeof(*o));
	o->interval = 1.0;
	o->count = 100;
	optind = 0;
	opterr = 0;
	/* ':' first: a missing value is told apart from an unknown option */
	while ((li = -1, ch = getopt_long(argc, argv, ":ano:vqC:i:c:h",
					  longopts, &li)) != -1) {
		/*
		 * optind has passed the word of a long option in every error
		 * case below; a short one is named by its letter (optopt).
		 */
		if (ch == ':') {
			if (!strncmp(argv[optind - 1], "--", 2))
				long_typed(argv, typed, sizeof(typed));
			else
				snprintf(typed, sizeof(typed), "-%c", optopt);
			vwc_err("%s: option '%s' needs a value", cmd, typed);
			return -EINVAL;
		}
		if (ch == '?' && optopt && given_value(argv, longopts)) {
			/* "--all=x": a long option given a value */
			vwc_err("%s: option '%s' takes no value", cmd,
				long_typed(argv, typed, sizeof(typed)));
			return -EINVAL;
		}
		if (ch == '?') {
			if (optopt)
				snprintf(typed, sizeof(typed), "-%c", optopt);
			else
				long_typed(argv, typed, sizeof(typed));
			vwc_err("%s: unknown option '%s'", cmd, typed);
			return -EINVAL;
		}
		if (opt_bit(ch) && !(v && (v->opts & opt_bit(ch)))) {
			if (li >= 0)
				snprintf(typed, sizeof(typed), "--%s",
					 longopts[li].name);
			else
				snprintf(typed, sizeof(typed), "-%c", ch);
			vwc_err("%s: option '%s' does not apply to %s (see '%s %s --help')",
				cmd, typed, cmd, vwc_prog, cmd);
			return -EINVAL;
		}
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
		  const struct vwc_opts *o, const struct vwc_config *cfg,
		  enum vwc_scan scan)
{
	int ret;

	if (o->all && o->nr_args) {
		vwc_err("%s: --all and device names are exclusive", cmd);
		return VWC_EXIT_USAGE;
	}
	ret = vwc_run_init_for(r, cmd, cfg, o->args,
			       scan == VWC_SCAN_ALL ? 0 : o->nr_args);
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
		printf("Usage: %s sync [<device>...|--all] [--dry-run] [-o normal|json] [-q] [-v] [--config=<file>]\n"
		       "       [--keep-restored]\n\n"
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
	ret = vwc_cmd_start(&r, "sync", &o, &cfg, VWC_SCAN_SUBSYSTEMS);
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

void vwc_cli_list(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-14s %s\n", verbs[i].name, verbs[i].summary);
}

int vwc_cli_run(const char *verb, vwc_cmd_fn *fn, int argc, char **argv)
{
	const struct vwc_verb *v = verb_find(verb);

	if (v && !fn) {
		/* verbs.h's "standalone": the sidecar, not in nvme's plugin */
		vwc_err("'%s %s' is not in nvme: the sidecar is 'nvme-vwc-sync %s', which the systemd unit nvme-vwc-sync.service runs",
			vwc_prog, verb, verb);
		return VWC_EXIT_USAGE;
	}
	if (v) {
		int ret;

		/* a closed output stops nothing: a rebind, a re-sync */
		vwc_sigpipe_defer();
		ret = fn(argc, argv);
		vwc_sigpipe_finish();
		return ret;
	}
	vwc_err("unknown command '%s'", verb);
	return VWC_EXIT_USAGE;
}
