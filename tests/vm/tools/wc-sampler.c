// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wc-sampler: read /sys/block/NS/queue/write_cache every millisecond from C
 * (one open descriptor, pread at offset 0), so timings carry no shell
 * overhead. A test tool for the VM guests.
 *
 * Usage:
 *   wc-sampler run -n NS -e MODE [-t TIMEOUT_MS] [-p PERIOD_US] [-q] [-F] -- CMD [ARG...]
 *     Run CMD (fork/exec). From the moment it exits, sample write_cache until
 *     it reads MODE ("back" or "through", or the full "write back"), at most
 *     TIMEOUT_MS (default 5000). Prints one line:
 *       WCS run ns=NS rc=RC expect=back ms=12.345 samples=13 timeout=0 pre=through
 *     ms is the time from CMD's exit to the first sample reading MODE (0 when
 *     it already read MODE); rc is CMD's exit status (128+N for signal N);
 *     pre is what write_cache read just before CMD started (pre=MODE: the
 *     figure says nothing about CMD).
 *     -q sends CMD's stdout and stderr to /dev/null.
 *     -F: sample from the fork on instead, while CMD runs (a mode CMD's
 *     kernel work sets before CMD exits is timed too); ms is then from the
 *     fork, and the line adds exit_ms=, the time from the fork to CMD's
 *     exit (ms <= exit_ms: the mode read before CMD had exited):
 *       WCS run ns=NS rc=RC expect=back ms=.. samples=.. timeout=0 pre=..
 *           spin=0 exit_ms=..
 *   wc-sampler sample -n NS [-d DURATION_MS] [-c /dev/nvmeX] [-p PERIOD_US]
 *     Sample write_cache for DURATION_MS (default 400; 0: until SIGTERM or
 *     SIGINT, then print the figures and exit). With -c, whenever a
 *     sample reads write through, Get Features 06h is sent to the controller
 *     (ioctl on a descriptor opened once) and write_cache is read again: the
 *     sample is "unsafe" when both reads say write through and WCE=1 in
 *     between. Prints:
 *       WCS sample ns=NS ms=400 samples=400 wb=395 wt=5 unsafe=0 wce_start=1
 *           wce_end=1 first_wt_ms=0.000 last_wt_ms=4.020
 *           spin=0 trans=2
 *     (one line; wce_* are -1 without -c or when Get Features failed;
 *     trans: how many times a sample read another mode than the sample
 *     before it, unreadable samples aside).
 *   spin=1: the kernel could not wake a 1 ms sleep on time (no
 *   high-resolution timers), so the sampler spun on the clock instead.
 *   wc-sampler soak -s SERIAL [-N NSID] [-d DURATION_MS] [-l LIMIT_MS] [-p PERIOD_US]
 *     For a fault-injection soak: a namespace of the controller(s) with
 *     serial SERIAL (the first one, or the one with namespace ID NSID: the
 *     controllers of one subsystem share a serial, and a shared namespace
 *     is its multipath head) is looked up again whenever a read fails
 *     (reset, rescan, unbind/bind, rmmod/modprobe), at most every 20 ms.
 *     When a sample reads write through, every controller reaching the
 *     namespace is asked for WCE (Get Features 06h, a descriptor of each
 *     kept open): those behind the head's path nodes
 *     (/sys/block/NS/multipath/nvmeXcYnZ: controller nvmeY), or the
 *     namespace's own controller without multipath. The sample is
 *     "unsafe" when one of them says WCE=1 and write_cache still reads
 *     write through; "unknown" when none says 1 and one could not be asked
 *     (a controller resetting or gone, or SIGUSR1 below); "absent" when
 *     write_cache cannot be read (the namespace is gone). A window opens
 *     at the first unsafe sample and ends at the first sample known safe
 *     (write back, or write through with every controller at WCE=0):
 *     unknown and absent samples neither open nor end one, so a window
 *     sampled sparsely, or across a controller's reset, counts whole. A
 *     window longer than LIMIT_MS (default 1000) is "outside", one still
 *     open at the end too. SIGUSR1 closes the controllers' descriptors (so
 *     that `rmmod nvme` is not refused because of them) until SIGUSR2.
 *     Until SIGTERM when DURATION_MS is 0 (default). Prints:
 *       WCS soak ms=120000 samples=.. wb=.. wt=.. rises=.. absent=.. unknown=..
 *           paused=.. in_pause=.. unsafe=.. windows=N p50=.. p99=.. max=..
 *           outside=0 open_window=0 max_gap=MS spin=0 ns=NS
 *     (window figures in ms, from the first unsafe sample to the first
 *     safe one; paused: the unknown samples taken between SIGUSR1 and
 *     SIGUSR2; in_pause: every sample taken then; outside: windows longer
 *     than LIMIT_MS; max_gap: the longest time between two samples; ns:
 *     the namespace followed at the end, "-" when none), after one line
 *     per window longer than LIMIT_MS:
 *       WCS window at=SECONDS len=MS [open=1]
 *     (at: CLOCK_MONOTONIC seconds of its first sample, as /proc/uptime
 *     counts in a guest that never suspends).
 * Exit status: 0 done (the figures say what happened), 1 timeout (run) or
 * unsafe samples (sample) or a window longer than the limit (soak), 2 usage or
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
		"usage: %s run -n NS -e back|through [-t TIMEOUT_MS] [-p PERIOD_US] [-q] [-F] -- CMD [ARG...]\n"
		"       %s sample -n NS [-d DURATION_MS] [-c /dev/nvmeX] [-p PERIOD_US]\n"
		"       %s soak -s SERIAL [-N NSID] [-d DURATION_MS] [-l LIMIT_MS] [-p PERIOD_US]\n",
		prog, prog, prog);
	return 2;
}

