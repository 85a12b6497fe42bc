#!/bin/sh
# vm: subsys name=s0 ctrls=2 wc=off,on shared=255 size=4 whole
# kernels: 6.1 7.2
# timeout: 1200
#
# path-join with 255 shared namespaces (QEMU allows 256 namespace ids a
# subsystem; the 256th is the private one that keeps the joining
# controller's cache on).
JOIN_MS=120000
. /vwc/cases/path-join.sh
