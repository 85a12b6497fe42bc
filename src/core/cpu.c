// SPDX-License-Identifier: GPL-2.0-or-later
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
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
