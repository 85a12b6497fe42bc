// SPDX-License-Identifier: GPL-2.0-or-later
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"

const char *vwc_cpu_vendor(void)
{
	static char vendor[13];
	static bool done;
#if defined(__x86_64__) || defined(__i386__)
	unsigned int eax, ebx, ecx, edx;

	if (done)
		return vendor;
	done = true;
	/* CPUID leaf 0: the vendor string in EBX, EDX, ECX */
	if (__get_cpuid(0, &eax, &ebx, &ecx, &edx)) {
		memcpy(vendor, &ebx, 4);
		memcpy(vendor + 4, &edx, 4);
		memcpy(vendor + 8, &ecx, 4);
		vendor[12] = '\0';
	}
#else
	done = true;	/* no x86 vendor: "" */
#endif
	return vendor;
}

bool vwc_cpu_is_hygon(void)
{
	return !strcmp(vwc_cpu_vendor(), "HygonGenuine");
}

/* "ADDR T use_comp_batch\t[nvme]" (a module) or "ADDR T use_comp_batch" */
static bool unbatched_line(const char *line)
{
	const char *name = strchr(line, ' ');

	if (!name || !(name = strchr(name + 1, ' ')))
		return false;
	name++;
	if (strncmp(name, "use_comp_batch", 14))
		return false;
	name += 14;
	return *name == '\n' || *name == '\0' || !strncmp(name, "\t[nvme]", 7);
}

int vwc_cpu_kernel_unbatched(void)
{
	static int known = 2;
	char line[512];
	FILE *f;

	if (known != 2)
		return known;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return known = -errno;
	known = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "use_comp_batch") && unbatched_line(line)) {
			known = 1;
			break;
		}
	fclose(f);
	return known;
}
