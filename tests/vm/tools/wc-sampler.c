// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wc-sampler: read /sys/block/NS/queue/write_cache every millisecond from C
 * (one open descriptor, pread at offset 0), so timings carry no shell
 * overhead. A test tool for the VM guests.
 *
 * Usage:
 *   wc-sampler run -n NS -e MODE [-t TIMEOUT_MS] [-p PERIOD_US] [-q] -- CMD [ARG...]
 *     Run CMD (fork/exec). From the moment it exits, sample write_cache until
 *     it reads MODE ("back" or "through", or the full "write back"), at most
 *     TIMEOUT_MS (default 5000). Prints one line:
 *       WCS run ns=NS rc=RC expect=back ms=12.345 samples=13 timeout=0 pre=through
 *     ms is the time from CMD's exit to the first sample reading MODE (0 when
 *     it already read MODE); rc is CMD's exit status (128+N for signal N);
 *     pre is what write_cache read just before CMD started (pre=MODE: the
 *     figure says nothing about CMD).
 *     -q sends CMD's stdout and stderr to /dev/null.
 *   wc-sampler sample -n NS [-d DURATION_MS] [-c /dev/nvmeX] [-p PERIOD_US]
 *     Sample write_cache for DURATION_MS (default 400; 0: until SIGTERM or
 *     SIGINT, then print the figures and exit). With -c, whenever a
 *     sample reads write through, Get Features 06h is sent to the controller
 *     (ioctl on a descriptor opened once) and write_cache is read again: the
 *     sample is "unsafe" when both reads say write through and WCE=1 in
 *     between. Prints:
 *       WCS sample ns=NS ms=400 samples=400 wb=395 wt=5 unsafe=0 wce_start=1
 *           wce_end=1 first_wt_ms=0.000 last_wt_ms=4.020
 *           spin=0
 *     (one line; wce_* are -1 without -c or when Get Features failed).
 *   spin=1: the kernel could not wake a 1 ms sleep on time (no
 *   high-resolution timers), so the sampler spun on the clock instead.
 *   wc-sampler soak -s SERIAL [-d DURATION_MS] [-l LIMIT_MS] [-p PERIOD_US]
 *     For a fault-injection soak: the controller with serial SERIAL and its
 *     first namespace are looked up again whenever a read fails (reset,
 *     rescan, unbind/bind, rmmod/modprobe), at most every 20 ms. A sample
 *     reading write through is "unsafe" when Get Features 06h (descriptor
 *     kept open) says WCE=1 and write_cache still reads write through.
 *     Consecutive unsafe samples form a window (WCE=1 seen, write back not
 *     yet); a sample more than LIMIT_MS (default 1000) into its window is
 *     "outside". SIGUSR1 closes the controller's descriptor (so that
 *     `rmmod nvme` is not refused because of it) until SIGUSR2: write
 *     through samples in between are "unknown". Until SIGTERM when
 *     DURATION_MS is 0 (default). Prints:
 *       WCS soak ms=120000 samples=.. wb=.. wt=.. absent=.. unknown=..
 *           unsafe=.. windows=N p50=.. p99=.. max=.. outside=0 spin=0
 *     (window figures in ms, from the first unsafe sample to the first
 *     sample that is not), after one line per window longer than LIMIT_MS:
 *       WCS window at=SECONDS len=MS
 *     (at: CLOCK_MONOTONIC seconds of its first sample, as /proc/uptime
 *     counts in a guest that never suspends).
 * Exit status: 0 done (the figures say what happened), 1 timeout (run) or
 * unsafe samples (sample) or samples outside the window (soak), 2 usage or
 * setup error.
 *
 * The controller's descriptor is opened once and closed at exit: a sidecar
 * watching close events sees one close after the sampling, none during it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum wc_state { WC_ERR = -1, WC_THROUGH = 0, WC_BACK = 1 };

static const char *prog = "wc-sampler";
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/**
 * read_wc() - read write_cache through an open descriptor
 * @fd: descriptor of /sys/block/NS/queue/write_cache
 *
 * Return: WC_BACK, WC_THROUGH, or WC_ERR on a read error or unknown text.
 */
static enum wc_state read_wc(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return WC_ERR;
	buf[n] = '\0';
	if (!strncmp(buf, "write back", 10))
		return WC_BACK;
	if (!strncmp(buf, "write through", 13))
		return WC_THROUGH;
	return WC_ERR;
}