/* CMD started in a child (its output to /dev/null when @quiet); -1 if not */
static pid_t spawn(bool quiet, char **argv)
{
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		return -1;
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
	return pid;
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
	pid = spawn(quiet, argv);
	if (pid < 0)
		return 2;
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

/*
 * run -F: sample from the fork on, while CMD runs, until write_cache reads
 * @expect and CMD has exited (or the timeout).
 */
static int do_run_fork(const char *ns, int expect, long timeout_ms,
		       long period_us, bool quiet, char **argv)
{
	struct timespec start;
	double t0, t = 0, flip = -1, exit_ms = -1;
	long k = 0, samples = 0;
	int fd, status, rc = -1, s = WC_ERR, pre;
	pid_t pid, w;

	fd = open_wc(ns);
	if (fd < 0)
		return 2;
	pre = read_wc(fd);
	clock_gettime(CLOCK_MONOTONIC, &start);
	t0 = start.tv_sec * 1e3 + start.tv_nsec / 1e6;
	pid = spawn(quiet, argv);
	if (pid < 0)
		return 2;
	for (;;) {
		if (flip < 0) {
			s = read_wc(fd);
			t = now_ms() - t0;
			samples++;
			if (s == expect)
				flip = t;
		}
		if (exit_ms < 0) {
			w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				exit_ms = now_ms() - t0;
				rc = WIFEXITED(status) ? WEXITSTATUS(status) :
					128 + WTERMSIG(status);
			}
		}
		if (flip >= 0 && exit_ms >= 0)
			break;
		if (now_ms() - t0 >= timeout_ms)
			break;
		tick(&start, ++k, period_us);
	}
	if (exit_ms < 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		exit_ms = now_ms() - t0;
		rc = WIFEXITED(status) ? WEXITSTATUS(status) :
			128 + WTERMSIG(status);
	}
	if (flip >= 0) {
		printf("WCS run ns=%s rc=%d expect=%s ms=%.3f samples=%ld timeout=0 pre=%s spin=%d exit_ms=%.3f\n",
		       ns, rc, expect == WC_BACK ? "back" : "through", flip,
		       samples, state_str(pre), spinning, exit_ms);
		return 0;
	}
	printf("WCS run ns=%s rc=%d expect=%s ms=%.3f samples=%ld timeout=1 pre=%s last=%s spin=%d exit_ms=%.3f\n",
	       ns, rc, expect == WC_BACK ? "back" : "through", t, samples,
	       state_str(pre), state_str(s), spinning, exit_ms);
	return 1;
}

