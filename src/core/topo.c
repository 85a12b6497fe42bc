// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device discovery (sysfs): the controllers and namespaces the host has,
 * or those of some NVM subsystems.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <libudev.h>

#include "classdir.h"
#include "devname.h"
#include "fileio.h"
#include "log.h"
#include "topo.h"
#include "topo-scope.h"

/*
 * Discovery reads sysfs directly: a listing of class/nvme and class/block,
 * one readlink per device, and the few attributes reported. libudev's
 * enumerator resolves every path component of every device and of its
 * parents: about 12,000 system calls for 16 controllers and 64 namespaces,
 * most of the audit's fixed cost under emulation, for the same answer (the
 * device's real path under devices/ and its attributes).
 */

/* Read a sysfs attribute, trailing whitespace (padding, newline) dropped. */
static void read_attr(const char *dir, const char *attr, char *dst,
		      size_t len)
{
	char path[VWC_PATH_LEN + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	vwc_read_attr(path, dst, len);
}

/*
 * The nearest ancestor of @syspath whose subsystem is pci, as libudev's
 * udev_device_get_parent_with_subsystem_devtype(dev, "pci", NULL) finds
 * it, not going above @top (<sysfs>/devices).
 */
static bool pci_parent(const char *syspath, const char *top, char *out,
		       size_t len)
{
	char dir[VWC_PATH_LEN], link[VWC_PATH_LEN + 16], tgt[VWC_PATH_LEN];
	size_t toplen = strlen(top);
	char *slash;
	ssize_t n;

	snprintf(dir, sizeof(dir), "%s", syspath);
	for (;;) {
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) <= toplen)
			return false;
		*slash = '\0';
		snprintf(link, sizeof(link), "%s/subsystem", dir);
		n = readlink(link, tgt, sizeof(tgt) - 1);
		if (n < 0)
			continue;
		tgt[n] = '\0';
		slash = strrchr(tgt, '/');
		if (!strcmp(slash ? slash + 1 : tgt, "pci")) {
			snprintf(out, len, "%s", dir);
			return true;
		}
	}
}

/*
 * One scan of sysfs. The arrays are made for what the class directory
 * listed, once (a controller is some 10 KiB, a namespace 4 KiB: grown one
 * at a time they were copied or remapped at every addition; namespaces:
 * the heads listed, doubled if paths without theirs need more), and namespaces
 * are found by name through a hash of their indices, not a walk of all
 * of them for every disk and path node (O(n^2) at a thousand namespaces).
 */
struct scan {
	struct vwc_topo *t;
	const struct vwc_topo *prev; /* vwc_topo_rescan_sysfs(): carried */
	const struct vwc_scope *scope; /* vwc_topo_scan_nqns(): what is looked at */
	int cap;		/* room in t->ctrls or t->ns, by phase */
	struct vwc_name_index ns_ix; /* t->ns by name; no table: walk */
	int *by_inst;		/* controller index by instance number, -1
				 * none; NULL: bisect by name */
	unsigned int nr_inst;	/* its size */
	struct vwc_name_index prev_ix; /* @prev's namespaces by name; no
					* table: bisect @prev */
};

static int add_other(struct vwc_topo *t, const char *name);

/*
 * The same kernel object as the last scan's (its class entry's inode and
 * its path): what cannot change in its lifetime carried, firmware_rev read
 * again. Return: true if carried.
 */
static bool carry_ctrl(struct scan *sc, struct vwc_ctrl *c)
{
	const struct vwc_ctrl *p;
	int i;

	if (!sc->prev || !sc->prev->sorted || !c->ino)
		return false;
	i = vwc_topo_find_ctrl(sc->prev, c->name);
	if (i < 0)
		return false;
	p = &sc->prev->ctrls[i];
	/* a value read empty (a controller read while it was being made)
	 * is not carried: everything is read again */
	if (p->ino != c->ino || strcmp(p->syspath, c->syspath) ||
	    !p->model[0] || !p->transport[0])
		return false;
	memcpy(c->model, p->model, sizeof(c->model));
	memcpy(c->serial, p->serial, sizeof(c->serial));
	memcpy(c->transport, p->transport, sizeof(c->transport));
	memcpy(c->subsysnqn, p->subsysnqn, sizeof(c->subsysnqn));
	memcpy(c->cntrltype, p->cntrltype, sizeof(c->cntrltype));
	memcpy(c->pci_id, p->pci_id, sizeof(c->pci_id));
	memcpy(c->modalias, p->modalias, sizeof(c->modalias));
	c->pci_vendor = p->pci_vendor;
	c->pci_device = p->pci_device;
	if (!c->serial[0])
		read_attr(c->syspath, "serial", c->serial, sizeof(c->serial));
	if (!c->subsysnqn[0])
		read_attr(c->syspath, "subsysnqn", c->subsysnqn,
			  sizeof(c->subsysnqn));
	if (!c->cntrltype[0])
		read_attr(c->syspath, "cntrltype", c->cntrltype,
			  sizeof(c->cntrltype));
	read_attr(c->syspath, "firmware_rev", c->firmware, sizeof(c->firmware));
	return true;
}

static int add_ctrl(struct scan *sc, const char *sysname,
		    const char *syspath, const char *top, uint64_t ino)
{
	struct vwc_topo *t = sc->t;
	char pci[VWC_PATH_LEN];
	struct vwc_ctrl *c;

	/* a scoped scan: another subsystem's, only remembered; one not
	 * identified yet (no subsystem NQN) neither: vwc_topo_new_peer()
	 * reads it again */
	if (sc->scope) {
		int in = vwc_scope_ctrl(sc->scope, syspath);

		if (in <= 0)
			return in < 0 ? 0 : add_other(t, sysname);
	}

	if (t->nr_ctrls >= sc->cap)
		return -ENOMEM;	/* more than listed: never */
	c = &t->ctrls[t->nr_ctrls++];
	memset(c, 0, sizeof(*c));
	c->held_fd = -1;
	c->facts.present = VWC_TRI_UNKNOWN;
	c->facts.wce = VWC_TRI_UNKNOWN;
	c->facts.backup_failed = VWC_TRI_UNKNOWN;
	snprintf(c->name, sizeof(c->name), "%s", sysname);
	snprintf(c->syspath, sizeof(c->syspath), "%s", syspath);
	c->ino = ino;
	/* devtmpfs names a controller's node after it: /dev/nvmeN */
	snprintf(c->devnode, sizeof(c->devnode), "/dev/%s", sysname);
	if (carry_ctrl(sc, c))
		return 0;
	read_attr(syspath, "model", c->model, sizeof(c->model));
	read_attr(syspath, "serial", c->serial, sizeof(c->serial));
	read_attr(syspath, "firmware_rev", c->firmware, sizeof(c->firmware));
	read_attr(syspath, "transport", c->transport, sizeof(c->transport));
	read_attr(syspath, "subsysnqn", c->subsysnqn, sizeof(c->subsysnqn));
	read_attr(syspath, "cntrltype", c->cntrltype, sizeof(c->cntrltype));

	if (pci_parent(syspath, top, pci, sizeof(pci))) {
		char v[16], d[16];

		read_attr(pci, "modalias", c->modalias, sizeof(c->modalias));
		read_attr(pci, "vendor", v, sizeof(v));
		read_attr(pci, "device", d, sizeof(d));
		if (v[0] && d[0]) {
			c->pci_vendor = (uint16_t)strtoul(v, NULL, 16);
			c->pci_device = (uint16_t)strtoul(d, NULL, 16);
			snprintf(c->pci_id, sizeof(c->pci_id), "%04x:%04x",
				 c->pci_vendor, c->pci_device);
		}
	}
	return 0;
}

static int cmp_ctrl_name(const void *key, const void *b);

int vwc_topo_find_ctrl(const struct vwc_topo *t, const char *name)
{
	const struct vwc_ctrl *c;
	int i;

	/* each event looks a controller up: at array scale, hundreds */
	if (t->sorted) {
		c = t->nr_ctrls ? bsearch(name, t->ctrls, t->nr_ctrls,
					  sizeof(*t->ctrls), cmp_ctrl_name) :
				  NULL;
		return c ? (int)(c - t->ctrls) : -1;
	}
	for (i = 0; i < t->nr_ctrls; i++)
		if (!strcmp(t->ctrls[i].name, name))
			return i;
	return -1;
}

static int cmp_ns_name(const void *key, const void *b)
{
	return strverscmp(key, ((const struct vwc_ns *)b)->name);
}

int vwc_topo_find_ns(const struct vwc_topo *t, const char *name)
{
	const struct vwc_ns *ns;
	int i;

	/* a scan sorts them by name (scan()); one made otherwise is walked
	 * (a name not there, as a namespace's not scanned yet, is not) */
	if (t->nr_ns) {
		ns = bsearch(name, t->ns, t->nr_ns, sizeof(*t->ns), cmp_ns_name);
		if (ns)
			return (int)(ns - t->ns);
	}
	if (t->sorted)
		return -1;
	for (i = 0; i < t->nr_ns; i++)
		if (!strcmp(t->ns[i].name, name))
			return i;
	return -1;
}

/*
 * @s appended to the array of char[@width] at *@arr_p (@nr of them): a
 * passed-over controller's name.
 */
static int push_str(void *arr_p, int *nr, size_t width, const char *s)
{
	char **arr = arr_p, *p;

	p = realloc(*arr, (size_t)(*nr + 1) * width);
	if (!p)
		return -ENOMEM;
	*arr = p;
	snprintf(p + (size_t)(*nr)++ * width, width, "%s", s);
	return 0;
}

/* A controller of another subsystem, there at the scan */
static int add_other(struct vwc_topo *t, const char *name)
{
	return push_str(&t->others, &t->nr_others, VWC_NAME_LEN, name);
}

/* The namespace @name of the scan, made if new. */
static struct vwc_ns *get_ns(struct scan *sc, const char *name)
{
	struct vwc_topo *t = sc->t;
	unsigned int hole = 0;
	struct vwc_ns *ns;
	int i;

	if (sc->ns_ix.slot)
		i = vwc_name_index_find(&sc->ns_ix, name, &hole);
	else
		i = vwc_topo_find_ns(t, name);
	if (i >= 0)
		return &t->ns[i];
	if (t->nr_ns >= sc->cap) {
		/* room was made for the heads listed: a path whose head is
		 * not (being removed, or made meanwhile) needs more */
		void *arr = realloc(t->ns, 2 * (size_t)sc->cap * sizeof(*t->ns));

		if (!arr)
			return NULL;
		t->ns = arr;
		vwc_name_index_rebase(&sc->ns_ix, arr);
		sc->cap *= 2;
	}
	ns = &t->ns[t->nr_ns++];
	memset(ns, 0, sizeof(*ns));
	ns->no_vwc = VWC_TRI_UNKNOWN;
	/* cut as snprintf() would, without it: a name for each of
	 * thousands of namespaces at every scan */
	memcpy(ns->name, name, strnlen(name, sizeof(ns->name) - 1));
	if (sc->ns_ix.slot)
		vwc_name_index_put(&sc->ns_ix, hole, t->nr_ns - 1);
	return ns;
}

/*
 * The room of a namespace's arrays of controllers and paths: 2 at the
 * first, doubled each time it is full, implied by the count (a count
 * that falls keeps its room, and grows it again at the next power of
 * two): at fabrics scale every namespace has two of each, and one
 * allocation each, not two, at every scan. Return: the room to make
 * before the entry at @nr, 0 if there is room already.
 */
static size_t room_for(int nr)
{
	if (!nr)
		return 2;
	return nr >= 2 && !(nr & (nr - 1)) ? 2 * (size_t)nr : 0;
}

/* No limit on paths: what the host has, the decision sees. */
int vwc_ns_add_ctrl(struct vwc_ns *ns, int c)
{
	size_t room = room_for(ns->nr_ctrl);
	int *arr = ns->ctrl;

	if (c < 0 || vwc_ns_has_ctrl(ns, c))
		return 0;
	if (room && !(arr = realloc(arr, room * sizeof(*arr))))
		return -ENOMEM;
	ns->ctrl = arr;
	ns->ctrl[ns->nr_ctrl++] = c;
	return 0;
}

