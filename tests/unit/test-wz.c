// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A kernel that ignores disable_write_zeroes (wz-ignored.h): what it shows
 * after a bind with the quirk, on a made-up sysfs tree; the verdict; the
 * reason's words; the records, in a private run directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"
#include "wz-ignored.h"

static char root[] = "/tmp/vwc-wz-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (s = dir + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void ns_wz(const char *ns, const char *v)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "class/block/%s/queue/write_zeroes_max_bytes",
		 ns);
	put(rel, v);
}

static char names[3][VWC_NAME_LEN] = { "nvme0n1", "nvme0n2", "nvme0n3" };

static void test_read_and_verdict(void)
{
	struct vwc_wz_seen s;
	char path[512];

	/* 6.1 and 6.12: no quirks attribute; the kernel took the quirk */
	ns_wz("nvme0n1", "0\n");
	ns_wz("nvme0n2", "0\n");
	vwc_wz_read(root, "nvme0", names, 3, &s);
	ok(s.nr_ns == 2 && s.nr_on == 0 && !s.quirks_shown,
	   "read: two namespaces (the third has no file), none on, no quirks attribute");
	is_str(s.summary, "nvme0n1 0, nvme0n2 0", "read: the summary");
	ok(vwc_wz_verdict(&s, true) == VWC_WZ_OFF,
	   "all 0 after the bind with the quirk: the quirk works");

	/* a kernel without the fix, a controller reporting WZSL */
	ns_wz("nvme0n2", "131072\n");
	vwc_wz_read(root, "nvme0", names, 3, &s);
	ok(s.nr_on == 1 && s.max_bytes == 131072, "read: one namespace on, 131072");
	ok(vwc_wz_verdict(&s, true) == VWC_WZ_IGNORED,
	   "no quirks attribute, bound through the dynamic ID with the quirk, Write Zeroes on: ignored");
	ok(vwc_wz_verdict(&s, false) == VWC_WZ_NOT_TAKEN,
	   "no quirks attribute, bound without the quirk bit: not taken, not ignored");

	/* 7.x: the kernel's own word decides, whatever the binding says */
	put("class/nvme/nvme0/quirks", "bogus_nid\ndisable_write_zeroes\n");
	vwc_wz_read(root, "nvme0", names, 3, &s);
	ok(s.quirks_shown && s.quirk_active, "read: the quirks attribute lists the quirk");
	ok(vwc_wz_verdict(&s, false) == VWC_WZ_IGNORED,
	   "quirks attribute lists it, Write Zeroes on: ignored");
	put("class/nvme/nvme0/quirks", "bogus_nid\n");
	vwc_wz_read(root, "nvme0", names, 3, &s);
	ok(s.quirks_shown && !s.quirk_active &&
	   vwc_wz_verdict(&s, true) == VWC_WZ_NOT_TAKEN,
	   "quirks attribute without it, Write Zeroes on: the dynamic ID did not reach the probe");
	put("class/nvme/nvme0/quirks", "none\n");
	vwc_wz_read(root, "nvme0", names, 3, &s);
	ok(vwc_wz_verdict(&s, true) == VWC_WZ_NOT_TAKEN,
	   "quirks attribute 'none': not taken");
	ns_wz("nvme0n2", "0\n");
	put("class/nvme/nvme0/quirks", "disable_write_zeroes\n");
	vwc_wz_read(root, "nvme0", names, 3, &s);
	ok(vwc_wz_verdict(&s, false) == VWC_WZ_OFF,
	   "quirks attribute lists it, all 0: the quirk works");
	vwc_wz_read(root, "nvme0", names + 2, 1, &s);
	ok(s.nr_ns == 0 && vwc_wz_verdict(&s, true) == VWC_WZ_NO_NS,
	   "no namespace to read: nothing decided");
	is_str(s.summary, "no namespace", "read: the summary says so");
	snprintf(path, sizeof(path), "%s/class/nvme/nvme0/quirks", root);
	unlink(path);
}

static void test_why(void)
{
	struct vwc_wz_seen s;
	char why[1200];

	ns_wz("nvme0n1", "131072\n");
	vwc_wz_read(root, "nvme0", names, 1, &s);
	vwc_wz_why(&s, "bound through this tool's dynamic ID, driver_data 0x200",
		   why, sizeof(why));
	ok(strstr(why, "the kernel ignores disable_write_zeroes") != NULL,
	   "why: says the kernel ignores the quirk");
	ok(strstr(why, "write_zeroes_max_bytes is nvme0n1 131072") != NULL,
	   "why: what the kernel shows");
	ok(strstr(why, "driver_data 0x200") != NULL, "why: how it runs with the quirk");
	ok(strstr(why, "\"" VWC_WZSL_FIX "\"") != NULL &&
	   strstr(why, "WZSL") && strstr(why, "lacks that fix"),
	   "why: the controller reports WZSL and the kernel lacks the fix, by title");
	ok(!strstr(why, "6.1") && !strstr(why, "7.2"), "why: no kernel version");
}

