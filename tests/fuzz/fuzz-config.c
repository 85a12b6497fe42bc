// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /etc/nvme-vwc-sync.conf: vwc_config_parse() and vwc_config_match() on
 * arbitrary text. Invariants: a rejected file leaves an empty
 * configuration and a "FILE:LINE: cause" message; an accepted one has at
 * most VWC_CONFIG_MAX_RULES rules, none forcing write-through.
 */
#include <errno.h>
#include <stdio.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vwc_config cfg;
	char err[256], *text = fuzz_str(data, size);
	int r, i;

	r = vwc_config_parse(text, "fuzz.conf", &cfg, err, sizeof(err));
	if (r) {
		fuzz_assert(r == -EINVAL);
		fuzz_assert(!strncmp(err, "fuzz.conf:", 10));
		fuzz_assert(cfg.nr_rules == 0 && !cfg.irqc_enable);
	} else {
		fuzz_assert(cfg.nr_rules >= 0 &&
			    cfg.nr_rules <= VWC_CONFIG_MAX_RULES);
		for (i = 0; i < cfg.nr_rules; i++) {
			fuzz_assert(cfg.rules[i].override == VWC_OVERRIDE_NONE ||
				    cfg.rules[i].override == VWC_OVERRIDE_WRITE_BACK ||
				    cfg.rules[i].override == VWC_OVERRIDE_IGNORE);
			fuzz_assert(memchr(cfg.rules[i].value, '\0',
					   sizeof(cfg.rules[i].value)));
			/* every rule's own identity matches some rule */
			(void)vwc_config_match(&cfg, cfg.rules[i].value,
					       cfg.rules[i].value,
					       cfg.rules[i].value);
		}
		(void)vwc_config_match(&cfg, "S1", "M1", "1b36:0010");
	}
	free(text);
	return 0;
}
