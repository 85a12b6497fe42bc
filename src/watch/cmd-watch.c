// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch: the sidecar command. Keeps the topology it found and reacts per
 * controller: an event on nvme3 costs one Get Features 06h to nvme3 (and
 * to the controllers sharing its namespaces) and the sysfs writes that
 * differ. The parts:
 *
 *  - the model (watch-model.h, watch-model.c): controllers, namespaces, what
 *    is pending;
 *  - the event sources (watch-sources.h): udev, inotify and the
 *    kernel-side detection (kwatch.h) in its own thread, which writes
 *    write back at once (watch-fast.h), each feeding the model;
 *  - what is done about it (watch-act.h): probes and writes under the
 *    writers' lock (lock.h), the immediate write back a Set Features 06h
 *    with WCE=1 calls for, the safety net, the textfile;
 *  - this command: options, the poll loop, the timers, systemd, and the
 *    rebinds cut short (unbound.h): it watches their records and binds
 *    what one names once its unbinder has ended.
 *
 * A safety net every --interval seconds (default 60) compares write_cache
 * to the last decision, sends Get Features 06h only to controllers that
 * report a cache, and discovers the topology again if the device names
 * in sysfs changed (multipath paths send no uevent). No fixed limits:
 * every controller, namespace and path the host has.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libudev.h>

#include "blk.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "dynid.h"
#include "kwatch.h"
#include "lock.h"
#include "log.h"
#include "nvme-io.h"
#include "procid.h"
#include "unbound.h"
#include "watch-act.h"
#include "watch-fast.h"
#include "watch-textfile.h"

#define PFD_SIG		0
#define PFD_UDEV	1
#define PFD_INOTIFY	2
#define PFD_KUDEV	3
#define PFD_FAST	4	/* the fast path's messages */
#define PFD_UNBOUND	5	/* records of unbinds in progress */
#define PFD_N		6

/* while a record of an unbind is there: how often it is looked at (s) */
#define UNBOUND_RECHECK	0.25

/*
 * The records of unbinds in progress: a rebind's own process binds what it
 * unbound; a record whose unbinder ended (SIGKILL, a crash) is acted on
 * here, under the quirks lock, which that process held (vwc_dynid_qlock_try()
 * acts on them once it has it). @due: when to look again, 0 never.
 */
struct unbound_watch {
	int fd;
	double due;
};

static void unbound_watch_open(struct unbound_watch *u)
{
	u->fd = vwc_unbound_watch();
	if (u->fd < 0)
		vwc_notice("watch: cannot watch %s/unbound (%s): rebinds cut short are looked for every safety-net round",
			   vwc_rundir(), strerror(-u->fd));
	u->due = vwc_watch_now();	/* what is there already */
}

static void unbound_watch_read(struct unbound_watch *u)
{
	char buf[4096];

	while (read(u->fd, buf, sizeof(buf)) > 0)
		;
	u->due = vwc_watch_now();
}

static void unbound_watch_work(struct unbound_watch *u)
{
	double t = vwc_watch_now();

	if (!u->due || t < u->due)
		return;
	if (!vwc_dynid_qlock_try())
		vwc_dynid_qlock_release();
	/* left: an unbinder still at work (or the lock's holder's to do) */
	u->due = vwc_unbound_pending() ? t + UNBOUND_RECHECK : 0;
}

/*
 * sd_notify(3)'s protocol, which systemd documents as stable for programs
 * that do not link libsystemd: one datagram to $NOTIFY_SOCKET, a path or
 * ('@') an abstract name. Nothing to do when not started by systemd.
 */
static void notify_systemd(const char *state)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	size_t n;
	int fd;

	if (!e || (e[0] != '/' && e[0] != '@'))
		return;
	n = strlen(e);
	if (n >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, e, n);
	if (e[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + n;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, len) < 0)
		vwc_notice("watch: cannot notify systemd (%s): %s", e,
			   strerror(errno));
	close(fd);
}