/**
 * get_wce() - Get Features 06h (Volatile Write Cache), current value
 * @fd: descriptor of /dev/nvmeX, or -1
 *
 * Return: 0 or 1, or -1 when @fd is -1 or the command failed.
 */
static int get_wce(int fd)
{
	struct nvme_admin_cmd cmd = {
		.opcode = 0x0a,		/* Get Features */
		.cdw10 = 0x06,		/* FID 06h, SEL 0: current */
	};

	if (fd < 0 || ioctl(fd, NVME_IOCTL_ADMIN_CMD, &cmd) != 0)
		return -1;
	return cmd.result & 1;
}

static int open_wc(const char *ns)
{
	char path[256];
	int fd;

	if (!strncmp(ns, "/dev/", 5))
		ns += 5;
	snprintf(path, sizeof(path), "/sys/block/%s/queue/write_cache", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	return fd;
}

/*
 * Timer granularity: a kernel without high-resolution timers (6.1 under QEMU
 * TCG) wakes a 1 ms sleep only at the next jiffy (4 ms at HZ=250). After 3
 * consecutive wake-ups more than a period late, the sampler spins on the
 * clock (yielding the CPU) instead of sleeping, and says so (spin=1).
 */
static int late_run;
static bool spinning;

/* wait until @start + @k * @period_us (absolute: no drift) */
static void tick(const struct timespec *start, long k, long period_us)
{
	struct timespec t = *start, now;
	long long ns = t.tv_nsec + (long long)k * period_us * 1000;
	double due;

	t.tv_sec += ns / 1000000000;
	t.tv_nsec = ns % 1000000000;
	due = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
	if (spinning) {
		while (now_ms() < due)
			sched_yield();
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec * 1e3 + now.tv_nsec / 1e6 - due > period_us / 1e3)
		spinning = ++late_run >= 3;
	else
		late_run = 0;
}

static const char *state_str(int s)
{
	return s == WC_BACK ? "back" : s == WC_THROUGH ? "through" : "error";
}

static int parse_mode(const char *s)
{
	if (!strcmp(s, "back") || !strcmp(s, "write back"))
		return WC_BACK;
	if (!strcmp(s, "through") || !strcmp(s, "write through"))
		return WC_THROUGH;
	return WC_ERR;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: %s run -n NS -e back|through [-t TIMEOUT_MS] [-p PERIOD_US] [-q] -- CMD [ARG...]\n"
		"       %s sample -n NS [-d DURATION_MS] [-c /dev/nvmeX] [-p PERIOD_US]\n"
		"       %s soak -s SERIAL [-d DURATION_MS] [-l LIMIT_MS] [-p PERIOD_US]\n",
		prog, prog, prog);
	return 2;
}

static int do_run(const char *ns, int expect, long timeout_ms, long period_us,
		  bool quiet, char **argv)
{
	struct timespec start;
	double t0, t;
	long k = 0, samples = 0;
	int fd, status, rc, s, pre;
	pid_t pid;

	fd = open_wc(ns);
	if (fd < 0)
		return 2;
	pre = read_wc(fd);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		return 2;
	}
	if (pid == 0) {
		if (quiet) {
			int nul = open("/dev/null", O_WRONLY);

			if (nul >= 0) {
				dup2(nul, 1);
				dup2(nul, 2);
			}
		}
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", prog, strerror(errno));
			return 2;
		}
	clock_gettime(CLOCK_MONOTONIC, &start);
	t0 = start.tv_sec * 1e3 + start.tv_nsec / 1e6;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	for (;;) {
		s = read_wc(fd);
		t = now_ms() - t0;
		samples++;
		if (s == expect) {
			printf("WCS run ns=%s rc=%d expect=%s ms=%.3f samples=%ld timeout=0 pre=%s spin=%d\n",
			       ns, rc, expect == WC_BACK ? "back" : "through",
			       samples == 1 ? 0.0 : t, samples, state_str(pre), spinning);
			return 0;
		}
		if (t >= timeout_ms)
			break;
		tick(&start, ++k, period_us);
	}
	printf("WCS run ns=%s rc=%d expect=%s ms=%.3f samples=%ld timeout=1 pre=%s last=%s spin=%d\n",
	       ns, rc, expect == WC_BACK ? "back" : "through", t, samples,
	       state_str(pre), state_str(s), spinning);
	return 1;
}

