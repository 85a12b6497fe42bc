// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device discovery (sysfs): the controllers and namespaces the host has,
 * or those of some NVM subsystems.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <libudev.h>

#include "devname.h"
#include "log.h"
#include "topo.h"

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

static int add_ctrl(struct vwc_topo *t, const char *sysname,
		    const char *syspath, const char *top)
{
	char pci[VWC_PATH_LEN];
	struct vwc_ctrl *c, *arr;

	arr = realloc(t->ctrls, (t->nr_ctrls + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	t->ctrls = arr;
	c = &arr[t->nr_ctrls++];
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

void vwc_topo_link_reach(struct vwc_topo *t)
{
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
		for (j = 0; j < t->nr_ctrls; j++) {
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
}

/*
 * @s appended to the array of char[@width] at *@arr_p (@nr of them): a
 * path node's syspath, a passed-over controller's name.
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

static bool is_other(const struct vwc_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_others; i++)
		if (!strcmp(t->others[i], name))
			return true;
	return false;
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
		    vwc_topo_find_ctrl(t, de->d_name) >= 0 ||
		    is_other(t, de->d_name))
			continue;
		snprintf(ctrl_dir, sizeof(ctrl_dir), "%s/%.31s", dir, de->d_name);
		read_attr(ctrl_dir, "subsysnqn", nqn, sizeof(nqn));
		found = !strcmp(nqn, first->subsysnqn);
	}
	closedir(d);
	return found;
}

static struct vwc_ns *get_ns(struct vwc_topo *t, const char *name)
{
	struct vwc_ns *arr;
	int i = vwc_topo_find_ns(t, name);

	if (i >= 0)
		return &t->ns[i];
	arr = realloc(t->ns, (t->nr_ns + 1) * sizeof(*arr));
	if (!arr)
		return NULL;
	t->ns = arr;
	memset(&arr[t->nr_ns], 0, sizeof(*arr));
	arr[t->nr_ns].no_vwc = VWC_TRI_UNKNOWN;
	snprintf(arr[t->nr_ns].name, sizeof(arr->name), "%s", name);
	return &arr[t->nr_ns++];
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
	return push_str(&ns->path_syspath, &ns->nr_paths, VWC_PATH_LEN, syspath);
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
static int parent_ctrl(const struct vwc_topo *t, const char *syspath)
{
	char buf[VWC_PATH_LEN], *slash;

	snprintf(buf, sizeof(buf), "%s", syspath);
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	slash = strrchr(buf, '/');
	return vwc_topo_find_ctrl(t, slash ? slash + 1 : buf);
}

static int add_disk(struct vwc_topo *t, const char *sysname,
		    const char *syspath, const char *top)
{
	char ns_name[VWC_NAME_LEN];
	enum vwc_kind kind;
	struct vwc_ns *ns;

	(void)top;
	kind = vwc_name_classify(sysname, ns_name, sizeof(ns_name));
	ns = get_ns(t, ns_name);
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

/*
 * A scoped scan: the controllers whose subsystem NQN is one of @nqns, and
 * only the block devices those can own (their names say which: a
 * namespace nvme<C>n<N> of controller instance C when multipath is off, a
 * multipath head nvme<S>n<N> of subsystem instance S, a path node
 * nvme<S>c<C>n<N>), so that one controller's sync reads what is its, not
 * every device of a host with thousands. @ctrl and @subsys are the
 * instance numbers found (bitmaps), @want the names the caller asked for.
 */
#define SCOPE_MAX	4096	/* instance numbers: ida-allocated, small */

struct scope {
	const char *const *nqns;
	int nr_nqns;
	unsigned char ctrl[SCOPE_MAX / 8], subsys[SCOPE_MAX / 8];
};

static void bit_set(unsigned char *map, unsigned int n)
{
	if (n < SCOPE_MAX)
		map[n / 8] |= (unsigned char)(1u << (n % 8));
}

static bool bit_test(const unsigned char *map, unsigned int n)
{
	return n < SCOPE_MAX && (map[n / 8] & (1u << (n % 8)));
}

/* A controller's syspath: its subsystem NQN is in scope */
static bool scope_ctrl(const struct scope *sc, const char *syspath)
{
	char nqn[VWC_NQN_LEN];
	int i;

	read_attr(syspath, "subsysnqn", nqn, sizeof(nqn));
	for (i = 0; nqn[0] && i < sc->nr_nqns; i++)
		if (!strcmp(nqn, sc->nqns[i]))
			return true;
	return false;
}

/* A block device's name may belong to a controller in scope */
static bool scope_name(const struct scope *sc, const char *name,
		       enum vwc_kind kind)
{
	unsigned int a, c;

	if (!vwc_name_numbers(name, &a, &c))
		return false;
	if (kind == VWC_KIND_PATH)
		return bit_test(sc->ctrl, c);
	return bit_test(sc->ctrl, a) || bit_test(sc->subsys, a);
}

/*
 * The instance numbers of the controllers in scope, and those of their
 * kernel subsystems, read from the path nodes in each controller's own
 * directory (nvme<S>c<C>n<N>).
 */
static void scope_numbers(struct scope *sc, const struct vwc_topo *t)
{
	unsigned int a, c;
	struct dirent *de;
	int i;

	for (i = 0; i < t->nr_ctrls; i++) {
		DIR *d;

		if (!vwc_name_numbers(t->ctrls[i].name, &a, &c))
			continue;
		bit_set(sc->ctrl, a);
		d = opendir(t->ctrls[i].syspath);
		if (!d)
			continue;
		while ((de = readdir(d)))
			if (vwc_name_numbers(de->d_name, &a, &c) && c != UINT_MAX)
				bit_set(sc->subsys, a);
		closedir(d);
	}
}

/*
 * After the scan: a namespace whose directory is a controller's belongs to
 * a controller in scope, or it was a name of another's (nvme<A>n<N> of a
 * subsystem instance A, where A is also a controller's instance number);
 * a head belongs to a subsystem instance in scope.
 */
static bool scope_keeps(const struct scope *sc, const struct vwc_topo *t,
			const struct vwc_ns *ns)
{
	const char *dir = ns->syspath, *slash;
	unsigned int a, c;
	char parent[VWC_NAME_LEN];
	size_t len;

	if (ns->nr_ctrl)
		return true;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return false;
	len = (size_t)(slash - dir);
	while (len && dir[len - 1] != '/')
		len--;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir - len),
		 dir + len);
	if (strncmp(parent, "nvme-subsys", 11))
		return vwc_topo_find_ctrl(t, parent) >= 0;
	return vwc_name_numbers(ns->name, &a, &c) && bit_test(sc->subsys, a);
}

struct class_entry {
	char name[VWC_NAME_LEN];
	char syspath[VWC_PATH_LEN];
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct class_entry *)a)->syspath,
		      ((const struct class_entry *)b)->syspath);
}