static int do_sample(const char *ns, long duration_ms, const char *ctrl,
		     long period_us)
{
	long samples = 0, wb = 0, wt = 0, err = 0, unsafe = 0, k = 0, trans = 0;
	double t0, t, first_wt = -1, last_wt = -1;
	struct timespec start;
	int fd, cfd = -1, s, last = -1, wce_start, wce_end;

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
		if (s == WC_BACK || s == WC_THROUGH) {
			trans += last >= 0 && s != last;
			last = s;
		}
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
	printf("WCS sample ns=%s ms=%.0f samples=%ld wb=%ld wt=%ld err=%ld unsafe=%ld wce_start=%d wce_end=%d first_wt_ms=%.3f last_wt_ms=%.3f spin=%d trans=%ld\n",
	       ns, now_ms() - t0, samples, wb, wt, err, unsafe, wce_start, wce_end,
	       first_wt, last_wt, spinning, trans);
	if (cfd >= 0)
		close(cfd);
	return unsafe ? 1 : 0;
}

static volatile sig_atomic_t ctrl_paused;

static void on_usr(int sig)
{
	ctrl_paused = sig == SIGUSR1;
}

/* the first line of a small sysfs file, trailing spaces and newline cut */
static bool read_attr(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	char *e;

	if (!f)
		return false;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	for (e = buf + strlen(buf); e > buf && (e[-1] == ' ' || e[-1] == '\n'); e--)
		e[-1] = '\0';
	return true;
}

/*
 * nvmeX with serial @serial and a namespace block device of it: the first
 * one, or the one whose nsid is @nsid (> 0). A path node nvmeXcYnZ names
 * its multipath head nvmeXnZ. Controllers of one subsystem share a serial:
 * every one of them is looked at.
 */
static bool find_by_serial(const char *serial, long nsid, char *ctrl,
			   size_t clen, char *ns, size_t nlen)
{
	char path[600], buf[64];
	struct dirent *de, *ne;
	DIR *d, *nd;
	bool found = false;

	d = opendir("/sys/class/nvme");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, "nvme", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/serial",
			 de->d_name);
		if (!read_attr(path, buf, sizeof(buf)) || strcmp(buf, serial))
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
			if (nsid > 0) {
				snprintf(path, sizeof(path),
					 "/sys/class/nvme/%s/%s/nsid",
					 de->d_name, ne->d_name);
				if (!read_attr(path, buf, sizeof(buf)) ||
				    strtol(buf, NULL, 10) != nsid)
					continue;
			}
			snprintf(ctrl, clen, "%s", de->d_name);
			found = true;
			break;
		}
		closedir(nd);
	}
	closedir(d);
	return found;
}

/*
 * The controllers reaching a namespace, each with a descriptor of its
 * /dev/nvmeN kept open between samples. A multipath head lists its path
 * nodes nvmeXcYnZ under /sys/block/HEAD/multipath/: controller nvmeY
 * reaches it. Without that folder (no multipath) the namespace's own
 * controller alone; unknown once the folder was seen and is gone.
 */
#define MAX_CTRLS	16

struct ctrl_fd {
	char name[64];
	int fd;
	bool seen;
};

static struct ctrl_fd cfds[MAX_CTRLS];
static int nr_cfds;

static void close_ctrls(bool all)
{
	int i, j = 0;

	for (i = 0; i < nr_cfds; i++) {
		if (all || !cfds[i].seen) {
			if (cfds[i].fd >= 0)
				close(cfds[i].fd);
			continue;
		}
		cfds[j++] = cfds[i];
	}
	nr_cfds = j;
}

