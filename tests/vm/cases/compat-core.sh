#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 7.2
# manual: run by tests/compat/run.sh, whose image brings the nvme and nvme-vwc-sync under test
#
# The core case (core.sh) with another nvme-cli and libnvme than
# Debian 12's. /etc/vwc-compat/expect, written by tests/compat/run.sh,
# names what the binaries in the image must be, so that a run on the wrong
# ones fails:
#	VWC_EXPECT_NVME		start of `nvme version`'s first line
#	VWC_EXPECT_NVME_LIBNVME	start of its "libnvme version" line
#	VWC_EXPECT_STANDALONE	a library nvme-vwc-sync must load (as
#				LD_TRACE_LOADED_OBJECTS lists it)
# Then the plugin's own exit status 3 (audit drift, both forms), and
# core.sh unchanged.
. /vwc/guest/lib.sh

if [ ! -r /etc/vwc-compat/expect ]; then
	plan 1
	fail "compat: /etc/vwc-compat/expect" "missing: not an image made by tests/compat/run.sh"
	finish
	exit 1
fi
. /etc/vwc-compat/expect
# its own 5 checks; core.sh, sourced at the end, declares its own plan
plan 5

v=$(nvme version 2>&1)
info "nvme version: $(echo "$v" | tr '\n' ' ')"
case $(echo "$v" | head -n 1) in
"$VWC_EXPECT_NVME"*) pass "compat: nvme is $VWC_EXPECT_NVME" ;;
*) fail "compat: nvme is $VWC_EXPECT_NVME" "$v" ;;
esac
case $v in
*"libnvme version $VWC_EXPECT_NVME_LIBNVME"*) pass "compat: nvme uses libnvme $VWC_EXPECT_NVME_LIBNVME" ;;
*) fail "compat: nvme uses libnvme $VWC_EXPECT_NVME_LIBNVME" "$v" ;;
esac
libs=$(LD_TRACE_LOADED_OBJECTS=1 nvme-vwc-sync 2>&1)
info "nvme-vwc-sync loads: $(echo "$libs" | grep -i nvme | tr -s ' \t\n' ' ')"
case $libs in
*"$VWC_EXPECT_STANDALONE"*) pass "compat: nvme-vwc-sync loads $VWC_EXPECT_STANDALONE" ;;
*) fail "compat: nvme-vwc-sync loads $VWC_EXPECT_STANDALONE" "$libs" ;;
esac

# Before anything is synced the WCE-off namespace drifts: audit says 3,
# through the plugin in both forms too (nvme-cli alone would say 1).
for form in "vwc audit" "vwc-audit"; do
	# shellcheck disable=SC2086
	nvme $form >/tmp/compat-audit.out 2>&1
	check_eq "compat: nvme $form exits 3 on drift" "$?" 3
done

. /vwc/cases/core.sh
