// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Is a block device in use: mountinfo and swaps through libmount.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "inuse.h"
#include "tap.h"

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

int main(void)
{
	char where[600];

	/* mountinfo and swaps through libmount */
	{
		char mi[] = "/tmp/vwc-mountinfo-XXXXXX";
		char sw[] = "/tmp/vwc-swaps-XXXXXX";
		int fm = mkstemp(mi), fs = mkstemp(sw);
		static const char mtab[] =
			"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
			"36 22 259:1 / /mnt/my\\040disk rw,relatime shared:1 - ext2 /dev/nvme0n1 rw\n"
			"40 22 0:45 / /data rw - btrfs /dev/nvme0n1p2 rw\n";
		static const char swaps[] =
			"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
			"/dev/null                               partition\t1048572\t\t0\t\t-2\n";
		struct stat st;

		ok(fm >= 0 && fs >= 0, "temporary tables");
		write_file(mi, mtab, sizeof(mtab) - 1);
		write_file(sw, swaps, sizeof(swaps) - 1);
		ok(vwc_blk_mounted(mi, sw, makedev(259, 1), "/dev/nvme0n1", where,
				   sizeof(where)) == 1, "mounted: by major:minor");
		is_str(where, "mounted on /mnt/my disk (ext2)",
		       "where, with the octal escape undone");
		ok(vwc_blk_mounted(mi, sw, makedev(259, 3), "/dev/nvme0n1p2",
				   where, sizeof(where)) == 1,
		   "mounted: btrfs by its source");
		ok(vwc_blk_mounted(mi, sw, makedev(259, 10), "/dev/nvme1n1",
				   where, sizeof(where)) == 0, "another device");
		/* a swap area on a block device: /dev/null stands in (char) */
		ok(!stat("/dev/null", &st) &&
		   vwc_blk_mounted(mi, sw, st.st_rdev, "/dev/x", where,
				   sizeof(where)) == 0,
		   "swaps: a character device is no swap partition");
		ok(vwc_blk_mounted(mi, sw, makedev(259, 20), "/dev/null", where,
				   sizeof(where)) == 1, "swaps: by its node");
		is_str(where, "in use as swap", "swap named");
		ok(vwc_blk_mounted("/nonexistent/mountinfo", sw, makedev(259, 1),
				   "/dev/nvme0n1", where, sizeof(where)) < 0,
		   "unreadable mountinfo: an error, not 'free'");
		ok(vwc_blk_mounted(mi, "/nonexistent/swaps", makedev(259, 10),
				   "/dev/nvme1n1", where, sizeof(where)) < 0,
		   "unreadable swaps file named: an error");
		ok(vwc_blk_mounted(NULL, NULL, makedev(259, 99), "/dev/nvme99n1",
				   where, sizeof(where)) == 0,
		   "this host's tables read");
		unlink(mi);
		unlink(sw);
		close(fm);
		close(fs);
	}
	/* device numbers, not names: /dev/null (a char device) stands in */
	{
		char d[] = "/tmp/vwc-inuse-XXXXXX", p[400], out[300], comm[64];
		char node[300];
		struct stat st;
		int fd = open("/dev/null", O_RDONLY), pid;

		ok(!stat("/dev/null", &st) && mkdtemp(d), "setup");
		ok(vwc_path_is_dev("/dev/null", S_IFCHR, st.st_rdev) == 1,
		   "is_dev: the node");
		ok(vwc_path_is_dev("/dev/null", S_IFBLK, st.st_rdev) == 0,
		   "is_dev: the type counts");
		ok(vwc_path_is_dev("/dev/zero", S_IFCHR, st.st_rdev) == 0,
		   "is_dev: another number");
		/*
		 * this process alone, in a proc of one entry: on a busy host
		 * the first opener of /dev/null can be a chroot's process,
		 * whose node reads /<chroot>/dev/null from here
		 */
		snprintf(p, sizeof(p), "%s/proc", d);
		snprintf(out, sizeof(out), "/proc/%d", (int)getpid());
		snprintf(node, sizeof(node), "%.200s/%d", p, (int)getpid());
		pid = mkdir(p, 0700) || symlink(out, node) ? -1 :
		      vwc_find_opener(p, S_IFCHR, st.st_rdev, -1, comm,
				      sizeof(comm), node, sizeof(node));
		ok(pid == (int)getpid() && comm[0] && !strcmp(node, "/dev/null"),
		   "opener found by number, with its command and node");
		/* a fake sysfs: loop3 backed by /dev/null, loop0 by a file */
		snprintf(p, sizeof(p), "mkdir -p %s/block/loop0/loop %s/block/loop3/loop %s/block/nvme0n1", d, d, d);
		ok(!system(p), "fake /sys/block");
		snprintf(p, sizeof(p), "%s/block/loop0/loop/backing_file", d);
		write_file(p, "/etc/hostname\n", 14);
		snprintf(p, sizeof(p), "%s/block", d);
		ok(vwc_loop_backed_by(p, S_IFCHR, st.st_rdev, out,
				      sizeof(out)) == 0, "loop: a file-backed loop does not count");
		snprintf(p, sizeof(p), "%s/block/loop3/loop/backing_file", d);
		write_file(p, "/dev/null\n", 10);
		snprintf(p, sizeof(p), "%s/block", d);
		ok(vwc_loop_backed_by(p, S_IFCHR, st.st_rdev, out,
				      sizeof(out)) == 1, "loop: backed by the device");
		is_str(out, "/dev/loop3", "loop: named");
		/* a fake nvmet configfs */
		snprintf(p, sizeof(p), "mkdir -p %s/nvmet/subsystems/testnqn/namespaces/1", d);
		ok(!system(p), "fake nvmet");
		snprintf(p, sizeof(p), "%s/nvmet/subsystems/testnqn/namespaces/1/device_path", d);
		write_file(p, "/dev/null\n", 10);
		snprintf(p, sizeof(p), "%s/nvmet/subsystems/testnqn/namespaces/1/enable", d);
		write_file(p, "0\n", 2);
		snprintf(p, sizeof(p), "%s/nvmet", d);
		ok(vwc_nvmet_exports(p, S_IFCHR, st.st_rdev, out, sizeof(out)) == 0,
		   "nvmet: a disabled namespace does not hold the device");
		snprintf(p, sizeof(p), "%s/nvmet/subsystems/testnqn/namespaces/1/enable", d);
		write_file(p, "1\n", 2);
		snprintf(p, sizeof(p), "%s/nvmet", d);
		ok(vwc_nvmet_exports(p, S_IFCHR, st.st_rdev, out, sizeof(out)) == 1,
		   "nvmet: an enabled namespace on the device");
		is_str(out, "testnqn (namespace 1)", "nvmet: subsystem named");
		snprintf(p, sizeof(p), "rm -rf %s", d);
		ok(!system(p), "cleanup");
		if (fd >= 0)
			close(fd);
	}
	{
		/* a fake xen-blkback backend directory */
		char d[] = "/tmp/vwc-xen-XXXXXX", p[300], out[64];

		ok(mkdtemp(d) != NULL, "xen: temp dir");
		snprintf(p, sizeof(p), "mkdir -p %s/vbd-3-51712 %s/vif-3-0", d, d);
		ok(!system(p), "xen: fake backends");
		snprintf(p, sizeof(p), "%s/vbd-3-51712/physical_device", d);
		write_file(p, "103:1\n", 6);
		ok(vwc_xen_exports(d, makedev(0x103, 2), out, sizeof(out)) == 0,
		   "xen: another device is not exported");
		ok(vwc_xen_exports(d, makedev(0x103, 1), out, sizeof(out)) == 1,
		   "xen: major:minor in hex matched");
		is_str(out, "vbd-3-51712", "xen: the backend named");
		ok(vwc_xen_exports("/nonexistent-vwc", makedev(0x103, 1), out,
				   sizeof(out)) == 0, "xen: no Xen, nothing exported");
		snprintf(p, sizeof(p), "rm -rf %s", d);
		ok(!system(p), "xen: cleanup");
	}
	{
		/* the last check before an unbind: what vwc_disks_in_use()
		 * found free is looked at again; a device gone since then
		 * (its number unreadable) is in use, never free */
		char names[1][VWC_NAME_LEN] = { "nvme-vwc-test-gone" };
		struct vwc_holds h = { .n = 0 };
		char why[600] = "";

		ok(vwc_holds_recheck(&h, why, sizeof(why)) == 0,
		   "recheck: no devices, nothing in use");
		h.names = names;
		h.nr_names = 1;
		ok(vwc_holds_recheck(&h, why, sizeof(why)) == 1,
		   "recheck: a device whose number cannot be read counts as in use");
		ok(strstr(why, "nvme-vwc-test-gone") != NULL,
		   "recheck: the reason names the device");
	}
	return tap_done();
}
