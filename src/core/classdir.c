// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The NVMe entries of a sysfs class directory and where their links lead
 * (classdir.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "classdir.h"
#include "log.h"

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

/* an entry's share of the signature (vwc_classdir_sig()): 0 if not NVMe */
static uint64_t entry_sig(const struct dirent *de)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */
	const char *p;

	if (strncmp(de->d_name, "nvme", 4))
		return 0;
	for (p = de->d_name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return (h ^ (uint64_t)de->d_ino) * 1099511628211ULL;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct vwc_topo_link *)a)->syspath,
		      ((const struct vwc_topo_link *)b)->syspath);
}

/*
 * The last read's entries by name (vwc_name_index_*()): with no table (no
 * entries, no memory), every link is read: slower, the same answer.
 */
static void last_links_make(struct vwc_name_index *ll,
			    const struct vwc_topo_link *links, int n)
{
	if (!links || n <= 0 ||
	    vwc_name_index_init(ll, n, links, sizeof(*links),
				offsetof(struct vwc_topo_link, name)))
		memset(ll, 0, sizeof(*ll));
	else
		vwc_name_index_all(ll, n);
}

/* the last read's entry @name, if its inode is @ino: its index, or -1 */
static int last_link(const struct vwc_name_index *ll,
		     const struct vwc_topo_link *links, const char *name,
		     uint64_t ino)
{
	int i = ino ? vwc_name_index_find(ll, name, NULL) : -1;

	return i >= 0 && links[i].ino == ino && links[i].syspath ? i : -1;
}

/*
 * The @n entries in the order of their targets' paths. Those the last
 * read gave (@from[i], its index; -1 a new entry) are in its order
 * already, which was this one: only the new are sorted, then the two
 * merged. At fabrics scale a scan finds a few new entries among
 * thousands, and a sort of them all by paths that differ only near
 * their ends was most of its time under emulation. No @from, or no
 * memory: all sorted, the same order. A carried entry is checked against
 * the one before it, a comparison each: a last read out of order
 * (none of this function's) is sorted in full.
 */
static void sort_entries(struct vwc_topo_link *e, int n, const int *from,
			 int nr_last)
{
	struct vwc_topo_link *tmp = NULL;
	int *at = NULL, i, j, nc = 0, k;

	if (from && nr_last > 0) {
		tmp = malloc((size_t)n * sizeof(*tmp));
		at = malloc((size_t)nr_last * sizeof(*at));
	}
	if (!tmp || !at) {
		free(tmp);
		free(at);
		qsort(e, n, sizeof(*e), cmp_entry);
		return;
	}
	for (j = 0; j < nr_last; j++)
		at[j] = -1;
	/* a last index claimed twice (names are unique: never) counts as new */
	for (i = 0; i < n; i++)
		if (from[i] >= 0 && from[i] < nr_last && at[from[i]] < 0)
			at[from[i]] = i;
	for (j = 0; j < nr_last; j++)
		if (at[j] >= 0)
			tmp[nc++] = e[at[j]];
	k = nc;
	for (i = 0; i < n; i++)
		if (from[i] < 0 || from[i] >= nr_last || at[from[i]] != i)
			tmp[k++] = e[i];
	free(at);
	/* a last read out of order (never one of these): all sorted */
	for (i = 1; i < nc; i++)
		if (cmp_entry(&tmp[i - 1], &tmp[i]) >= 0)
			break;
	if (i < nc) {
		free(tmp);
		qsort(e, n, sizeof(*e), cmp_entry);
		return;
	}
	if (n - nc > 1)
		qsort(tmp + nc, n - nc, sizeof(*tmp), cmp_entry);
	/* merged back into @e */
	for (i = 0, j = nc, k = 0; k < n; k++)
		if (j >= n || (i < nc && cmp_entry(&tmp[i], &tmp[j]) < 0))
			e[k] = tmp[i++];
		else
			e[k] = tmp[j++];
	free(tmp);
}

/*
 * The target of the link <dir>/<name> (@d open on <dir>, @dlen its length)
 * as a real path, in @path (VWC_PATH_LEN). Return: 0, or -1 if it
 * vanished meanwhile or is too long (said).
 */
