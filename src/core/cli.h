/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: cli.h - entry point shared by the standalone binary and the plugin
 *
 * The command functions are the table of verbs.h: cmd_<ident>() for each
 * entry, declared here from it. A program links the ones it serves and
 * hands each to vwc_cli_run(): the standalone binary all of them
 * (main.c), the nvme-cli plugin those whose entry says "both".
 */
#ifndef VWC_CLI_H
#define VWC_CLI_H

#include "verbs.h"

/**
 * typedef vwc_cmd_fn - a command of the table in verbs.h
 * @argc:	argument count, argv[0] being the command's own name
 * @argv:	arguments (options and devices)
 *
 * Return: the process exit status documented in nvme-vwc-sync(8).
 */
typedef int vwc_cmd_fn(int argc, char **argv);

#define VWC_CLI_PROTO(name, ident, summary, opts, where) \
	vwc_cmd_fn cmd_##ident;
VWC_VERBS(VWC_CLI_PROTO)
#undef VWC_CLI_PROTO

/**
 * vwc_cli_run() - run one command of the table in verbs.h
 * @verb:	command name, e.g. "sync"
 * @fn:		its function, cmd_<ident>(); NULL for a command this
 *		program does not link (verbs.h: "standalone", in the plugin)
 * @argc:	argument count, argv[0] being the command's own name
 * @argv:	arguments (options and devices)
 *
 * A command not linked is answered with where it is (nvme-vwc-sync, and
 * for the sidecar the systemd unit that runs it) and exit status 2.
 *
 * Return: the process exit status documented in nvme-vwc-sync(8).
 */
int vwc_cli_run(const char *verb, vwc_cmd_fn *fn, int argc, char **argv);

/**
 * vwc_cli_set_prog() - how the commands are invoked, for usage texts
 * @prog:	"nvme vwc" under nvme-cli; "nvme-vwc-sync" by default
 */
void vwc_cli_set_prog(const char *prog);

extern const char *vwc_prog;

#endif
