// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device discovery (sysfs) and name resolution (libudev).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <libudev.h>

#include "log.h"
#include "topo.h"

/* Parse "<prefix><num>" at *p, advancing it. */
static bool parse_num(const char **p, unsigned int *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 1000000)
			return false;
		s++;
	}
	*out = (unsigned int)v;
	*p = s;
	return true;
}

/*
 * "nvme<inst>" or "nvme<inst>n<nsid>" into @dst of @len, cut as snprintf()
 * would: without snprintf(), which cost a scan of class/block more than
 * the rest of its work on every entry.
 */
static void put_name(char *dst, size_t len, unsigned int inst, bool ns,
		     unsigned int nsid)
{
	char buf[32], digits[12];
	size_t n = 4, k;
	int pass;

	memcpy(buf, "nvme", 4);
	for (pass = 0; pass < (ns ? 2 : 1); pass++) {
		unsigned int v = pass ? nsid : inst;

		if (pass)
			buf[n++] = 'n';
		k = 0;
		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (k)
			buf[n++] = digits[--k];
	}
	if (!len)
		return;
	if (n > len - 1)
		n = len - 1;
	memcpy(dst, buf, n);
	dst[n] = '\0';
}

enum vwc_kind vwc_name_classify(const char *name, char *ns_name, size_t len)
{
	unsigned int inst, cntlid, nsid, part;
	const char *p = name;
	bool generic = false;

	if (!strncmp(p, "nvme", 4)) {
		p += 4;
	} else if (!strncmp(p, "ng", 2)) {
		p += 2;
		generic = true;
	} else {
		return VWC_KIND_NONE;
	}
	if (!parse_num(&p, &inst))
		return VWC_KIND_NONE;
	if (!*p) {
		if (generic)
			return VWC_KIND_NONE;
		put_name(ns_name, len, inst, false, 0);
		return VWC_KIND_CTRL;
	}
	if (*p == 'c' && !generic) {
		p++;
		if (!parse_num(&p, &cntlid) || *p != 'n')
			return VWC_KIND_NONE;
		p++;
		if (!parse_num(&p, &nsid) || *p)
			return VWC_KIND_NONE;
		put_name(ns_name, len, inst, true, nsid);
		return VWC_KIND_PATH;
	}
	if (*p != 'n')
		return VWC_KIND_NONE;
	p++;
	if (!parse_num(&p, &nsid))
		return VWC_KIND_NONE;
	put_name(ns_name, len, inst, true, nsid);
	if (!*p)
		return generic ? VWC_KIND_GENERIC : VWC_KIND_NS;
	if (*p == 'p' && !generic) {
		p++;
		if (parse_num(&p, &part) && !*p)
			return VWC_KIND_PARTITION;
	}
	return VWC_KIND_NONE;
}

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
	ssize_t n;
	int fd;

	dst[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, dst, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	dst[n] = '\0';
	while (n && isspace((unsigned char)dst[n - 1]))
		dst[--n] = '\0';
}

/*
 * Resolve "." and ".." in the absolute path @p lexically, in place: sysfs
 * class links are relative (../../devices/pci0000:00/...) and the class
 * directories they start from are not symlinks.
 */
