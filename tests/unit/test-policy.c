// SPDX-License-Identifier: GPL-2.0-or-later
/* The write-cache rule, every row. Links policy.c only. */
#include <string.h>

#include "policy.h"
#include "tap.h"

#define U VWC_TRI_UNKNOWN
#define N VWC_TRI_NO
#define Y VWC_TRI_YES
#define WB VWC_MODE_WRITE_BACK
#define WT VWC_MODE_WRITE_THROUGH

static const struct {
	struct vwc_facts f;
	enum vwc_mode mode;
	enum vwc_reason reason;
	const char *row;
} table[] = {
	/* the truth table of the kernel patch honouring WCE */
	{ { N, U, N, 0 }, WT, VWC_REASON_NO_CACHE, "absent, WCE absent" },
	{ { N, N, N, 0 }, WT, VWC_REASON_NO_CACHE, "absent, WCE 0" },
	{ { N, Y, N, 0 }, WT, VWC_REASON_NO_CACHE, "absent, WCE 1" },
	{ { Y, U, N, 0 }, WB, VWC_REASON_WCE_UNKNOWN, "present, WCE unknown" },
	{ { Y, N, N, 0 }, WT, VWC_REASON_WCE_DISABLED, "present, WCE 0" },
	{ { Y, Y, N, 0 }, WB, VWC_REASON_WCE_ENABLED, "present, WCE 1" },
	/* unknown means write-back */
	{ { U, U, N, 0 }, WB, VWC_REASON_PRESENT_UNKNOWN, "identify failed" },
	{ { U, N, N, 0 }, WB, VWC_REASON_PRESENT_UNKNOWN, "identify failed, WCE 0" },
	{ { Y, N, U, 0 }, WB, VWC_REASON_BACKUP_UNKNOWN, "WCE 0, SMART unread" },
	{ { N, U, U, 0 }, WT, VWC_REASON_NO_CACHE, "absent, SMART unread" },
	/* SMART bit 4 wins over everything but the admin, on a cache */
	{ { Y, N, Y, 0 }, WB, VWC_REASON_BACKUP_FAILED, "WCE 0, backup failed" },
	{ { Y, U, Y, 0 }, WB, VWC_REASON_BACKUP_FAILED, "WCE unknown, backup failed" },
	{ { U, U, Y, 0 }, WB, VWC_REASON_BACKUP_FAILED, "identify failed, backup failed" },
	/* admin overrides */
	{ { Y, N, N, VWC_OVERRIDE_WRITE_BACK }, WB, VWC_REASON_OVERRIDE, "forced write-back" },
	{ { U, U, N, VWC_OVERRIDE_WRITE_BACK }, WB, VWC_REASON_OVERRIDE, "forced write-back, identify failed" },
	{ { Y, Y, N, VWC_OVERRIDE_IGNORE }, VWC_MODE_NONE, VWC_REASON_IGNORED, "ignored" },
	{ { N, U, N, VWC_OVERRIDE_IGNORE }, VWC_MODE_NONE, VWC_REASON_IGNORED, "ignored, absent" },
	/*
	 * No volatile cache: the kernel keeps write through and refuses
	 * write back, so nothing may demand it (it would drift forever);
	 * the reason says why the override or bit 4 did not apply.
	 */
	{ { N, U, Y, 0 }, WT, VWC_REASON_NO_CACHE_BACKUP_FAILED, "absent, backup failed" },
	{ { N, U, N, VWC_OVERRIDE_WRITE_BACK }, WT, VWC_REASON_NO_CACHE_OVERRIDE, "forced write-back, absent" },
	{ { N, U, Y, VWC_OVERRIDE_WRITE_BACK }, WT, VWC_REASON_NO_CACHE_OVERRIDE, "forced write-back, absent, backup failed" },
	{ { N, U, U, VWC_OVERRIDE_WRITE_BACK }, WT, VWC_REASON_NO_CACHE_OVERRIDE, "forced write-back, absent, SMART unread" },
};

/*
 * The namespace's own "no volatile write cache" bit (NSFEAT bit 5), over
 * the controllers reaching it: yes is write through whatever they say;
 * no and unknown leave it to them.
 */
static const struct vwc_facts on = { Y, Y, N, 0 }, off = { Y, N, N, 0 };
static const struct vwc_facts unk = { Y, U, N, 0 }, idf = { U, U, U, 0 };
static const struct vwc_facts bkf = { Y, N, Y, 0 };
static const struct vwc_facts fwb = { Y, Y, N, VWC_OVERRIDE_WRITE_BACK };
static const struct vwc_facts ign = { Y, Y, N, VWC_OVERRIDE_IGNORE };