static void test_records(void)
{
	char why[1200], rundir[600], path[700];

	snprintf(rundir, sizeof(rundir), "%s/run", root);
	mkdir(rundir, 0700);
	setenv("NVME_VWC_SYNC_RUNDIR", rundir, 1);
	ok(!vwc_wz_marked("0000:01:00.0", why, sizeof(why)) && !why[0],
	   "record: none at first");
	ok(!vwc_wz_mark("0000:01:00.0", "the reason"), "record: written");
	ok(vwc_wz_marked("0000:01:00.0", why, sizeof(why)), "record: found");
	is_str(why, "the reason", "record: its reason");
	ok(!vwc_wz_marked("0000:02:00.0", NULL, 0), "record: another function has none");
	/* made under another registration of the nvme driver: stale */
	snprintf(path, sizeof(path), "%s/wz-ignored/0000:01:00.0", rundir);
	{
		FILE *f = fopen(path, "w");

		if (f) {
			fputs("driver-inode 99999999\nwhy old\n", f);
			fclose(f);
		}
	}
	ok(!vwc_wz_marked("0000:01:00.0", why, sizeof(why)) &&
	   access(path, F_OK) != 0,
	   "record: of an earlier nvme registration, not reported and removed");
	vwc_wz_mark("0000:01:00.0", "again");
	vwc_wz_unmark("0000:01:00.0");
	ok(!vwc_wz_marked("0000:01:00.0", NULL, 0), "record: removed");
}

/* audit's view: the record of the controller's PCI function, or live */
static void test_ctrl(void)
{
	struct vwc_ctrl c[1];
	struct vwc_ns ns[1];
	struct vwc_topo t = { .ctrls = c, .nr_ctrls = 1, .ns = ns, .nr_ns = 1 };
	int ci0 = 0;
	char why[1200], link[VWC_PATH_LEN + 16], target[600];

	memset(c, 0, sizeof(c));
	memset(ns, 0, sizeof(ns));
	snprintf(c[0].name, sizeof(c[0].name), "nvme0");
	snprintf(c[0].syspath, sizeof(c[0].syspath), "%s/class/nvme/nvme0", root);
	snprintf(ns[0].name, sizeof(ns[0].name), "nvme0n1");
	ns[0].ctrl = &ci0;
	ns[0].nr_ctrl = 1;
	snprintf(target, sizeof(target), "%s/devices/0000:01:00.0", root);
	put("devices/0000:01:00.0/vendor", "0x1b36\n");
	snprintf(link, sizeof(link), "%s/device", c[0].syspath);
	ok(!symlink(target, link), "tree: the controller's device link");
	ns_wz("nvme0n1", "131072\n");

	ok(!vwc_wz_ctrl_ignored(root, &t, 0, why, sizeof(why)),
	   "ctrl: no record, no quirks attribute: not said");
	c[0].has_kernel_quirks = true;
	snprintf(c[0].kernel_quirks, sizeof(c[0].kernel_quirks),
		 "bogus_nid\ndisable_write_zeroes");
	ok(vwc_wz_ctrl_ignored(root, &t, 0, why, sizeof(why)) &&
	   strstr(why, "kernel quirks: bogus_nid,disable_write_zeroes") &&
	   strstr(why, "nvme0n1 131072"),
	   "ctrl: the kernel lists the quirk and Write Zeroes is on: shown now");
	ns_wz("nvme0n1", "0\n");
	ok(!vwc_wz_ctrl_ignored(root, &t, 0, why, sizeof(why)),
	   "ctrl: the kernel lists the quirk, Write Zeroes off: not said");
	c[0].has_kernel_quirks = false;
	c[0].kernel_quirks[0] = '\0';
	vwc_wz_mark("0000:01:00.0", "recorded by quirks");
	ok(vwc_wz_ctrl_ignored(root, &t, 0, why, sizeof(why)),
	   "ctrl: recorded for its PCI function (6.1: undone, no attribute)");
	is_str(why, "recorded by quirks", "ctrl: the recorded reason");
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_read_and_verdict();
	test_why();
	test_records();
	test_ctrl();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		printf("# cannot remove %s\n", root);
	return tap_done();
}
