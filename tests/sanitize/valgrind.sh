#!/bin/bash
# valgrind memcheck on the sidecar in a guest: a plain build installed
# with valgrind (launcher, memcheck, preloads, suppressions, libc's
# detached debug symbols) added to the install tree, then the manual VM
# case valgrind-watch (400 Set Features 06h events).
# Usage: valgrind.sh BUILDDIR
# Environment: VWC_VG_EVENTS (Set Features to send, default 400),
#   VWC_VG_KERNELS (default 7.2).
# Last lines: the VM suite's figures and count as "valgrind: ...", e.g.
# "valgrind: 8 passed, 0 failed, 0 skipped" (a skip, valgrind missing
# from the image, is a failure under CI: tests/skips.allow).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:?usage: valgrind.sh BUILDDIR}
mkdir -p "$B"
B=$(cd "$B" && pwd)
KERNELS=${VWC_VG_KERNELS:-7.2}
bash tests/analyze/deps.sh valgrind libc6-dbg meson ninja-build || {
	echo "valgrind: 0 passed, 1 failed"; exit 1; }
if [ ! -f "$B/build/build.ninja" ]; then
	meson setup "$B/build" >"$B/setup.log" 2>&1 || { tail "$B/setup.log"; echo "valgrind: 0 passed, 1 failed"; exit 1; }
fi
nice ninja -C "$B/build" >"$B/build.log" 2>&1 || { tail "$B/build.log"; echo "valgrind: 0 passed, 1 failed"; exit 1; }
D=$B/destdir
rm -rf "$D"
DESTDIR=$D meson install -C "$B/build" --quiet >/dev/null 2>&1
# valgrind as a tar the case unpacks in the guest: its tool binary is
# static, which the image builder's ldd pass does not expect. The launcher
# and the preloads need only libc (in every image).
V=$B/valgrind-root
rm -rf "$V"
install -D /usr/bin/valgrind "$V/usr/bin/valgrind"
install -D /usr/bin/valgrind.bin "$V/usr/bin/valgrind.bin"	# the launcher; valgrind is a sh wrapper
for f in memcheck-amd64-linux vgpreload_core-amd64-linux.so \
	 vgpreload_memcheck-amd64-linux.so default.supp; do
	install -D "/usr/libexec/valgrind/$f" "$V/usr/libexec/valgrind/$f"
done
# ld.so must have its symbols for memcheck's mandatory redirections (libc's
# 4 MB are left out: reading them costs minutes under emulation)
for lib in /lib64/ld-linux-x86-64.so.2; do
	id=$(readelf -n "$(readlink -f "$lib")" | sed -n 's/.*Build ID: //p')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -f "$dbg" ] && install -D -m 644 "$dbg" "$V$dbg"
done
install -d "$D/usr/share/vwc-test"
tar -C "$V" -czf "$D/usr/share/vwc-test/valgrind.tar.gz" .
echo "${VWC_VG_EVENTS:-400}" >"$D/usr/share/vwc-test/valgrind-events"
out=$B/vm.out
VWC_LOG_DIR=$B/vm-logs VWC_CASES=valgrind-watch VWC_KERNELS="$KERNELS" \
	bash tests/vm/run-suite.sh "$D" >"$out" 2>&1
grep -E '^\[|^vm:' "$out"
s=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
if [ -z "$s" ]; then
	echo "valgrind: 0 passed, 1 failed"
	exit 1
fi
grep -E '^vm: product checks' "$out" | tail -n 1 | sed 's/^vm:/valgrind:/'
echo "valgrind: ${s#vm: }"
[[ $s == *" 0 failed"* ]]
