// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * watch-textfile.c - the sidecar's node_exporter textfile
 *
 * What "audit -o prometheus" prints, written whole at every change the
 * sidecar makes or sees and renamed over the last one, with the modes of
 * the namespaces it did not touch carried from the last write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "log.h"
#include "report.h"
#include "watch-textfile.h"

/* the stdio buffer of a write: 1,025 namespaces take 400 KB */
#define TEXTFILE_BUF	(256 * 1024)

/*
 * The textfile's cache of write_cache: one entry a namespace of the
 * topology, by index; on a topology of another size (or no memory for
 * one) every namespace is read again. Return: the entries may be used.
 */
static bool textfile_cache(struct vwc_sidecar *wr, int nr)
{
	if (wr->tf_nr == nr && (nr == 0 || wr->tf_ns))
		return !wr->tf_all;
	vwc_watch_textfile_free(wr);
	if (nr == 0)
		return false;
	wr->tf_ns = calloc(nr, sizeof(*wr->tf_ns));
	if (wr->tf_ns)
		wr->tf_nr = nr;
	return false;
}

void vwc_watch_textfile_free(struct vwc_sidecar *wr)
{
	free(wr->tf_ns);
	wr->tf_ns = NULL;
	wr->tf_nr = 0;
}

void vwc_watch_textfile_stale(struct vwc_sidecar *wr, int i)
{
	if (i >= 0 && i < wr->tf_nr)
		wr->tf_ns[i].stale = true;
}

/* @ns's write_cache: as last read if that entry is its own and fresh */
static enum vwc_mode textfile_mode(struct vwc_sidecar *wr, bool cached,
				   int i, const struct vwc_ns *ns)
{
	struct vwc_tf_ns *e = i < wr->tf_nr ? &wr->tf_ns[i] : NULL;
	enum vwc_mode m;

	if (cached && e && !e->stale && e->ino == ns->ino &&
	    !strcmp(e->name, ns->name))
		return e->mode;
	if (vwc_blk_read(ns->syspath, &m))
		m = VWC_MODE_NONE;
	if (e) {
		e->ino = ns->ino;
		snprintf(e->name, sizeof(e->name), "%s", ns->name);
		e->mode = m;
		/* unreadable: tried again at the next write */
		e->stale = m == VWC_MODE_NONE;
	}
	return m;
}

/*
 * What "audit -o prometheus" prints, from the facts the sidecar holds and
 * write_cache as last read, plus the time of writing. write_cache is read
 * again for the namespaces the sidecar evaluated or wrote since the last
 * write, one unreadable or not printed then, and every namespace at
 * start, after a new topology and at every safety-net round: at fabrics
 * scale, a write for one change reads one namespace's file, not a
 * thousand. A change the sidecar neither made nor evaluated (another
 * program's write of write_cache) shows at the next safety-net round,
 * when the sidecar itself learns of it. Written through one buffer to a
 * temporary file in the same directory, then renamed over the old one: a
 * scrape sees the old file or the new one. The marks of restore are
 * looked up only when there are any (vwc_blk_any_hold()).
 */
void vwc_watch_write_textfile(struct vwc_sidecar *wr)
{
	struct vwc_topo *t = &wr->run.topo;
	char tmp[VWC_PATH_LEN + 16];
	struct timespec now;
	bool holds, cached;
	char *buf;
	FILE *f;
	int i, fd, err;

	if (!wr->textfile)
		return;
	holds = vwc_blk_any_hold();
	cached = textfile_cache(wr, t->nr_ns);
	wr->tf_all = false;
	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		int j;

		/* only what the sidecar has facts for */
		ns->wanted = ns->nr_ctrl > 0;
		for (j = 0; j < ns->nr_ctrl; j++)
			ns->wanted &= t->ctrls[ns->ctrl[j]].probed;
		if (!ns->wanted) {
			/* not read now: read when it is printed */
			vwc_watch_textfile_stale(wr, i);
			continue;
		}
		ns->decision = vwc_ns_decision(&wr->run, ns);
		if (holds && vwc_blk_hold(ns->name, VWC_HOLD_TEST) > 0)
			ns->decision = vwc_policy_restored(ns->decision);
		ns->after = textfile_mode(wr, cached, i, ns);
		ns->action = ns->after == VWC_MODE_NONE ? VWC_ACT_FAILED :
							  VWC_ACT_UNCHANGED;
		ns->before = ns->after;
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", wr->textfile);
	fd = mkstemp(tmp);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		vwc_err("cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return;
	}
	fchmod(fd, 0644);
	/* a few write(2)s for a file of half a megabyte, not one a 4 KiB */
	buf = malloc(TEXTFILE_BUF);
	if (buf)
		setvbuf(f, buf, _IOFBF, TEXTFILE_BUF);
	/* this thread's alone: no lock taken at each of its 20,000 calls */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	vwc_report_print(&wr->run, VWC_FMT_PROMETHEUS, f);
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(f, "# HELP nvme_vwc_sync_textfile_timestamp_seconds When the sidecar wrote this file (at start, on every change it makes or sees, and every safety-net round).\n"
		"# TYPE nvme_vwc_sync_textfile_timestamp_seconds gauge\n"
		"nvme_vwc_sync_textfile_timestamp_seconds %.3f\n",
		(double)now.tv_sec + (double)now.tv_nsec / 1e9);
	/*
	 * No fsync: it would send a Flush to the disk under the file at
	 * every change (hundreds in a fabrics reconnect storm) and wait for
	 * it. After a crash the file may be the old one or empty until the
	 * sidecar's first write at start, which a scrape tells by the
	 * timestamp below.
	 */
	/* a full or read-only file system shows at the flush; a delayed
	 * write error at close on some file systems (NFS), not on local ones */
	err = fflush(f) ? errno : ferror(f) ? EIO : 0;
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	free(buf);
	if (err) {
		vwc_err("cannot write %s: %s", tmp, strerror(err));
		unlink(tmp);
		return;
	}
	if (rename(tmp, wr->textfile) < 0) {
		vwc_err("cannot rename %s to %s: %s", tmp, wr->textfile,
			strerror(errno));
		unlink(tmp);
	}
}