static int usage_help(void)
{
	char how[300];

	vwc_kwatch_describe(how, sizeof(how));
	printf("Usage: %s watch [--interval=<seconds>] [--textfile=<file>] [--config=<file>] [-v]\n\n"
	       "Sidecar: keep every NVMe namespace's write cache mode right when the\n"
	       "controller's cache state can change (Set Features 06h by any process,\n"
	       "seen by kprobes where the kernel allows, controller reset, namespace\n"
	       "rescan, hotplug, SMART events). Event driven; a safety net\n"
	       "every --interval seconds (default 60) compares write_cache and sends\n"
	       "only Get Features 06h to controllers that report a cache.\n"
	       "--textfile: keep a node_exporter textfile (audit -o prometheus) up to\n"
	       "date at start, on every change and every safety-net round.\n"
	       "Stops on SIGTERM or SIGINT.\n"
	       "Set Features 06h through a held descriptor, passthrough or io_uring\n"
	       "is seen by kprobes on nvme_core's admin passthrough entry points,\n"
	       "nothing on the I/O path (else on the nvme tracepoints, which every\n"
	       "I/O passes); libtracefs finds tracefs, or mounts it at\n"
	       "/sys/kernel/tracing. Attached when nvme_core loads and when a CPU\n"
	       "comes online. Without them: close events, udev and the safety net.\n"
	       "Detection on this host now: %s\n", vwc_prog, how);
	return 0;
}

/* Set up the run, the model and the sources; the first pass. */
static int watch_start(struct vwc_sidecar *wr, const struct vwc_opts *o,
		       const struct vwc_config *cfg)
{
	struct vwc_kwatch *kw;
	char why[300];
	int r;

	memset(wr, 0, sizeof(*wr));
	wr->src.ifd = -1;
	wr->textfile = o->textfile;
	r = vwc_run_init(&wr->run, "watch", cfg);
	if (r) {
		vwc_err("watch: cannot scan NVMe devices: %s", strerror(-r));
		return r;
	}
	/* the names as the first scan's readdirs saw them (as
	 * vwc_watch_rescan() keeps them) */
	wr->scanned_sig = wr->run.topo.names_sig;
	wr->run.keep_restored = true;
	vwc_model_init(&wr->model, &wr->run.topo, &vwc_watch_ops, wr);
	r = vwc_src_open(&wr->src, wr->run.udev);
	if (r)
		return r;
	r = vwc_kwatch_open(&kw, why, sizeof(why));
	if (r)
		vwc_notice("kernel-side Set Features detection unavailable (%s): relying on close events, udev and the safety net; trying again when a controller appears and every safety-net round",
			   why);
	else
		vwc_fast_start(&wr->src.fast, kw);
	return 0;
}

/*
 * Attach the kernel events where they are missing: nvme_core loaded after
 * the start, a CPU online since. Return: true if the poll set changed.
 */
static bool kwatch_attach(struct vwc_sidecar *wr)
{
	struct vwc_kwatch *kw;
	char why[300];

	wr->model.attach = false;
	if (wr->src.fast) {
		/* the thread owns the rings */
		vwc_fast_add_cpus(wr->src.fast);
		return false;
	}
	if (vwc_kwatch_open(&kw, why, sizeof(why))) {
		vwc_dbg("kernel-side detection still unavailable: %s", why);
		return false;
	}
	if (vwc_fast_start(&wr->src.fast, kw))
		return false;
	vwc_notice("Set Features detection: %s (attached late)",
		   vwc_fast_how(wr->src.fast));
	vwc_watch_publish_fast(wr);
	/* what happened before it attached: read every cache state */
	vwc_model_note_all(&wr->model);
	return true;
}

static void watch_stop(struct vwc_sidecar *wr)
{
	vwc_model_free(&wr->model);
	vwc_src_close(&wr->src);
	vwc_watch_textfile_free(wr);
	vwc_run_free(&wr->run);
}

/*
 * The poll set: signals, udev, inotify, kernel uevents, the fast path, the
 * records of unbinds (@ufd).
 */
