/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: kwatch.h - kernel-side detection of admin Set Features
 *
 * The sidecar's way to see Set Features 06h sent on any path, including
 * through a descriptor a process keeps open, /dev/ngXnY and io_uring
 * passthrough, without adding anything to the I/O path. Dynamic
 * events (kprobes, made through libtracefs under the system "vwc_<pid>")
 * on the admin passthrough entry points of nvme_core, opened with
 * perf_event_open(2) on every CPU into one ring per CPU:
 *
 *  - "admin", on nvme_submit_user_cmd(q, cmd): every passthrough ioctl,
 *    with the queue and the command's opcode, FID and WCE; filtered in
 *    the kernel to Set Features 06h, and to Get Features 06h of the
 *    sidecar itself (VWC_KW_OWN_GET), which is how it learns each
 *    controller's admin queue (watch-fast.h); on an admin queue only
 *    (q->queuedata NULL, at an offset read from the kernel's BTF): an I/O
 *    command with the same bytes (Dataset Management is opcode 09h too)
 *    is dropped in the kernel, and again when decoded; without BTF it is
 *    taken as a Set Features 06h on a controller not known by its queue;
 *  - "done", its return: the ioctl waits for the completion; where the
 *    kernel lets a return probe fetch the arguments (6.12 and 7.2 do),
 *    filtered like "admin" to Set Features 06h; elsewhere every
 *    passthrough return passes and its records wake no reader (see
 *    vwc_kwatch_timeout_ms());
 *  - "uring", on nvme_dev_uring_cmd(ioucmd): an admin command through
 *    io_uring, with its controller's admin queue
 *    (ioucmd->file->private_data->admin_q) at offsets read from the
 *    kernel's BTF with libbpf (kwatch-btf.c); without BTF no queue, and
 *    the sidecar takes it as every controller's;
 *    VWC_KWATCH=nobtf in the environment leaves the queue out (tests);
 *  - "uring_done", on nvme_uring_cmd_end_io(req): an io_uring passthrough
 *    command completed on req->q, filtered in the kernel to the admin
 *    queues learned.
 *
 * Where kprobes cannot be made (no CONFIG_KPROBE_EVENTS, lockdown
 * "confidentiality"), or with VWC_KWATCH=tracepoints in the environment,
 * the nvme tracepoints are used instead: nvme:nvme_setup_cmd filtered to
 * "qid == 0 && opcode == 9" and nvme:nvme_complete_rq filtered to
 * "qid == 0". Every I/O fires those two; their cost on the I/O path is
 * measured in bench/results/io-cost*.txt.
 *
 * libtracefs finds tracefs, or mounts it at /sys/kernel/tracing as
 * systemd does when nothing has; libtraceevent reads the events' "format"
 * files, so no kernel version's layout is assumed beyond the functions'
 * arguments. Records are decoded in the host's byte order (the command's
 * bytes are fetched one by one from its little-endian dwords). Up to four
 * descriptors per CPU: RLIMIT_NOFILE's soft limit is raised to the hard
 * one when it is short of that. Needs CAP_SYS_ADMIN and the
 * perf_event_open system call; without them, or without nvme_core (its
 * symbols and events), vwc_kwatch_open() fails and the sidecar relies on
 * its other events until it tries again.
 */
#ifndef VWC_KWATCH_H
#define VWC_KWATCH_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct vwc_kwatch;

/** enum vwc_kw_kind - what an event says */
enum vwc_kw_kind {
	VWC_KW_SET_FEATURES,	/* admin Set Features submitted */
	VWC_KW_COMPLETE,	/* an admin command completed */
	VWC_KW_LOST,		/* the ring overflowed: anything may have happened */
	VWC_KW_OWN_GET,		/* kprobes: this process's own Get Features 06h:
				 * @q is the queue of the controller it read */
};

/**
 * struct vwc_kw_event - one decoded event
 * @kind:	see &enum vwc_kw_kind
 * @ctrl:	controller instance (N of nvmeN); -1 when not known (kprobes:
 *		see @q) and for VWC_KW_LOST
 * @cid:	what pairs a submission with its completion: the command
 *		identifier (tracepoints) or the submitting thread (kprobes);
 *		0: no completion will be seen (io_uring)
 * @fid:	Set Features: feature identifier (CDW10 bits 7:0)
 * @cdw11:	Set Features: CDW11 (for feature 06h, bit 0 is WCE)
 * @time:	CLOCK_MONOTONIC, nanoseconds (when the kernel saw it)
 * @q:		kprobes: the admin queue's kernel address, the controller's
 *		mark (see VWC_KW_OWN_GET); 0 when not known (io_uring without
 *		BTF)
 */
