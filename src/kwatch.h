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
 * Field offsets come from the events' tracefs "format" files, so no
 * kernel version's layout is assumed. Needs CAP_SYS_ADMIN (Debian sets
 * perf_event_paranoid to 3), the perf_event_open system call and a
 * mounted tracefs; without them vwc_kwatch_open() fails and the sidecar
 * relies on its other events.
 */
#ifndef VWC_KWATCH_H
#define VWC_KWATCH_H

#include <poll.h>
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
 * @time:	perf clock, nanoseconds
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
