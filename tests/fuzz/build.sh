#!/bin/bash
# Build the libFuzzer harnesses: the libraries of src/ (core, quirks,
# watch) with clang, ASan, UBSan and fuzzer coverage, then one binary per
# tests/fuzz/fuzz-*.c.
# Usage: build.sh BUILDDIR   (harnesses land in BUILDDIR/fuzz-*)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:?usage: build.sh BUILDDIR}
SAN=-fsanitize=address,undefined
CFLAGS=(-g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all)

if [ ! -f "$B/build.ninja" ]; then
	CC=clang meson setup "$B" -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debug \
		"-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all" >"$B.setup.log" 2>&1 ||
		{ cat "$B.setup.log"; exit 1; }
fi
ninja -C "$B" src/watch/libvwc_watch.a src/quirks/libvwc_quirks.a src/core/libvwc_core.a >/dev/null
# shellcheck disable=SC2046 # pkg-config output is words
LIBS=(src/watch/libvwc_watch.a src/quirks/libvwc_quirks.a src/core/libvwc_core.a $(pkg-config --libs libudev libkmod mount json-c libtracefs libtraceevent libbpf) -lnvme)
[ -n "$(pkg-config --libs libnvme3 2>/dev/null || true)" ] &&
	grep -q "libnvme API.*: 3" "$B/meson-logs/meson-log.txt" 2>/dev/null &&
	LIBS+=($(pkg-config --libs libnvme3))
for src in tests/fuzz/fuzz-*.c; do
	name=$(basename "$src" .c)
	clang "${CFLAGS[@]}" -fsanitize=fuzzer "$SAN" -D_GNU_SOURCE \
		-Isrc/core -Isrc/quirks -Isrc/watch -I"$B" -Itests/fuzz $(pkg-config --cflags libtracefs libtraceevent libbpf) \
		"$src" -o "$B/$name" \
		"${LIBS[@]/#src\//$B/src/}"
done
echo "fuzz: built $(ls tests/fuzz/fuzz-*.c | wc -l) harnesses in $B"