/*
 * The entries of <sysfs>/class/<class> that name a controller (@ctrls) or
 * a namespace or multipath path (!@ctrls), each as its real path, handed
 * to @add sorted by that path (the order libudev's enumerator gives).
 */
static int scan_class(struct vwc_topo *t, const char *sysfs,
		      const char *class, bool ctrls, const struct scope *sc,
		      int (*add)(struct vwc_topo *, const char *,
				 const char *, const char *))
{
	char dir[VWC_PATH_LEN], top[VWC_PATH_LEN], ns_name[VWC_NAME_LEN];
	struct class_entry *e = NULL, *tmp;
	int i, n = 0, r = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/%s", sysfs, class);
	snprintf(top, sizeof(top), "%s/devices", sysfs);
	d = opendir(dir);
	if (!d)		/* no NVMe driver loaded: nothing to find */
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		enum vwc_kind kind = vwc_name_classify(de->d_name, ns_name,
							sizeof(ns_name));
		char link[VWC_PATH_LEN];
		ssize_t len;

		/* partitions, ng nodes and anything else: not looked at */
		if (ctrls ? kind != VWC_KIND_CTRL :
			    kind != VWC_KIND_NS && kind != VWC_KIND_PATH)
			continue;
		if (strlen(de->d_name) >= VWC_NAME_LEN)
			continue;	/* not a name classify accepts */
		if (sc && !ctrls && !scope_name(sc, de->d_name, kind))
			continue;
		len = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;	/* vanished meanwhile */
		if ((size_t)len >= sizeof(link) - 1) {
			vwc_err("%s/%s: link target longer than %zu characters: not handled",
				dir, de->d_name, sizeof(link) - 2);
			continue;
		}
		link[len] = '\0';
		tmp = realloc(e, (n + 1) * sizeof(*e));
		if (!tmp) {
			r = -ENOMEM;
			break;
		}
		e = tmp;
		memcpy(e[n].name, de->d_name, strlen(de->d_name) + 1);
		len = snprintf(e[n].syspath, sizeof(e[n].syspath), "%s%s%s",
			       link[0] == '/' ? "" : dir,
			       link[0] == '/' ? "" : "/", link);
		if (len < 0 || (size_t)len >= sizeof(e[n].syspath)) {
			vwc_err("%s/%s: sysfs path longer than %zu characters: not handled",
				dir, de->d_name, sizeof(e[n].syspath) - 1);
			continue;
		}
		normalize_path(e[n].syspath);
		if (sc && ctrls && !scope_ctrl(sc, e[n].syspath)) {
			r = add_other(t, e[n].name);
			if (r)
				break;
			continue;
		}
		n++;
	}
	closedir(d);
	if (!r && n)
		qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 0; !r && i < n; i++)
		r = add(t, e[i].name, e[i].syspath, top);
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

