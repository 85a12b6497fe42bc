# Sourced as /etc/vwc-test/env in a coverage guest (tests/coverage). The
# instrumented binaries write their .gcda files at their build paths
# (libgcov creates the directories), also when udev runs them with its
# own environment; guest-after.sh sends what is under the build dir
# named in /etc/vwc-test/gcov-dir to the host.
:
