// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A scan of some NVM subsystems (vwc_topo_scan_nqns()): which controllers
 * and block devices it looks at, and which namespaces it keeps
 * (topo-scope.h).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "topo-scope.h"

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

struct vwc_scope {
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

struct vwc_scope *vwc_scope_new(const char *const *nqns, int nr)
{
	struct vwc_scope *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->nqns = nqns;
	sc->nr_nqns = nr;
	return sc;
}

/* A controller's syspath: its subsystem NQN is in scope */
/* Return: 1 in scope, 0 another subsystem's, -1 no subsystem NQN yet */
int vwc_scope_ctrl(const struct vwc_scope *sc, const char *syspath)
{
	char nqn[VWC_NQN_LEN], path[VWC_PATH_LEN + 16];
	int i;

	snprintf(path, sizeof(path), "%s/subsysnqn", syspath);
	vwc_read_line(path, nqn, sizeof(nqn));
	if (!nqn[0])
		return -1;
	for (i = 0; i < sc->nr_nqns; i++)
		if (!strcmp(nqn, sc->nqns[i]))
			return 1;
	return 0;
}

/* A block device's name may belong to a controller in scope */
bool vwc_scope_name(const struct vwc_scope *sc, const char *name,
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
void vwc_scope_numbers(struct vwc_scope *sc, const struct vwc_topo *t)
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
bool vwc_scope_keeps(const struct vwc_scope *sc, const struct vwc_topo *t,
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