static int do_sample(const char *ns, long duration_ms, const char *ctrl,
		     long period_us)
{
	long samples = 0, wb = 0, wt = 0, err = 0, unsafe = 0, k = 0;
	double t0, t, first_wt = -1, last_wt = -1;
	struct timespec start;
	int fd, cfd = -1, s, wce_start, wce_end;

	fd = open_wc(ns);
	if (fd < 0)
		return 2;
	if (ctrl) {
		cfd = open(ctrl, O_RDONLY | O_CLOEXEC);
		if (cfd < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, ctrl, strerror(errno));
			return 2;
		}
	}
	if (!duration_ms) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	wce_start = get_wce(cfd);
	clock_gettime(CLOCK_MONOTONIC, &start);
	t0 = start.tv_sec * 1e3 + start.tv_nsec / 1e6;
	do {
		s = read_wc(fd);
		t = now_ms() - t0;
		samples++;
		if (s == WC_BACK) {
			wb++;
		} else if (s == WC_THROUGH) {
			wt++;
			if (first_wt < 0)
				first_wt = t;
			last_wt = t;
			if (cfd >= 0 && get_wce(cfd) == 1 && read_wc(fd) == WC_THROUGH)
				unsafe++;
		} else {
			err++;
		}
		tick(&start, ++k, period_us);
	} while (duration_ms ? now_ms() - t0 < duration_ms : !stop);
	wce_end = get_wce(cfd);
	printf("WCS sample ns=%s ms=%.0f samples=%ld wb=%ld wt=%ld err=%ld unsafe=%ld wce_start=%d wce_end=%d first_wt_ms=%.3f last_wt_ms=%.3f spin=%d\n",
	       ns, now_ms() - t0, samples, wb, wt, err, unsafe, wce_start, wce_end,
	       first_wt, last_wt, spinning);
	if (cfd >= 0)
		close(cfd);
	return unsafe ? 1 : 0;
}

static volatile sig_atomic_t ctrl_paused;

static void on_usr(int sig)
{
	ctrl_paused = sig == SIGUSR1;
}

