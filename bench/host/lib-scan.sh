# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# For bench/host/scan-cost.sh and scan-guest.sh, sourced from the tree's
# top: bench/host/scan-cost.c built against a build's static libraries,
# and another commit's tree and libraries beside the tree's.
#   build_cost TREE BUILD OUT   TREE's scan-cost.c against BUILD's libraries
#   base_build COMMIT DIR       a worktree of COMMIT at DIR, its libraries
#                               built in DIR/build (remove the worktree
#                               with git worktree remove --force DIR)
scan_libs=(src/watch/libvwc_watch.a src/core/libvwc_core.a src/core/libvwc_policy.a)
build_cost() {
	# shellcheck disable=SC2046 # word splitting intended
	gcc -O2 -Wall -D_GNU_SOURCE -I "$1/src/core" -I "$1/src/quirks" -I "$1/src/watch" -I "$1/src" \
		-I "$2" -I "$2/src/core" -o "$3" "$1/bench/host/scan-cost.c" \
		"${scan_libs[@]/#/$2/}" \
		$(pkg-config --libs libudev json-c libnvme libkmod mount libtracefs libtraceevent libbpf)
}
base_build() {
	git worktree add -f --detach "$2" "$1" >/dev/null 2>&1 &&
		meson setup "$2/build" "$2" --buildtype=debugoptimized -Db_coverage=false \
			"-Dnvme_cli_source=$(bash scripts/fetch-nvme-cli.sh)" >/dev/null &&
		ninja -C "$2/build" "${scan_libs[@]}" >/dev/null
}
