// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vwc-config.h"
#include "config.h"
#include "topo.h"

#define VWC_DEFAULT_CONFIG VWC_SYSCONFDIR "/nvme-vwc-sync.conf"

struct token {
	char key[32];
	char value[128];
};

/* Split "key=value key2="quoted value"" into tokens; words have no '='. */
static int tokenize(char *s, struct token *tok, int max, const char **bad)
{
	int n = 0;

	while (*s) {
		char *k, *v;
		size_t kl, vl;

		while (isspace((unsigned char)*s))
			s++;
		if (!*s || *s == '#')
			break;
		if (n == max) {
			*bad = "too many words";
			return -1;
		}
		k = s;
		while (*s && !isspace((unsigned char)*s) && *s != '=')
			s++;
		kl = (size_t)(s - k);
		if (kl >= sizeof(tok[n].key)) {
			*bad = "word too long";
			return -1;
		}
		memcpy(tok[n].key, k, kl);
		tok[n].key[kl] = '\0';
		tok[n].value[0] = '\0';
		if (*s == '=') {
			s++;
			if (*s == '"') {
				v = ++s;
				while (*s && *s != '"')
					s++;
				if (*s != '"') {
					*bad = "unterminated quote";
					return -1;
				}
				vl = (size_t)(s - v);
				s++;
			} else {
				v = s;
				while (*s && !isspace((unsigned char)*s))
					s++;
				vl = (size_t)(s - v);
			}
			if (!vl || vl >= sizeof(tok[n].value)) {
				*bad = vl ? "value too long" : "empty value";
				return -1;
			}
			memcpy(tok[n].value, v, vl);
			tok[n].value[vl] = '\0';
		}
		n++;
	}
	return n;
}

static bool parse_u8(const char *s, unsigned int max, uint8_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v > max)
		return false;
	*out = (uint8_t)v;
	return true;
}

