/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: cpu.h - the x86 CPU vendor, for the Hygon advisory
 */
#ifndef VWC_CPU_H
#define VWC_CPU_H

#include <stdbool.h>

/**
 * vwc_cpu_is_hygon() - is this a Hygon CPU; read once per process
 *
 * Return: true for vendor_id HygonGenuine.
 */
bool vwc_cpu_is_hygon(void);

/**
 * vwc_cpu_vendor() - the x86 CPU vendor (CPUID leaf 0, e.g. "HygonGenuine",
 *		      the vendor_id /proc/cpuinfo shows), once per process
 *
 * Return: a static string, "" if unknown.
 */
const char *vwc_cpu_vendor(void);

#endif
