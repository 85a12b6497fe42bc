/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: policy.h - the write-cache rule, pure and in one place
 *
 * Everything nvme-vwc-sync decides about a namespace's block-layer write
 * cache mode is computed here, from a &struct vwc_facts, without any I/O.
 * The rule is the truth table of the kernel patch "nvme: honor the volatile
 * write cache enable state" (nvme_ctrl_vwc_enabled()), extended with the
 * SMART "volatile memory backup failed" warning and admin overrides. The
 * invariant: write-through only when the controller positively reports
 * that no volatile cache is enabled; anything unknown means write-back.
 */
#ifndef VWC_POLICY_H
#define VWC_POLICY_H

#include <stdbool.h>

/** enum vwc_tri - a fact that may not be known */
enum vwc_tri {
	VWC_TRI_UNKNOWN = -1,
	VWC_TRI_NO = 0,
	VWC_TRI_YES = 1,
};

/**
 * enum vwc_override - what the admin's configuration says for a device
 * @VWC_OVERRIDE_NONE:		follow the controller
 * @VWC_OVERRIDE_WRITE_BACK:	always write-back (a drive the admin distrusts)
 * @VWC_OVERRIDE_IGNORE:	never touch this device
 *
 * There is deliberately no "force write-through": that is the unsafe
 * direction, see nvme-vwc-sync(8).
 */
enum vwc_override {
	VWC_OVERRIDE_NONE = 0,
	VWC_OVERRIDE_WRITE_BACK,
	VWC_OVERRIDE_IGNORE,
};

/**
 * struct vwc_facts - what one controller reports
 * @present:		Identify Controller VWC bit 0 (NVME_CTRL_VWC_PRESENT)
 * @wce:		Get Features 06h, current value, bit 0 (WCE)
 * @backup_failed:	SMART critical warning bit 4 (volatile memory backup
 *			device has failed)
 * @override:		admin configuration for this controller
 */
struct vwc_facts {
	enum vwc_tri present;
	enum vwc_tri wce;
	enum vwc_tri backup_failed;
	enum vwc_override override;
};

/** enum vwc_mode - a block-layer write cache mode */
enum vwc_mode {
	VWC_MODE_NONE = 0,		/* leave as it is (override "ignore") */
	VWC_MODE_WRITE_BACK,
	VWC_MODE_WRITE_THROUGH,
};

/** enum vwc_reason - why a mode was chosen, in order of precedence */
enum vwc_reason {
	VWC_REASON_IGNORED = 0,
	VWC_REASON_OVERRIDE,
	VWC_REASON_BACKUP_FAILED,
	VWC_REASON_PRESENT_UNKNOWN,
	VWC_REASON_NO_CACHE,
	VWC_REASON_WCE_UNKNOWN,
	VWC_REASON_WCE_DISABLED,
	VWC_REASON_WCE_ENABLED,
	VWC_REASON_SHARED_ENABLED,
	VWC_REASON_NO_CONTROLLER,
	VWC_REASON_RESTORED,
	VWC_REASON_BACKUP_UNKNOWN,
	VWC_REASON_NO_CACHE_OVERRIDE,
	VWC_REASON_NO_CACHE_BACKUP_FAILED,
	VWC_REASON_NS_NO_CACHE,
	VWC_REASON_NS_NO_CACHE_OVERRIDE,
};

/**
 * struct vwc_decision - the mode for a namespace and its reason
 * @mode:	block-layer mode to apply
 * @reason:	why
 */
struct vwc_decision {
	enum vwc_mode mode;
	enum vwc_reason reason;
};

/**
 * vwc_policy_decide() - the write-cache rule for one controller
 * @f:	what the controller reports
 *
 * Return: write-through for no cache present (whatever the override or
 * the SMART log say: the kernel cannot put such a drive in write back),
 * or present with WCE cleared, no write-back override and the backup
 * known not to have failed; write-back otherwise; "leave as it is" when
 * ignored.
 */
struct vwc_decision vwc_policy_decide(const struct vwc_facts *f);

/**
 * vwc_policy_decide_shared() - the rule for a namespace reached by several
 *				controllers (NVMe multipath)
 * @facts:	one entry per controller reaching the namespace
 * @n:		number of entries
 *
 * Return: write-through only if every controller's own decision is
 * write-through; ignored if any controller is ignored; write-back if @n
 * is 0 (nothing known).
 */
struct vwc_decision vwc_policy_decide_shared(const struct vwc_facts *facts,
					     int n);

