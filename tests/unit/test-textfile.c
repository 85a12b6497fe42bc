// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sidecar's node_exporter textfile (watch-textfile.c) over a fake
 * sysfs tree (queue/write_cache as plain files): what it carries from
 * its last write and what it reads again. A namespace's write_cache
 * changed behind the sidecar's back shows once the namespace is marked
 * (evaluated or written), at a safety-net round, with a topology of
 * another size, and where an index names another namespace; not at a
 * write for another namespace's change. An unreadable one, or one not
 * printed, is read at the next write.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake-wc.h"
#include "tap.h"
#include "watch-textfile.h"

static char root[128], tf[160];
static int idx[3];
/* the namespaces' sysfs directories (struct vwc_ns points at a string) */
static char nspath[4][256];


/* the textfile's nvme_vwc_namespace_write_back of @ns: "1", "0", or "" */
static const char *wb_of(const char *ns)
{
	static char v[8];
	char line[512], want[96];
	FILE *f = fopen(tf, "r");

	v[0] = '\0';
	snprintf(want, sizeof(want),
		 "nvme_vwc_namespace_write_back{namespace=\"%s\"", ns);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want))) {
			char *sp = strrchr(line, ' ');

			snprintf(v, sizeof(v), "%.*s", (int)strcspn(sp + 1, "\n"),
				 sp + 1);
		}
	if (f)
		fclose(f);
	return v;
}

/* three controllers with no cache, one namespace each */
static void make(struct vwc_sidecar *wr, int nr)
{
	struct vwc_topo *t = &wr->run.topo;
	char p[256];
	int i;

	free(t->ctrls);
	free(t->ns);
	t->ctrls = calloc(nr, sizeof(*t->ctrls));
	t->ns = calloc(nr, sizeof(*t->ns));
	t->nr_ctrls = t->nr_ns = nr;
	for (i = 0; i < nr; i++) {
		struct vwc_ctrl *c = &t->ctrls[i];
		struct vwc_ns *ns = &t->ns[i];

		snprintf(c->name, sizeof(c->name), "nvme%d", i);
		snprintf(c->serial, sizeof(c->serial), "S%d", i);
		c->probed = true;
		c->facts.present = VWC_TRI_NO;
		snprintf(ns->name, sizeof(ns->name), "nvme%dn1", i);
		snprintf(nspath[i], sizeof(nspath[i]), "%s/sys/%s", root,
			 ns->name);
		ns->syspath = nspath[i];
		snprintf(p, sizeof(p), "%s/sys/%s", root, ns->name);
		mkdir(p, 0755);
		idx[i] = i;
		ns->ctrl = &idx[i];
		ns->nr_ctrl = 1;
	}
}

int main(void)
{
	char dir[] = "/tmp/vwc-textfile-XXXXXX", p[256];
	struct vwc_sidecar wr;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(root, sizeof(root), "%s", dir);
	snprintf(p, sizeof(p), "%s/sys", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/run", root);
	setenv("NVME_VWC_SYNC_RUNDIR", p, 1);
	snprintf(tf, sizeof(tf), "%s/vwc.prom", root);

	memset(&wr, 0, sizeof(wr));
	wr.textfile = tf;
	make(&wr, 3);
	fake_wc_put(root, "nvme0n1", "write through");
	fake_wc_put(root, "nvme1n1", "write through");
	fake_wc_put(root, "nvme2n1", "write back");

	/* the first write reads every namespace */
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "0", "first write: nvme0n1 read");
	is_str(wb_of("nvme1n1"), "0", "first write: nvme1n1 read");
	is_str(wb_of("nvme2n1"), "1", "first write: nvme2n1 read");

	/* changed behind its back: carried until marked */
	fake_wc_put(root, "nvme0n1", "write back");
	fake_wc_put(root, "nvme1n1", "write back");
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "0", "a write for nothing marked carries nvme0n1's last mode");
	vwc_watch_textfile_stale(&wr, 0);
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "1", "nvme0n1 marked (evaluated or written): read again");
	is_str(wb_of("nvme1n1"), "0", "nvme1n1, not marked, carried");

	/* a safety-net round: every namespace read again at the next write */
	vwc_watch_check_modes(&wr);
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme1n1"), "1", "after the safety net's round: nvme1n1 read again");

	/* a new topology (the rescan's mark, or another size) */
	fake_wc_put(root, "nvme2n1", "write through");
	wr.tf_all = true;
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme2n1"), "0", "a new topology: nvme2n1 read again");
	fake_wc_put(root, "nvme0n1", "write through");
	make(&wr, 2);
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "0", "a topology of another size: read again");
	is_str(wb_of("nvme2n1"), "", "a namespace gone is gone from the file");

	/* marks outside the cache: no write out of bounds (ASan's mode) */
	vwc_watch_textfile_stale(&wr, 5);
	vwc_watch_textfile_stale(&wr, -1);
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme1n1"), "1", "marks outside the cache: the file as before");

	/* the same size, index 1 another namespace, no mark of any kind:
	 * an entry counts only for the namespace it was read for */
	snprintf(wr.run.topo.ns[1].name, sizeof(wr.run.topo.ns[1].name),
		 "nvme7n1");
	snprintf(p, sizeof(p), "%s/sys/nvme7n1", root);
	mkdir(p, 0755);
	snprintf(nspath[3], sizeof(nspath[3]), "%s", p);
	wr.run.topo.ns[1].syspath = nspath[3];
	fake_wc_put(root, "nvme7n1", "write through");
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme7n1"), "0", "another namespace at an index: read, not the last one's mode");
	wr.run.topo.ns[1].ino = 42;
	fake_wc_put(root, "nvme7n1", "write back");
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme7n1"), "1", "the same name, another inode (a new disk): read");

	/* unreadable: left out, and read again at the next write */
	snprintf(p, sizeof(p), "%s/sys/nvme0n1/queue/write_cache", root);
	unlink(p);
	vwc_watch_textfile_stale(&wr, 0);
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "", "write_cache unreadable: no mode given");
	fake_wc_put(root, "nvme0n1", "write back");
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "1", "readable again: read at the next write, unmarked");

	/* a namespace not printed (a controller not probed) is read once
	 * it is printed, whatever happened meanwhile */
	wr.run.topo.ctrls[0].probed = false;
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "", "a controller not probed: its namespace left out");
	fake_wc_put(root, "nvme0n1", "write through");
	wr.run.topo.ctrls[0].probed = true;
	vwc_watch_write_textfile(&wr);
	is_str(wb_of("nvme0n1"), "0", "probed again: its namespace read, unmarked");

	vwc_watch_textfile_free(&wr);
	free(wr.run.topo.ctrls);
	free(wr.run.topo.ns);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	if (system(p))
		ok(0, "cleanup");
	return tap_done();
}
