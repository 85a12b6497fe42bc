/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: cli.h - entry point shared by the standalone binary and the plugin
 */
#ifndef VWC_CLI_H
#define VWC_CLI_H

/**
 * vwc_cli_run() - run one command of the table in verbs.h
 * @verb:	command name, e.g. "sync"
 * @argc:	argument count, argv[0] being the command's own name
 * @argv:	arguments (options and devices)
 *
 * Return: the process exit status documented in nvme-vwc-sync(8).
 */
int vwc_cli_run(const char *verb, int argc, char **argv);

/**
 * vwc_cli_set_prog() - how the commands are invoked, for usage texts
 * @prog:	"nvme vwc" under nvme-cli; "nvme-vwc-sync" by default
 */
void vwc_cli_set_prog(const char *prog);

extern const char *vwc_prog;

#endif