/* @syspath: the class entry's, kept with the topology (scan_class()) */
static int ns_add_path(struct vwc_ns *ns, const char *syspath)
{
	size_t room = room_for(ns->nr_paths);
	const char **arr = ns->path_syspath;

	if (room && !(arr = realloc(arr, room * sizeof(*arr))))
		return -ENOMEM;
	ns->path_syspath = arr;
	ns->path_syspath[ns->nr_paths++] = syspath;
	return 0;
}

static void ns_free(struct vwc_ns *ns)
{
	free(ns->ctrl);
	free(ns->path_syspath);	/* the strings are the class entries' */
	ns->ctrl = NULL;
	ns->path_syspath = NULL;
	ns->nr_ctrl = ns->nr_paths = 0;
}

/*
 * A namespace or path node lives in its controller's sysfs directory
 * (.../nvme/nvme0/nvme0n1, .../nvme/nvme1/nvme0c1n1); a multipath head
 * lives under its subsystem (.../nvme-subsystem/nvme-subsys0/nvme0n1).
 */
static int cmp_ctrl_name(const void *key, const void *b)
{
	return strverscmp(key, ((const struct vwc_ctrl *)b)->name);
}

/*
 * The controllers' indices by instance number (nvme<N>), once they are
 * final: parent_ctrl() looks one up for each of thousands of block
 * devices, where a bisection by name was a dozen strverscmp() each. No
 * memory, a name of another form or an instance past what the kernel
 * hands out: none (bisected).
 */
static void index_ctrls(struct scan *sc)
{
	const struct vwc_topo *t = sc->t;
	unsigned int a, c, max = 0;
	uint64_t key;
	int i;

	/* every name the kernel's (nvme<N>, no leading zero: one name a
	 * number) and a number of the ida's size, else none */
	for (i = 0; i < t->nr_ctrls; i++) {
		if (!vwc_name_order_key(t->ctrls[i].name, false, &key) ||
		    key >> 32 >= 1u << 16)
			return;
		if (key >> 32 > max)
			max = (unsigned int)(key >> 32);
	}
	sc->by_inst = malloc((size_t)(max + 1) * sizeof(*sc->by_inst));
	if (!sc->by_inst)
		return;
	sc->nr_inst = max + 1;
	for (a = 0; a <= max; a++)
		sc->by_inst[a] = -1;
	for (i = 0; i < t->nr_ctrls; i++)
		if (vwc_name_numbers(t->ctrls[i].name, &a, &c))
			sc->by_inst[a] = i;
}

static int parent_ctrl(const struct scan *sc, const char *syspath)
{
	const struct vwc_topo *t = sc->t;
	const char *end = strrchr(syspath, '/'), *start;
	char name[VWC_NAME_LEN];
	struct vwc_ctrl *c;
	unsigned int a, ci;
	int i;

	if (!end)
		return -1;
	for (start = end; start > syspath && start[-1] != '/'; start--)
		;
	if ((size_t)(end - start) >= sizeof(name))
		return -1;	/* longer than any controller's name */
	memcpy(name, start, end - start);
	name[end - start] = '\0';
	if (!t->nr_ctrls)
		return -1;
	if (sc->by_inst) {
		/* the number looked up, the name compared once */
		if (!vwc_name_numbers(name, &a, &ci) || ci != UINT_MAX ||
		    a >= sc->nr_inst)
			return -1;
		i = sc->by_inst[a];
		return i >= 0 && !strcmp(t->ctrls[i].name, name) ? i : -1;
	}
	/* the controllers are sorted by name (vwc_topo_scan_sysfs()) */
	c = bsearch(name, t->ctrls, t->nr_ctrls, sizeof(*t->ctrls),
		    cmp_ctrl_name);
	return c ? (int)(c - t->ctrls) : -1;
}