static void normalize_path(char *p)
{
	char *src = p, *dst = p;

	while (*src) {
		while (*src == '/')
			src++;
		if (!*src)
			break;
		if (src[0] == '.' && (src[1] == '/' || !src[1])) {
			src += 1;
			continue;
		}
		if (src[0] == '.' && src[1] == '.' &&
		    (src[2] == '/' || !src[2])) {
			src += 2;
			while (dst > p && *--dst != '/')
				;
			continue;
		}
		*dst++ = '/';
		while (*src && *src != '/')
			*dst++ = *src++;
	}
	if (dst == p)
		*dst++ = '/';
	*dst = '\0';
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
 * One scan of sysfs. The arrays grow to what the class directory listed,
 * once (a controller is some 10 KiB, a namespace 4 KiB: grown one at a
 * time they were copied or remapped at every addition), and namespaces
 * are found by name through a hash of their indices, not a walk of all
 * of them for every disk and path node (O(n^2) at a thousand namespaces).
 */
struct scan {
	struct vwc_topo *t;
	int cap;		/* room in t->ctrls or t->ns, by phase */
	int *slot;		/* namespace index + 1 by name hash; NULL: walk */
	unsigned int mask;	/* slots - 1 (a power of two) */
};

static unsigned int name_hash(const char *s)
{
	unsigned int h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int add_ctrl(struct scan *sc, const char *sysname,
		    const char *syspath, const char *top)
{
	struct vwc_topo *t = sc->t;
	char pci[VWC_PATH_LEN];
	struct vwc_ctrl *c;

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
	/* devtmpfs names a controller's node after it: /dev/nvmeN */
	snprintf(c->devnode, sizeof(c->devnode), "/dev/%s", sysname);
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

int vwc_topo_find_ctrl(const struct vwc_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_ctrls; i++)
		if (!strcmp(t->ctrls[i].name, name))
			return i;
	return -1;
}

int vwc_topo_find_ns(const struct vwc_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_ns; i++)
		if (!strcmp(t->ns[i].name, name))
			return i;
	return -1;
}

bool vwc_ns_has_ctrl(const struct vwc_ns *ns, int c)
{
	int i;

	for (i = 0; i < ns->nr_ctrl; i++)
		if (ns->ctrl[i] == c)
			return true;
	return false;
}

/* The NQN every discovery controller reports: no namespaces, no peers */
#define DISCOVERY_NQN	"nqn.2014-08.org.nvmexpress.discovery"

bool vwc_ctrl_peers(const struct vwc_ctrl *a, const struct vwc_ctrl *b)
{
	return a != b && a->subsysnqn[0] &&
	       strcmp(a->subsysnqn, DISCOVERY_NQN) &&
	       !strcmp(a->subsysnqn, b->subsysnqn);
}

bool vwc_ctrl_is_discovery(const struct vwc_topo *t, int c)
{
	const struct vwc_ctrl *ctrl = &t->ctrls[c];
	int i;

	if (strcmp(ctrl->subsysnqn, DISCOVERY_NQN) &&
	    strcmp(ctrl->cntrltype, "discovery"))
		return false;
	for (i = 0; i < t->nr_ns; i++)
		if (vwc_ns_has_ctrl(&t->ns[i], c))
			return false;
	return true;
}

bool vwc_topo_has_peers(const struct vwc_topo *t, int c)
{
	int i;

	for (i = 0; i < t->nr_ctrls; i++)
		if (vwc_ctrl_peers(&t->ctrls[c], &t->ctrls[i]))
			return true;
	return false;
}

static bool ctrl_names(const struct vwc_ctrl *c, uint32_t nsid)
{
	int lo = 0, hi = c->nr_nsids - 1;

	if (!c->nsids_known)
		return true;	/* not known: it may reach any */
	while (lo <= hi) {	/* the list is in increasing order */
		int mid = lo + (hi - lo) / 2;

		if (c->nsids[mid] == nsid)
			return true;
		if (c->nsids[mid] < nsid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

static uint32_t read_nsid(const char *syspath)
{
	char buf[16];
	unsigned long v;
	char *end;

	read_attr(syspath, "nsid", buf, sizeof(buf));
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || *end || !v || v >= 0xffffffffUL)
		return 0;
	return (uint32_t)v;
}

uint32_t vwc_ns_read_nsid(const struct vwc_ns *ns)
{
	return read_nsid(ns->syspath);
}

static int ns_add_ctrl(struct vwc_ns *ns, int c);

/* Peers of a controller: the others of its subsystem (vwc_ctrl_peers()). */
struct peers {
	int *first;	/* by controller: the lowest index of its subsystem */
	int *next;	/* by controller: the next higher one, -1 after the last */
};

static int cmp_by_nqn(const void *a, const void *b, void *arg)
{
	const struct vwc_topo *t = arg;
	int i = *(const int *)a, j = *(const int *)b;
	int r = strcmp(t->ctrls[i].subsysnqn, t->ctrls[j].subsysnqn);

	return r ? r : i - j;
}

/*
 * The subsystems' controllers as lists in index order, from one sort by
 * NQN: O(C log C) instead of comparing every pair. A controller with no
 * peer (no NQN, the discovery NQN, alone) is a list of one. Return: 0, or
 * -ENOMEM (the caller walks every controller instead).
 */
static int peers_make(const struct vwc_topo *t, struct peers *p)
{
	int *order, i, k;

	p->first = malloc((t->nr_ctrls + 1) * sizeof(*p->first));
	p->next = malloc((t->nr_ctrls + 1) * sizeof(*p->next));
	order = malloc((t->nr_ctrls + 1) * sizeof(*order));
	if (!p->first || !p->next || !order) {
		free(p->first);
		free(p->next);
		free(order);
		p->first = p->next = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_ctrls; i++)
		order[i] = i;
	if (t->nr_ctrls)
		qsort_r(order, t->nr_ctrls, sizeof(*order), cmp_by_nqn,
			(void *)t);
	for (k = 0; k < t->nr_ctrls; k++) {
		i = order[k];
		p->next[i] = -1;
		if (k && vwc_ctrl_peers(&t->ctrls[i], &t->ctrls[order[k - 1]])) {
			p->first[i] = p->first[order[k - 1]];
			p->next[order[k - 1]] = i;
		} else {
			p->first[i] = i;
		}
	}
	free(order);
	return 0;
}

static void peers_free(struct peers *p)
{
	free(p->first);
	free(p->next);
}

void vwc_topo_link_reach(struct vwc_topo *t)
{
	struct peers p;
	bool walk = peers_make(t, &p) < 0;
	int i, j;

	for (i = 0; i < t->nr_ns; i++) {
		struct vwc_ns *ns = &t->ns[i];
		const struct vwc_ctrl *first;

		/* made again from the controllers with a node of it */
		ns->nr_ctrl -= ns->nr_joining;
		ns->nr_joining = 0;
		if (!ns->nr_ctrl)
			continue;	/* no controller: write back anyway */
		first = &t->ctrls[ns->ctrl[0]];
		/* its subsystem's controllers in index order, or all */
		for (j = walk ? 0 : p.first[ns->ctrl[0]];
		     j >= 0 && j < t->nr_ctrls; j = walk ? j + 1 : p.next[j]) {
			if (vwc_ns_has_ctrl(ns, j) ||
			    !vwc_ctrl_peers(first, &t->ctrls[j]))
				continue;
			if (!ns->nsid)
				ns->nsid = read_nsid(ns->syspath);
			/* an id that cannot be read: any peer may reach it */
			if (ns->nsid && !ctrl_names(&t->ctrls[j], ns->nsid))
				continue;
			if (!ns_add_ctrl(ns, j)) {
				ns->nr_joining++;
				continue;
			}
			/* no memory to count it: no controller known, which
			 * the policy takes as write back */
			ns->nr_ctrl = ns->nr_joining = 0;
			break;
		}
	}
	if (!walk)
		peers_free(&p);
}

bool vwc_topo_new_peer(const struct vwc_topo *t, const struct vwc_ns *ns)
{
	char dir[VWC_PATH_LEN], nqn[sizeof(t->ctrls->subsysnqn)];
	const struct vwc_ctrl *first;
	char ctrl_dir[VWC_PATH_LEN + VWC_NAME_LEN];
	bool found = false;
	struct dirent *de;
	DIR *d;

	if (!ns->nr_ctrl)
		return true;
	first = &t->ctrls[ns->ctrl[0]];
	if (!first->subsysnqn[0] || !strcmp(first->subsysnqn, DISCOVERY_NQN))
		return false;	/* in no subsystem: nobody can join it */
	snprintf(dir, sizeof(dir), "%s/class/nvme", t->sysfs[0] ? t->sysfs : "/sys");
	d = opendir(dir);
	if (!d)
		return true;
	while (!found && (de = readdir(d))) {
		char ns_name[VWC_NAME_LEN];

		if (vwc_name_classify(de->d_name, ns_name, sizeof(ns_name)) !=
			    VWC_KIND_CTRL ||
		    vwc_topo_find_ctrl(t, de->d_name) >= 0)
			continue;
		snprintf(ctrl_dir, sizeof(ctrl_dir), "%s/%.31s", dir, de->d_name);
		read_attr(ctrl_dir, "subsysnqn", nqn, sizeof(nqn));
		found = !strcmp(nqn, first->subsysnqn);
	}
	closedir(d);
	return found;
}

/* The namespace @name of the scan, made if new. */
static struct vwc_ns *get_ns(struct scan *sc, const char *name)
{
	struct vwc_topo *t = sc->t;
	unsigned int h = 0;
	struct vwc_ns *ns;
	int i;

	if (sc->slot) {
		for (h = name_hash(name) & sc->mask; sc->slot[h];
		     h = (h + 1) & sc->mask)
			if (!strcmp(t->ns[sc->slot[h] - 1].name, name))
				return &t->ns[sc->slot[h] - 1];
	} else {
		i = vwc_topo_find_ns(t, name);
		if (i >= 0)
			return &t->ns[i];
	}
	if (t->nr_ns >= sc->cap)
		return NULL;	/* more than listed: never */
	ns = &t->ns[t->nr_ns++];
	memset(ns, 0, sizeof(*ns));
	ns->no_vwc = VWC_TRI_UNKNOWN;
	snprintf(ns->name, sizeof(ns->name), "%s", name);
	if (sc->slot)
		sc->slot[h] = t->nr_ns;
	return ns;
}

/* No limit on paths: what the host has, the decision sees. */
static int ns_add_ctrl(struct vwc_ns *ns, int c)
{
	int *arr;

	if (c < 0 || vwc_ns_has_ctrl(ns, c))
		return 0;
	arr = realloc(ns->ctrl, (ns->nr_ctrl + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	ns->ctrl = arr;
	ns->ctrl[ns->nr_ctrl++] = c;
	return 0;
}

static int ns_add_path(struct vwc_ns *ns, const char *syspath)
{
	char (*arr)[VWC_PATH_LEN];

	arr = realloc(ns->path_syspath, (ns->nr_paths + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	ns->path_syspath = arr;
	snprintf(arr[ns->nr_paths++], VWC_PATH_LEN, "%s", syspath);
	return 0;
}

static void ns_free(struct vwc_ns *ns)
{
	free(ns->ctrl);
	free(ns->path_syspath);
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

static int parent_ctrl(const struct vwc_topo *t, const char *syspath)
{
	const char *end = strrchr(syspath, '/'), *start;
	char name[VWC_NAME_LEN];
	struct vwc_ctrl *c;

	if (!end)
		return -1;
	for (start = end; start > syspath && start[-1] != '/'; start--)
		;
	if ((size_t)(end - start) >= sizeof(name))
		return -1;	/* longer than any controller's name */
	memcpy(name, start, end - start);
	name[end - start] = '\0';
	/* the controllers are sorted by name (vwc_topo_scan_sysfs()) */
	if (!t->nr_ctrls)
		return -1;
	c = bsearch(name, t->ctrls, t->nr_ctrls, sizeof(*t->ctrls),
		    cmp_ctrl_name);
	return c ? (int)(c - t->ctrls) : -1;
}

static int add_disk(struct scan *sc, const char *sysname,
		    const char *syspath, const char *top)
{
	struct vwc_topo *t = sc->t;
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
		snprintf(ns->syspath, sizeof(ns->syspath), "%s", syspath);
	}
	/* a multipath head has no controller parent: its paths do */
	return ns_add_ctrl(ns, parent_ctrl(t, syspath));
}

struct class_entry {
	char name[VWC_NAME_LEN];
	char *syspath;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct class_entry *)a)->syspath,
		      ((const struct class_entry *)b)->syspath);
}

/* Room in the scan's array for the @n entries listed, and their hash. */
static int scan_reserve(struct scan *sc, bool ctrls, int n)
{
	struct vwc_topo *t = sc->t;
	unsigned int slots = 1;
	void *arr;

	if (ctrls) {
		arr = realloc(t->ctrls, n * sizeof(*t->ctrls));
		if (!arr)
			return -ENOMEM;
		t->ctrls = arr;
		sc->cap = n;
		return 0;
	}
	arr = realloc(t->ns, n * sizeof(*t->ns));
	if (!arr)
		return -ENOMEM;
	t->ns = arr;
	sc->cap = n;
	while (slots < 2 * (unsigned int)n)
		slots <<= 1;
	/* without it, found by a walk: slower, the same answer */
	sc->slot = calloc(slots, sizeof(*sc->slot));
	sc->mask = slots - 1;
	return 0;
}

/*
 * The entries of <sysfs>/class/<class> that name a controller (@ctrls) or
 * a namespace or multipath path (!@ctrls), each as its real path, handed
 * to @add sorted by that path (the order libudev's enumerator gives).
 */
static int scan_class(struct scan *sc, const char *sysfs, const char *class,
		      bool ctrls,
		      int (*add)(struct scan *, const char *, const char *,
				 const char *))
{
	char dir[VWC_PATH_LEN], top[VWC_PATH_LEN], ns_name[VWC_NAME_LEN];
	char link[VWC_PATH_LEN], path[VWC_PATH_LEN];
	struct class_entry *e = NULL, *tmp;
	int i, n = 0, cap = 0, r = 0;
	size_t dlen;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/%s", sysfs, class);
	snprintf(top, sizeof(top), "%s/devices", sysfs);
	dlen = strlen(dir);
	d = opendir(dir);
	if (!d)		/* no NVMe driver loaded: nothing to find */
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		enum vwc_kind kind = vwc_name_classify(de->d_name, ns_name,
							sizeof(ns_name));
		ssize_t len;

		/* partitions, ng nodes and anything else: not looked at */
		if (ctrls ? kind != VWC_KIND_CTRL :
			    kind != VWC_KIND_NS && kind != VWC_KIND_PATH)
			continue;
		if (strlen(de->d_name) >= VWC_NAME_LEN)
			continue;	/* not a name classify accepts */
		len = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;	/* vanished meanwhile */
		if ((size_t)len >= sizeof(link) - 1) {
			vwc_err("%s/%s: link target longer than %zu characters: not handled",
				dir, de->d_name, sizeof(link) - 2);
			continue;
		}
		link[len] = '\0';
		/* <dir>/<link>, or <link> if absolute (no snprintf() a link) */
		if (link[0] == '/') {
			memcpy(path, link, len + 1);
		} else if (dlen + 1 + (size_t)len < sizeof(path)) {
			memcpy(path, dir, dlen);
			path[dlen] = '/';
			memcpy(path + dlen + 1, link, len + 1);
		} else {
			vwc_err("%s/%s: sysfs path longer than %zu characters: not handled",
				dir, de->d_name, sizeof(path) - 1);
			continue;
		}
		normalize_path(path);
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			tmp = realloc(e, cap * sizeof(*e));
			if (!tmp) {
				r = -ENOMEM;
				break;
			}
			e = tmp;
		}
		e[n].syspath = strdup(path);
		if (!e[n].syspath) {
			r = -ENOMEM;
			break;
		}
		memcpy(e[n].name, de->d_name, strlen(de->d_name) + 1);
		n++;
	}
	closedir(d);
	if (!r && n) {
		qsort(e, n, sizeof(*e), cmp_entry);
		r = scan_reserve(sc, ctrls, n);
	}
	for (i = 0; !r && i < n; i++)
		r = add(sc, e[i].name, e[i].syspath, top);
	for (i = 0; i < n; i++)
		free(e[i].syspath);
	free(e);
	return r;
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

int vwc_topo_scan_sysfs(const char *sysfs, struct vwc_topo *t)
{
	struct scan sc = { .t = t };
	void *arr;
	int r, i;

	memset(t, 0, sizeof(*t));
	snprintf(t->sysfs, sizeof(t->sysfs), "%s", sysfs);
	r = scan_class(&sc, sysfs, "nvme", true, add_ctrl);
	if (r)
		goto fail;
	/* controller indices are final from here on */
	if (t->nr_ctrls)	/* qsort(NULL, 0) is undefined (UBSan) */
		qsort(t->ctrls, t->nr_ctrls, sizeof(*t->ctrls), cmp_ctrl);
	sc.cap = 0;
	r = scan_class(&sc, sysfs, "block", false, add_disk);
	free(sc.slot);
	if (r)
		goto fail;
	/* drop path nodes whose head is gone (being removed) */
	for (i = 0; i < t->nr_ns; i++) {
		if (!t->ns[i].syspath[0]) {
			ns_free(&t->ns[i]);
			/* the last entry moves into the hole, its slot is cleared */
			t->ns[i] = t->ns[--t->nr_ns];
			memset(&t->ns[t->nr_ns], 0, sizeof(*t->ns));
			i--;
		}
	}
	if (t->nr_ns) {
		/* room was made for every entry listed, paths too */
		arr = realloc(t->ns, t->nr_ns * sizeof(*t->ns));
		if (arr)
			t->ns = arr;
		qsort(t->ns, t->nr_ns, sizeof(*t->ns), cmp_ns);
	}
	/* no active namespace list read yet: a peer may reach any */
	vwc_topo_link_reach(t);
	for (i = 0; i < t->nr_ctrls; i++)
		t->ctrls[i].discovery = vwc_ctrl_is_discovery(t, i);
	return 0;
fail:
	vwc_topo_free(t);
	return r;
}

int vwc_topo_scan(struct udev *udev, struct vwc_topo *t)
{
	(void)udev;
	return vwc_topo_scan_sysfs("/sys", t);
}

void vwc_topo_free(struct vwc_topo *t)
{
	int i;

	for (i = 0; i < t->nr_ns; i++)
		ns_free(&t->ns[i]);
	for (i = 0; i < t->nr_ctrls; i++)
		free(t->ctrls[i].nsids);
	free(t->ctrls);
	free(t->ns);
	memset(t, 0, sizeof(*t));
}

static int resolve_name(struct udev *udev, const char *name,
			struct vwc_target *t, char *err, size_t errlen)
{
	char ns_name[VWC_NAME_LEN];
	struct udev_device *dev;
	const char *subsystem;

	switch (vwc_name_classify(name, ns_name, sizeof(ns_name))) {
	case VWC_KIND_CTRL:
		t->kind = VWC_KIND_CTRL;
		subsystem = "nvme";
		break;
	case VWC_KIND_NS:
	case VWC_KIND_GENERIC:
		t->kind = VWC_KIND_NS;
		subsystem = "block";
		break;
	case VWC_KIND_PARTITION:
		snprintf(err, errlen,
			 "is a partition; give its namespace %s", ns_name);
		return -EINVAL;
	case VWC_KIND_PATH:
		snprintf(err, errlen,
			 "is a hidden multipath path; give its namespace %s",
			 ns_name);
		return -EINVAL;
	default:
		snprintf(err, errlen, "not an NVMe device");
		return -ENODEV;
	}
	snprintf(t->name, sizeof(t->name), "%s", ns_name);
	dev = udev_device_new_from_subsystem_sysname(udev, subsystem, t->name);
	if (!dev) {
		snprintf(err, errlen, "no such NVMe %s",
			 t->kind == VWC_KIND_CTRL ? "controller" : "namespace");
		return -ENODEV;
	}
	udev_device_unref(dev);
	return 0;
}

int vwc_resolve(struct udev *udev, const char *arg, struct vwc_target *t,
		char *err, size_t errlen)
{
	struct udev_device *dev;
	const char *subsystem, *sysname;
	char ns_name[VWC_NAME_LEN], name[VWC_NAME_LEN];
	enum vwc_kind kind;
	struct stat st;
	bool ok;
	int r;

	memset(t, 0, sizeof(*t));
	if (!*arg) {
		snprintf(err, errlen, "empty device name");
		return -EINVAL;
	}
	if (!strchr(arg, '/'))
		return resolve_name(udev, arg, t, err, errlen);

	if (stat(arg, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return r;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "not a device node");
		return -ENODEV;
	}
	dev = udev_device_new_from_devnum(udev, S_ISCHR(st.st_mode) ? 'c' : 'b',
					  st.st_rdev);
	if (!dev) {
		snprintf(err, errlen, "not an NVMe device (no device %u:%u)",
			 major(st.st_rdev), minor(st.st_rdev));
		return -ENODEV;
	}
	subsystem = udev_device_get_subsystem(dev);
	sysname = udev_device_get_sysname(dev);
	kind = vwc_name_classify(sysname, ns_name, sizeof(ns_name));
	subsystem = subsystem ? subsystem : "";

	ok = (kind == VWC_KIND_CTRL && !strcmp(subsystem, "nvme")) ||
	     (kind == VWC_KIND_NS && !strcmp(subsystem, "block")) ||
	     (kind == VWC_KIND_PARTITION && !strcmp(subsystem, "block")) ||
	     (kind == VWC_KIND_GENERIC && !strcmp(subsystem, "nvme-generic"));
	if (!ok) {
		snprintf(err, errlen, "not an NVMe device (it is %s %s)",
			 subsystem[0] ? subsystem : "device", sysname);
		udev_device_unref(dev);
		return -ENODEV;
	}
	/* sysname belongs to dev */
	snprintf(name, sizeof(name), "%s", sysname);
	udev_device_unref(dev);
	return resolve_name(udev, name, t, err, errlen);
}
