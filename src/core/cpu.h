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

/**
 * vwc_cpu_kernel_unbatched() - does the running nvme driver turn IRQ
 *				completion batching off on Hygon itself?
 *
 * By what the kernel shows: the symbol the kernel patch "nvme-pci: Fix
 * performance regression with completion batching for Hygon processors"
 * adds to the nvme driver, use_comp_batch (set from the CPU vendor when
 * the driver loads), listed in /proc/kallsyms (with [nvme] when the
 * driver is a module, without when it is built in). Read once per
 * process.
 *
 * Return: 1 the driver has it, 0 it does not, a negative errno when the
 * kernel does not say (no /proc/kallsyms).
 */
int vwc_cpu_kernel_unbatched(void);

#endif
