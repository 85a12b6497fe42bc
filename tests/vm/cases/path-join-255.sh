#!/bin/sh
# vm: subsys name=s0 ctrls=2 wc=off,on shared=255 size=4 whole
# kernels: 7.2
# timeout: 1200
#
# path-join with 255 shared namespaces (QEMU allows 256 namespace ids a
# subsystem; the 256th is the private one that keeps the joining
# controller's cache on). On 7.2 alone: path-join runs the same checks
# at 16 on four kernels, 6.1 among them; at 255 each kernel costs some
# 300 s of a guest, and the test command had none to spare once the
# 1,024-namespace fabrics case joined it.
JOIN_MS=120000
. /vwc/cases/path-join.sh
