// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvme-ready: run a command that brings an NVMe controller up (insmod
 * nvme.ko, a script) and time, on CLOCK_MONOTONIC from the command's fork,
 * when the controller with a given serial is usable: live, with a
 * namespace, and (with -z) that namespace's Write Zeroes off
 * (queue/write_zeroes_max_bytes 0). A test tool for the VM guests
 * (bench/guest/bench-t700-boot.sh).
 *
 * Usage: nvme-ready -s SERIAL [-z] [-S] [-t TIMEOUT_MS] [-p PERIOD_US] -- CMD [ARG...]
 *   Samples every PERIOD_US (default 1000) from the fork of CMD (its output
 *   to /dev/null) until CMD has exited and the controller is ready, at most
 *   TIMEOUT_MS (default 60000). -S: then `udevadm settle --timeout=60`.
 *   Prints one line:
 *     NR rc=0 cmd_ms=12.3 first_ms=80.1 first_wz=131072 ready_ms=456.7
 *        wz=0 seqs=2 settled_ms=800.2 ctrl=nvme0 ns=nvme0n1 timeout=0
 *   cmd_ms: CMD's exit; first_ms: the first sample with the controller
 *   live and a namespace, first_wz its write_zeroes_max_bytes; ready_ms:
 *   the first sample meeting the condition; wz: write_zeroes_max_bytes
 *   then; seqs: how many namespaces (distinct diskseq values) were seen
 *   (1: one probe; 2: the controller was bound again); settled_ms: udevadm
 *   settle's exit (-1 without -S). A time never reached reads -1.
 *   Exit status 0 ready, 1 timeout, 2 usage or setup.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SEQS 16

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* the first line of @path into @buf, trailing blanks cut; -1 unreadable */
static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	n = (ssize_t)strcspn(buf, "\n");
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	return 0;
}

static long read_num(const char *path)
{
	char b[64];

	return read_str(path, b, sizeof(b)) ? -1 : strtol(b, NULL, 10);
}

/* the controller (nvmeN) whose serial is @serial, or "" */
static void find_ctrl(const char *serial, char *ctrl, size_t len)
{
	DIR *d = opendir("/sys/class/nvme");
	struct dirent *de;
	char path[300], s[128], *p;

	ctrl[0] = '\0';
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "nvme", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/serial",
			 de->d_name);
		if (read_str(path, s, sizeof(s)))
			continue;
		for (p = s; *p == ' '; p++)
			;
		if (!strcmp(p, serial)) {
			snprintf(ctrl, len, "%.31s", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
}

/* the first namespace's block device of @ctrl (the head of a path), or "" */
static void find_ns(const char *ctrl, char *ns, size_t len)
{
	char path[300];
	DIR *d;
	struct dirent *de;
	int a, b, c;

	ns[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", ctrl);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, "nvme%dc%dn%d", &a, &b, &c) == 3) {
			snprintf(ns, len, "nvme%dn%d", a, c);
			break;
		}
		if (sscanf(de->d_name, "nvme%dn%d", &a, &c) == 2) {
			snprintf(ns, len, "%.31s", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
}

static void usage(void)
{
	fprintf(stderr, "usage: nvme-ready -s SERIAL [-z] [-S] [-t TIMEOUT_MS] [-p PERIOD_US] -- CMD [ARG...]\n");
	exit(2);
}

/* run @argv to its end; its exit status (128+N for signal N), -1 */
static int run_wait(char **argv)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		return -1;
	if (!p) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	const char *serial = NULL;
	int want_wz0 = 0, settle = 0, opt, st, rc = -1, nseq = 0, i;
	long timeout_ms = 60000, period_us = 1000, seqs[MAX_SEQS];
	double t0, now, cmd_ms = -1, first_ms = -1, ready_ms = -1;
	double settled_ms = -1;
	long first_wz = -1, wz = -1;
	char ctrl[64] = "", ns[64] = "", path[300], state[32];
	pid_t pid;

	while ((opt = getopt(argc, argv, "s:zSt:p:")) != -1) {
		switch (opt) {
		case 's': serial = optarg; break;
		case 'z': want_wz0 = 1; break;
		case 'S': settle = 1; break;
		case 't': timeout_ms = atol(optarg); break;
		case 'p': period_us = atol(optarg); break;
		default: usage();
		}
	}
	if (!serial || optind >= argc || period_us <= 0)
		usage();
	t0 = mono_ms();
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (!pid) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	for (;;) {
		if (cmd_ms < 0 && waitpid(pid, &st, WNOHANG) == pid) {
			cmd_ms = mono_ms() - t0;
			rc = WIFEXITED(st) ? WEXITSTATUS(st) :
			     128 + WTERMSIG(st);
		}
		now = mono_ms() - t0;
		if (ready_ms < 0) {
			/* names are looked up again whenever a read fails:
			 * a rebind may bring another controller name */
			snprintf(path, sizeof(path), "/sys/class/nvme/%s/state",
				 ctrl);
			if (!ctrl[0] || read_str(path, state, sizeof(state))) {
				find_ctrl(serial, ctrl, sizeof(ctrl));
				ns[0] = '\0';
				snprintf(path, sizeof(path),
					 "/sys/class/nvme/%s/state", ctrl);
				if (!ctrl[0] ||
				    read_str(path, state, sizeof(state)))
					state[0] = '\0';
			}
			if (!strcmp(state, "live")) {
				snprintf(path, sizeof(path),
					 "/sys/block/%s/queue/write_zeroes_max_bytes",
					 ns);
				wz = ns[0] ? read_num(path) : -1;
				if (wz < 0) {
					find_ns(ctrl, ns, sizeof(ns));
					snprintf(path, sizeof(path),
						 "/sys/block/%s/queue/write_zeroes_max_bytes",
						 ns);
					wz = ns[0] ? read_num(path) : -1;
				}
			} else {
				wz = -1;
			}
			if (wz >= 0) {
				long s;

				snprintf(path, sizeof(path),
					 "/sys/block/%s/diskseq", ns);
				s = read_num(path);
				for (i = 0; i < nseq && seqs[i] != s; i++)
					;
				if (i == nseq && nseq < MAX_SEQS)
					seqs[nseq++] = s;
				if (first_ms < 0) {
					first_ms = now;
					first_wz = wz;
				}
				if (!want_wz0 || wz == 0)
					ready_ms = now;
			}
		}
		if (cmd_ms >= 0 && ready_ms >= 0)
			break;
		if (now > timeout_ms)
			break;
		usleep(period_us);
	}
	if (cmd_ms < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (settle && ready_ms >= 0) {
		char *sa[] = { "udevadm", "settle", "--timeout=60", NULL };

		if (!run_wait(sa))
			settled_ms = mono_ms() - t0;
	}
	printf("NR rc=%d cmd_ms=%.1f first_ms=%.1f first_wz=%ld ready_ms=%.1f wz=%ld seqs=%d settled_ms=%.1f ctrl=%s ns=%s timeout=%d\n",
	       rc, cmd_ms, first_ms, first_wz, ready_ms, wz, nseq, settled_ms,
	       ctrl[0] ? ctrl : "-", ns[0] ? ns : "-", ready_ms < 0);
	return ready_ms < 0;
}