struct vwc_kw_event {
	enum vwc_kw_kind kind;
	int ctrl;
	uint32_t cid;
	uint8_t fid;
	uint32_t cdw11;
	uint64_t time;
	uint64_t q;
};

/**
 * vwc_kwatch_open() - attach to the nvme tracepoints on every CPU
 * @kw:		result
 * @why:	on failure, the cause
 * @len:	size of @why
 *
 * Return: 0, or a negative errno with @why filled.
 */
int vwc_kwatch_open(struct vwc_kwatch **kw, char *why, size_t len);

/**
 * vwc_kwatch_how() - what detection was set up, for the start line
 * @kw:	watcher (may be NULL)
 *
 * Return: e.g. "nvme tracepoints (tracefs at /sys/kernel/tracing)" or
 * "nvme tracepoints (tracefs was not mounted: mounted at ...)".
 */
const char *vwc_kwatch_how(const struct vwc_kwatch *kw);

/**
 * vwc_kwatch_describe() - what detection this host offers now, for --help
 * @buf:	result
 * @len:	size of @buf
 *
 * Mounts nothing and opens no event.
 */
void vwc_kwatch_describe(char *buf, size_t len);

/**
 * vwc_kwatch_cpu_gone() - let a CPU's events go (it went offline)
 * @kw:		watcher (may be NULL)
 * @cpu:	the CPU
 *
 * A per-CPU perf event whose CPU goes offline is taken out of the CPU's
 * context for good: it records nothing once the CPU is back. Its ring is
 * closed here (on the CPU's offline event, and again on its online event
 * in case the first was missed); vwc_kwatch_add_cpus() opens it anew.
 */
void vwc_kwatch_cpu_gone(struct vwc_kwatch *kw, int cpu);

/**
 * vwc_kwatch_add_cpus() - attach on CPUs that came online since
 * @kw:	watcher (may be NULL)
 *
 * Return: how many CPUs were added, plus how many were let go by
 * vwc_kwatch_cpu_gone() since the last call: when not 0, the descriptors
 * changed: poll the set vwc_kwatch_pollfds() gives again.
 */
int vwc_kwatch_add_cpus(struct vwc_kwatch *kw);

/**
 * vwc_kwatch_pollfds() - descriptors to poll for POLLIN
 * @kw:		watcher
 * @pfd:	filled with up to @max entries
 * @max:	room in @pfd
 *
 * Return: how many were filled.
 */
int vwc_kwatch_pollfds(const struct vwc_kwatch *kw, struct pollfd *pfd,
		       int max);

/**
 * vwc_kwatch_nr_fds() - how many descriptors vwc_kwatch_pollfds() gives
 * @kw:	watcher (may be NULL)
 *
 * Return: a count.
 */
int vwc_kwatch_nr_fds(const struct vwc_kwatch *kw);

/**
 * vwc_kwatch_read() - decode every pending event, oldest first
 * @kw:		watcher
 * @cb:		called for each event
 * @arg:	passed to @cb
 *
 * Return: the number of events.
 */
int vwc_kwatch_read(struct vwc_kwatch *kw,
		    void (*cb)(void *arg, const struct vwc_kw_event *ev),
		    void *arg);

/**
 * vwc_kwatch_timeout_ms() - how long the reader may sleep between reads
 * @kw:	watcher (may be NULL)
 *
 * The return of a passthrough ioctl wakes no reader where the kernel's
 * filter cannot keep Set Features 06h's alone (see "done" above): while
 * a thread's Set Features 06h is outstanding (up to 2 s), poll the
 * descriptors with this timeout and call vwc_kwatch_read() when it ends.
 *
 * Return: milliseconds, or -1: no limit.
 */
int vwc_kwatch_timeout_ms(const struct vwc_kwatch *kw);

/**
 * vwc_kwatch_add_queue() - a controller's admin queue became known
 * @kw:	watcher (may be NULL)
 * @q:	the queue (VWC_KW_OWN_GET's)
 *
 * io_uring completions on it pass the kernel's filter from now on.
 */
void vwc_kwatch_add_queue(struct vwc_kwatch *kw, uint64_t q);

/**
 * vwc_kwatch_clock() - now, on the events' clock
 *
 * Return: CLOCK_MONOTONIC in nanoseconds.
 */
uint64_t vwc_kwatch_clock(void);

/**
 * vwc_kwatch_close() - detach and free
 * @kw:	watcher (may be NULL)
 */
void vwc_kwatch_close(struct vwc_kwatch *kw);

#endif
