// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkmod.h>

#include "kmod-table.h"
#include "log.h"

/*
 * libkmod's messages after kmod_new() (index lookups) at our debug level.
 * Bad modprobe.d lines are reported while kmod_new() parses the
 * configuration, before a log function can be set: libkmod prints those
 * itself on stderr ("libkmod: ERROR ... ignoring bad line"), as modprobe
 * does, and skips the line, as modprobe does.
 */
static void kmod_log_fn(void *data, int prio, const char *file, int line,
			const char *fn, const char *fmt, va_list args)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, args);
	msg[strcspn(msg, "\n")] = '\0';
	vwc_dbg("libkmod: %s", msg);
}

static struct kmod_ctx *kmod_ctx_new(const char *moddir,
				     const char *const *paths)
{
	struct kmod_ctx *ctx = kmod_new(moddir, paths);

	if (ctx)
		kmod_set_log_fn(ctx, kmod_log_fn, NULL);
	return ctx;
}

int vwc_options_quirks(const char *opts, char *out, size_t len)
{
	const char *p = opts;
	int found = 0;

	while (*p) {
		const char *tok, *v;
		bool quoted = false;
		size_t n;

		while (isspace((unsigned char)*p))
			p++;
		tok = p;
		/* the kernel's parse_args(): blanks inside double quotes */
		while (*p && (quoted || !isspace((unsigned char)*p))) {
			if (*p == '"')
				quoted = !quoted;
			p++;
		}
		if (p == tok || (size_t)(p - tok) < 7 || strncmp(tok, "quirks=", 7))
			continue;
		v = tok + 7;
		n = (size_t)(p - v);
		if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
			v++;
			n -= 2;
		}
		if (n >= len)
			return -ENOSPC;
		memcpy(out, v, n);
		out[n] = '\0';
		found = 1;
	}
	return found;
}

/*
 * The option strings modprobe would pass to "nvme", in modprobe's order
 * (libkmod: files sorted by name across the configuration directories, a
 * file shadowing one of the same name in a later directory, then nvme.*
 * of the kernel command line). At most @max; Return: the count or -errno.
 */
static void free_entries(char **v, int n)
{
	while (n > 0)
		free(v[--n]);
}

/*
 * gcc 12's -fanalyzer loses the strings stored through the caller's array
 * at a symbolic index and reports each as leaked; every one is freed by
 * the caller's free_entries(), or here when the listing fails.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static int nvme_option_entries(const char *const *paths, char **v, int max)
{
	struct kmod_ctx *ctx = kmod_ctx_new(NULL, paths);
	struct kmod_config_iter *it;
	int n = 0, err = 0;
	char *s;

	if (!ctx)
		return -ENOMEM;
	it = kmod_config_get_options(ctx);
	while (it && kmod_config_iter_next(it)) {
		if (strcmp(kmod_config_iter_get_key(it), "nvme"))
			continue;
		if (n == max) {
			err = -E2BIG;
			break;
		}
		s = strdup(kmod_config_iter_get_value(it));
		if (!s) {
			err = -ENOMEM;
			break;
		}
		v[n++] = s;
	}
	if (it)
		kmod_config_iter_free_iter(it);
	else
		err = -ENOMEM;
	kmod_unref(ctx);
	if (err) {	/* nothing half-filled is handed back */
		free_entries(v, n);
		return err;
	}
	return n;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/*
 * "The admin's value without ours", precisely: libkmod lists every
 * "options nvme ..." entry modprobe would pass (all configuration
 * directories and the kernel command line, in modprobe's order). Our own
 * file, read alone by a second libkmod context, contributes its entries;
 * each of them is removed once from the full list, matched exactly, from
 * the file part (the kernel command line's entries, listed last by both
 * contexts, are left). The admin's value is then the last quirks= of what
 * remains, as the kernel takes the last of repeated parameters: that is
 * what modprobe would use if our file did not exist. An identical line of
 * the admin's own stays (one copy is removed, the value is the same).
 */
int vwc_modprobe_admin_quirks(const char *const *paths, const char *ours,
			      char *out, size_t len)
{
	enum { MAX = 256 };
	static const char *const none[] = { NULL };
	const char *const own[] = { ours, NULL };
	char *all[MAX], *mine[MAX], *kc[MAX];
	bool gone[MAX] = { false };
	int na, nm, nk, i, j, r = 0;

	out[0] = '\0';
	na = nvme_option_entries(paths, all, MAX);
	if (na < 0)
		return na;
	nk = nvme_option_entries(none, kc, MAX);
	nm = access(ours, F_OK) ? 0 : nvme_option_entries(own, mine, MAX);
	if (nk < 0 || nm < 0) {
		r = nk < 0 ? nk : nm;
		goto out;
	}
	for (i = 0; i < nm - (nm ? nk : 0); i++)
		for (j = na - nk - 1; j >= 0; j--)
			if (!gone[j] && !strcmp(all[j], mine[i])) {
				gone[j] = true;
				break;
			}
	for (i = 0; i < na && r >= 0; i++)
		if (!gone[i])
			r = vwc_options_quirks(all[i], out, len) < 0 ?
			    -ENOSPC : r;
	if (r >= 0)
		r = 0;
out:
	free_entries(all, na);
	if (nk > 0)
		free_entries(kc, nk);
	if (nm > 0)
		free_entries(mine, nm);
	return r;
}

int vwc_modprobe_quirks_now(char *out, size_t len)
{
	return vwc_modprobe_admin_quirks(NULL, "/nonexistent", out, len);
}

const char *vwc_modules_dir(void)
{
	const char *e = getenv("NVME_VWC_SYNC_MODULES_DIR");

	return e && *e ? e : NULL;
}

int vwc_pci_id_key(const char *modalias, char *key, size_t len)
{
	char v[9], d[9], sv[9], sd[9], rest[4];
	int n;

	if (sscanf(modalias, "pci:v%8[0-9A-Fa-f]d%8[0-9A-Fa-f]sv%8[0-9A-Fa-f]sd%8[0-9A-Fa-f]%3s",
		   v, d, sv, sd, rest) != 5 ||
	    strlen(v) != 8 || strlen(d) != 8 || strlen(sv) != 8 ||
	    strlen(sd) != 8 || strncmp(rest, "bc", 2))
		return -EINVAL;
	n = snprintf(key, len, "pci:v%sd%ssv%ssd%sbc*sc*i*", v, d, sv, sd);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* 1 if libkmod resolves @alias to @driver (module or built in), 0 if not */
static int kmod_resolves(struct kmod_ctx *ctx, const char *alias,
			 const char *driver)
{
	struct kmod_list *l = NULL, *e;
	int r, found = 0;

	r = kmod_module_new_from_lookup(ctx, alias, &l);
	if (r < 0)
		return r;
	kmod_list_foreach(e, l) {
		struct kmod_module *m = kmod_module_get_module(e);

		if (m && !strcmp(kmod_module_get_name(m), driver))
			found = 1;
		kmod_module_unref(m);
	}
	kmod_module_unref_list(l);
	return found;
}

int vwc_driver_table_lists(const char *moddir, const char *driver,
			   const char *modalias, char *src, size_t len)
{
	struct kmod_ctx *ctx;
	char key[96];
	int r;

	src[0] = '\0';
	if (vwc_pci_id_key(modalias, key, sizeof(key)))
		return -EINVAL;
	ctx = kmod_ctx_new(moddir, NULL);
	if (!ctx)
		return -ENOMEM;
	/* the indexes (modules.alias.bin, modules.builtin.alias.bin) */
	kmod_load_resources(ctx);
	r = kmod_resolves(ctx, key, driver);
	if (r > 0) {
		snprintf(src, len, "%s in %s's module index", key,
			 kmod_get_dirname(ctx));
	} else if (r == 0) {
		r = kmod_resolves(ctx, modalias, driver);
		if (r == 0)
			r = -ENOENT;
		else if (r > 0)
			r = 0;
		snprintf(src, len, "%s", kmod_get_dirname(ctx));
	}
	kmod_unref(ctx);
	return r;
}

