// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioctl-shim.c - LD_PRELOAD shim on ioctl(2) for NVMe admin passthrough
 *
 * Makes the error paths a drive will not produce reachable with the real
 * binaries, whatever libnvme they use (libnvme 1.x sends
 * NVME_IOCTL_ADMIN_CMD, libnvme3 NVME_IOCTL_ADMIN64_CMD; the fields read
 * here sit at the same offsets in both). Everything else goes to the real
 * ioctl. Environment:
 *
 *	VWC_SHIM_LOG=FILE	append "opcode=0xNN cdw10=0xNNNNNNNN
 *				timeout_ms=N" for each admin command
 *	VWC_SHIM_FAIL=OPC[:FID]:errno:N
 *	VWC_SHIM_FAIL=OPC[:FID]:status:N
 *				admin commands with opcode OPC (and, when
 *				given, feature id FID = cdw10 bits 7:0) are
 *				not sent: the call fails with errno N, or
 *				returns NVMe status N, as the kernel does
 *
 * Numbers in C notation (0x0a, 5). Example: Get Features 06h failing with
 * EIO: VWC_SHIM_FAIL=0x0a:0x06:errno:5
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/nvme_ioctl.h>

typedef int (*ioctl_fn)(int, unsigned long, ...);

struct fail_rule {
	int set;
	unsigned long opcode;
	long fid;		/* -1: any */
	int is_errno;
	unsigned long value;
};

static void parse_rule(struct fail_rule *r)
{
	const char *e = getenv("VWC_SHIM_FAIL");
	char buf[128], *f[4] = { 0 }, *save = NULL, *t;
	int n = 0;

	memset(r, 0, sizeof(*r));
	if (!e || !*e || strlen(e) >= sizeof(buf))
		return;
	strcpy(buf, e);
	for (t = strtok_r(buf, ":", &save); t && n < 4;
	     t = strtok_r(NULL, ":", &save))
		f[n++] = t;
	if (n == 3) {		/* OPC:kind:N */
		f[3] = f[2];
		f[2] = f[1];
		f[1] = NULL;
	} else if (n != 4) {
		return;
	}
	r->opcode = strtoul(f[0], NULL, 0);
	r->fid = f[1] ? (long)strtoul(f[1], NULL, 0) : -1;
	r->is_errno = !strcmp(f[2], "errno");
	r->value = strtoul(f[3], NULL, 0);
	r->set = r->is_errno || !strcmp(f[2], "status");
}

int ioctl(int fd, unsigned long request, ...)
{
	static ioctl_fn real;
	struct nvme_passthru_cmd *cmd;
	struct fail_rule rule;
	const char *logpath;
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");

	if (request != NVME_IOCTL_ADMIN_CMD && request != NVME_IOCTL_ADMIN64_CMD)
		return real(fd, request, arg);

	/* opcode .. timeout_ms: the same layout in both structures */
	cmd = arg;
	logpath = getenv("VWC_SHIM_LOG");
	if (logpath) {
		FILE *f = fopen(logpath, "a");

		if (f) {
			fprintf(f, "opcode=0x%02x cdw10=0x%08x timeout_ms=%u\n",
				cmd->opcode, cmd->cdw10, cmd->timeout_ms);
			fclose(f);
		}
	}
	parse_rule(&rule);
	if (rule.set && cmd->opcode == rule.opcode &&
	    (rule.fid < 0 || (cmd->cdw10 & 0xff) == (unsigned long)rule.fid)) {
		if (rule.is_errno) {
			errno = (int)rule.value;
			return -1;
		}
		return (int)rule.value;
	}
	return real(fd, request, arg);
}
