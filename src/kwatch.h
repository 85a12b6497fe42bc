/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: kwatch.h - kernel-side detection of admin Set Features
 *
 * The sidecar's way to see Set Features sent on any path, including
 * through a descriptor a process keeps open, /dev/ngXnY and io_uring
 * passthrough: every NVMe command goes through nvme_setup_cmd(), which
 * fires the tracepoint nvme:nvme_setup_cmd. Two perf events per CPU,
 *
 *  - nvme:nvme_setup_cmd, filtered in the kernel to "qid == 0 &&
 *    opcode == 9" (admin Set Features), and
 *  - nvme:nvme_complete_rq, filtered to "qid == 0" (admin completions),
 *
 * share one ring buffer per CPU. I/O commands fire the tracepoints too
 * but the kernel's filter drops them before anything reaches userspace;
 * their cost on the I/O path is measured in bench/results/.
 *
 * libtracefs finds tracefs, or mounts it at /sys/kernel/tracing as
 * systemd does when nothing has; libtraceevent reads the events' "format"
 * files, so no kernel version's layout is assumed. Records are decoded in
 * the host's byte order (CDW10 and CDW11, copied from the command as
 * sent, are little endian). Two descriptors per CPU: RLIMIT_NOFILE's soft
 * limit is raised to the hard one when it is short of that. Needs
 * CAP_SYS_ADMIN (Debian sets perf_event_paranoid to 3) and the
 * perf_event_open system call; without them, or without the nvme events
 * (nvme_core not loaded yet), vwc_kwatch_open() fails and the sidecar
 * relies on its other events until it tries again.
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
};

/**
 * struct vwc_kw_event - one decoded event
 * @kind:	see &enum vwc_kw_kind
 * @ctrl:	controller instance (N of nvmeN), -1 for VWC_KW_LOST
 * @cid:	command identifier, to pair a submission with its completion
 * @fid:	Set Features: feature identifier (CDW10 bits 7:0)
 * @cdw11:	Set Features: CDW11 (for feature 06h, bit 0 is WCE)
 * @time:	CLOCK_MONOTONIC, nanoseconds (when the kernel saw it)
 */
struct vwc_kw_event {
	enum vwc_kw_kind kind;
	int ctrl;
	uint16_t cid;
	uint8_t fid;
	uint32_t cdw11;
	uint64_t time;
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
 * vwc_kwatch_close() - detach and free
 * @kw:	watcher (may be NULL)
 */
void vwc_kwatch_close(struct vwc_kwatch *kw);

#endif