static int scan(const char *sysfs, struct vwc_topo *t, struct scope *sc)
{
	int r, i;

	memset(t, 0, sizeof(*t));
	snprintf(t->sysfs, sizeof(t->sysfs), "%s", sysfs);
	r = scan_class(t, sysfs, "nvme", true, sc, add_ctrl);
	if (r)
		goto fail;
	/* controller indices are final from here on */
	if (t->nr_ctrls)	/* qsort(NULL, 0) is undefined (UBSan) */
		qsort(t->ctrls, t->nr_ctrls, sizeof(*t->ctrls), cmp_ctrl);
	if (sc)
		scope_numbers(sc, t);
	r = scan_class(t, sysfs, "block", false, sc, add_disk);
	if (r)
		goto fail;
	/* drop path nodes whose head is gone (being removed), and in a
	 * scoped scan what turned out not to be in scope */
	for (i = 0; i < t->nr_ns; i++) {
		if (!t->ns[i].syspath[0] ||
		    (sc && !scope_keeps(sc, t, &t->ns[i]))) {
			ns_free(&t->ns[i]);
			/* the last entry moves into the hole, its slot is cleared */
			t->ns[i] = t->ns[--t->nr_ns];
			memset(&t->ns[t->nr_ns], 0, sizeof(*t->ns));
			i--;
		}
	}
	if (t->nr_ns)
		qsort(t->ns, t->nr_ns, sizeof(*t->ns), cmp_ns);
	/* no active namespace list read yet: a peer may reach any */
	vwc_topo_link_reach(t);
	for (i = 0; i < t->nr_ctrls; i++)
		t->ctrls[i].discovery = vwc_ctrl_is_discovery(t, i);
	return 0;
fail:
	vwc_topo_free(t);
	return r;
}

int vwc_topo_scan_sysfs(const char *sysfs, struct vwc_topo *t)
{
	return scan(sysfs, t, NULL);
}

int vwc_topo_scan_nqns(const char *sysfs, struct vwc_topo *t,
		       const char *const *nqns, int nr)
{
	struct scope *sc = calloc(1, sizeof(*sc));
	int r;

	if (!sc)
		return -ENOMEM;
	sc->nqns = nqns;
	sc->nr_nqns = nr;
	r = scan(sysfs, t, sc);
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
	int i;

	for (i = 0; i < t->nr_ns; i++)
		ns_free(&t->ns[i]);
	for (i = 0; i < t->nr_ctrls; i++)
		free(t->ctrls[i].nsids);
	free(t->ctrls);
	free(t->ns);
	free(t->others);
	memset(t, 0, sizeof(*t));
}