/*
 * @prev's namespaces by name (index + 1, open addressing), for
 * carry_nsid(): one hash each, where a bisection was a dozen
 * strverscmp() for each of thousands of heads. No memory: bisected.
 */
static void index_prev_ns(struct scan *sc)
{
	const struct vwc_topo *p = sc->prev;

	if (p && p->sorted && p->nr_ns > 0 &&
	    !vwc_name_index_init(&sc->prev_ix, p->nr_ns, p->ns, sizeof(*p->ns),
				 offsetof(struct vwc_ns, name)))
		vwc_name_index_all(&sc->prev_ix, p->nr_ns);
}

static int prev_ns(const struct scan *sc, const char *name)
{
	if (!sc->prev_ix.slot)
		return vwc_topo_find_ns(sc->prev, name);
	return vwc_name_index_find(&sc->prev_ix, name, NULL);
}

/* the same namespace object as the last scan's: the same namespace ID */
static void carry_nsid(const struct scan *sc, struct vwc_ns *ns)
{
	int i;

	if (!sc->prev || !sc->prev->sorted || !ns->ino)
		return;
	i = prev_ns(sc, ns->name);
	if (i >= 0 && sc->prev->ns[i].ino == ns->ino)
		ns->nsid = sc->prev->ns[i].nsid;
}

static int add_disk(struct scan *sc, const char *sysname,
		    const char *syspath, const char *top, uint64_t ino)
{
	char ns_name[VWC_NAME_LEN];
	enum vwc_kind kind;
	struct vwc_ns *ns;

	(void)top;
	kind = vwc_name_classify(sysname, ns_name, sizeof(ns_name));
	ns = get_ns(sc, ns_name);
	if (!ns)
		return -ENOMEM;
	if (kind == VWC_KIND_PATH) {
		if (ns_add_path(ns, syspath))
			return -ENOMEM;
	} else {
		ns->syspath = syspath;	/* the entry's: scan_class() keeps it */
		ns->ino = ino;
		carry_nsid(sc, ns);
	}
	/* a multipath head has no controller parent: its paths do */
	return vwc_ns_add_ctrl(ns, parent_ctrl(sc, syspath));
}

/*
 * Room in the scan's array for the @n entries listed (of which @heads
 * name a namespace or a multipath head, not a path: what the namespaces'
 * array holds, paths being kept in their head's entry), and their hash.
 * An entry is a page or more (its sysfs path's room): room for every path
 * as well would be pages touched, and faulted in at each of the sidecar's
 * scans, for nothing.
 */
static int scan_reserve(struct scan *sc, bool ctrls, int n, int heads)
{
	struct vwc_topo *t = sc->t;
	void *arr;

	if (ctrls) {
		arr = realloc(t->ctrls, n * sizeof(*t->ctrls));
		if (!arr)
			return -ENOMEM;
		t->ctrls = arr;
		sc->cap = n;
		return 0;
	}
	if (heads < 1)
		heads = 1;
	arr = realloc(t->ns, heads * sizeof(*t->ns));
	if (!arr)
		return -ENOMEM;
	t->ns = arr;
	sc->cap = heads;
	/* without it, found by a walk: slower, the same answer */
	vwc_name_index_init(&sc->ns_ix, n, t->ns, sizeof(*t->ns),
			    offsetof(struct vwc_ns, name));
	return 0;
}

/* a scoped scan's filter of class/block (vwc_classdir_read()) */
static bool in_scope(void *arg, const char *name, enum vwc_kind kind)
{
	return vwc_scope_name(arg, name, kind);
}

/*
 * The entries of <sysfs>/class/<class> that name a controller (@ctrls) or
 * a namespace or multipath path (!@ctrls), each as its real path, handed
 * to @add sorted by that path (the order libudev's enumerator gives); kept
 * in the result for the next scan (vwc_topo_rescan_sysfs()); *@sig, the
 * class directory's signature as read (vwc_classdir_read()).
 */