static bool valid_pci(const char *s)
{
	int i;

	if (strlen(s) != 9 || s[4] != ':')
		return false;
	for (i = 0; i < 9; i++)
		if (i != 4 && !isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static const char *parse_device(struct token *tok, int n,
				struct vwc_config *cfg, int line)
{
	struct vwc_rule *rule;
	bool have_match = false, have_wc = false;
	int i;

	if (cfg->nr_rules == VWC_CONFIG_MAX_RULES)
		return "too many device lines";
	rule = &cfg->rules[cfg->nr_rules];
	memset(rule, 0, sizeof(*rule));
	rule->line = line;
	for (i = 1; i < n; i++) {
		const char *k = tok[i].key, *v = tok[i].value;

		if (!*v)
			return "expected key=value";
		if (!strcmp(k, "serial") || !strcmp(k, "model") ||
		    !strcmp(k, "pci")) {
			if (have_match)
				return "one of serial=, model=, pci= per line";
			have_match = true;
			rule->match = k[0] == 's' ? VWC_MATCH_SERIAL :
				      k[0] == 'm' ? VWC_MATCH_MODEL :
						    VWC_MATCH_PCI;
			if (rule->match == VWC_MATCH_PCI && !valid_pci(v))
				return "pci= wants VVVV:DDDD in hex";
			snprintf(rule->value, sizeof(rule->value), "%s", v);
		} else if (!strcmp(k, "write-cache")) {
			have_wc = true;
			if (!strcmp(v, "auto"))
				rule->override = VWC_OVERRIDE_NONE;
			else if (!strcmp(v, "write-back"))
				rule->override = VWC_OVERRIDE_WRITE_BACK;
			else if (!strcmp(v, "ignore"))
				rule->override = VWC_OVERRIDE_IGNORE;
			else if (!strcmp(v, "write-through"))
				return "write-cache=write-through is refused: forcing write-through while the drive's cache may be enabled loses data on power failure; use 'nvme vwc set-cache off' to disable the drive's cache instead";
			else
				return "write-cache wants auto, write-back or ignore";
		} else {
			return "unknown key (serial, model, pci, write-cache)";
		}
	}
	if (!have_match)
		return "device line needs serial=, model= or pci=";
	if (!have_wc)
		return "device line needs write-cache=";
	cfg->nr_rules++;
	return NULL;
}

static const char *parse_irqc(struct token *tok, int n, struct vwc_config *cfg)
{
	bool thr = false, time = false;
	int i;

	for (i = 1; i < n; i++) {
		if (!strcmp(tok[i].key, "threshold")) {
			if (!parse_u8(tok[i].value, 255, &cfg->irqc_threshold))
				return "threshold wants 0 to 255";
			thr = true;
		} else if (!strcmp(tok[i].key, "time")) {
			if (!parse_u8(tok[i].value, 255, &cfg->irqc_time))
				return "time wants 0 to 255 (100 us units)";
			time = true;
		} else {
			return "unknown key (threshold, time)";
		}
	}
	if (!thr || !time)
		return "irq-coalescing needs threshold= and time=";
	cfg->irqc_enable = true;
	return NULL;
}

int vwc_config_parse(const char *text, const char *file,
		     struct vwc_config *cfg, char *err, size_t errlen)
{
	const char *p = text, *bad = NULL;
	char line[512];
	int lineno = 0;

	memset(cfg, 0, sizeof(*cfg));
	while (*p) {
		struct token tok[8];
		size_t len = strcspn(p, "\n");
		int n;

		lineno++;
		if (len >= sizeof(line)) {
			bad = "line too long";
			goto fail;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (p[len] == '\n');

		n = tokenize(line, tok, 8, &bad);
		if (n < 0)
			goto fail;
		if (!n)
			continue;
		if (tok[0].value[0]) {
			bad = "line must start with 'device' or 'irq-coalescing'";
			goto fail;
		}
		if (!strcmp(tok[0].key, "device"))
			bad = parse_device(tok, n, cfg, lineno);
		else if (!strcmp(tok[0].key, "irq-coalescing"))
			bad = parse_irqc(tok, n, cfg);
		else
			bad = "unknown directive (device, irq-coalescing)";
		if (bad)
			goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "%s:%d: %s", file, lineno, bad);
	memset(cfg, 0, sizeof(*cfg));
	return -EINVAL;
}

int vwc_config_load(const char *file, struct vwc_config *cfg, char *err,
		    size_t errlen)
{
	const char *path = file ? file : VWC_DEFAULT_CONFIG;
	char *text = NULL;
	size_t cap = 0, len = 0, n;
	FILE *f;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		if (!file && r == -ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *t;

			cap = cap ? cap * 2 : 8192;
			if (cap > (1 << 20)) {
				snprintf(err, errlen, "%s: file too large", path);
				free(text);
				fclose(f);
				return -EFBIG;
			}
			t = realloc(text, cap);
			if (!t) {
				free(text);
				fclose(f);
				return -ENOMEM;
			}
			text = t;
		}
		n = fread(text + len, 1, 4096, f);
		len += n;
	} while (n == 4096);
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (r) {
		snprintf(err, errlen, "%s: read error", path);
		free(text);
		return r;
	}
	text[len] = '\0';
	r = vwc_config_parse(text, path, cfg, err, errlen);
	free(text);
	return r;
}

enum vwc_override vwc_config_match(const struct vwc_config *cfg,
				   const char *serial, const char *model,
				   const char *pci_id)
{
	int i;

	if (!cfg)
		return VWC_OVERRIDE_NONE;
	for (i = 0; i < cfg->nr_rules; i++) {
		const struct vwc_rule *r = &cfg->rules[i];
		const char *v = r->match == VWC_MATCH_SERIAL ? serial :
				r->match == VWC_MATCH_MODEL ? model : pci_id;

		if (v && (r->match == VWC_MATCH_PCI ? !strcasecmp(v, r->value) :
						      !strcmp(v, r->value)))
			return r->override;
	}
	return VWC_OVERRIDE_NONE;
}

enum vwc_override vwc_config_override(const struct vwc_config *cfg,
				      const struct vwc_ctrl *c)
{
	return vwc_config_match(cfg, c->serial, c->model, c->pci_id);
}