static const struct {
	enum vwc_tri ns;
	struct vwc_facts f[2];
	int n;
	enum vwc_mode mode;
	enum vwc_reason reason;
	const char *row;
} ns_table[] = {
	{ Y, { on }, 1, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, WCE 1" },
	{ Y, { unk }, 1, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, WCE unknown" },
	{ Y, { idf }, 1, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, identify controller failed" },
	{ Y, { bkf }, 1, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, backup failed" },
	{ Y, { off }, 1, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, WCE 0" },
	{ Y, { on, unk }, 2, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, two paths on+unknown" },
	{ Y, { fwb }, 1, WT, VWC_REASON_NS_NO_CACHE_OVERRIDE, "ns no cache, forced write-back" },
	{ Y, { off, fwb }, 2, WT, VWC_REASON_NS_NO_CACHE_OVERRIDE, "ns no cache, one path forced write-back" },
	{ Y, { ign }, 1, VWC_MODE_NONE, VWC_REASON_IGNORED, "ns no cache, ignored" },
	{ Y, { on, ign }, 2, VWC_MODE_NONE, VWC_REASON_IGNORED, "ns no cache, one path ignored" },
	{ Y, { { 0 } }, 0, WT, VWC_REASON_NS_NO_CACHE, "ns no cache, no controller" },
	/* unknown: the row does not apply, the controllers decide */
	{ U, { on }, 1, WB, VWC_REASON_WCE_ENABLED, "ns unknown, WCE 1" },
	{ U, { unk }, 1, WB, VWC_REASON_WCE_UNKNOWN, "ns unknown, WCE unknown" },
	{ U, { off }, 1, WT, VWC_REASON_WCE_DISABLED, "ns unknown, WCE 0" },
	{ U, { off, on }, 2, WB, VWC_REASON_SHARED_ENABLED, "ns unknown, paths off+on" },
	{ U, { { 0 } }, 0, WB, VWC_REASON_NO_CONTROLLER, "ns unknown, no controller" },
	/* a namespace that may have a cache: the controllers decide */
	{ N, { on }, 1, WB, VWC_REASON_WCE_ENABLED, "ns may cache, WCE 1" },
	{ N, { off }, 1, WT, VWC_REASON_WCE_DISABLED, "ns may cache, WCE 0" },
	{ N, { bkf }, 1, WB, VWC_REASON_BACKUP_FAILED, "ns may cache, backup failed" },
	{ N, { fwb }, 1, WB, VWC_REASON_OVERRIDE, "ns may cache, forced write-back" },
	{ N, { off, unk }, 2, WB, VWC_REASON_WCE_UNKNOWN, "ns may cache, paths off+unknown" },
};

int main(void)
{
	enum vwc_mode m;
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct vwc_decision d = vwc_policy_decide(&table[i].f);

		ok(d.mode == table[i].mode && d.reason == table[i].reason,
		   "decide: %s -> %s", table[i].row,
		   vwc_mode_str(table[i].mode));
	}

	for (i = 0; i < sizeof(ns_table) / sizeof(ns_table[0]); i++) {
		struct vwc_decision d = vwc_policy_decide_ns(ns_table[i].ns,
							     ns_table[i].f,
							     ns_table[i].n);

		ok(d.mode == ns_table[i].mode && d.reason == ns_table[i].reason,
		   "decide_ns: %s -> %s (%s)", ns_table[i].row,
		   vwc_mode_str(ns_table[i].mode),
		   vwc_reason_str(ns_table[i].reason));
	}
	ok(vwc_reason_ns_no_cache(VWC_REASON_NS_NO_CACHE) &&
	   vwc_reason_ns_no_cache(VWC_REASON_NS_NO_CACHE_OVERRIDE) &&
	   !vwc_reason_ns_no_cache(VWC_REASON_NO_CACHE) &&
	   !vwc_reason_ns_no_cache(VWC_REASON_WCE_DISABLED),
	   "the namespace's reasons are told apart from the controller's");

	/* multipath: write-through only if every controller says so */
	{
		struct vwc_facts none = { N, U, N, 0 };
		struct vwc_facts ign_off = { Y, N, N, VWC_OVERRIDE_IGNORE };
		struct vwc_facts f2[2];
		struct vwc_decision d;

		f2[0] = off; f2[1] = off;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WT, "shared: off+off -> write through");
		f2[0] = off; f2[1] = none;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WT, "shared: off+absent -> write through");
		f2[0] = off; f2[1] = on;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WB && d.reason == VWC_REASON_SHARED_ENABLED,
		   "shared: off+on -> write back (shared enabled)");
		f2[0] = on; f2[1] = off;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WB, "shared: on+off -> write back");
		f2[0] = off; f2[1] = unk;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WB && d.reason == VWC_REASON_WCE_UNKNOWN,
		   "shared: off+unknown -> write back");
		f2[0] = off; f2[1] = ign_off;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == VWC_MODE_NONE, "shared: one ignored -> untouched");
		f2[0] = off; f2[1] = (struct vwc_facts){ N, U, Y, 0 };
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WT, "shared: off+absent with bit 4 -> write through");
		f2[0] = (struct vwc_facts){ N, U, N, VWC_OVERRIDE_WRITE_BACK };
		f2[1] = on;
		d = vwc_policy_decide_shared(f2, 2);
		ok(d.mode == WB && d.reason == VWC_REASON_SHARED_ENABLED,
		   "shared: absent forced write-back+on -> write back (the other's cache)");
		d = vwc_policy_decide_shared(f2, 0);
		ok(d.mode == WB && d.reason == VWC_REASON_NO_CONTROLLER,
		   "shared: no controller -> write back");
		d = vwc_policy_decide_shared(&off, 1);
		ok(d.mode == WT && d.reason == VWC_REASON_WCE_DISABLED,
		   "shared: single controller = its own decision");
	}

	/* restore handed it back: only the safe direction is still taken */
	{
		struct vwc_decision wt = { WT, VWC_REASON_WCE_DISABLED };
		struct vwc_decision wb = { WB, VWC_REASON_WCE_ENABLED };
		struct vwc_decision none = { VWC_MODE_NONE, VWC_REASON_IGNORED };
		struct vwc_decision d;

		d = vwc_policy_restored(wt);
		ok(d.mode == VWC_MODE_NONE && d.reason == VWC_REASON_RESTORED,
		   "restored: write through is not applied");
		d = vwc_policy_restored(wb);
		ok(d.mode == WB && d.reason == VWC_REASON_WCE_ENABLED,
		   "restored: write back still is");
		d = vwc_policy_restored(none);
		ok(d.mode == VWC_MODE_NONE, "restored: ignored stays untouched");
	}

	/* a kernel that reads WCE holds no cache: may its write through stand? */
	{
		struct vwc_facts off = { Y, N, N, 0 }, on = { Y, Y, N, 0 };
		struct vwc_facts unk = { Y, U, N, 0 }, none = { N, U, N, 0 };
		struct vwc_facts off_wb = { Y, N, N, VWC_OVERRIDE_WRITE_BACK };
		struct vwc_facts off_bf = { Y, N, Y, 0 }, off_bu = { Y, N, U, 0 };
		struct vwc_facts pu = { U, N, N, 0 }, f2[2];

		ok(vwc_policy_kernel_may_hold(&off, 1), "kernel holds: WCE=0 -> may");
		ok(vwc_policy_kernel_may_hold(&off_wb, 1),
		   "kernel holds: WCE=0 with the admin's write-back line -> may");
		ok(vwc_policy_kernel_may_hold(&off_bf, 1) &&
		   vwc_policy_kernel_may_hold(&off_bu, 1),
		   "kernel holds: WCE=0 with a failed or unknown backup -> may");
		ok(vwc_policy_kernel_may_hold(&none, 1), "kernel holds: no cache -> may");
		ok(!vwc_policy_kernel_may_hold(&on, 1), "kernel holds: WCE=1 -> may not");
		ok(!vwc_policy_kernel_may_hold(&unk, 1), "kernel holds: WCE unknown -> may not");
		ok(!vwc_policy_kernel_may_hold(&pu, 1),
		   "kernel holds: VWC present unknown -> may not");
		f2[0] = off; f2[1] = on;
		ok(!vwc_policy_kernel_may_hold(f2, 2),
		   "kernel holds: shared, one controller WCE=1 -> may not");
		f2[1] = off_wb;
		ok(vwc_policy_kernel_may_hold(f2, 2),
		   "kernel holds: shared, every controller WCE=0 -> may");
		ok(!vwc_policy_kernel_may_hold(NULL, 0),
		   "kernel holds: no controller known -> may not");
	}
	{
		bool v = true;

		ok(vwc_policy_probe_wce(VWC_TRI_NO, &v) && !v,
		   "probe Set Features: WCE read 0 -> sends 0");
		ok(!vwc_policy_probe_wce(VWC_TRI_YES, &v),
		   "probe Set Features: WCE read 1 -> none (a stale 1 would turn a cache on under write through)");
		ok(!vwc_policy_probe_wce(VWC_TRI_UNKNOWN, &v),
		   "probe Set Features: WCE unknown -> none");
	}

	for (i = VWC_REASON_IGNORED; i <= VWC_REASON_NS_NO_CACHE_OVERRIDE; i++)
		ok(strcmp(vwc_reason_str((enum vwc_reason)i), "?") != 0,
		   "reason %zu has its text", i);
	ok(strstr(vwc_reason_str(VWC_REASON_NO_CACHE_OVERRIDE), "no volatile write cache") &&
	   strstr(vwc_reason_str(VWC_REASON_NO_CACHE_BACKUP_FAILED), "no volatile write cache"),
	   "the no-cache reasons say there is no cache");
	ok(!vwc_mode_parse("write back\n", &m) && m == WB, "parse 'write back'");
	ok(!vwc_mode_parse("write through\n", &m) && m == WT,
	   "parse 'write through'");
	ok(vwc_mode_parse("write", &m) < 0, "parse rejects 'write'");
	ok(vwc_mode_parse("write back extra", &m) < 0, "parse rejects trailing");
	is_str(vwc_mode_str(WT), "write through", "sysfs spelling");
	is_str(vwc_tri_wce_str(U), "unknown", "wce unknown");
	return tap_done();
}
