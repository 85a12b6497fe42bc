/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: commands.h - shared by the command implementations
 */
#ifndef VWC_COMMANDS_H
#define VWC_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "report.h"

struct vwc_config;

/* Exit statuses, documented in nvme-vwc-sync(8). */
#define VWC_EXIT_OK	0
#define VWC_EXIT_ERROR	1	/* a device or the configuration failed */
#define VWC_EXIT_USAGE	2	/* bad command line */
#define VWC_EXIT_DRIFT	3	/* audit: a namespace is not as the policy says */

/**
 * struct vwc_opts - the options every command understands
 * @all:		-a, --all: every device
 * @dry_run:		-n, --dry-run: change nothing, say what would change
 * @keep_restored:	--keep-restored: leave what restore handed back
 *			(udev)
 * @deactivate_lvm:	--deactivate-lvm (quirks): idle LVM down for the
 *			rebind
 * @quiet:		-q, --quiet: no report
 * @help:		-h, --help: print the command's usage, nothing else
 * @verbose:		-v, --verbose, counted: notices, then info, then
 *			debug messages
 * @fmt:		-o, --output-format
 * @config:		-C, --config: the configuration file, NULL for the
 *			default
 * @textfile:		--textfile (watch): the node_exporter textfile
 * @interval:		-i, --interval, seconds (default 1)
 * @interval_set:	@interval was given
 * @count:		-c, --count (default 100)
 * @args:		the arguments left: device names
 * @nr_args:		how many
 */
struct vwc_opts {
	bool all;
	bool dry_run;
	bool keep_restored;
	bool deactivate_lvm;
	bool quiet;
	bool help;
	int verbose;
	enum vwc_format fmt;
	const char *config;
	const char *textfile;
	double interval;
	bool interval_set;
	long count;
	char **args;
	int nr_args;
};

/**
 * vwc_opts_parse() - parse a command's options
 * @argc:	count
 * @argv:	arguments, argv[0] the command
 * @o:		result
 * @cmd:	command name for messages
 *
 * Return: 0 or -EINVAL (message printed).
 */
int vwc_opts_parse(int argc, char **argv, struct vwc_opts *o,
		   const char *cmd);

/**
 * vwc_load_config() - load --config or the default file
 * @o:		options
 * @cfg:	result
 *
 * Return: 0 or a negative errno (message printed, naming file and line).
 */
int vwc_load_config(const struct vwc_opts *o, struct vwc_config *cfg);

struct vwc_run;

/**
 * enum vwc_scan - what a command scans when it is given device names
 * @VWC_SCAN_SUBSYSTEMS:	their NVM subsystems' controllers alone
 *				(vwc_run_init_for()): the write cache rule
 *				and everything it reads are a subsystem's
 * @VWC_SCAN_ALL:		every controller: the quirks' PCI dynamic ID
 *				is the nvme driver's, for every function of
 *				that vendor and device, whatever subsystem
 */
enum vwc_scan {
	VWC_SCAN_SUBSYSTEMS,
	VWC_SCAN_ALL,
};

/**
 * vwc_cmd_start() - the start of every command that works on devices
 * @r:		run to initialize (free with vwc_run_free() on success)
 * @cmd:	command name
 * @o:		parsed options: --all, devices, --dry-run
 * @cfg:	configuration, may be NULL
 * @scan:	what to scan when devices are named
 *
 * Rejects --all together with device names, scans the host (or the named
 * devices' subsystems) and selects the devices named (every one when none
 * is).
 *
 * Return: 0, or the exit status the command should return (message
 * printed).
 */
int vwc_cmd_start(struct vwc_run *r, const char *cmd,
		  const struct vwc_opts *o, const struct vwc_config *cfg,
		  enum vwc_scan scan);

/**
 * vwc_cli_list() - print the command table
 * @out:	stream
 */
void vwc_cli_list(FILE *out);

#endif