static struct pollfd *poll_set(struct vwc_sidecar *wr, int sfd, int ufd,
			       int *npfd)
{
	struct vwc_watch_src *s = &wr->src;
	struct pollfd *pfd;

	pfd = calloc(PFD_N, sizeof(*pfd));
	if (!pfd)
		return NULL;
	pfd[PFD_SIG] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	pfd[PFD_UDEV] = (struct pollfd){ .fd = udev_monitor_get_fd(s->mon),
					 .events = POLLIN };
	pfd[PFD_INOTIFY] = (struct pollfd){ .fd = s->ifd, .events = POLLIN };
	/* poll ignores a negative descriptor */
	pfd[PFD_KUDEV] = (struct pollfd){ .fd = s->kmon ?
					  udev_monitor_get_fd(s->kmon) : -1,
					  .events = POLLIN };
	pfd[PFD_FAST] = (struct pollfd){ .fd = vwc_fast_fd(s->fast),
					 .events = POLLIN };
	pfd[PFD_UNBOUND] = (struct pollfd){ .fd = ufd, .events = POLLIN };
	*npfd = PFD_N;
	return pfd;
}

/* Read every source that is ready; the kernel's word first. */
static void read_sources(struct vwc_sidecar *wr, struct pollfd *pfd,
			 int npfd)
{
	double t0 = vwc_watch_cpu_now();

	(void)npfd;
	/* it may call for write back now */
	if (pfd[PFD_FAST].revents & POLLIN)
		vwc_src_read_fast(&wr->src, &wr->model,
				  vwc_watch_write_back_now);
	/* POLLERR: the socket's buffer overflowed (read, it says ENOBUFS) */
	if (pfd[PFD_KUDEV].revents & (POLLIN | POLLERR))
		vwc_src_read_udev(&wr->src, &wr->model, wr->src.kmon, true);
	if (pfd[PFD_UDEV].revents & (POLLIN | POLLERR))
		vwc_src_read_udev(&wr->src, &wr->model, wr->src.mon, false);
	if (pfd[PFD_INOTIFY].revents & POLLIN)
		vwc_src_read_inotify(&wr->src, &wr->model);
	wr->model.read_cpu += vwc_watch_cpu_now() - t0;
}

/*
 * Where the main thread's CPU went, for the stop line's reader: at fabrics
 * scale, what to make cheaper. The rest of its time is the loop itself
 * (timers, opens, the safety net's rounds); the fast path's thread is not
 * in it.
 */
static void say_costs(const struct vwc_sidecar *wr)
{
	const struct vwc_model *w = &wr->model;

	vwc_notice("its CPU: %.1f s in the main thread: reading events %.1f s (%lu udev, %lu kernel uevents, %lu inotify), evaluations %.1f s (%lu, %lu full), close checks %.1f s (%lu with nothing in write through on the cache read nothing, %lu found WCE as known and needed none), topology scans %.1f s; commands sent: %lu Identify Controller, %lu namespace lists, %lu Identify Namespace, %lu Get Features 06h, %lu SMART logs, %lu others",
		   vwc_watch_cpu_now(), w->read_cpu, w->udev_events,
		   w->kernel_uevents,
		   w->events - w->udev_events - w->kernel_uevents,
		   w->eval_cpu, w->evaluations, w->full_evaluations,
		   w->close_cpu, w->closes_moot, w->closes_confirmed,
		   w->rescan_total, vwc_nvme_sent(VWC_NVME_SENT_ID_CTRL),
		   vwc_nvme_sent(VWC_NVME_SENT_NS_LIST),
		   vwc_nvme_sent(VWC_NVME_SENT_ID_NS),
		   vwc_nvme_sent(VWC_NVME_SENT_WCE),
		   vwc_nvme_sent(VWC_NVME_SENT_SMART),
		   vwc_nvme_sent(VWC_NVME_SENT_OTHER));
}

