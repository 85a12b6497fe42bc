// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Discovery from a fake sysfs tree (vwc_topo_scan_sysfs()): controllers
 * behind PCI functions and a PCI bridge, an NVMe-oF controller with no PCI
 * ancestor, a multipath namespace with two paths, a partition, an orphan
 * path, a name that is not a device, version order (nvme2 < nvme10).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "topo.h"
#include "tap.h"

static char root[64];

/* mkdir -p ROOT/REL */
static void mkdirs(const char *rel)
{
	char p[512], *s;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (s = p + strlen(root) + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

static void put(const char *rel, const char *data)
{
	char p[1100];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(data, f);
		fclose(f);
	}
}

static void link_to(const char *target, const char *rel)
{
	char p[1100];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (symlink(target, p))
		perror(p);
}

/* a PCI function DIR (relative to devices/) with its IDs */
static void pci_fn(const char *dir, const char *vendor, const char *device)
{
	char rel[1024], mod[1024], up[1024] = "";
	const char *s;

	snprintf(rel, sizeof(rel), "devices/%s", dir);
	mkdirs(rel);
	for (s = rel; *s; s++)
		if (*s == '/')
			strcat(up, "../");
	snprintf(mod, sizeof(mod), "%sbus/pci", up);
	snprintf(rel, sizeof(rel), "devices/%s/subsystem", dir);
	link_to(mod, rel);
	snprintf(rel, sizeof(rel), "devices/%s/vendor", dir);
	snprintf(mod, sizeof(mod), "%s\n", vendor);
	put(rel, mod);
	snprintf(rel, sizeof(rel), "devices/%s/device", dir);
	snprintf(mod, sizeof(mod), "%s\n", device);
	put(rel, mod);
	snprintf(rel, sizeof(rel), "devices/%s/modalias", dir);
	snprintf(mod, sizeof(mod), "pci:v0000%sd0000%ssv00001AF4sd00001100bc01sc08i02\n",
		 vendor + 2, device + 2);
	put(rel, mod);
}

/* controller NAME in devices/PARENT/nvme/NAME, linked from class/nvme */
static void ctrl(const char *parent, const char *name, const char *model)
{
	char rel[1024], tgt[1024], v[64];

	snprintf(rel, sizeof(rel), "devices/%s/nvme/%s", parent, name);
	mkdirs(rel);
	snprintf(tgt, sizeof(tgt), "devices/%s/nvme/%s/model", parent, name);
	snprintf(v, sizeof(v), "%-40s\n", model);	/* padded, as the kernel does */
	put(tgt, v);
	snprintf(tgt, sizeof(tgt), "devices/%s/nvme/%s/serial", parent, name);
	snprintf(v, sizeof(v), "SN-%s   \n", name);
	put(tgt, v);
	snprintf(tgt, sizeof(tgt), "devices/%s/nvme/%s/firmware_rev", parent, name);
	put(tgt, "1.0     \n");
	snprintf(tgt, sizeof(tgt), "devices/%s/nvme/%s/transport", parent, name);
	put(tgt, strstr(parent, "virtual") ? "tcp\n" : "pcie\n");
	snprintf(tgt, sizeof(tgt), "../../devices/%s/nvme/%s", parent, name);
	snprintf(rel, sizeof(rel), "class/nvme/%s", name);
	link_to(tgt, rel);
}

/* block device NAME at devices/DIR/NAME, linked from class/block */
static void disk(const char *dir, const char *name)
{
	char rel[1024], tgt[1024];

	snprintf(rel, sizeof(rel), "devices/%s/%s", dir, name);
	mkdirs(rel);
	snprintf(tgt, sizeof(tgt), "../../devices/%s/%s", dir, name);
	snprintf(rel, sizeof(rel), "class/block/%s", name);
	link_to(tgt, rel);
}

/*
 * The class entry CLASS/NAME (e.g. "block/nvme0n1") made again with the
 * same target, beside the old one and renamed over it (a device object
 * gone and back under its name: a new inode). Return: 0 or -1.
 */
static int recreate(const char *entry)
{
	char a[600], b[600], tgt[600];
	ssize_t l;

	snprintf(a, sizeof(a), "%.400s/class/%.100s.new", root, entry);
	snprintf(b, sizeof(b), "%.400s/class/%.100s", root, entry);
	l = readlink(b, tgt, sizeof(tgt) - 1);
	if (l <= 0)
		return -1;
	tgt[l] = '\0';
	return symlink(tgt, a) || rename(a, b) ? -1 : 0;
}

static const struct vwc_ctrl *c_by(const struct vwc_topo *t, const char *n)
{
	int i = vwc_topo_find_ctrl(t, n);

	return i < 0 ? NULL : &t->ctrls[i];
}

static const struct vwc_ns *n_by(const struct vwc_topo *t, const char *n)
{
	int i = vwc_topo_find_ns(t, n);

	return i < 0 ? NULL : &t->ns[i];
}

/*
 * A tree of its own for one test (@saved: the main one's root, put back by
 * root_drop()): its class directories and nvme0 behind the PCI function
 * @pci. Return: 0, or -1 (said) if none could be made.
 */
static int root_fresh(char *saved, const char *pci)
{
	memcpy(saved, root, sizeof(root));
	snprintf(root, sizeof(root), "/tmp/vwc-topo-XXXXXX");
	if (!mkdtemp(root)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		memcpy(root, saved, sizeof(root));
		return -1;
	}
	mkdirs("class/nvme");
	mkdirs("class/block");
	mkdirs("bus/pci");
	pci_fn(pci, "0x1b36", "0x0010");
	ctrl(pci, "nvme0", "QEMU NVMe Ctrl");
	return 0;
}

static void root_drop(const char *saved)
{
	char cmd[sizeof(root) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		printf("# could not remove %s\n", root);
	memcpy(root, saved, sizeof(root));
}

/* the scan's kept class entry @n of class/nvme (@k 0) or class/block (1) */
static int link_by(const struct vwc_topo *t, int k, const char *n)
{
	int i;

	for (i = 0; i < t->nr_links[k]; i++)
		if (!strcmp(t->links[k][i].name, n))
			return i;
	return -1;
}

int main(void)
{
	const char *p0 = "pci0000:00/0000:00:03.0", *p1 = "pci0000:00/0000:00:04.0",
		   *p2 = "pci0000:00/0000:00:05.0",
		   *p10 = "pci0000:00/0000:00:1c.0/0000:01:00.0",
		   *fab = "virtual/nvme-fabrics/ctl";
	char want[1024], deep[700];
	const struct vwc_ctrl *c;
	const struct vwc_ns *ns;
	struct vwc_topo t;
	int i, r;

	snprintf(root, sizeof(root), "/tmp/vwc-topo-XXXXXX");
	if (!mkdtemp(root)) {
		printf("1..1\nnot ok 1 - mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	mkdirs("class/nvme");
	mkdirs("class/block");
	mkdirs("bus/pci");

	/* an empty host */
	r = vwc_topo_scan_sysfs(root, &t);
	ok(r == 0 && t.nr_ctrls == 0 && t.nr_ns == 0, "empty class dirs: nothing, no error");
	vwc_topo_free(&t);

	pci_fn(p0, "0x1b36", "0x0010");
	pci_fn(p1, "0x1b36", "0x0010");
	pci_fn(p2, "0x8086", "0x5845");
	pci_fn("pci0000:00/0000:00:1c.0", "0x8086", "0xa110");	/* bridge */
	pci_fn(p10, "0x144d", "0xa808");
	mkdirs("devices/virtual/nvme-fabrics/ctl");
	ctrl(p0, "nvme0", "QEMU NVMe Ctrl");
	ctrl(p1, "nvme1", "Shared A");
	ctrl(p2, "nvme2", "Shared B");
	ctrl(fab, "nvme3", "Linux");
	ctrl(p10, "nvme10", "Samsung SSD 980");
	mkdirs("devices/virtual/misc/nvme-fabrics");
	link_to("../../devices/virtual/misc/nvme-fabrics", "class/nvme/nvme-fabrics");

	disk("pci0000:00/0000:00:03.0/nvme/nvme0", "nvme0n1");
	disk("pci0000:00/0000:00:03.0/nvme/nvme0/nvme0n1", "nvme0n1p1");
	disk("virtual/nvme-subsystem/nvme-subsys1", "nvme1n1");	/* head */
	disk("pci0000:00/0000:00:05.0/nvme/nvme2", "nvme1c2n1");	/* paths */
	disk("pci0000:00/0000:00:04.0/nvme/nvme1", "nvme1c1n1");
	disk("virtual/nvme-fabrics/ctl/nvme3", "nvme3n1");
	disk("pci0000:00/0000:00:1c.0/0000:01:00.0/nvme/nvme10", "nvme10n1");
	disk("pci0000:00/0000:00:03.0/nvme/nvme0", "nvme4c0n7");	/* orphan path */
	mkdirs("devices/virtual/block/loop0");
	link_to("../../devices/virtual/block/loop0", "class/block/loop0");

	r = vwc_topo_scan_sysfs(root, &t);
	ok(r == 0, "scan: %d", r);
	ok(t.nr_ctrls == 5, "5 controllers (got %d; nvme-fabrics is not one)", t.nr_ctrls);
	for (i = 0; i < t.nr_ctrls && i < 5; i++) {
		static const char *const order[] = { "nvme0", "nvme1", "nvme2", "nvme3", "nvme10" };

		is_str(t.ctrls[i].name, order[i], "controller %d in version order", i);
	}

	c = c_by(&t, "nvme0");
	ok(c != NULL, "nvme0 found");
	if (c) {
		snprintf(want, sizeof(want), "%s/devices/%s/nvme/nvme0", root, p0);
		is_str(c->syspath, want, "nvme0: syspath is the real path");
		is_str(c->devnode, "/dev/nvme0", "nvme0: devnode");
		is_str(c->model, "QEMU NVMe Ctrl", "nvme0: model, padding dropped");
		is_str(c->serial, "SN-nvme0", "nvme0: serial");
		is_str(c->firmware, "1.0", "nvme0: firmware_rev");
		is_str(c->transport, "pcie", "nvme0: transport");
		is_str(c->pci_id, "1b36:0010", "nvme0: pci_id");
		ok(c->pci_vendor == 0x1b36 && c->pci_device == 0x0010, "nvme0: numeric IDs");
		is_str(c->modalias, "pci:v00001b36d00000010sv00001AF4sd00001100bc01sc08i02",
		       "nvme0: modalias of the PCI function (for hwdb)");
		ok(c->held_fd == -1 && c->facts.wce == VWC_TRI_UNKNOWN &&
		   c->facts.present == VWC_TRI_UNKNOWN &&
		   c->facts.backup_failed == VWC_TRI_UNKNOWN, "nvme0: facts unknown until probed");
	}
	c = c_by(&t, "nvme10");
	if (c)
		is_str(c->pci_id, "144d:a808", "nvme10: the nearest PCI ancestor, not the bridge");
	else
		ok(0, "nvme10 found");
	c = c_by(&t, "nvme3");
	ok(c && !c->pci_id[0] && !c->modalias[0] && !c->pci_vendor,
	   "nvme3 (fabrics): no PCI ancestor, no IDs");
	if (c)
		is_str(c->transport, "tcp", "nvme3: transport");

	ok(t.nr_ns == 4, "4 namespaces (got %d): no partition, no orphan path, no loop0", t.nr_ns);
	for (i = 0; i < t.nr_ns && i < 4; i++) {
		static const char *const order[] = { "nvme0n1", "nvme1n1", "nvme3n1", "nvme10n1" };

		is_str(t.ns[i].name, order[i], "namespace %d in version order", i);
	}
	/* a scan's topology is looked up by bisection: each at its index,
	 * a name that is not there (a namespace not scanned yet) nowhere */
	for (i = 0, r = 0; i < t.nr_ctrls; i++)
		r += vwc_topo_find_ctrl(&t, t.ctrls[i].name) == i;
	for (i = 0; i < t.nr_ns; i++)
		r += vwc_topo_find_ns(&t, t.ns[i].name) == i;
	ok(t.sorted && r == t.nr_ctrls + t.nr_ns &&
	   vwc_topo_find_ctrl(&t, "nvme4") < 0 &&
	   vwc_topo_find_ctrl(&t, "nvme11") < 0 &&
	   vwc_topo_find_ns(&t, "nvme1n2") < 0 &&
	   vwc_topo_find_ns(&t, "nvme10n10") < 0,
	   "scanned: every controller and namespace found by bisection (%d of %d), no absent name",
	   r, t.nr_ctrls + t.nr_ns);
	ns = n_by(&t, "nvme0n1");
	ok(ns && ns->nr_ctrl == 1 && t.ctrls && ns->ctrl[0] < t.nr_ctrls &&
	   !strcmp(t.ctrls[ns->ctrl[0]].name, "nvme0") &&
	   ns->nr_paths == 0, "nvme0n1: one controller, nvme0");
	if (ns) {
		snprintf(want, sizeof(want), "%s/devices/%s/nvme/nvme0/nvme0n1", root, p0);
		is_str(ns->syspath, want, "nvme0n1: syspath");
	}
	ns = n_by(&t, "nvme1n1");
	ok(ns && ns->nr_ctrl == 2 && ns->nr_paths == 2, "nvme1n1: two paths, two controllers");
	if (ns && ns->nr_ctrl == 2 && ns->nr_paths == 2) {
		is_str(t.ctrls[ns->ctrl[0]].name, "nvme1", "nvme1n1: first controller by path order");
		is_str(t.ctrls[ns->ctrl[1]].name, "nvme2", "nvme1n1: second controller");
		snprintf(want, sizeof(want), "%s/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1", root);
		is_str(ns->syspath, want, "nvme1n1: the head's syspath");
		snprintf(want, sizeof(want), "%s/devices/%s/nvme/nvme1/nvme1c1n1", root, p1);
		is_str(ns->path_syspath[0], want, "nvme1n1: path 1");
	}
	ns = n_by(&t, "nvme3n1");
	ok(ns && ns->nr_ctrl == 1 && t.ctrls && ns->ctrl[0] < t.nr_ctrls &&
	   !strcmp(t.ctrls[ns->ctrl[0]].name, "nvme3"),
	   "nvme3n1: controller nvme3 (fabrics)");
	vwc_topo_free(&t);

	/*
	 * a controller and its namespace more than 256 characters
	 * deep (a chain of PCI bridges) are found, not skipped
	 */
	snprintf(deep, sizeof(deep), "pci0000:00");
	for (i = 0; i < 22; i++)
		snprintf(deep + strlen(deep), sizeof(deep) - strlen(deep),
			 "/0000:%02x:00.0", i + 0x20);
	pci_fn(deep, "0x144d", "0xa808");
	ctrl(deep, "nvme20", "Deep");
	snprintf(want, sizeof(want), "%s/nvme/nvme20", deep);
	disk(want, "nvme20n1");
	r = vwc_topo_scan_sysfs(root, &t);
	c = c_by(&t, "nvme20");
	ns = n_by(&t, "nvme20n1");
	ok(r == 0 && c && strlen(c->syspath) > 300 && ns &&
	   strlen(ns->syspath) > 300 && ns->nr_ctrl == 1 &&
	   !strcmp(t.ctrls[ns->ctrl[0]].name, "nvme20"),
	   "sysfs paths over 256 characters: controller and namespace found (%zu)",
	   c ? strlen(c->syspath) : 0);
	vwc_topo_free(&t);

	/*
	 * Controllers that reach a namespace without a node of it yet
	 * (vwc_topo_link_reach()): nvme1 and nvme2 share subsystem A, whose
	 * head nvme1n1 (nsid 1) has paths through both; nvme5 joins A with
	 * no path yet. nvme6 and nvme7 share subsystem B with the kernel's
	 * multipath off: nsid 1 is nvme6n1 and nvme7n1, nsid 2 is nvme6's
	 * alone. Two discovery controllers: nvme8 with the well-known NQN,
	 * nvme9 with one of its own and cntrltype "discovery" (a unique
	 * discovery controller).
	 */
	pci_fn("pci0000:00/0000:00:06.0", "0x1b36", "0x0010");
	pci_fn("pci0000:00/0000:00:07.0", "0x1b36", "0x0010");
	pci_fn("pci0000:00/0000:00:08.0", "0x1b36", "0x0010");
	ctrl("pci0000:00/0000:00:06.0", "nvme5", "Shared C");
	ctrl("pci0000:00/0000:00:07.0", "nvme6", "Private");
	ctrl("pci0000:00/0000:00:08.0", "nvme7", "Private");
	ctrl(fab, "nvme8", "Linux");
	ctrl(fab, "nvme9", "Linux");
	{
		static const char *const nqn[][3] = {
			{ "0000:00:04.0", "nvme1", "nqn.a" },
			{ "0000:00:05.0", "nvme2", "nqn.a" },
			{ "0000:00:06.0", "nvme5", "nqn.a" },
			{ "0000:00:07.0", "nvme6", "nqn.b" },
			{ "0000:00:08.0", "nvme7", "nqn.b" },
		};
		static uint32_t a5[] = { 1 }, b6[] = { 1, 2 }, b7[] = { 1 };
		char rel[256];
		const struct vwc_ns *n6, *n7, *n62;
		int i5, i6, i7;

		for (i = 0; i < (int)(sizeof(nqn) / sizeof(nqn[0])); i++) {
			snprintf(rel, sizeof(rel), "devices/pci0000:00/%s/nvme/%s/subsysnqn",
				 nqn[i][0], nqn[i][1]);
			snprintf(want, sizeof(want), "%s\n", nqn[i][2]);
			put(rel, want);
		}
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme8/subsysnqn", fab);
		put(rel, "nqn.2014-08.org.nvmexpress.discovery\n");
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme9/subsysnqn", fab);
		put(rel, "nqn.2026-12.org.vwc:unique-discovery\n");
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme9/cntrltype", fab);
		put(rel, "discovery\n");
		disk("pci0000:00/0000:00:07.0/nvme/nvme6", "nvme6n1");
		disk("pci0000:00/0000:00:07.0/nvme/nvme6", "nvme6n2");
		disk("pci0000:00/0000:00:08.0/nvme/nvme7", "nvme7n1");
		put("devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1/nsid", "1\n");
		put("devices/pci0000:00/0000:00:07.0/nvme/nvme6/nvme6n1/nsid", "1\n");
		put("devices/pci0000:00/0000:00:07.0/nvme/nvme6/nvme6n2/nsid", "2\n");
		put("devices/pci0000:00/0000:00:08.0/nvme/nvme7/nvme7n1/nsid", "1\n");
		r = vwc_topo_scan_sysfs(root, &t);
		i5 = vwc_topo_find_ctrl(&t, "nvme5");
		i6 = vwc_topo_find_ctrl(&t, "nvme6");
		i7 = vwc_topo_find_ctrl(&t, "nvme7");
		ok(r == 0 && i5 >= 0 && i6 >= 0 && i7 >= 0, "subsystems: scan");
		is_str(t.ctrls[i5].subsysnqn, "nqn.a", "subsysnqn read");
		ok(vwc_ctrl_peers(&t.ctrls[i5], c_by(&t, "nvme1")) &&
		   !vwc_ctrl_peers(&t.ctrls[i5], &t.ctrls[i5]) &&
		   !vwc_ctrl_peers(&t.ctrls[i5], &t.ctrls[i6]),
		   "peers: one subsystem, not itself, not another");
		ok(!vwc_ctrl_peers(c_by(&t, "nvme8"), c_by(&t, "nvme9")) &&
		   !vwc_topo_has_peers(&t, vwc_topo_find_ctrl(&t, "nvme8")),
		   "discovery controllers are never peers");
		ok(c_by(&t, "nvme8")->discovery && c_by(&t, "nvme9")->discovery &&
		   !t.ctrls[i5].discovery && !c_by(&t, "nvme0")->discovery &&
		   !c_by(&t, "nvme1")->discovery,
		   "discovery controllers told apart: the well-known NQN, cntrltype discovery");
		is_str(c_by(&t, "nvme9")->cntrltype, "discovery", "cntrltype read");
		ok(!vwc_topo_has_peers(&t, vwc_topo_find_ctrl(&t, "nvme0")),
		   "a controller alone in its subsystem has none");

		/* not probed: nsids unknown, so it may reach any */
		vwc_topo_link_reach(&t);
		ns = n_by(&t, "nvme1n1");
		ok(ns && ns->nr_ctrl == 3 && vwc_ns_has_ctrl(ns, i5) &&
		   ns->nr_joining == 1 && ns->nsid == 1,
		   "a peer whose namespace list is unknown counts (nr_ctrl %d)",
		   ns ? ns->nr_ctrl : -1);
		vwc_topo_free(&t);

		/* probed: each reaches what its list names */
		r = vwc_topo_scan_sysfs(root, &t);
		i5 = vwc_topo_find_ctrl(&t, "nvme5");
		i6 = vwc_topo_find_ctrl(&t, "nvme6");
		i7 = vwc_topo_find_ctrl(&t, "nvme7");
		for (i = 0; i < t.nr_ctrls; i++)
			t.ctrls[i].nsids_known = true;	/* empty lists */
		t.ctrls[i5].nsids = malloc(sizeof(a5));
		memcpy(t.ctrls[i5].nsids, a5, sizeof(a5));
		t.ctrls[i5].nr_nsids = 1;
		t.ctrls[i6].nsids = malloc(sizeof(b6));
		memcpy(t.ctrls[i6].nsids, b6, sizeof(b6));
		t.ctrls[i6].nr_nsids = 2;
		t.ctrls[i7].nsids = malloc(sizeof(b7));
		memcpy(t.ctrls[i7].nsids, b7, sizeof(b7));
		t.ctrls[i7].nr_nsids = 1;
		vwc_topo_link_reach(&t);
		vwc_topo_link_reach(&t);	/* again: nothing more */
		ns = n_by(&t, "nvme1n1");
		ok(ns && ns->nr_ctrl == 3 && vwc_ns_has_ctrl(ns, i5) &&
		   ns->nr_joining == 1,
		   "joining nvme5 names nsid 1: it reaches the head (nr_ctrl %d, joining %d)",
		   ns ? ns->nr_ctrl : -1, ns ? ns->nr_joining : -1);
		n6 = n_by(&t, "nvme6n1");
		n7 = n_by(&t, "nvme7n1");
		n62 = n_by(&t, "nvme6n2");
		ok(n6 && n7 && n6->nr_ctrl == 2 && n7->nr_ctrl == 2 &&
		   vwc_ns_has_ctrl(n6, i7) && vwc_ns_has_ctrl(n7, i6),
		   "multipath off: nvme6n1 and nvme7n1 are one namespace, reached by both");
		ok(n62 && n62->nr_ctrl == 1 && !vwc_ns_has_ctrl(n62, i7),
		   "nsid 2, not in nvme7's list: nvme6's alone");
		t.ctrls[i7].nr_nsids = 0;	/* nvme7 detached nsid 1 */
		vwc_topo_free(&t);
		r = vwc_topo_scan_sysfs(root, &t);
		for (i = 0; i < t.nr_ctrls; i++)
			t.ctrls[i].nsids_known = true;
		vwc_topo_link_reach(&t);
		ns = n_by(&t, "nvme1n1");
		ok(ns && ns->nr_ctrl == 2 && ns->nr_joining == 0,
		   "lists that name nothing: only the path controllers");
		ok(ns && !vwc_topo_new_peer(&t, ns),
		   "no controller joined since the scan");
		/* one joins subsystem A after the scan, one another subsystem */
		pci_fn("pci0000:00/0000:00:09.0", "0x1b36", "0x0010");
		ctrl("pci0000:00/0000:00:09.0", "nvme12", "Late");
		put("devices/pci0000:00/0000:00:09.0/nvme/nvme12/subsysnqn", "nqn.b\n");
		ok(ns && !vwc_topo_new_peer(&t, ns),
		   "a controller of another subsystem: not a peer");
		ok(!vwc_topo_new_peer(&t, n_by(&t, "nvme0n1")),
		   "a namespace in no shared subsystem: nobody joins it");
		pci_fn("pci0000:00/0000:00:0a.0", "0x1b36", "0x0010");
		ctrl("pci0000:00/0000:00:0a.0", "nvme13", "Late");
		put("devices/pci0000:00/0000:00:0a.0/nvme/nvme13/subsysnqn", "nqn.a\n");
		ok(ns && vwc_topo_new_peer(&t, ns),
		   "a controller joined subsystem A after the scan: seen");
		vwc_topo_free(&t);
		/* one the scan found before it was identified (no subsystem
		 * NQN yet), identified since: its NQN read again */
		pci_fn("pci0000:00/0000:00:0b.0", "0x1b36", "0x0010");
		ctrl("pci0000:00/0000:00:0b.0", "nvme14", "Late");
		put("devices/pci0000:00/0000:00:0b.0/nvme/nvme14/subsysnqn", "\n");
		r = vwc_topo_scan_sysfs(root, &t);
		ns = n_by(&t, "nvme1n1");
		ok(ns && vwc_topo_find_ctrl(&t, "nvme14") >= 0 &&
		   !vwc_topo_new_peer(&t, ns),
		   "a controller scanned before it was identified: not a peer yet");
		put("devices/pci0000:00/0000:00:0b.0/nvme/nvme14/subsysnqn", "nqn.a\n");
		ok(ns && vwc_topo_new_peer(&t, ns),
		   "... identified in subsystem A since the scan: seen");
		vwc_topo_free(&t);
	}

	/*
	 * A scan of some subsystems' controllers alone. Subsystem s.a is
	 * kernel subsystem 5 (heads nvme5n1, nvme5n2) reached by nvme30 and
	 * nvme31; s.b is kernel subsystem 30, whose head nvme30n1 carries
	 * the number of s.a's nvme30; s.c is kernel subsystem 31 (head
	 * nvme31n1, the number of nvme31). Names alone cannot tell these
	 * apart: the scan must.
	 */
	{
		static const char *const a[] = { "nqn.s.a" }, *const b[] = { "nqn.s.b" },
				  *const ac[] = { "nqn.s.c", "nqn.s.a" }, *const none[] = { "nqn.none" };
		static const struct { const char *ctrl, *nqn; } cs[] = {
			{ "nvme30", "nqn.s.a" }, { "nvme31", "nqn.s.a" },
			{ "nvme32", "nqn.s.b" }, { "nvme34", "nqn.s.c" },
		};
		static const char *const paths[][2] = {
			{ "nvme30", "nvme5c30n1" }, { "nvme31", "nvme5c31n1" },
			{ "nvme30", "nvme5c30n2" }, { "nvme31", "nvme5c31n2" },
			{ "nvme32", "nvme30c32n1" }, { "nvme34", "nvme31c34n1" },
		};
		static const char *const heads[][2] = {
			{ "nvme-subsys5", "nvme5n1" }, { "nvme-subsys5", "nvme5n2" },
			{ "nvme-subsys30", "nvme30n1" }, { "nvme-subsys31", "nvme31n1" },
		};
		struct vwc_topo full, sc;
		char dir[256], rel[300];
		bool same = true;
		int j, k, in_scope;

		for (i = 0; i < 4; i++) {
			ctrl(fab, cs[i].ctrl, "Linux");
			snprintf(rel, sizeof(rel), "devices/%s/nvme/%s/subsysnqn", fab, cs[i].ctrl);
			snprintf(dir, sizeof(dir), "%s\n", cs[i].nqn);
			put(rel, dir);
		}
		for (i = 0; i < 6; i++) {
			snprintf(dir, sizeof(dir), "%s/nvme/%s", fab, paths[i][0]);
			disk(dir, paths[i][1]);
		}
		for (i = 0; i < 4; i++) {
			snprintf(dir, sizeof(dir), "virtual/nvme-subsystem/%s", heads[i][0]);
			disk(dir, heads[i][1]);
		}
		r = vwc_topo_scan_sysfs(root, &full);
		ok(r == 0 && n_by(&full, "nvme5n1") && n_by(&full, "nvme30n1") &&
		   n_by(&full, "nvme31n1"), "scoped: the full scan has every head");

		r = vwc_topo_scan_nqns(root, &sc, a, 1);
		ok(r == 0 && sc.nr_ctrls == 2 && c_by(&sc, "nvme30") && c_by(&sc, "nvme31"),
		   "scoped to s.a: its two controllers alone (got %d)", sc.nr_ctrls);
		ok(sc.nr_ns == 2 && n_by(&sc, "nvme5n1") && n_by(&sc, "nvme5n2"),
		   "scoped to s.a: its two heads, not s.b's nvme30n1 nor s.c's nvme31n1 (got %d)",
		   sc.nr_ns);
		/* what it has, the full scan has the same: controllers and paths */
		for (i = 0; i < sc.nr_ns; i++) {
			const struct vwc_ns *f = n_by(&full, sc.ns[i].name);

			if (!f || f->nr_ctrl != sc.ns[i].nr_ctrl || f->nr_paths != sc.ns[i].nr_paths ||
			    strcmp(f->syspath, sc.ns[i].syspath)) {
				same = false;
				continue;
			}
			for (j = 0; j < f->nr_ctrl; j++)
				same &= !strcmp(full.ctrls[f->ctrl[j]].name,
						sc.ctrls[sc.ns[i].ctrl[j]].name);
		}
		/* every namespace the full scan has behind an s.a controller */
		for (i = 0; i < full.nr_ns; i++) {
			for (in_scope = 0, k = 0; k < full.ns[i].nr_ctrl; k++)
				in_scope |= !strcmp(full.ctrls[full.ns[i].ctrl[k]].subsysnqn, "nqn.s.a");
			same &= !in_scope || n_by(&sc, full.ns[i].name) != NULL;
		}
		ok(same, "scoped to s.a: each namespace as the full scan has it, and all of them");
		c = c_by(&sc, "nvme30");
		ok(c && !strcmp(c->model, "Linux") && !strcmp(c->subsysnqn, "nqn.s.a"),
		   "scoped: a controller's attributes read as in a full scan");
		vwc_topo_free(&sc);

		r = vwc_topo_scan_nqns(root, &sc, b, 1);
		ns = n_by(&sc, "nvme30n1");
		ok(r == 0 && sc.nr_ctrls == 1 && sc.nr_ns == 1 && ns && ns->nr_ctrl == 1 &&
		   !strcmp(sc.ctrls[ns->ctrl[0]].name, "nvme32"),
		   "scoped to s.b: nvme32 and its head nvme30n1");
		vwc_topo_free(&sc);
		r = vwc_topo_scan_nqns(root, &sc, ac, 2);
		ok(r == 0 && sc.nr_ctrls == 3 && sc.nr_ns == 3 && n_by(&sc, "nvme31n1") &&
		   n_by(&sc, "nvme5n2"), "scoped to s.c and s.a: both");
		vwc_topo_free(&sc);
		r = vwc_topo_scan_nqns(root, &sc, none, 1);
		ok(r == 0 && sc.nr_ctrls == 0 && sc.nr_ns == 0, "scoped to an NQN nobody has: nothing");
		vwc_topo_free(&sc);
		vwc_topo_free(&full);
	}

	/*
	 * Each device's identity from the scan's readdir: its class entry's
	 * inode, the same at the next scan, another once the device object
	 * went and came back under its name (a new entry made beside the
	 * old and renamed over it).
	 */
	{
		struct vwc_topo t1, t2;
		const struct vwc_ns *n1, *n2;

		r = vwc_topo_scan_sysfs(root, &t1);
		r |= vwc_topo_scan_sysfs(root, &t2);
		n1 = n_by(&t1, "nvme0n1");
		n2 = n_by(&t2, "nvme0n1");
		ok(!r && n1 && n2 && n1->ino && n1->ino == n2->ino &&
		   c_by(&t1, "nvme0") && c_by(&t1, "nvme0")->ino &&
		   c_by(&t1, "nvme0")->ino == c_by(&t2, "nvme0")->ino,
		   "identity: a namespace's and a controller's class entry inode, the same at the next scan");
		vwc_topo_free(&t2);
		r = recreate("block/nvme0n1") ? -1 :
		    vwc_topo_scan_sysfs(root, &t2);
		n2 = r ? NULL : n_by(&t2, "nvme0n1");
		ok(n1 && n2 && n2->ino && n2->ino != n1->ino,
		   "identity: nvme0n1 gone and back under its name: another inode");
		if (!r)
			vwc_topo_free(&t2);
		vwc_topo_free(&t1);
	}

	/*
	 * A scan after another (vwc_topo_rescan_sysfs()): the same controller
	 * object keeps what cannot change and reads firmware_rev again; one
	 * that went and came back under its name is read in full.
	 */
	{
		char rel[600];
		struct vwc_topo t1, t2;
		const struct vwc_ctrl *c1, *c2;

		r = vwc_topo_scan_sysfs(root, &t1);
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme0/model", p0);
		put(rel, "Another Model\n");
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme0/firmware_rev", p0);
		put(rel, "2.0     \n");
		r |= vwc_topo_rescan_sysfs(root, &t1, &t2);
		c1 = c_by(&t1, "nvme0");
		c2 = c_by(&t2, "nvme0");
		ok(!r && c1 && c2 && !strcmp(c2->model, "QEMU NVMe Ctrl") &&
		   !strcmp(c2->firmware, "2.0") && !strcmp(c2->pci_id, c1->pci_id) &&
		   !strcmp(c2->subsysnqn, c1->subsysnqn) &&
		   !strcmp(c2->transport, "pcie"),
		   "rescan: the same controller keeps its model, PCI IDs and transport, reads firmware_rev again (%s, %s)",
		   c2 ? c2->model : "-", c2 ? c2->firmware : "-");
		vwc_topo_free(&t2);
		r = recreate("nvme/nvme0") ? -1 :
		    vwc_topo_rescan_sysfs(root, &t1, &t2);
		c2 = r ? NULL : c_by(&t2, "nvme0");
		ok(c2 && !strcmp(c2->model, "Another Model"),
		   "rescan: nvme0 gone and back under its name: read in full (%s)",
		   c2 ? c2->model : "-");
		if (!r)
			vwc_topo_free(&t2);
		vwc_topo_free(&t1);
		/* a last scan that read a value empty (a controller read
		 * while it was being made): read in full again */
		r = vwc_topo_scan_sysfs(root, &t1);
		i = vwc_topo_find_ctrl(&t1, "nvme0");
		if (!r && i >= 0) {
			t1.ctrls[i].model[0] = '\0';
			t1.ctrls[i].subsysnqn[0] = '\0';
		}
		r = r || i < 0 ? -1 : vwc_topo_rescan_sysfs(root, &t1, &t2);
		c2 = r ? NULL : c_by(&t2, "nvme0");
		ok(c2 && !strcmp(c2->model, "Another Model"),
		   "rescan: a model the last scan read empty: read again (%s)",
		   c2 ? c2->model : "-");
		if (!r)
			vwc_topo_free(&t2);
		vwc_topo_free(&t1);
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme0/model", p0);
		put(rel, "QEMU NVMe Ctrl                          \n");
		snprintf(rel, sizeof(rel), "devices/%s/nvme/nvme0/firmware_rev", p0);
		put(rel, "1.0     \n");
	}

	/*
	 * A rescan takes the target of a class entry of the same name and
	 * inode from the last scan (shown by a last scan whose target for
	 * nvme0n1 was set to somewhere else: kept, so not read), and reads
	 * the link of one made again under its name; a namespace of the same
	 * entry keeps its namespace ID, one made again does not.
	 */
	{
		struct vwc_topo t1, t2, t3;
		const struct vwc_ns *n2, *n3;
		char elsewhere[200];
		int k, r2, r3;

		snprintf(elsewhere, sizeof(elsewhere), "%s/devices/elsewhere/nvme0n1", root);
		r = vwc_topo_scan_sysfs(root, &t1);
		k = r ? -1 : link_by(&t1, 1, "nvme0n1");
		i = r ? -1 : vwc_topo_find_ns(&t1, "nvme0n1");
		ok(!r && k >= 0 && t1.links[1][k].ino && i >= 0 &&
		   !strcmp(t1.links[1][k].syspath, t1.ns[i].syspath) &&
		   t1.nr_links[0] == t1.nr_ctrls,
		   "links: a scan keeps each class entry it looked at, its inode and target");
		if (k >= 0 && i >= 0) {
			free(t1.links[1][k].syspath);
			t1.links[1][k].syspath = strdup(elsewhere);
			t1.ns[i].nsid = 77;
		}
		r2 = r || k < 0 || i < 0 ? -1 : vwc_topo_rescan_sysfs(root, &t1, &t2);
		n2 = r2 ? NULL : n_by(&t2, "nvme0n1");
		ok(n2 && !strcmp(n2->syspath, elsewhere) && n2->nsid == 77,
		   "rescan: an entry of the same name and inode keeps the last scan's target (not read) and namespace ID (%s, %u)",
		   n2 ? n2->syspath : "-", n2 ? n2->nsid : 0);
		r3 = r2 || recreate("block/nvme0n1") ? -1 : vwc_topo_rescan_sysfs(root, &t2, &t3);
		n3 = r3 ? NULL : n_by(&t3, "nvme0n1");
		ok(n3 && strstr(n3->syspath, "/devices/pci0000:00/0000:00:03.0/nvme/nvme0/nvme0n1") &&
		   n3->nsid != 77,
		   "rescan: nvme0n1 made again under its name (another inode): its link read, its ID not kept (%s)",
		   n3 ? n3->syspath : "-");
		if (!r3)
			vwc_topo_free(&t3);
		if (!r2)
			vwc_topo_free(&t2);
		if (!r)
			vwc_topo_free(&t1);

		/* a controller's link, and a last scan of another root: read */
		r = vwc_topo_scan_sysfs(root, &t1);
		k = r ? -1 : link_by(&t1, 0, "nvme0");
		if (k >= 0) {
			free(t1.links[0][k].syspath);
			t1.links[0][k].syspath = strdup(elsewhere);
		}
		r2 = r || k < 0 ? -1 : vwc_topo_rescan_sysfs(root, &t1, &t2);
		c = r2 ? NULL : c_by(&t2, "nvme0");
		ok(c && strstr(c->syspath, "/devices/pci0000:00/0000:00:03.0/nvme/nvme0") &&
		   !strcmp(c->model, "QEMU NVMe Ctrl"),
		   "rescan: a controller's link read at every scan (%s)", c ? c->syspath : "-");
		if (!r2)
			vwc_topo_free(&t2);
		k = r ? -1 : link_by(&t1, 1, "nvme0n1");
		if (k >= 0) {
			free(t1.links[1][k].syspath);
			t1.links[1][k].syspath = strdup(elsewhere);
		}
		snprintf(t1.sysfs, sizeof(t1.sysfs), "%s", "/another/root");
		r2 = r || k < 0 ? -1 : vwc_topo_rescan_sysfs(root, &t1, &t2);
		n2 = r2 ? NULL : n_by(&t2, "nvme0n1");
		ok(n2 && strstr(n2->syspath, "/devices/pci0000:00/0000:00:03.0/nvme/nvme0/nvme0n1"),
		   "rescan: a last scan of another root carries nothing (%s)", n2 ? n2->syspath : "-");
		if (!r2)
			vwc_topo_free(&t2);
		if (!r)
			vwc_topo_free(&t1);
	}

	/*
	 * The names' signature (vwc_topo_names_sig()): the same tree, the
	 * same number; another name, or a device object that went and came
	 * back under its name (a new entry, so a new inode: made beside the
	 * old one and renamed over it, so that the file system cannot hand
	 * the freed number out again, as sysfs never does soon), another.
	 */
	{
		uint64_t s0 = vwc_topo_names_sig(root), s1;
		char a[600], b[600];

		ok(s0 && s0 == vwc_topo_names_sig(root),
		   "names' signature: the same tree, the same number");
		snprintf(a, sizeof(a), "%s/class/block/sda", root);
		ok(!symlink("../../devices/sda", a) &&
		   vwc_topo_names_sig(root) == s0,
		   "names' signature: a name not nvme*: the same");
		snprintf(a, sizeof(a), "%s/class/block/nvme20n1.new", root);
		snprintf(b, sizeof(b), "%s/class/block/nvme20n1", root);
		if (!symlink("x", a) && !rename(a, b)) {
			s1 = vwc_topo_names_sig(root);
			ok(s1 != s0,
			   "names' signature: nvme20n1 gone and back under its name: another");
		} else {
			ok(0, "names' signature: replace nvme20n1: %s",
			   strerror(errno));
			s1 = s0;
		}
		/* a scan's own: its readdirs' number, partitions, sda and
		 * the nvme-fabrics entry as vwc_topo_names_sig() counts them */
		r = vwc_topo_scan_sysfs(root, &t);
		ok(!r && t.names_sig == s1,
		   "names' signature: a scan's own is the names' (%d)", r);
		snprintf(a, sizeof(a), "%s/class/nvme/nvme99", root);
		ok(!symlink("x", a) && vwc_topo_names_sig(root) != s1,
		   "names' signature: a new controller's name: another");
		{
			struct vwc_topo t2;
			int r2 = r ? -1 : vwc_topo_rescan_sysfs(root, &t, &t2);

			ok(!r2 && t2.names_sig == vwc_topo_names_sig(root) &&
			   t2.names_sig != s1,
			   "names' signature: a rescan's own has the new name (%d)", r2);
			if (!r2)
				vwc_topo_free(&t2);
		}
		if (!r)
			vwc_topo_free(&t);
		unlink(a);
		ok(vwc_topo_names_sig(root) == s1,
		   "names' signature: it gone again: as before");
		snprintf(want, sizeof(want), "%s/nonexistent", root);
		ok(vwc_topo_names_sig(want) == 0,
		   "names' signature: no class directories: 0");
	}

	/*
	 * Room is made for the heads listed: paths whose head is not (a
	 * head being removed, or not made yet) need more, made as they
	 * come (1 head, 6 such paths: room made three times over), and are
	 * dropped in the end, the head's entry whole.
	 */
	{
		char saved[sizeof(root)], name[32];

		if (!root_fresh(saved, p0)) {
			disk("pci0000:00/0000:00:03.0/nvme/nvme0", "nvme0n1");
			for (i = 1; i <= 6; i++) {
				snprintf(name, sizeof(name), "nvme7c0n%d", i);
				disk("pci0000:00/0000:00:03.0/nvme/nvme0", name);
			}
			r = vwc_topo_scan_sysfs(root, &t);
			ns = n_by(&t, "nvme0n1");
			snprintf(want, sizeof(want), "%s/devices/%s/nvme/nvme0/nvme0n1",
				 root, p0);
			ok(r == 0 && t.nr_ns == 1 && ns && ns->nr_ctrl == 1 &&
			   !ns->nr_paths && !strcmp(ns->syspath, want),
			   "one head, six paths without theirs: scanned (%d), the head alone and whole (%d namespace(s))",
			   r, t.nr_ns);
			vwc_topo_free(&t);
			root_drop(saved);
		}
	}

	/*
	 * A rescan puts the entries it carries in the last scan's order and
	 * sorts only the new ones into them (classdir.c): the same order as
	 * a scan from nothing, with new heads and paths between the old
	 * ones, across controllers and under a subsystem; and a last scan
	 * whose entries are out of order (never made by a scan) is sorted
	 * in full.
	 */
	{
		char saved[sizeof(root)], name[32];
		struct vwc_topo t1, t2, t3;
		int pass, j, same, sorted, r2, r3;

		if (!root_fresh(saved, p0)) {
			ctrl(fab, "nvme3", "Linux");
			ctrl(fab, "nvme12", "Linux");
			for (pass = 0; pass < 2; pass++) {
				for (i = 1 + pass; i <= 24; i += 2) {
					snprintf(name, sizeof(name), "nvme0n%d", i);
					disk("pci0000:00/0000:00:03.0/nvme/nvme0", name);
					snprintf(name, sizeof(name), "nvme1n%d", i);
					disk("virtual/nvme-subsystem/nvme-subsys1", name);
					snprintf(name, sizeof(name), "nvme1c3n%d", i);
					disk("virtual/nvme-fabrics/ctl/nvme3", name);
					snprintf(name, sizeof(name), "nvme1c12n%d", i);
					disk("virtual/nvme-fabrics/ctl/nvme12", name);
				}
				if (!pass)
					r = vwc_topo_scan_sysfs(root, &t1);
			}
			for (pass = 0; pass < 2; pass++) {
				/* the second time the last scan's first two swapped */
				if (pass && !r && t1.nr_links[1] > 1) {
					struct vwc_topo_link l = t1.links[1][0];

					t1.links[1][0] = t1.links[1][1];
					t1.links[1][1] = l;
				}
				r2 = r ? -1 : vwc_topo_rescan_sysfs(root, &t1, &t2);
				r3 = vwc_topo_scan_sysfs(root, &t3);
				same = !r2 && !r3 && t2.nr_links[1] == t3.nr_links[1] &&
				       t2.nr_ns == t3.nr_ns && t3.nr_links[1] == 96;
				for (j = 0; same && j < t3.nr_links[1]; j++)
					same = !strcmp(t2.links[1][j].name,
						       t3.links[1][j].name);
				for (j = 0; same && j < t3.nr_ns; j++)
					same = !strcmp(t2.ns[j].name, t3.ns[j].name) &&
					       t2.ns[j].nr_paths == t3.ns[j].nr_paths;
				sorted = same;
				for (j = 1; sorted && j < t2.nr_links[1]; j++)
					sorted = strcmp(t2.links[1][j - 1].syspath,
							t2.links[1][j].syspath) < 0;
				ok(same && sorted,
				   "rescan with 48 new entries among 48 %s: the order of a scan from nothing (%d entries, %d namespaces)",
				   pass ? "carried out of order" : "carried",
				   r2 ? -1 : t2.nr_links[1], r2 ? -1 : t2.nr_ns);
				if (!r2)
					vwc_topo_free(&t2);
				if (!r3)
					vwc_topo_free(&t3);
			}
			if (!r)
				vwc_topo_free(&t1);
			root_drop(saved);
		}
	}

	/*
	 * Names of another form than the kernel's (a leading zero, which
	 * the kernel never makes): no index by instance number (nvme01 and
	 * nvme1 would be one), the controllers sorted as strverscmp() sorts
	 * them, each disk with its own controller.
	 */
	{
		char saved[sizeof(root)];
		int sorted = 1, a, b;

		if (!root_fresh(saved, p0)) {
			ctrl(fab, "nvme10", "Linux");
			ctrl(fab, "nvme1", "Linux");
			ctrl(fab, "nvme01", "Linux");
			ctrl(fab, "nvme2", "Linux");
			disk("virtual/nvme-fabrics/ctl/nvme01", "nvme01n1");
			disk("virtual/nvme-fabrics/ctl/nvme1", "nvme1n2");
			r = vwc_topo_scan_sysfs(root, &t);
			for (i = 1; !r && i < t.nr_ctrls; i++)
				sorted &= strverscmp(t.ctrls[i - 1].name,
						     t.ctrls[i].name) < 0;
			ok(!r && t.nr_ctrls == 5 && sorted &&
			   vwc_topo_find_ctrl(&t, "nvme01") >= 0 &&
			   vwc_topo_find_ctrl(&t, "nvme10") >= 0,
			   "controllers nvme01 and nvme1: sorted as strverscmp() sorts them, each found (%d)",
			   r ? -1 : t.nr_ctrls);
			a = r ? -1 : vwc_topo_find_ns(&t, "nvme1n1");
			b = r ? -1 : vwc_topo_find_ns(&t, "nvme1n2");
			ok(a >= 0 && b >= 0 && t.ns[a].nr_ctrl == 1 &&
			   t.ns[b].nr_ctrl == 1 &&
			   !strcmp(t.ctrls[t.ns[a].ctrl[0]].name, "nvme01") &&
			   !strcmp(t.ctrls[t.ns[b].ctrl[0]].name, "nvme1"),
			   "controllers nvme01 and nvme1: each disk with its own (not one instance number)");
			if (!r)
				vwc_topo_free(&t);
			root_drop(saved);
		}
	}

	/* a missing class directory (no nvme driver) is an empty host */
	snprintf(want, sizeof(want), "%s/nonexistent", root);
	r = vwc_topo_scan_sysfs(want, &t);
	ok(r == 0 && t.nr_ctrls == 0 && t.nr_ns == 0, "no class/nvme: nothing, no error");
	vwc_topo_free(&t);

	/* vwc_read_attr(): the scan's, the probe's and the block layer's
	 * reader of one attribute */
	{
		char buf[8];

		put("attr-pad", "Linux   \n");
		snprintf(want, sizeof(want), "%s/attr-pad", root);
		r = vwc_read_attr(want, buf, sizeof(buf));
		ok(r == 0 && !strcmp(buf, "Linux"), "read_attr: padding and newline dropped (%d, '%s')", r, buf);
		put("attr-long", "0123456789\n");
		snprintf(want, sizeof(want), "%s/attr-long", root);
		r = vwc_read_attr(want, buf, sizeof(buf));
		ok(r == 0 && !strcmp(buf, "0123456"), "read_attr: cut to the buffer, terminated (%d, '%s')", r, buf);
		snprintf(want, sizeof(want), "%s/attr-none", root);
		strcpy(buf, "stale");
		r = vwc_read_attr(want, buf, sizeof(buf));
		ok(r == -ENOENT && !buf[0], "read_attr: a missing file is -ENOENT and empty (%d, '%s')", r, buf);
		snprintf(want, sizeof(want), "%s/class", root);
		strcpy(buf, "stale");
		r = vwc_read_attr(want, buf, sizeof(buf));
		ok(r == -EISDIR && !buf[0], "read_attr: a read that fails is its errno and empty (%d, '%s')", r, buf);
		snprintf(want, sizeof(want), "%s/attr-pad", root);
		strcpy(buf, "stale");
		r = vwc_read_attr(want, buf, 1);
		ok(r == -EINVAL && !buf[0], "read_attr: no room for a byte is -EINVAL, not an empty answer (%d)", r);
	}

	snprintf(want, sizeof(want), "rm -rf '%s'", root);
	if (system(want))
		printf("# could not remove %s\n", root);
	return tap_done();
}
