// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvme-vwc-sync: the standalone binary, for hosts that keep their
 * distribution's nvme-cli. Same commands as "nvme vwc <command>".
 */
#include <stdio.h>
#include <string.h>

#include "vwc-config.h"
#include "cli.h"
#include "commands.h"

/* Every command of verbs.h: this program links them all. */
static const struct {
	const char *name;
	vwc_cmd_fn *fn;
} cmds[] = {
#define VWC_MAIN_CMD(name, ident, summary, opts, where) { name, cmd_##ident },
	VWC_VERBS(VWC_MAIN_CMD)
#undef VWC_MAIN_CMD
};

static int run(const char *verb, int argc, char **argv)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, verb))
			return vwc_cli_run(verb, cmds[i].fn, argc, argv);
	/* unknown: vwc_cli_run() says so */
	return vwc_cli_run(verb, NULL, argc, argv);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: nvme-vwc-sync <command> [<device>...] [options]\n"
		"       nvme-vwc-sync <device>...   (same as 'sync')\n\n"
		"Commands:\n");
	vwc_cli_list(out);
	fprintf(out, "\n'nvme-vwc-sync <command> --help' for its options; see nvme-vwc-sync(8).\n");
}

int main(int argc, char **argv)
{
	const char *verb;

	if (argc < 2) {
		usage(stderr);
		return VWC_EXIT_USAGE;
	}
	verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") ||
	    !strcmp(verb, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "--version")) {
		printf("nvme-vwc-sync %s\n", VWC_VERSION);
		return 0;
	}
	/* "nvme-vwc-sync /dev/nvme0" and "nvme-vwc-sync --all" mean sync */
	if (verb[0] == '/' || verb[0] == '-' || !strncmp(verb, "nvme", 4) ||
	    !strncmp(verb, "ng", 2))
		return run("sync", argc, argv);
	return run(verb, argc - 1, argv + 1);
}