/* What is due: rescans, opens, timers, the safety net, evaluations. */
static void work(struct vwc_sidecar *wr, struct unbound_watch *u,
		 double *next_net, double period)
{
	double t;

	if (wr->model.rescan)
		vwc_watch_rescan(wr);
	vwc_watch_open_retry(wr);
	t = vwc_watch_now();
	vwc_model_timers(&wr->model, t);
	if (t >= *next_net) {
		vwc_watch_check_modes(wr);
		vwc_model_safety_net(&wr->model);
		/* paths that joined without an event */
		if (vwc_watch_topo_changed(wr))
			wr->model.rescan = true;
		*next_net = t + period;
		wr->model.publish = true;	/* also the heartbeat */
		if (!u->due)
			u->due = t;
	}
	unbound_watch_work(u);
	/* the safety net's or a settle timer's rescan before the probes */
	if (wr->model.rescan)
		vwc_watch_rescan(wr);
	vwc_watch_evaluate(wr);
	vwc_watch_release_idle(wr);
	if (wr->model.publish) {
		vwc_watch_write_textfile(wr);
		wr->model.publish = false;
	}
}

/*
 * While <rundir>/sidecar-active leads somewhere, the udev rules leave a
 * namespace's add to the sidecar (71-nvme-vwc-sync.rules): it gathers the
 * adds that come together into one scan, with no process started per
 * namespace (at fabrics scale, hundreds of namespaces a connect). A
 * namespace appears in the kernel's own mode, write back whenever a cache
 * may be on, so an add left to a sidecar that never handles it costs
 * speed, never safety. A controller's events, which can call for write
 * back, are left to it only while this tool has written no write through
 * (no <rundir>/write-through, blk.h vwc_blk_mark_wt()): then none can.
 * The sidecar's mark is a symbolic link to
 * /proc/<our pid>/fdinfo/<a descriptor we hold open, at HANDOFF_FD_MIN or
 * above>: udev's TEST follows it, and it leads nowhere once this process
 * is gone, however it ended, before the service's ExecStopPost removes
 * it. Made once the first pass is done, removed at stop.
 */
#define HANDOFF_FD_MIN	600

static int handoff_fd = -1;

static void udev_handoff(bool on)
{
	char path[600], tmp[620], target[64];
	int fd;

	snprintf(path, sizeof(path), "%s/sidecar-active", vwc_rundir());
	if (!on) {
		unlink(path);
		if (handoff_fd >= 0)
			close(handoff_fd);
		handoff_fd = -1;
		return;
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	handoff_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, HANDOFF_FD_MIN);
	if (fd >= 0)
		close(fd);
	if (handoff_fd < 0) {
		vwc_warn("watch: cannot hold a descriptor for %s: %s; udev's rules keep running a sync for each namespace that appears",
			 path, strerror(errno));
		return;
	}
	snprintf(target, sizeof(target), "/proc/%d/fdinfo/%d", (int)getpid(),
		 handoff_fd);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	unlink(tmp);
	if (symlink(target, tmp) || rename(tmp, path)) {
		vwc_warn("watch: cannot make %s: %s; udev's rules keep running a sync for each namespace that appears",
			 path, strerror(errno));
		unlink(tmp);
		close(handoff_fd);
		handoff_fd = -1;
	}
}

