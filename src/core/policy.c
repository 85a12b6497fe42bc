// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The write-cache rule. Pure: no I/O, no globals, links nothing else.
 */
#include <errno.h>
#include <string.h>

#include "policy.h"

static struct vwc_decision decision(enum vwc_mode mode, enum vwc_reason reason)
{
	return (struct vwc_decision){ .mode = mode, .reason = reason };
}

struct vwc_decision vwc_policy_decide(const struct vwc_facts *f)
{
	if (f->override == VWC_OVERRIDE_IGNORE)
		return decision(VWC_MODE_NONE, VWC_REASON_IGNORED);
	/*
	 * No volatile cache: nothing can sit unflushed, a Flush has no
	 * effect, and the kernel keeps such a drive in write through (a
	 * "write back" written to it is refused or reads back "write
	 * through"). What would demand write back elsewhere cannot apply:
	 * demanding it would only be drift that never ends.
	 */
	if (f->present == VWC_TRI_NO) {
		if (f->override == VWC_OVERRIDE_WRITE_BACK)
			return decision(VWC_MODE_WRITE_THROUGH,
					VWC_REASON_NO_CACHE_OVERRIDE);
		if (f->backup_failed == VWC_TRI_YES)
			return decision(VWC_MODE_WRITE_THROUGH,
					VWC_REASON_NO_CACHE_BACKUP_FAILED);
		return decision(VWC_MODE_WRITE_THROUGH, VWC_REASON_NO_CACHE);
	}
	if (f->override == VWC_OVERRIDE_WRITE_BACK)
		return decision(VWC_MODE_WRITE_BACK, VWC_REASON_OVERRIDE);
	/*
	 * A failed backup (power-loss protection) means acknowledged writes
	 * may sit in an unprotected cache: flushes on, whatever else says.
	 */
	if (f->backup_failed == VWC_TRI_YES)
		return decision(VWC_MODE_WRITE_BACK, VWC_REASON_BACKUP_FAILED);

	if (f->present != VWC_TRI_YES)
		return decision(VWC_MODE_WRITE_BACK, VWC_REASON_PRESENT_UNKNOWN);

	switch (f->wce) {
	case VWC_TRI_NO:
		/*
		 * A cache with an unread SMART log may sit on a failed
		 * backup: unknown means write back.
		 */
		if (f->backup_failed == VWC_TRI_UNKNOWN)
			return decision(VWC_MODE_WRITE_BACK,
					VWC_REASON_BACKUP_UNKNOWN);
		return decision(VWC_MODE_WRITE_THROUGH, VWC_REASON_WCE_DISABLED);
	case VWC_TRI_YES:
		return decision(VWC_MODE_WRITE_BACK, VWC_REASON_WCE_ENABLED);
	default:
		return decision(VWC_MODE_WRITE_BACK, VWC_REASON_WCE_UNKNOWN);
	}
}

struct vwc_decision vwc_policy_decide_shared(const struct vwc_facts *facts,
					     int n)
{
	struct vwc_decision d, first_wb, out;
	bool any_wb = false;
	int i;

	if (n <= 0)
		return decision(VWC_MODE_WRITE_BACK, VWC_REASON_NO_CONTROLLER);

	out = vwc_policy_decide(&facts[0]);
	for (i = 0; i < n; i++) {
		d = vwc_policy_decide(&facts[i]);
		if (d.mode == VWC_MODE_NONE)
			return d;
		if (d.mode == VWC_MODE_WRITE_BACK && !any_wb) {
			any_wb = true;
			first_wb = d;
		}
	}
	if (!any_wb)
		return out;
	/*
	 * One path with an enabled (or unknown) cache is enough to need
	 * flushes on the shared namespace.
	 */
	if (n > 1 && first_wb.reason == VWC_REASON_WCE_ENABLED)
		first_wb.reason = VWC_REASON_SHARED_ENABLED;
	return first_wb;
}

struct vwc_decision vwc_policy_decide_ns(enum vwc_tri ns_no_vwc,
					 const struct vwc_facts *facts, int n)
{
	struct vwc_decision d = vwc_policy_decide_shared(facts, n);
	int i;

	if (d.mode == VWC_MODE_NONE || ns_no_vwc != VWC_TRI_YES)
		return d;
	/*
	 * The namespace has no volatile cache: nothing it acknowledged can
	 * be lost, whatever WCE says (a fabrics target's WCE speaks for
	 * the target, not for this namespace's backing device), and a
	 * kernel that reads the bit (6.13+) keeps it in write through and
	 * refuses write back.
	 */
	for (i = 0; i < n; i++)
		if (facts[i].override == VWC_OVERRIDE_WRITE_BACK)
			return decision(VWC_MODE_WRITE_THROUGH,
					VWC_REASON_NS_NO_CACHE_OVERRIDE);
	return decision(VWC_MODE_WRITE_THROUGH, VWC_REASON_NS_NO_CACHE);
}