/* Get Features 06h on controller @name, its descriptor opened (again) */
static int ctrl_wce(const char *name)
{
	char path[128];
	int i, v;

	for (i = 0; i < nr_cfds && strcmp(cfds[i].name, name); i++)
		;
	if (i == nr_cfds) {
		if (nr_cfds == MAX_CTRLS)
			return -1;
		snprintf(cfds[i].name, sizeof(cfds[i].name), "%s", name);
		cfds[i].fd = -1;
		nr_cfds++;
	}
	cfds[i].seen = true;
	snprintf(path, sizeof(path), "/dev/%s", name);
	if (cfds[i].fd < 0)
		cfds[i].fd = open(path, O_RDONLY | O_CLOEXEC);
	v = get_wce(cfds[i].fd);
	if (v < 0 && cfds[i].fd >= 0) {
		/* a controller gone and back under the same name */
		close(cfds[i].fd);
		cfds[i].fd = open(path, O_RDONLY | O_CLOEXEC);
		v = get_wce(cfds[i].fd);
	}
	return v;
}

/*
 * Is any controller reaching @ns WCE=1? 1 when one says so, 0 when every
 * one says WCE=0, -1 (unknown) when none says 1 and one could not be asked
 * (or none was found, or the descriptors are let go: SIGUSR1).
 */
static int any_wce(const char *ns, const char *ctrl)
{
	/*
	 * Once a multipath folder was seen, its absence (the head going
	 * away and coming back, a name looked up mid-change) is unknown, not
	 * "the one controller": another controller may reach the namespace.
	 */
	static bool had_multipath;
	char path[400];
	struct dirent *de;
	int i, v, res = 0, n = 0;
	DIR *d;

	if (ctrl_paused)
		return -1;
	for (i = 0; i < nr_cfds; i++)
		cfds[i].seen = false;
	snprintf(path, sizeof(path), "/sys/block/%s/multipath", ns);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			int a, b, c;
			char name[32];

			if (sscanf(de->d_name, "nvme%dc%dn%d", &a, &b, &c) != 3)
				continue;
			snprintf(name, sizeof(name), "nvme%d", b);
			n++;
			v = ctrl_wce(name);
			if (v == 1)
				res = 1;
			else if (v < 0 && res == 0)
				res = -1;
		}
		closedir(d);
		had_multipath = true;
	} else if (ctrl[0] && !had_multipath) {
		n++;
		res = ctrl_wce(ctrl);
	}
	close_ctrls(false);
	return n ? res : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* a window ends at @t: its length kept, reported when beyond @limit_ms */
static void end_window(double **win, long *nwin, long *cap, double t0,
		       double start, double t, long limit_ms, long *outside)
{
	if (*nwin == *cap) {
		double *n = realloc(*win, (*cap + 1024) * sizeof(*n));

		if (n) {
			*win = n;
			*cap += 1024;
		}
	}
	if (*nwin < *cap)
		(*win)[(*nwin)++] = t - start;
	if (t - start > limit_ms) {
		(*outside)++;
		printf("WCS window at=%.3f len=%.3f\n", (t0 + start) / 1e3,
		       t - start);
	}
}