int cmd_watch(int argc, char **argv)
{
	struct unbound_watch uw = { .fd = -1 };
	struct pollfd *pfd = NULL;
	struct vwc_sidecar wr;
	struct vwc_config cfg;
	struct vwc_opts o;
	sigset_t mask;
	double next_net, period;
	int sfd, ret = VWC_EXIT_ERROR, npfd;

	if (vwc_opts_parse(argc, argv, &o, "watch"))
		return VWC_EXIT_USAGE;
	if (o.help)
		return usage_help();
	period = o.interval_set ? o.interval : 60.0;
	if (!o.verbose)
		vwc_log_level = LOG_NOTICE;
	if (vwc_load_config(&o, &cfg))
		return VWC_EXIT_ERROR;

	/* every signal that would end it ends it cleanly (its mark removed) */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		vwc_err("watch: cannot set up: %s", strerror(errno));
		return VWC_EXIT_ERROR;
	}
	if (watch_start(&wr, &o, &cfg))
		goto out;
	/* its descriptors of the controllers are not a user's (inuse.h) */
	vwc_sidecar_register();
	unbound_watch_open(&uw);
	pfd = poll_set(&wr, sfd, uw.fd, &npfd);
	if (!pfd) {
		vwc_err("watch: out of memory");
		goto out;
	}

	/* everything present now is new: evaluated once at start */
	vwc_model_sync(&wr.model, vwc_watch_now());
	vwc_watch_publish_fast(&wr);
	vwc_watch_evaluate(&wr);
	vwc_watch_write_textfile(&wr);
	wr.model.publish = false;
	vwc_notice("watching %d controller(s), %d namespace(s), safety net every %.0f s; Set Features detection: %s",
		   wr.model.nr_ctrl, wr.model.nr_ns, period,
		   wr.src.fast ? vwc_fast_how(wr.src.fast) :
		   "fallback (close events, udev, safety net)");
	next_net = vwc_watch_now() + period;
	udev_handoff(true);
	/*
	 * Type=notify: the service is started, and multi-user.target can be
	 * reached, only once every namespace present has its mode.
	 */
	notify_systemd("READY=1\nSTATUS=first pass done: watching");

	for (;;) {
		double t = vwc_watch_now(), due;
		bool fired;
		int timeout;

		fired = !wr.model.rescan && !vwc_model_busy(&wr.model);
		due = vwc_model_timers(&wr.model, t);
		fired &= wr.model.rescan || vwc_model_busy(&wr.model);
		if (!due || next_net < due)
			due = next_net;
		if (uw.due && uw.due < due)
			due = uw.due;
		timeout = due <= t ? 0 : (int)((due - t) * 1000) + 1;
		/* a timer that fired just now: its work is due at once
		 * (work left over, a lock backed off, waits as before) */
		if (fired)
			timeout = 0;
		if (poll(pfd, npfd, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[PFD_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) > 0) {
				vwc_notice("signal %u: stopping (%lu events, %lu kernel events, %lu evaluations, longest hold of the writers' lock %.1f ms, %lu topology scans taking %.1f s of CPU, %lu re-checks' scans skipped: no device object came or went)",
					   si.ssi_signo, wr.model.events,
					   wr.model.kernel_events,
					   wr.model.evaluations,
					   vwc_lock_longest_ms(), wr.model.rescans,
					   wr.model.rescan_total,
					   wr.model.rescans_skipped);
				say_costs(&wr);
				notify_systemd("STOPPING=1");
				ret = VWC_EXIT_OK;
				break;
			}
		}
		if (pfd[PFD_UNBOUND].revents & POLLIN)
			unbound_watch_read(&uw);
		read_sources(&wr, pfd, npfd);
		work(&wr, &uw, &next_net, period);
		if (wr.model.attach && kwatch_attach(&wr)) {
			struct pollfd *n = poll_set(&wr, sfd, uw.fd, &npfd);

			if (!n) {
				vwc_err("watch: out of memory");
				break;
			}
			free(pfd);
			pfd = n;
			work(&wr, &uw, &next_net, period);
		}
	}
	/*
	 * A last pass: the rules run sync for namespace adds again from the
	 * mark's removal on; what came before it (adds udevd left to us,
	 * gathered and not yet scanned, and any other event queued) is read
	 * and acted on before going, the lock's backoff aside.
	 */
	if (ret == VWC_EXIT_OK && pfd) {
		udev_handoff(false);
		if (wr.src.kmon)
			vwc_src_read_udev(&wr.src, &wr.model, wr.src.kmon, true);
		if (wr.src.mon)
			vwc_src_read_udev(&wr.src, &wr.model, wr.src.mon, false);
		if (wr.model.rescan_at || wr.model.recheck)
			wr.model.rescan = true;
		wr.model.lock_retry = 0;	/* this pass is the last */
		work(&wr, &uw, &next_net, period);
	}
out:
	free(pfd);
	close(sfd);
	if (uw.fd >= 0)
		close(uw.fd);
	udev_handoff(false);
	vwc_sidecar_unregister();
	watch_stop(&wr);
	return ret;
}
