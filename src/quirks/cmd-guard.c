// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rebind-guard: bind again the PCI functions whose rebind was cut short
 * (unbound.h). Run by nvme-vwc-sync-rebind-guard.service, which the path
 * unit starts as soon as <rundir>/unbound is not empty: usually while the
 * unbinder is still at work. Every unbind happens under the quirks lock,
 * which its holder's end releases, whatever ended it: the guard waits for
 * that lock (bounded), and once it has it the records of unbinders that
 * ended are acted on (vwc_dynid_qlock_try()). It ends when no record is left,
 * or after VWC_GUARD_WAIT_MS with the unbinder still at work: the path
 * unit then starts it again, no sooner than that. A bind that fails moves
 * its record out of the directory: nothing loops on it.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "dynid.h"
#include "log.h"
#include "unbound.h"

#define GUARD_POLL_MS	100

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int cmd_rebind_guard(int argc, char **argv)
{
	double deadline = mono_ms() + VWC_GUARD_WAIT_MS;
	struct vwc_opts o;
	int r, ret = VWC_EXIT_OK;

	if (vwc_opts_parse(argc, argv, &o, "rebind-guard"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s rebind-guard [-v]\n\n"
		       "Bind to nvme again every PCI function a rebind of this tool left unbound\n"
		       "(its process ended between the unbind and the bind: SIGKILL, a crash), as\n"
		       "its record in the run directory says; never one the admin unbound, never\n"
		       "while its unbinder is still at work (waited for, up to %d s). Run by\n"
		       "nvme-vwc-sync-rebind-guard.service when such a record appears.\n",
		       vwc_prog, VWC_GUARD_WAIT_MS / 1000);
		return 0;
	}
	if (o.nr_args) {
		vwc_err("rebind-guard: takes no device");
		return VWC_EXIT_USAGE;
	}
	while (vwc_unbound_pending()) {
		r = vwc_dynid_qlock_try();
		if (!r) {
			vwc_dynid_qlock_release();
			/* what is left has a live unbinder: its lock is next */
			if (!vwc_unbound_pending())
				break;
		} else if (r != -EWOULDBLOCK) {
			ret = VWC_EXIT_ERROR;
			break;
		}
		if (mono_ms() > deadline) {
			vwc_notice("rebind-guard: an unbind still in progress after %d s: left to its process",
				   VWC_GUARD_WAIT_MS / 1000);
			break;
		}
		usleep(GUARD_POLL_MS * 1000);
	}
	if (vwc_unbound_failed())
		ret = VWC_EXIT_ERROR;
	return ret;
}