static int read_entry(DIR *d, const char *dir, size_t dlen, const char *name,
		      char *path)
{
	char link[VWC_PATH_LEN];
	ssize_t len;

	len = readlinkat(dirfd(d), name, link, sizeof(link) - 1);
	if (len < 0)
		return -1;	/* vanished meanwhile */
	if ((size_t)len >= sizeof(link) - 1) {
		vwc_err("%s/%s: link target longer than %zu characters: not handled",
			dir, name, sizeof(link) - 2);
		return -1;
	}
	link[len] = '\0';
	/* <dir>/<link>, or <link> if absolute (no snprintf() a link) */
	if (link[0] == '/') {
		memcpy(path, link, len + 1);
	} else if (dlen + 1 + (size_t)len < VWC_PATH_LEN) {
		memcpy(path, dir, dlen);
		path[dlen] = '/';
		memcpy(path + dlen + 1, link, len + 1);
	} else {
		vwc_err("%s/%s: sysfs path longer than %d characters: not handled",
			dir, name, VWC_PATH_LEN - 1);
		return -1;
	}
	normalize_path(path);
	return 0;
}

/*
 * gcc 12's -fanalyzer loses the paths stored through the entries' array at
 * a symbolic index and reports one as leaked (as in kmod-table.c): the
 * caller frees each with vwc_classdir_free().
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
int vwc_classdir_read(const char *dir, bool ctrls,
		      bool (*want)(void *arg, const char *name,
				   enum vwc_kind kind),
		      void *arg, const struct vwc_topo_link *last, int nr_last,
		      struct vwc_topo_link **out, int *nr, int *heads,
		      uint64_t *sig)
{
	char path[VWC_PATH_LEN];
	struct vwc_topo_link *e = NULL, *tmp;
	int n = 0, cap = 0, r = 0, li, *from = NULL, *ftmp;
	bool from_ok = true, indexed;
	struct vwc_name_index ll;
	const char *known;
	size_t dlen = strlen(dir), klen;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*nr = *heads = 0;
	if (sig)
		*sig = 0;
	d = opendir(dir);
	if (!d)		/* no NVMe driver loaded: nothing to find */
		return errno == ENOENT ? 0 : -errno;
	last_links_make(&ll, last, nr_last);
	while ((de = readdir(d))) {
		/* the kind alone: no namespace name made */
		enum vwc_kind kind = vwc_name_classify(de->d_name, NULL, 0);

		if (sig)
			*sig += entry_sig(de);
		/* partitions, ng nodes and anything else: not looked at */
		if (ctrls ? kind != VWC_KIND_CTRL :
			    kind != VWC_KIND_NS && kind != VWC_KIND_PATH)
			continue;
		if (strlen(de->d_name) >= VWC_NAME_LEN)
			continue;	/* not a name classify accepts */
		if (want && !want(arg, de->d_name, kind))
			continue;
		/* the same entry as the last read's: the same target */
		li = last_link(&ll, last, de->d_name, (uint64_t)de->d_ino);
		known = li >= 0 ? last[li].syspath : NULL;
		klen = known ? strlen(known) : 0;
		if (known && klen < sizeof(path)) {
			memcpy(path, known, klen + 1);
		} else {
			li = -1;
			if (read_entry(d, dir, dlen, de->d_name, path))
				continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			tmp = realloc(e, cap * sizeof(*e));
			if (!tmp) {
				r = -ENOMEM;
				break;
			}
			e = tmp;
			/* no memory for it: all sorted (sort_entries()) */
			ftmp = from_ok ? realloc(from, cap * sizeof(*from)) : NULL;
			if (!ftmp) {
				free(from);
				from_ok = false;
			}
			from = ftmp;
		}
		if (from)
			from[n] = li;
		e[n].syspath = strdup(path);
		if (!e[n].syspath) {
			r = -ENOMEM;
			break;
		}
		memcpy(e[n].name, de->d_name, strlen(de->d_name) + 1);
		e[n].ino = (uint64_t)de->d_ino;
		n++;
		*heads += kind == VWC_KIND_NS;
	}
	closedir(d);
	/* with no table, nothing was carried: all sorted */
	indexed = ll.slot;
	vwc_name_index_free(&ll);
	if (r) {
		free(from);
		vwc_classdir_free(e, n);
		*heads = 0;
		return r;
	}
	if (n)
		sort_entries(e, n, indexed ? from : NULL, nr_last);
	free(from);
	*out = e;
	*nr = n;
	return 0;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void vwc_classdir_free(struct vwc_topo_link *e, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(e[i].syspath);
	free(e);
}

uint64_t vwc_classdir_sig(const char *dir)
{
	uint64_t sig = 0;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		sig += entry_sig(de);	/* readdir's order does not matter */
	closedir(d);
	return sig;
}
