// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's fast path: a thread that owns the kernel-side detection
 * and writes write back the moment a Set Features 06h with WCE=1 is
 * submitted (watch-fast.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "log.h"
#include "watch-fast.h"

/* the stop is no command: the write end closed (vwc_fast_stop()) */
enum fast_cmd_op { FAST_CPU_GONE = 1, FAST_ADD_CPUS };

struct fast_cmd {
	int op;
	int cpu;
};

struct vwc_fast {
	pthread_t th;
	struct vwc_kwatch *kw;		/* the thread's alone once started */
	int cmd[2];			/* main -> thread */
	int msg[2];			/* thread -> main */
	int lost;			/* messages dropped (atomic) */
	pthread_mutex_t mu;		/* the table and the windows */
	struct vwc_fast_ctrl *tab;
	int nr_tab;
	struct vwc_fast_win win[VWC_FAST_WINS];
	int nr_win, next_win;
	struct vwc_ns scratch;		/* the thread's, for vwc_blk_apply() */
};

int vwc_fast_window_of(const struct vwc_fast_win *w, int n, uint64_t t)
{
	int i;

	for (i = 0; i < n; i++)
		if (w[i].t0 <= t && (!w[i].t1 || t <= w[i].t1))
			return w[i].instance;
	return -1;
}

void vwc_fast_free_table(struct vwc_fast_ctrl *tab, int nr)
{
	int i, j;

	for (i = 0; tab && i < nr; i++) {
		for (j = 0; j < tab[i].nr_ns; j++) {
			struct vwc_fast_ns *n = &tab[i].ns[j];

			/* the strings are in the paths' allocation; without
			 * one the directory is its own (fast_ns_copy()) */
			if (n->paths)
				free(n->paths);
			else
				free(n->syspath);
		}
		free(tab[i].ns);
	}
	free(tab);
}

static void send_msg(struct vwc_fast *f, const struct vwc_fast_msg *m)
{
	/* a whole message or nothing (under PIPE_BUF); never blocks */
	if (write(f->msg[1], m, sizeof(*m)) != (ssize_t)sizeof(*m))
		__atomic_store_n(&f->lost, 1, __ATOMIC_SEQ_CST);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * gcc 12's -fanalyzer loses what is stored through an array element at a
 * symbolic index and reports it as leaked (as in kmod-table.c): the
 * copies are freed at the end of write_back().
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
/*
 * Write back on every namespace of the controller @instance (tracepoints)
 * or whose admin queue is @q (kprobes), or of every controller when @any.
 * The table's entries are copied under the mutex, written after.
 */
static void write_back(struct vwc_fast *f, int instance, uint64_t q,
		       bool any, const struct vwc_kw_event *ev)
{
	struct vwc_decision wb = { VWC_MODE_WRITE_BACK,
				   VWC_REASON_WCE_ENABLED };
	struct vwc_fast_ns *list = NULL;
	char name[VWC_NAME_LEN] = "every controller";
	struct vwc_ns *nsa, **nsv;
	struct vwc_decision *dv;
	int nr = 0, nv = 0, i, j, k;
	bool changed = false, many;
	double t0, t1;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < f->nr_tab; i++) {
		struct vwc_fast_ctrl *c = &f->tab[i];
		struct vwc_fast_ns *grown;

		if (!any && (instance >= 0 ? c->instance != instance :
					     c->q != q))
			continue;
		if (!any)
			snprintf(name, sizeof(name), "%s", c->name);
		if (!c->nr_ns) {	/* realloc(list, 0) would free it */
			if (!any)
				break;
			continue;
		}
		grown = realloc(list, (nr + c->nr_ns) * sizeof(*list));
		if (!grown)
			break;
		list = grown;
		for (j = 0; j < c->nr_ns; j++) {
			struct vwc_fast_ns *d = &list[nr++];

			*d = c->ns[j];
			d->syspath = c->ns[j].syspath ?
				     strdup(c->ns[j].syspath) : NULL;
			d->paths = calloc(c->ns[j].nr_paths + 1,
					  sizeof(*d->paths));
			for (k = 0; d->paths && k < c->ns[j].nr_paths; k++)
				if (c->ns[j].paths[k])
					d->paths[k] = strdup(c->ns[j].paths[k]);
		}
		if (!any)
			break;
	}
	pthread_mutex_unlock(&f->mu);

	t0 = mono();
	vwc_blk_wb_bump();
	/*
	 * Several namespaces: written at once (vwc_blk_apply_many()); one,
	 * or no memory for more: one after the other in the thread's own
	 */
	nsa = nr > 1 ? calloc(nr, sizeof(*nsa)) : NULL;
	nsv = nr > 1 ? calloc(nr, sizeof(*nsv)) : NULL;
	dv = nr > 1 ? calloc(nr, sizeof(*dv)) : NULL;
	many = nsa && nsv && dv;
	if (!many) {
		free(nsa);
		free(nsv);
		free(dv);
	}
	for (i = 0; i < nr; i++) {
		struct vwc_ns *ns = many ? &nsa[nv] : &f->scratch;

		/* no copy of its sysfs path: nowhere to write */
		if (!list[i].syspath)
			continue;
		memset(ns, 0, sizeof(*ns));
		snprintf(ns->name, sizeof(ns->name), "%s", list[i].name);
		ns->syspath = list[i].syspath;
		/*
		 * The copies' strings, lent: freed with @list below, never
		 * by ns_free(). No memory for the list of its paths: the
		 * head is written back all the same (not skipped, in
		 * write through under a cache just enabled).
		 */
		ns->path_syspath = list[i].paths ?
				   calloc(list[i].nr_paths + 1,
					  sizeof(*ns->path_syspath)) : NULL;
		for (k = 0; ns->path_syspath && k < list[i].nr_paths; k++)
			if (list[i].paths[k])
				ns->path_syspath[ns->nr_paths++] =
					list[i].paths[k];
		if (many) {
			nsv[nv] = ns;
			dv[nv++] = wb;
			continue;
		}
		vwc_blk_apply(ns, wb, false);
		changed |= ns->action == VWC_ACT_CHANGED;
		free(ns->path_syspath);
		ns->path_syspath = NULL;
		ns->syspath = NULL;	/* the list's, freed below */
	}
	if (many) {
		vwc_blk_apply_many(nsv, dv, nv, false);
		for (i = 0; i < nv; i++) {
			changed |= nsa[i].action == VWC_ACT_CHANGED;
			free(nsa[i].path_syspath);
		}
		free(nsa);
		free(nsv);
		free(dv);
	}
	t1 = mono();
	if (vwc_log_level >= LOG_INFO) {
		char names[256];
		size_t at = 0;

		names[0] = '\0';
		for (i = 0; i < nr && at < sizeof(names); i++)
			at += (size_t)snprintf(names + at, sizeof(names) - at,
					       " %s", list[i].name);
		vwc_info("%s: fast path: write back on %d namespace(s):%s",
			 name, nr, names);
	}
	for (i = 0; i < nr; i++) {
		free(list[i].syspath);
		for (k = 0; list[i].paths && k < list[i].nr_paths; k++)
			free(list[i].paths[k]);
		free(list[i].paths);
	}
	free(list);
	/*
	 * The reaction, from the kernel's own timestamp of the submission:
	 * the write_cache writes (a queue freeze on 7.2) are not the
	 * sidecar's doing; the rest is.
	 */
	if (ev->time && (double)ev->time / 1e9 <= t0)
		vwc_log(changed ? LOG_NOTICE : LOG_INFO, "%s: reaction %.3f ms from the Set Features 06h submission to write back: write_cache writes %.3f ms, the sidecar's share %.3f ms",
			name, (t1 - ev->time / 1e9) * 1e3, (t1 - t0) * 1e3,
			(t0 - ev->time / 1e9) * 1e3);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static bool known(struct vwc_fast *f, int instance, uint64_t q)
{
	bool found = false;
	int i;

	pthread_mutex_lock(&f->mu);
	for (i = 0; !found && i < f->nr_tab; i++)
		found = instance >= 0 ? f->tab[i].instance == instance :
					q && f->tab[i].q == q;
	pthread_mutex_unlock(&f->mu);
	return found;
}

/* the controller this table names by queue @q, else -1 */
static int instance_of(struct vwc_fast *f, uint64_t q)
{
	int i, instance = -1;

	pthread_mutex_lock(&f->mu);
	for (i = 0; q && instance < 0 && i < f->nr_tab; i++)
		if (f->tab[i].q == q)
			instance = f->tab[i].instance;
	pthread_mutex_unlock(&f->mu);
	return instance;
}

/* Our own Get Features 06h: the controller read then has this queue. */
static void learned(struct vwc_fast *f, const struct vwc_kw_event *ev)
{
	struct vwc_fast_msg m = { .kind = VWC_FAST_LEARNED, .q = ev->q };
	bool news = false;
	int i;

	pthread_mutex_lock(&f->mu);
	m.instance = vwc_fast_window_of(f->win, f->nr_win, ev->time);
	for (i = 0; m.instance >= 0 && i < f->nr_tab; i++) {
		if (f->tab[i].instance == m.instance) {
			news |= f->tab[i].q != ev->q;
			f->tab[i].q = ev->q;
		} else if (f->tab[i].q == ev->q) {	/* freed and reused */
			f->tab[i].q = 0;
			news = true;
		}
	}
	pthread_mutex_unlock(&f->mu);
	/* known already (every safety-net round reads it): nothing to say */
	if (m.instance < 0 || !news)
		return;
	vwc_kwatch_add_queue(f->kw, ev->q);
	send_msg(f, &m);
}

static void on_event(void *arg, const struct vwc_kw_event *ev)
{
	struct vwc_fast *f = arg;
	struct vwc_fast_msg m = { .kind = VWC_FAST_EVENT, .ev = *ev };

	if (ev->kind == VWC_KW_OWN_GET) {
		learned(f, ev);
		return;
	}
	/* the controller as this thread places it: the model follows */
	m.instance = ev->ctrl < 0 ? instance_of(f, ev->q) : -1;
	/* the safe direction first, then the model hears of it */
	if (ev->kind == VWC_KW_SET_FEATURES && ev->fid == 0x06 &&
	    (ev->cdw11 & 1))
		write_back(f, ev->ctrl, ev->q,
			   ev->ctrl < 0 && !known(f, -1, ev->q), ev);
	/* lost records may have held one: unknown is write back */
	if (ev->kind == VWC_KW_LOST)
		write_back(f, -1, 0, true, ev);
	send_msg(f, &m);
}

static int fast_pollfds(struct vwc_fast *f, struct pollfd **pfd)
{
	int n = 1 + vwc_kwatch_nr_fds(f->kw);
	struct pollfd *p = calloc(n, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p[0] = (struct pollfd){ .fd = f->cmd[0], .events = POLLIN };
	vwc_kwatch_pollfds(f->kw, p + 1, n - 1);
	free(*pfd);
	*pfd = p;
	return n;
}

/*
 * The thread wakes for a few Set Features a day and then writes a sysfs
 * file: it runs SCHED_FIFO at the lowest real-time priority so that a
 * busy CPU (a spinning process, a build) does not delay the write back by
 * a time slice. It never spins (poll, then writes that sleep). Where
 * real-time is not allowed, a nice of -10 for this thread alone; where
 * neither is, as it is. VWC_FAST_SCHED=fifo|nice|none picks one (for
 * comparison). Says which.
 */
static void fast_sched(void)
{
	const char *want = getenv("VWC_FAST_SCHED");
	struct sched_param sp = { .sched_priority = 1 };
	int r = -1;

	if (want && strcmp(want, "fifo") && strcmp(want, "nice") &&
	    strcmp(want, "none")) {
		vwc_warn("VWC_FAST_SCHED=%s is not fifo, nice or none: fifo",
			 want);
		want = NULL;
	}
	if (!want || !strcmp(want, "fifo")) {
		r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (!r) {
			vwc_notice("watch: fast path: SCHED_FIFO priority 1");
			return;
		}
	}
	if (!want || !strcmp(want, "fifo") || !strcmp(want, "nice")) {
		int prio;

		errno = 0;
		prio = getpriority(PRIO_PROCESS, (id_t)gettid());
		if (prio <= -10 && !errno) {
			vwc_notice("watch: fast path: nice %d (set for the process)",
				   prio);
			return;
		}
		if (!setpriority(PRIO_PROCESS, (id_t)gettid(), -10)) {
			vwc_notice("watch: fast path: nice -10%s",
				 r > 0 ? " (real-time not allowed)" : "");
			return;
		}
	}
	vwc_notice("watch: fast path: default scheduling%s",
		 want && !strcmp(want, "none") ? " (VWC_FAST_SCHED=none)" :
		 " (neither real-time nor a lower nice allowed)");
}

static void *fast_main(void *arg)
{
	struct vwc_fast *f = arg;
	struct pollfd *pfd = NULL;
	int n, i, added;

	/* "vwc-fast" in ps -L, top -H and /proc/PID/task/TID/comm */
	pthread_setname_np(pthread_self(), "vwc-fast");
	fast_sched();
	n = fast_pollfds(f, &pfd);
	while (n > 0) {
		struct fast_cmd c;
		bool quit = false, changed = false;

		/* a timeout only while a return that wakes no one is awaited */
		if (poll(pfd, n, vwc_kwatch_timeout_ms(f->kw)) < 0 &&
		    errno != EINTR)
			break;
		/*
		 * A ring that hangs up (its CPU went, the event died) would
		 * make every poll return at once: out of the set until the
		 * main loop's command closes or reopens it.
		 */
		for (i = 1; i < n; i++)
			if (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				pfd[i].fd = -1;
		if (pfd[0].revents & (POLLIN | POLLHUP)) {
			ssize_t got;

			while ((got = read(f->cmd[0], &c, sizeof(c))) ==
			       (ssize_t)sizeof(c)) {
				if (c.op == FAST_CPU_GONE) {
					/* its descriptors are closed: never
					 * poll their numbers again */
					vwc_kwatch_cpu_gone(f->kw, c.cpu);
					changed = true;
				} else if (c.op == FAST_ADD_CPUS) {
					added = vwc_kwatch_add_cpus(f->kw);
					if (added)
						vwc_notice("kernel events: %d CPU ring(s) attached or let go (CPU hotplug)",
							   added);
					changed |= added > 0;
				}
			}
			/* end of file: the main loop stops (vwc_fast_stop()) */
			quit = !got;
		}
		if (quit)
			break;
		vwc_kwatch_read(f->kw, on_event, f);
		if (changed)
			n = fast_pollfds(f, &pfd);
	}
	free(pfd);
	return NULL;
}

int vwc_fast_start(struct vwc_fast **out, struct vwc_kwatch *kw)
{
	struct vwc_fast *f = calloc(1, sizeof(*f));
	sigset_t all, old;
	int r;

	*out = NULL;
	if (!f) {
		vwc_kwatch_close(kw);
		return -ENOMEM;
	}
	f->kw = kw;
	f->cmd[0] = f->cmd[1] = f->msg[0] = f->msg[1] = -1;
	pthread_mutex_init(&f->mu, NULL);
	if (pipe2(f->cmd, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(f->msg, O_CLOEXEC | O_NONBLOCK)) {
		r = -errno;
		goto fail;
	}
	/* the signals stay the main loop's (its signalfd) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&f->th, NULL, fast_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		goto fail;
	*out = f;
	return 0;
fail:
	vwc_err("watch: cannot start the fast path: %s", strerror(-r));
	if (f->cmd[0] >= 0) {
		close(f->cmd[0]);
		close(f->cmd[1]);
	}
	if (f->msg[0] >= 0) {
		close(f->msg[0]);
		close(f->msg[1]);
	}
	pthread_mutex_destroy(&f->mu);
	vwc_kwatch_close(kw);
	free(f);
	return r;
}

static void command(struct vwc_fast *f, int op, int cpu)
{
	struct fast_cmd c = { op, cpu };
	struct pollfd p = { .fd = f->cmd[1], .events = POLLOUT };

	/* the thread empties it quickly: wait for room */
	while (write(f->cmd[1], &c, sizeof(c)) != (ssize_t)sizeof(c)) {
		if (errno != EAGAIN && errno != EINTR) {
			vwc_warn("watch: cannot tell the fast path of a CPU's change: %s; the safety net still looks",
				 strerror(errno));
			break;
		}
		poll(&p, 1, 100);
	}
}

void vwc_fast_stop(struct vwc_fast *f)
{
	if (!f)
		return;
	/*
	 * Told by closing the write end, which cannot fail: the thread reads
	 * what was queued, then end of file. A stop command written there
	 * was lost to a write that failed (ENOSPC or EIO injected, faults.sh)
	 * and left pthread_join() waiting for good: SIGTERM stopped nothing,
	 * only SIGKILL ended the sidecar.
	 */
	close(f->cmd[1]);
	pthread_join(f->th, NULL);
	vwc_kwatch_close(f->kw);
	close(f->cmd[0]);
	close(f->msg[0]);
	close(f->msg[1]);
	vwc_fast_free_table(f->tab, f->nr_tab);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

int vwc_fast_fd(const struct vwc_fast *f)
{
	return f ? f->msg[0] : -1;
}

const char *vwc_fast_how(const struct vwc_fast *f)
{
	return vwc_kwatch_how(f ? f->kw : NULL);
}

int vwc_fast_read(struct vwc_fast *f, struct vwc_fast_msg *msgs, int max)
{
	ssize_t got;
	int n = 0;

	if (!f || max < 2)
		return 0;
	if (__atomic_exchange_n(&f->lost, 0, __ATOMIC_SEQ_CST)) {
		msgs[n].kind = VWC_FAST_LOST;
		n++;
	}
	got = read(f->msg[0], msgs + n, (size_t)(max - n) * sizeof(*msgs));
	if (got > 0)
		n += (int)(got / (ssize_t)sizeof(*msgs));
	return n;
}

void vwc_fast_publish(struct vwc_fast *f, struct vwc_fast_ctrl *tab, int nr)
{
	struct vwc_fast_ctrl *old;
	int old_nr;

	if (!f) {
		vwc_fast_free_table(tab, nr);
		return;
	}
	/*
	 * The queues are the main loop's (a queue learned here and not yet
	 * heard there is learned again at the next read; meanwhile a Set
	 * Features on it is every controller's: safe)
	 */
	pthread_mutex_lock(&f->mu);
	old = f->tab;
	old_nr = f->nr_tab;
	f->tab = tab;
	f->nr_tab = nr;
	pthread_mutex_unlock(&f->mu);
	vwc_fast_free_table(old, old_nr);
}

void vwc_fast_learn_begin(struct vwc_fast *f, int instance)
{
	struct vwc_fast_win *w;

	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	w = &f->win[f->next_win];
	w->instance = instance;
	w->t0 = vwc_kwatch_clock();
	w->t1 = 0;
	if (f->nr_win < VWC_FAST_WINS)
		f->nr_win++;
	pthread_mutex_unlock(&f->mu);
}

void vwc_fast_learn_end(struct vwc_fast *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->win[f->next_win].t1 = vwc_kwatch_clock();
	f->next_win = (f->next_win + 1) % VWC_FAST_WINS;
	pthread_mutex_unlock(&f->mu);
}

void vwc_fast_cpu_gone(struct vwc_fast *f, int cpu)
{
	if (f)
		command(f, FAST_CPU_GONE, cpu);
}

void vwc_fast_add_cpus(struct vwc_fast *f)
{
	if (f)
		command(f, FAST_ADD_CPUS, 0);
}
