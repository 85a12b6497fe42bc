// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * quirks: the quirk database's mitigations the running kernel allows,
 * applied (quirks.c), then the write-cache policy again on the namespaces
 * a rebind re-created.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libudev.h>

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "dynid.h"
#include "engine.h"
#include "log.h"
#include "quirks.h"

/*
 * The write-cache policy again on namespaces a rebind re-created, under
 * the writers' lock, taken only after the quirks lock was released (see
 * dynid.c).
 */
static int quirks_resync(const struct vwc_quirks_opts *qo,
			 char (*ctrls)[VWC_NAME_LEN], int n)
{
	struct vwc_run r;
	char *args[16];
	int i, ret;

	if (n > 16)
		n = 16;
	/* write back at once, write through under the writers' lock
	 * (vwc_run_apply()) */
	ret = vwc_run_init(&r, "quirks", qo->cfg);
	if (ret) {
		vwc_err("cannot scan NVMe devices for the write-cache policy after the rebind: %s",
			strerror(-ret));
		return ret;
	}
	for (i = 0; i < n; i++)
		args[i] = ctrls[i];
	r.keep_restored = qo->automatic;
	vwc_run_select(&r, args, n);
	vwc_run_probe(&r);
	vwc_run_apply(&r);
	ret = vwc_run_exit_status(&r);
	if (ret)
		vwc_err("the write-cache policy on the rebound controller(s) failed (see above)");
	vwc_run_free(&r);
	return ret;
}

int cmd_quirks(int argc, char **argv)
{
	struct vwc_quirks_opts qo = { 0 };
	struct vwc_config cfg;
	struct vwc_opts o;
	struct vwc_run r;
	char **pci;
	int i, n = 0, nr_pci = 0, ret = 0;

	if (vwc_opts_parse(argc, argv, &o, "quirks"))
		return VWC_EXIT_USAGE;
	if (o.help) {
		printf("Usage: %s quirks [<device>|<pci-address>...] [--dry-run] [--quiet] [--keep-restored]\n"
		       "       [--deactivate-lvm] [--config=<file>]\n\n"
		       "For controllers the hwdb quirk database lists (Crucial T700/T705:\n"
		       "disable_write_zeroes) whose Write Zeroes is still enabled: add a PCI dynamic\n"
		       "ID on the nvme driver whose driver_data is the quirks the kernel gives the\n"
		       "device plus disable_write_zeroes, then unbind and bind the controller, unless\n"
		       "a namespace of it is mounted, swap, held (LVM, dm, md) or open; verify after.\n"
		       "Where the kernel ignores the quirk (a controller reporting a Write Zeroes\n"
		       "Size Limit, a kernel without the fix that honours the quirk over it): say so,\n"
		       "remove the dynamic ID, bind the controller again without it, exit 1.\n"
		       "Also write_zeroes_unmap_max_bytes to 0 where the kernel has it, and a\n"
		       "modprobe.d snippet where nvme is a module with a quirks parameter.\n"
		       "'restore' undoes it. A PCI address (udev's add event) is handled alone.\n"
		       "--keep-restored (implied under udev): leave alone what restore handed back.\n"
		       "--deactivate-lvm (the initramfs scripts): a drive held only by LVM logical\n"
		       "volumes that are not mounted, swap or open: deactivate them for the rebind,\n"
		       "then activate exactly those again.\n",
		       vwc_prog);
		return 0;
	}
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;
	qo.dry_run = o.dry_run;
	qo.quiet = o.quiet;
	qo.automatic = o.keep_restored ||
		       (getenv("ACTION") && getenv("SEQNUM"));
	qo.deactivate_lvm = o.deactivate_lvm;
	qo.cfg = &cfg;
	qo.resync = quirks_resync;
	/* PCI addresses (udev's pci add event) go apart from device names */
	pci = calloc(o.nr_args + 1, sizeof(*pci));
	if (!pci)
		return VWC_EXIT_ERROR;
	for (i = 0; i < o.nr_args; i++) {
		if (vwc_dynid_is_pci_addr(o.args[i]))
			pci[nr_pci++] = o.args[i];
		else
			o.args[n++] = o.args[i];
	}
	o.nr_args = n;
	if (nr_pci) {
		struct udev *udev = udev_new();

		/* locks: see quirks.c (its own, then the writers' for sync) */
		for (i = 0; udev && i < nr_pci; i++)
			if (vwc_quirks_apply_pci(udev, pci[i], &qo))
				ret = VWC_EXIT_ERROR;
		if (udev)
			udev_unref(udev);
		if (!n) {
			free(pci);
			return ret;
		}
	}
	free(pci);
	i = vwc_cmd_start(&r, "quirks", &o, &cfg, VWC_SCAN_ALL);
	if (i)
		return i;
	if (vwc_quirks_apply(&r.topo, &qo))
		ret = VWC_EXIT_ERROR;
	else if (vwc_run_exit_status(&r))
		ret = vwc_run_exit_status(&r);
	vwc_run_free(&r);
	return ret;
}