static int do_soak(const char *serial, long nsid, long duration_ms,
		   long limit_ms, long period_us)
{
	long samples = 0, wb = 0, wt = 0, absent = 0, unknown = 0, unsafe = 0;
	long outside = 0, k = 0, nwin = 0, cap = 0, paused = 0, rises = 0;
	long in_pause = 0;
	double t0, t, prev = 0, gap = 0, win_start = -1, retry = 0, *win = NULL;
	char ctrl[300] = "", ns[300], path[700];
	int fd = -1, s, w, last = WC_ERR;
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
		if (samples && t - prev > gap)
			gap = t - prev;
		prev = t;
		samples++;
		in_pause += ctrl_paused != 0;
		if (ctrl_paused && nr_cfds)
			close_ctrls(true);
		if (fd < 0 && t >= retry) {
			retry = t + 20;
			if (find_by_serial(serial, nsid, ctrl, sizeof(ctrl), ns,
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
			close_ctrls(true);
		}
		if (s == WC_ERR) {
			absent++;	/* neither ends nor opens a window */
		} else if (s == WC_BACK) {
			wb++;
			rises += last == WC_THROUGH;
			if (win_start >= 0)
				end_window(&win, &nwin, &cap, t0, win_start, t,
					   limit_ms, &outside);
			win_start = -1;
		} else {
			wt++;
			w = any_wce(ns, ctrl);
			if (w < 0) {
				unknown++;	/* neither ends nor opens one */
				paused += ctrl_paused != 0;
			} else if (w == 1 && read_wc(fd) == WC_THROUGH) {
				unsafe++;
				if (win_start < 0)
					win_start = t;
			} else if (win_start >= 0) {
				end_window(&win, &nwin, &cap, t0, win_start, t,
					   limit_ms, &outside);
				win_start = -1;
			}
		}
		if (s != WC_ERR)
			last = s;
		tick(&start, ++k, period_us);
	} while (duration_ms ? now_ms() - t0 < duration_ms : !stop);
	t = now_ms() - t0;
	if (win_start >= 0 && t - win_start > limit_ms) {
		outside++;
		printf("WCS window at=%.3f len=%.3f open=1\n",
		       (t0 + win_start) / 1e3, t - win_start);
	}
	if (nwin)
		qsort(win, nwin, sizeof(*win), cmp_double);
	printf("WCS soak ms=%.0f samples=%ld wb=%ld wt=%ld rises=%ld absent=%ld unknown=%ld paused=%ld in_pause=%ld unsafe=%ld windows=%ld p50=%.3f p99=%.3f max=%.3f outside=%ld open_window=%d max_gap=%.3f spin=%d ns=%s\n",
	       t, samples, wb, wt, rises, absent, unknown, paused, in_pause, unsafe, nwin,
	       nwin ? win[nwin / 2] : 0.0,
	       nwin ? win[(nwin * 99) / 100 < nwin ? (nwin * 99) / 100 : nwin - 1] : 0.0,
	       nwin ? win[nwin - 1] : 0.0, outside, win_start >= 0, gap,
	       spinning, ns[0] && fd >= 0 ? ns : "-");
	free(win);
	if (fd >= 0)
		close(fd);
	close_ctrls(true);
	return outside ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *ns = NULL, *ctrl = NULL, *mode, *serial = NULL;
	long timeout_ms = 5000, duration_ms = 400, period_us = 1000;
	long limit_ms = 1000, nsid = 0;
	int expect = WC_ERR, opt;
	bool quiet = false, from_fork = false;

	if (argc < 2)
		return usage();
	mode = argv[1];
	argv++;
	argc--;
	if (!strcmp(mode, "soak"))
		duration_ms = 0;
	while ((opt = getopt(argc, argv, "+n:e:t:p:d:c:qFs:l:N:")) != -1) {
		switch (opt) {
		case 's':
			serial = optarg;
			break;
		case 'N':
			nsid = strtol(optarg, NULL, 10);
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
		case 'F':
			from_fork = true;
			break;
		default:
			return usage();
		}
	}
	if (!strcmp(mode, "soak")) {
		if (!serial || period_us <= 0 || duration_ms < 0 || limit_ms <= 0)
			return usage();
		return do_soak(serial, nsid, duration_ms, limit_ms, period_us);
	}
	if (!ns || period_us <= 0)
		return usage();
	if (!strcmp(mode, "run")) {
		if (expect == WC_ERR || optind >= argc || timeout_ms <= 0)
			return usage();
		if (from_fork)
			return do_run_fork(ns, expect, timeout_ms, period_us,
					   quiet, argv + optind);
		return do_run(ns, expect, timeout_ms, period_us, quiet, argv + optind);
	}
	if (!strcmp(mode, "sample")) {
		if (duration_ms < 0)
			return usage();
		return do_sample(ns, duration_ms, ctrl, period_us);
	}
	return usage();
}
