// SPDX-License-Identifier: GPL-2.0-or-later
/* Configuration parsing and matching. */
#include <string.h>

#include "config.h"
#include "tap.h"

int main(void)
{
	struct vwc_config cfg;
	char err[300];
	int r;

	r = vwc_config_parse(
		"# comment\n"
		"\n"
		"device serial=S123 write-cache=write-back\n"
		"  device model=\"KIOXIA KCD6XVUL3T20\" write-cache=ignore # trailing\n"
		"device pci=C0A9:5419 write-cache=auto\n"
		"irq-coalescing threshold=8 time=1\n",
		"t.conf", &cfg, err, sizeof(err));
	ok(r == 0, "valid file parses");
	ok(cfg.nr_rules == 3, "three device rules");
	ok(cfg.irqc_enable && cfg.irqc_threshold == 8 && cfg.irqc_time == 1,
	   "irq-coalescing values");
	ok(vwc_config_match(&cfg, "S123", "x", "") == VWC_OVERRIDE_WRITE_BACK,
	   "match by serial");
	ok(vwc_config_match(&cfg, "S9", "KIOXIA KCD6XVUL3T20", "") ==
	   VWC_OVERRIDE_IGNORE, "match by quoted model");
	ok(vwc_config_match(&cfg, "S9", "m", "c0a9:5419") == VWC_OVERRIDE_NONE,
	   "match by pci, case-insensitive, auto");
	ok(vwc_config_match(&cfg, "S9", "m", "1b36:0010") == VWC_OVERRIDE_NONE,
	   "no match");
	ok(vwc_config_match(NULL, "S123", "m", "") == VWC_OVERRIDE_NONE,
	   "no config");

	r = vwc_config_parse("device serial=S1 write-cache=write-back\n"
			     "device serial=S2 write-cache=write-through\n",
			     "/etc/x.conf", &cfg, err, sizeof(err));
	ok(r < 0 && !strncmp(err, "/etc/x.conf:2: write-cache=write-through is refused", 51),
	   "write-through refused with file:line (%s)", err);
	ok(cfg.nr_rules == 0, "nothing kept from a bad file");

	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "bogus\n", "c:1: unknown directive" },
		{ "device write-cache=auto\n", "c:1: device line needs serial=" },
		{ "device serial=A\n", "c:1: device line needs write-cache=" },
		{ "\ndevice serial=A serial=B write-cache=auto\n", "c:2: one of" },
		{ "device pci=12:34 write-cache=auto\n", "c:1: pci= wants" },
		{ "device serial=A write-cache=maybe\n", "c:1: write-cache wants" },
		{ "device model=\"open write-cache=auto\n", "c:1: unterminated quote" },
		{ "device serial= write-cache=auto\n", "c:1: empty value" },
		{ "irq-coalescing threshold=300 time=1\n", "c:1: threshold wants" },
		{ "irq-coalescing threshold=1\n", "c:1: irq-coalescing needs" },
		{ "device=x\n", "c:1: line must start" },
		{ "device serial=A write-cache=auto color=red\n", "c:1: unknown key" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = vwc_config_parse(bad[i].text, "c", &cfg, err, sizeof(err));
		ok(r < 0 && !strncmp(err, bad[i].err, strlen(bad[i].err)),
		   "rejects: %s", bad[i].err);
		if (!(r < 0 && !strncmp(err, bad[i].err, strlen(bad[i].err))))
			printf("#   got '%s'\n", err);
	}
	return tap_done();
}