/* nvmeX with serial @serial and its first namespace block device */
static bool find_by_serial(const char *serial, char *ctrl, size_t clen,
			   char *ns, size_t nlen)
{
	char path[300], buf[64];
	struct dirent *de, *ne;
	DIR *d, *nd;
	bool found = false;
	FILE *f;

	d = opendir("/sys/class/nvme");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char *e;

		if (strncmp(de->d_name, "nvme", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/serial",
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		buf[0] = '\0';
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		for (e = buf + strlen(buf); e > buf && (e[-1] == ' ' ||
		     e[-1] == '\n'); e--)
			e[-1] = '\0';
		if (strcmp(buf, serial))
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s", de->d_name);
		nd = opendir(path);
		if (!nd)
			continue;
		while ((ne = readdir(nd))) {
			int a, b, cc;

			if (sscanf(ne->d_name, "nvme%dc%dn%d", &a, &b, &cc) == 3)
				snprintf(ns, nlen, "nvme%dn%d", a, cc);
			else if (sscanf(ne->d_name, "nvme%dn%d", &a, &b) == 2)
				snprintf(ns, nlen, "%s", ne->d_name);
			else
				continue;
			snprintf(ctrl, clen, "%s", de->d_name);
			found = true;
			break;
		}
		closedir(nd);
	}
	closedir(d);
	return found;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int do_soak(const char *serial, long duration_ms, long limit_ms,
		   long period_us)
{
	long samples = 0, wb = 0, wt = 0, absent = 0, unknown = 0, unsafe = 0;
	long outside = 0, k = 0, nwin = 0, cap = 0;
	double t0, t, win_start = -1, retry = 0, *win = NULL;
	char ctrl[300], ns[300], path[700];
	int fd = -1, cfd = -1, s;
	struct sigaction sa = { .sa_handler = on_signal }, su = { .sa_handler = on_usr };
	struct timespec start;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &su, NULL);
	sigaction(SIGUSR2, &su, NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	t0 = start.tv_sec * 1e3 + start.tv_nsec / 1e6;
	do {
		t = now_ms() - t0;
		samples++;
		if (ctrl_paused && cfd >= 0) {
			close(cfd);
			cfd = -1;
		}
		if (fd < 0 && t >= retry) {
			retry = t + 20;
			if (find_by_serial(serial, ctrl, sizeof(ctrl), ns,
					   sizeof(ns))) {
				snprintf(path, sizeof(path),
					 "/sys/block/%s/queue/write_cache", ns);
				fd = open(path, O_RDONLY | O_CLOEXEC);
			}
		}
		s = fd >= 0 ? read_wc(fd) : WC_ERR;
		if (s == WC_ERR && fd >= 0) {
			close(fd);
			fd = -1;
			if (cfd >= 0)
				close(cfd);
			cfd = -1;
		}
		if (s == WC_THROUGH && cfd < 0 && !ctrl_paused) {
			snprintf(path, sizeof(path), "/dev/%s", ctrl);
			cfd = open(path, O_RDONLY | O_CLOEXEC);
		}
		if (s == WC_ERR) {
			absent++;
		} else if (s == WC_BACK) {
			wb++;
		} else {
			wt++;
			if (cfd < 0) {
				unknown++;
			} else if (get_wce(cfd) == 1 && read_wc(fd) == WC_THROUGH) {
				unsafe++;
				if (win_start < 0)
					win_start = t;
				if (t - win_start > limit_ms)
					outside++;
				tick(&start, ++k, period_us);
				continue;
			}
		}
		if (win_start >= 0) {	/* a window ends */
			if (nwin == cap) {
				double *n = realloc(win, (cap + 1024) * sizeof(*n));

				if (n) {
					win = n;
					cap += 1024;
				}
			}
			if (nwin < cap)
				win[nwin++] = t - win_start;
			if (t - win_start > limit_ms)
				printf("WCS window at=%.3f len=%.3f\n",
				       (t0 + win_start) / 1e3, t - win_start);
			win_start = -1;
		}
		tick(&start, ++k, period_us);
	} while (duration_ms ? now_ms() - t0 < duration_ms : !stop);
	if (nwin)
		qsort(win, nwin, sizeof(*win), cmp_double);
	printf("WCS soak ms=%.0f samples=%ld wb=%ld wt=%ld absent=%ld unknown=%ld unsafe=%ld windows=%ld p50=%.3f p99=%.3f max=%.3f outside=%ld open_window=%d spin=%d\n",
	       now_ms() - t0, samples, wb, wt, absent, unknown, unsafe, nwin,
	       nwin ? win[nwin / 2] : 0.0,
	       nwin ? win[(nwin * 99) / 100 < nwin ? (nwin * 99) / 100 : nwin - 1] : 0.0,
	       nwin ? win[nwin - 1] : 0.0, outside, win_start >= 0, spinning);
	free(win);
	if (fd >= 0)
		close(fd);
	if (cfd >= 0)
		close(cfd);
	return outside ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *ns = NULL, *ctrl = NULL, *mode, *serial = NULL;
	long timeout_ms = 5000, duration_ms = 400, period_us = 1000;
	long limit_ms = 1000;
	int expect = WC_ERR, opt;
	bool quiet = false;

	if (argc < 2)
		return usage();
	mode = argv[1];
	argv++;
	argc--;
	if (!strcmp(mode, "soak"))
		duration_ms = 0;
	while ((opt = getopt(argc, argv, "+n:e:t:p:d:c:qs:l:")) != -1) {
		switch (opt) {
		case 's':
			serial = optarg;
			break;
		case 'l':
			limit_ms = strtol(optarg, NULL, 10);
			break;
		case 'n':
			ns = optarg;
			break;
		case 'e':
			expect = parse_mode(optarg);
			break;
		case 't':
			timeout_ms = strtol(optarg, NULL, 10);
			break;
		case 'p':
			period_us = strtol(optarg, NULL, 10);
			break;
		case 'd':
			duration_ms = strtol(optarg, NULL, 10);
			break;
		case 'c':
			ctrl = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			return usage();
		}
	}
	if (!strcmp(mode, "soak")) {
		if (!serial || period_us <= 0 || duration_ms < 0 || limit_ms <= 0)
			return usage();
		return do_soak(serial, duration_ms, limit_ms, period_us);
	}
	if (!ns || period_us <= 0)
		return usage();
	if (!strcmp(mode, "run")) {
		if (expect == WC_ERR || optind >= argc || timeout_ms <= 0)
			return usage();
		return do_run(ns, expect, timeout_ms, period_us, quiet, argv + optind);
	}
	if (!strcmp(mode, "sample")) {
		if (duration_ms < 0)
			return usage();
		return do_sample(ns, duration_ms, ctrl, period_us);
	}
	return usage();
}
