# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/pkg/lib.sh - sourced by piuparts.sh and autopkgtest.sh: the
# system's sources per suite, the cached minbase tarball, the packages of
# both versions (the system suite's, else built). Callers set REPO and OUT
# and define log().

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
SYS_SOURCES=${VWC_SYS_SOURCES:-/etc/apt/sources.list.d/debian.sources}
DEBS_FROM=${VWC_SYSTEM_OUT:-$REPO/build/system}
NEXT=0.1.0+up1

# stanzas SUITE: "URI|SUITE|COMPONENTS" lines of the system's sources for
# SUITE (bookworm: all of them, updates and security too; another suite:
# the first stanza, the main archive, with the suite replaced).
stanzas() {
	awk -v suite="$1" '
	BEGIN { RS = ""; FS = "\n" }
	{
		u = s = c = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^URIs:/) u = substr($i, 6)
			if ($i ~ /^Suites:/) s = substr($i, 8)
			if ($i ~ /^Components:/) c = substr($i, 12)
		}
		gsub(/^[ \t]+|[ \t]+$/, "", u); gsub(/^[ \t]+/, "", c)
		n = split(s, S, /[ \t]+/)
		if (suite != "bookworm") {
			if (NR == 1) print u "|" suite "|" c
			next
		}
		for (j = 1; j <= n; j++) if (S[j] != "") print u "|" S[j] "|" c
	}' "$SYS_SOURCES"
}

# base SUITE: the cached minbase tarball (made once, under a lock)
base() {
	local suite=$1 tgz=$CACHE/piuparts/$1.tar.gz tmp lk
	mkdir -p "$CACHE/piuparts"
	exec {lk}>"$CACHE/piuparts/$suite.lock"
	flock "$lk"
	if [ ! -s "$tgz" ]; then
		tmp=$(mktemp -d "$CACHE/piuparts/.$suite.XXXXXX")
		stanzas "$suite" | while IFS='|' read -r u s c; do
			echo "deb $u $s $c"
		done >"$tmp/sources.list"
		log "$suite: base tarball (mmdebstrap minbase, cached in $CACHE/piuparts)"
		if ! mmdebstrap --variant=minbase --mode=root --format=tar \
			--aptopt='Acquire::Check-Valid-Until "false"' \
			--aptopt='APT::Install-Recommends "false"' \
			"$suite" "$tmp/base.tar" "$tmp/sources.list" >"$tmp/log" 2>&1; then
			tail -n 20 "$tmp/log" >&2
			rm -rf "$tmp"
			exec {lk}>&-
			return 1
		fi
		gzip -1 "$tmp/base.tar" && mv "$tmp/base.tar.gz" "$tgz"
		rm -rf "$tmp"
	fi
	exec {lk}>&-
	echo "$tgz"
}

# debs SUITE [v1]: sets v1 and v2 (directories with the two versions'
# .debs): the system suite's of this run, else built into $OUT/debs-SUITE
# and $OUT/debs-SUITE-up (with "v1": the first version only)
debs() {
	local suite=$1
	v1=$DEBS_FROM/debs-$suite v2=$DEBS_FROM/debs-$suite-up
	if ls "$v1"/nvme-vwc-sync_0.1.0_*.deb "$v2"/nvme-vwc-sync_"$NEXT"_*.deb >/dev/null 2>&1; then
		log "$suite: the system suite's packages ($v1, $v2)"
		return 0
	fi
	v1=$OUT/debs-$suite v2=$OUT/debs-$suite-up
	log "$suite: no system suite packages in $DEBS_FROM: building${2:+ the first version} here"
	# shellcheck disable=SC2086 # word splitting intended
	bash scripts/build-debs.sh ${VWC_DEBS_OPTS:-} "$suite" "$v1" >"$OUT/$suite-build.log" 2>&1 || return 1
	[ -z "${2:-}" ] || return 0
	# shellcheck disable=SC2086 # word splitting intended
	bash scripts/build-debs.sh ${VWC_DEBS_OPTS:-} --version "$NEXT" --repack "$v1" "$suite" "$v2" \
		>>"$OUT/$suite-build.log" 2>&1
}


# need_pkgs NAME PKG...: install the Debian packages among PKG that are not
# installed yet; if apt cannot, print suite NAME's count line
# ("NAME: 0 passed, 1 failed") and exit 1. Callers define log().
need_pkgs() {
	local name=$1 p need=()
	shift
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || need+=("$p")
	done
	[ "${#need[@]}" -gt 0 ] || return 0
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 &&
		return 0
	echo "not ok - install ${need[*]}"
	echo "$name: 0 passed, 1 failed"
	exit 1
}
