// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * io-pt: send NVMe I/O commands through the passthrough interface of a
 * namespace node (/dev/ngXnY, /dev/nvmeXnY, or /dev/nvmeX for its one
 * namespace), opened read-write as the user running it, so that the kernel
 * lets an unprivileged user with write access to the node send a command
 * that transfers data to the drive (nvme-cli 2.3 opens read-only, which
 * the kernel refuses such a user). A test tool for the VM guests.
 *
 * Usage:
 *   io-pt [-6] [-n COUNT] -o OPCODE -N NSID [-a CDW10] [-b CDW11]
 *         [-r RANGES -s SLBA] DEV
 *     -6          NVME_IOCTL_IO64_CMD (default NVME_IOCTL_IO_CMD)
 *     -n COUNT    commands (default 1)
 *     -o OPCODE   the I/O command's opcode (e.g. 9: Dataset Management)
 *     -N NSID     its namespace ID
 *     -a, -b      CDW10, CDW11 (default 0)
 *     -r RANGES   a Dataset Management range list as the data (16 bytes a
 *                 range, host to drive): RANGES ranges of one block each
 *                 from SLBA (-s), context attributes 0
 * Output (one line):
 *   IOPT via=io op=0x09 cdw10=0x6 cdw11=0x1 n=20 ok=20 status=0 errno=0
 *     ok: commands the drive completed with status 0; status: the last
 *     non-zero NVMe status; errno: the last failed ioctl's errno.
 * Exit status: 0 every command completed with status 0, 1 one did not,
 * 2 usage or setup error (e.g. the node does not open).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_RANGES	256

static const char *prog = "io-pt";

static int usage(void)
{
	fprintf(stderr,
		"usage: %s [-6] [-n COUNT] -o OPCODE -N NSID [-a CDW10] [-b CDW11] [-r RANGES -s SLBA] DEV\n",
		prog);
	return 2;
}

/* little-endian range list: cattr (4), nlb (4), slba (8) */
static void ranges(uint8_t *buf, int n, uint64_t slba)
{
	int i, k;

	memset(buf, 0, (size_t)n * 16);
	for (i = 0; i < n; i++) {
		uint64_t lba = slba + (uint64_t)i;

		buf[i * 16 + 4] = 1;	/* one block: NLB is 1-based here */
		for (k = 0; k < 8; k++)
			buf[i * 16 + 8 + k] = (uint8_t)(lba >> (8 * k));
	}
}

int main(int argc, char **argv)
{
	static uint8_t data[MAX_RANGES * 16];
	long count = 1, nr = 0;
	unsigned long opcode = 0x100, nsid = 0, cdw10 = 0, cdw11 = 0;
	unsigned long long slba = 0;
	int fd, opt, i, ret, ok = 0, last_status = 0, last_errno = 0;
	int io64 = 0;

	while ((opt = getopt(argc, argv, "6n:o:N:a:b:r:s:")) != -1) {
		switch (opt) {
		case '6':
			io64 = 1;
			break;
		case 'n':
			count = strtol(optarg, NULL, 10);
			break;
		case 'o':
			opcode = strtoul(optarg, NULL, 0);
			break;
		case 'N':
			nsid = strtoul(optarg, NULL, 0);
			break;
		case 'a':
			cdw10 = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			cdw11 = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			nr = strtol(optarg, NULL, 10);
			break;
		case 's':
			slba = strtoull(optarg, NULL, 0);
			break;
		default:
			return usage();
		}
	}
	if (optind != argc - 1 || count < 1 || opcode > 0xff || !nsid ||
	    nr < 0 || nr > MAX_RANGES)
		return usage();
	if (nr)
		ranges(data, (int)nr, slba);
	fd = open(argv[optind], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[optind],
			strerror(errno));
		return 2;
	}
	for (i = 0; i < count; i++) {
		struct nvme_passthru_cmd c = {
			.opcode = (uint8_t)opcode,
			.nsid = (uint32_t)nsid,
			.cdw10 = (uint32_t)cdw10,
			.cdw11 = (uint32_t)cdw11,
			.addr = nr ? (uint64_t)(uintptr_t)data : 0,
			.data_len = (uint32_t)(nr * 16),
		};
		struct nvme_passthru_cmd64 c64 = {
			.opcode = c.opcode,
			.nsid = c.nsid,
			.cdw10 = c.cdw10,
			.cdw11 = c.cdw11,
			.addr = c.addr,
			.data_len = c.data_len,
		};

		ret = io64 ? ioctl(fd, NVME_IOCTL_IO64_CMD, &c64) :
			     ioctl(fd, NVME_IOCTL_IO_CMD, &c);
		if (ret < 0)
			last_errno = errno;
		else if (ret > 0)
			last_status = ret;
		else
			ok++;
	}
	printf("IOPT via=%s op=0x%02lx cdw10=0x%lx cdw11=0x%lx n=%ld ok=%d status=%d errno=%d%s%s\n",
	       io64 ? "io64" : "io", opcode, cdw10, cdw11, count, ok,
	       last_status, last_errno, last_errno ? " " : "",
	       last_errno ? strerror(last_errno) : "");
	close(fd);
	return ok == count ? 0 : 1;
}