static int scan_class(struct scan *sc, const char *sysfs, const char *class,
		      bool ctrls,
		      int (*add)(struct scan *, const char *, const char *,
				 const char *, uint64_t), uint64_t *sig)
{
	char dir[VWC_PATH_LEN], top[VWC_PATH_LEN];
	int i, n = 0, heads = 0, r, k = ctrls ? 0 : 1;
	struct vwc_topo_link *e = NULL;

	snprintf(dir, sizeof(dir), "%s/class/%s", sysfs, class);
	snprintf(top, sizeof(top), "%s/devices", sysfs);
	/* a controller's link is read at every scan (a few hundred at most):
	 * carry_ctrl() keeps what it keeps only for the same path too */
	r = vwc_classdir_read(dir, ctrls, sc->scope && !ctrls ? in_scope : NULL,
			      (void *)sc->scope,
			      sc->prev && !ctrls ? sc->prev->links[k] : NULL,
			      sc->prev && !ctrls ? sc->prev->nr_links[k] : 0,
			      &e, &n, &heads, sig);
	if (!r && n)
		r = scan_reserve(sc, ctrls, n, heads);
	for (i = 0; !r && i < n; i++)
		r = add(sc, e[i].name, e[i].syspath, top, e[i].ino);
	if (r) {
		vwc_classdir_free(e, n);
		return r;
	}
	sc->t->links[k] = e;
	sc->t->nr_links[k] = n;
	return 0;
}

static int cmp_ctrl(const void *a, const void *b)
{
	return strverscmp(((const struct vwc_ctrl *)a)->name,
			  ((const struct vwc_ctrl *)b)->name);
}

static int cmp_ns(const void *a, const void *b)
{
	return strverscmp(((const struct vwc_ns *)a)->name,
			  ((const struct vwc_ns *)b)->name);
}