/**
 * vwc_policy_decide_ns() - the rule for a namespace, with what the
 *			    namespace itself reports
 * @ns_no_vwc:	the namespace's own "volatile write cache not present" bit
 *		(I/O Command Set Independent Identify Namespace, NSFEAT bit
 *		5): yes, no, or unknown (not read, or the command failed)
 * @facts:	one entry per controller reaching the namespace
 * @n:		number of entries
 *
 * The bit is the namespace's, the same through every path: a namespace
 * that reports no volatile cache has none to lose, so it is write through
 * whatever its controllers report (their WCE, a failed backup) or the
 * configuration forces. Unknown, or a namespace that does not set the
 * bit, leaves the decision to the controllers
 * (vwc_policy_decide_shared()). "ignore" is honoured first.
 *
 * Return: ignored if any controller is ignored; write through with
 * VWC_REASON_NS_NO_CACHE (VWC_REASON_NS_NO_CACHE_OVERRIDE when a
 * controller's configuration forced write back) when @ns_no_vwc is yes;
 * vwc_policy_decide_shared() otherwise.
 */
struct vwc_decision vwc_policy_decide_ns(enum vwc_tri ns_no_vwc,
					 const struct vwc_facts *facts, int n);

/**
 * vwc_reason_ns_no_cache() - is a reason the namespace's own bit
 * @reason:	reason
 *
 * Return: true for the reasons of vwc_policy_decide_ns()'s row: write
 * through that no controller's state can change.
 */
bool vwc_reason_ns_no_cache(enum vwc_reason reason);

/**
 * vwc_policy_restored() - the rule for a namespace "restore" handed back
 *			   to the kernel, until the next explicit sync
 * @d:	the decision from the controllers' facts
 *
 * Return: @d when it is write-back (the safe direction is always taken);
 * otherwise "leave as it is" (VWC_MODE_NONE, VWC_REASON_RESTORED).
 */
struct vwc_decision vwc_policy_restored(struct vwc_decision d);

/**
 * vwc_policy_kernel_may_hold() - may the kernel keep a namespace in write
 *				  through that the rule wants in write back?
 * @facts:	one entry per controller reaching the namespace
 * @n:		number of entries
 *
 * A kernel that reads WCE itself exposes a namespace without a write
 * cache when it read the cache off, and then refuses write back. That is
 * safe when every controller reaching the namespace reported its cache
 * disabled (or absent) to this tool too: write back was asked for a
 * reason that matters only while the cache is on (the admin's write-back
 * line, a failed or unknown backup), and flushes would do nothing. It is
 * not when any cache is enabled or unknown: the safety invariant.
 *
 * Return: true if the kernel's write through is acceptable.
 */
bool vwc_policy_kernel_may_hold(const struct vwc_facts *facts, int n);

/**
 * vwc_policy_probe_wce() - may a Set Features 06h be sent only to learn
 *			    whether a target takes the command at all?
 * @wce:	WCE as read before (not under the writers' lock)
 * @val:	on true, the value to send
 *
 * Such a probe sends the value read, to change nothing where it is
 * taken. But that value may be stale: since the read, another writer
 * (a set-cache off, under the writers' lock) may have turned the cache
 * off and put the namespaces in write through; a probe of WCE=1 then
 * turns the cache on under them (and a SIGKILL before the next step
 * leaves it so). Only WCE=0 may be probed: a cache turned off never
 * breaks the invariant.
 *
 * Return: true (with @val false) when WCE read 0; false otherwise, and
 * the refusal shows at the real Set Features, after the namespaces are
 * in write back.
 */
bool vwc_policy_probe_wce(enum vwc_tri wce, bool *val);

/**
 * vwc_mode_str() - the sysfs spelling of a mode
 * @mode:	mode
 *
 * Return: "write back", "write through" or "none".
 */
const char *vwc_mode_str(enum vwc_mode mode);

/**
 * vwc_mode_parse() - parse a queue/write_cache value
 * @s:		value as read, trailing newline allowed
 * @mode:	result
 *
 * Return: 0, or -EINVAL if @s is neither mode.
 */
int vwc_mode_parse(const char *s, enum vwc_mode *mode);

/**
 * vwc_reason_str() - a one-line explanation of a reason
 * @reason:	reason
 *
 * Return: a static string.
 */
const char *vwc_reason_str(enum vwc_reason reason);

/**
 * vwc_tri_wce_str() - JSON/report spelling of a WCE fact
 * @wce:	fact
 *
 * Return: "enabled", "disabled" or "unknown".
 */
const char *vwc_tri_wce_str(enum vwc_tri wce);

#endif