bool vwc_reason_ns_no_cache(enum vwc_reason reason)
{
	return reason == VWC_REASON_NS_NO_CACHE ||
	       reason == VWC_REASON_NS_NO_CACHE_OVERRIDE;
}

bool vwc_policy_probe_wce(enum vwc_tri wce, bool *val)
{
	*val = false;
	return wce == VWC_TRI_NO;
}

const char *vwc_mode_str(enum vwc_mode mode)
{
	switch (mode) {
	case VWC_MODE_WRITE_BACK:
		return "write back";
	case VWC_MODE_WRITE_THROUGH:
		return "write through";
	default:
		return "none";
	}
}

int vwc_mode_parse(const char *s, enum vwc_mode *mode)
{
	size_t len = strcspn(s, "\n");

	if (len == strlen("write back") && !strncmp(s, "write back", len))
		*mode = VWC_MODE_WRITE_BACK;
	else if (len == strlen("write through") &&
		 !strncmp(s, "write through", len))
		*mode = VWC_MODE_WRITE_THROUGH;
	else
		return -EINVAL;
	return 0;
}

const char *vwc_reason_str(enum vwc_reason reason)
{
	switch (reason) {
	case VWC_REASON_IGNORED:
		return "ignored by configuration";
	case VWC_REASON_OVERRIDE:
		return "write-back forced by configuration";
	case VWC_REASON_BACKUP_FAILED:
		return "volatile memory backup failed (SMART critical warning bit 4)";
	case VWC_REASON_PRESENT_UNKNOWN:
		return "volatile write cache presence unknown";
	case VWC_REASON_NO_CACHE:
		return "no volatile write cache";
	case VWC_REASON_WCE_UNKNOWN:
		return "volatile write cache present, enable state unknown";
	case VWC_REASON_WCE_DISABLED:
		return "volatile write cache present and disabled (WCE=0)";
	case VWC_REASON_WCE_ENABLED:
		return "volatile write cache present and enabled (WCE=1)";
	case VWC_REASON_SHARED_ENABLED:
		return "volatile write cache enabled on a controller sharing the namespace";
	case VWC_REASON_NO_CONTROLLER:
		return "no controller reachable";
	case VWC_REASON_RESTORED:
		return "handed back to the kernel by restore (until the next sync)";
	case VWC_REASON_BACKUP_UNKNOWN:
		return "volatile write cache present and disabled, but the SMART log could not be read (backup state unknown)";
	case VWC_REASON_NO_CACHE_OVERRIDE:
		return "no volatile write cache: the configured write-back cannot apply (nothing to flush; the kernel keeps a drive without one in write through)";
	case VWC_REASON_NO_CACHE_BACKUP_FAILED:
		return "no volatile write cache: SMART reports a failed volatile memory backup (critical warning bit 4), but there is no cache to flush (the kernel keeps a drive without one in write through)";
	case VWC_REASON_NS_NO_CACHE:
		return "the namespace reports no volatile write cache (Identify Namespace NSFEAT bit 5), whatever its controllers' cache";
	case VWC_REASON_NS_NO_CACHE_OVERRIDE:
		return "the namespace reports no volatile write cache (Identify Namespace NSFEAT bit 5): the configured write-back cannot apply (nothing to flush; a kernel that reads the bit keeps it in write through)";
	}
	return "?";
}

struct vwc_decision vwc_policy_restored(struct vwc_decision d)
{
	if (d.mode == VWC_MODE_WRITE_BACK)
		return d;
	return decision(VWC_MODE_NONE, VWC_REASON_RESTORED);
}

bool vwc_policy_kernel_may_hold(const struct vwc_facts *facts, int n)
{
	int i;

	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		if (facts[i].present != VWC_TRI_NO &&
		    (facts[i].present != VWC_TRI_YES ||
		     facts[i].wce != VWC_TRI_NO))
			return false;
	return true;
}

const char *vwc_tri_wce_str(enum vwc_tri wce)
{
	switch (wce) {
	case VWC_TRI_YES:
		return "enabled";
	case VWC_TRI_NO:
		return "disabled";
	default:
		return "unknown";
	}
}