struct name_key {
	uint64_t key;
	int i;
};

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = ((const struct name_key *)a)->key;
	uint64_t y = ((const struct name_key *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * The @n entries of @size at @arr, each named at @off, in the order
 * strverscmp() gives their names (@cmp's), through numbers
 * (vwc_name_order_key()): no strverscmp(), and each entry moved once,
 * into a new array (thousands of namespaces of some 300 bytes, hundreds
 * of controllers of 10 KiB, at every one of the sidecar's scans: a
 * qsort() of them by name was a tenth of a scan under emulation). A name
 * of another form, or no memory: qsort() with @cmp, the same order.
 * Return: the array sorted (@arr, or the new one: @arr freed).
 */
static void *sort_named(void *arr, int n, size_t size, size_t off, bool ns,
			int (*cmp)(const void *, const void *))
{
	char *from = arr, *to = NULL;
	struct name_key *k;
	int i;

	if (n < 2)
		return arr;
	k = malloc((size_t)n * sizeof(*k));
	for (i = 0; k && i < n; i++) {
		if (!vwc_name_order_key(from + (size_t)i * size + off, ns,
					&k[i].key))
			break;
		k[i].i = i;
	}
	if (k && i == n) {
		qsort(k, n, sizeof(*k), cmp_key);
		for (i = 0; i < n && k[i].i == i; i++)
			;
		if (i == n) {		/* in order already */
			free(k);
			return arr;
		}
		to = malloc((size_t)n * size);
	}
	if (!to) {
		free(k);
		qsort(from, n, size, cmp);
		return arr;
	}
	for (i = 0; i < n; i++)
		memcpy(to + (size_t)i * size, from + (size_t)k[i].i * size,
		       size);
	free(k);
	free(from);
	return to;
}

/* the two class directories' signatures as one (vwc_topo_names_sig()) */
static uint64_t names_sig(uint64_t nvme, uint64_t block)
{
	return nvme * 31 + block;
}

static int scan(const char *sysfs, struct vwc_topo *t,
		struct vwc_scope *scope, const struct vwc_topo *prev)
{
	struct scan sc = { .t = t, .scope = scope, .prev = prev };
	uint64_t sig_nvme, sig_block;
	void *arr;
	int r, i;

	/* what another tree's scan saw says nothing of this one's */
	if (prev && strcmp(prev->sysfs, sysfs))
		sc.prev = NULL;
	memset(t, 0, sizeof(*t));
	snprintf(t->sysfs, sizeof(t->sysfs), "%s", sysfs);
	r = scan_class(&sc, sysfs, "nvme", true, add_ctrl, &sig_nvme);
	if (r)
		goto fail;
	/* controller indices are final from here on */
	t->ctrls = sort_named(t->ctrls, t->nr_ctrls, sizeof(*t->ctrls),
			      offsetof(struct vwc_ctrl, name), false, cmp_ctrl);
	if (scope)
		vwc_scope_numbers(scope, t);
	index_ctrls(&sc);
	index_prev_ns(&sc);
	sc.cap = 0;
	r = scan_class(&sc, sysfs, "block", false, add_disk, &sig_block);
	vwc_name_index_free(&sc.ns_ix);
	free(sc.by_inst);
	vwc_name_index_free(&sc.prev_ix);
	if (r)
		goto fail;
	/* of what this scan read: one that came after is not in it */
	t->names_sig = names_sig(sig_nvme, sig_block);
	/* drop path nodes whose head is gone (being removed), and in a
	 * scoped scan what turned out not to be in scope */
	for (i = 0; i < t->nr_ns; i++) {
		if (!t->ns[i].syspath ||
		    (scope && !vwc_scope_keeps(scope, t, &t->ns[i]))) {
			ns_free(&t->ns[i]);
			/* the last entry moves into the hole, its slot is cleared */
			t->ns[i] = t->ns[--t->nr_ns];
			memset(&t->ns[t->nr_ns], 0, sizeof(*t->ns));
			i--;
		}
	}
	if (t->nr_ns) {
		/* room was made for the heads listed, more if paths came
		 * without theirs: what is left over given back */
		arr = realloc(t->ns, t->nr_ns * sizeof(*t->ns));
		if (arr)
			t->ns = arr;
		t->ns = sort_named(t->ns, t->nr_ns, sizeof(*t->ns),
				   offsetof(struct vwc_ns, name), true, cmp_ns);
	}
	t->sorted = true;
	/* no active namespace list read yet: a peer may reach any */
	vwc_topo_link_reach(t);
	for (i = 0; i < t->nr_ctrls; i++)
		t->ctrls[i].discovery = vwc_ctrl_is_discovery(t, i);
	return 0;
fail:
	vwc_topo_free(t);
	return r;
}

uint64_t vwc_topo_names_sig(const char *sysfs)
{
	char dir[VWC_PATH_LEN];
	uint64_t sig;

	snprintf(dir, sizeof(dir), "%s/class/nvme", sysfs);
	sig = vwc_classdir_sig(dir);	/* read first, as a scan reads it */
	snprintf(dir, sizeof(dir), "%s/class/block", sysfs);
	return names_sig(sig, vwc_classdir_sig(dir));
}

int vwc_topo_scan_sysfs(const char *sysfs, struct vwc_topo *t)
{
	return scan(sysfs, t, NULL, NULL);
}

int vwc_topo_rescan_sysfs(const char *sysfs, const struct vwc_topo *prev,
			  struct vwc_topo *t)
{
	return scan(sysfs, t, NULL, prev);
}

int vwc_topo_scan_nqns(const char *sysfs, struct vwc_topo *t,
		       const char *const *nqns, int nr)
{
	struct vwc_scope *sc = vwc_scope_new(nqns, nr);
	int r;

	if (!sc)
		return -ENOMEM;
	r = scan(sysfs, t, sc, NULL);
	free(sc);
	return r;
}

int vwc_topo_scan(struct udev *udev, struct vwc_topo *t)
{
	(void)udev;
	return vwc_topo_scan_sysfs("/sys", t);
}

void vwc_topo_free(struct vwc_topo *t)
{
	int i, k;

	for (k = 0; k < 2; k++)
		vwc_classdir_free(t->links[k], t->nr_links[k]);
	for (i = 0; i < t->nr_ns; i++)
		ns_free(&t->ns[i]);
	for (i = 0; i < t->nr_ctrls; i++)
		free(t->ctrls[i].nsids);
	free(t->ctrls);
	free(t->ns);
	free(t->others);
	memset(t, 0, sizeof(*t));
}
