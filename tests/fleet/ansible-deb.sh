#!/bin/bash
# The Ansible role's Debian package path (vwc_install=deb), in a throwaway
# Debian 12 root where ansible-playbook runs with connection local: the
# package from scripts/build-debs.sh installed by the role (copy + apt, the
# dependencies from the root's own apt state), the sidecar enabled (systemd
# is not running there: `systemctl --root=/`, as in an image build), sync
# and audit run by the installed /usr/sbin/nvme-vwc-sync (the host's /sys:
# no NVMe here), --check before the install changes nothing, a second apply
# reports changed=0, --check after it too; then vwc_install=none with a
# textfile: the drop-in runs the package's binary.
# The root is made once with mmdebstrap (minbase + ansible-core,
# python3-apt, systemd, udev and the package's dependencies) from the
# system's Debian sources and cached as a tarball; each run unpacks it into
# a temp directory, so the cache is never changed.
#   $VWC_CACHE_DIR/fleet/bookworm-ansible.tar (+ .inputs)
# Usage: ansible-deb.sh [DEB]   DEB default: the newest
#        nvme-vwc-sync_*_amd64.deb of build-debs/bookworm/ or
#        build/system/debs-bookworm/ (scripts/build-debs.sh bookworm, or the
#        system suite, makes it); without one, the test is skipped.
# Output: TAP. Needs root (chroot, mounts in a private namespace).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}/fleet
SYS_SOURCES=${VWC_SYS_SOURCES:-/etc/apt/sources.list.d/debian.sources}
PKGS=ansible-core,python3-apt,systemd,udev,libnvme1,libjson-c5,libudev1,libtracefs1,libtraceevent1,libbpf1

TAP_TAIL=20
# shellcheck source=tests/fleet/lib.sh
. "$HERE/lib.sh"

deb=${1:-}
if [ -z "$deb" ]; then
	deb=$(ls -t "$REPO"/build-debs/bookworm/nvme-vwc-sync_*_amd64.deb \
		"$REPO"/build/system/debs-bookworm/nvme-vwc-sync_*_amd64.deb 2>/dev/null | head -n 1)
fi
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
	echo "1..1"
	echo "ok 1 - role, deb method in a Debian 12 root # SKIP no .deb (scripts/build-debs.sh bookworm)"
	exit 0
fi
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
[ "$(id -u)" = 0 ] || bail "root" "needs root (chroot)"

# the cached root
mkdir -p "$CACHE"
tar=$CACHE/bookworm-ansible.tar
inputs="suite bookworm; packages $PKGS; sources $(sha256sum <"$SYS_SOURCES" | cut -c1-16)"
exec 9>"$CACHE/bookworm-ansible.lock"
flock 9
if [ ! -s "$tar" ] || [ "$(cat "$tar.inputs" 2>/dev/null)" != "$inputs" ]; then
	command -v mmdebstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >&2 ||
		bail "mmdebstrap" "apt-get install mmdebstrap failed"
	echo "# mmdebstrap bookworm (minbase + $PKGS), once" >&2
	src=$(mktemp)
	grep -v '^#' "$SYS_SOURCES" >"$src"
	# mmdebstrap picks the output format from the name: keep ".tar"
	if ! mmdebstrap --variant=minbase --include="$PKGS" --aptopt='Acquire::Check-Valid-Until "false"' \
		bookworm "$CACHE/bookworm-ansible.new.tar" "$src" >"$CACHE/bookworm-ansible.log" 2>&1; then
		rm -rf "$src" "$CACHE/bookworm-ansible.new.tar"
		bail "mmdebstrap bookworm root" "$(tail -n 20 "$CACHE/bookworm-ansible.log")"
	fi
	rm -f "$src"
	rm -rf "$tar"
	mv -f "$CACHE/bookworm-ansible.new.tar" "$tar"
	echo "$inputs" >"$tar.inputs"
fi
exec 9>&-

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root" "$tmp/out"
tar -xf "$tar" -C "$root" || bail "unpack the root" "tar -xf $tar failed"
mkdir -p "$root/repo" "$root/debs" "$root/out"
cp "$deb" "$root/debs/"
echo "1..10"
ok "Debian 12 root with ansible-core ($(chroot "$root" dpkg-query -W -f '${Version}' ansible-core 2>/dev/null))"

# play LOG [args]: the shipped playbook inside the root, as root there,
# with /proc, /dev, /sys mounted and the repository read-only, in a
# private mount namespace (gone when the command ends)
play() {
	local log=$1
	shift
	unshare -m --propagation private sh -c '
		root=$1 repo=$2; shift 2
		mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
		mount -t sysfs sysfs "$root/sys" && mount --bind "$repo" "$root/repo" &&
		mount -o remount,bind,ro "$root/repo" &&
		exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_LOCAL_TEMP=/tmp/al ANSIBLE_REMOTE_TEMP=/tmp/ar \
			ansible-playbook -i localhost, -c local -e ansible_python_interpreter=/usr/bin/python3 \
			-e ansible_become_method=su /repo/contrib/ansible/nvme-vwc-sync.yml \
			-e vwc_audit_dir=/out "$@"' sh "$root" "$REPO" "$@" -e "vwc_deb=/debs/$(basename "$deb")" \
		>"$tmp/$log" 2>&1
}
recap() { grep -E '^localhost +:' "$tmp/$1"; }
played() { # LOG NAME WANT(0|+)
	local c
	c=$(recap "$1" | sed -n 's/.* changed=\([0-9]*\) .*/\1/p')
	if ! recap "$1" | grep -c ' failed=0 ' >/dev/null || [ -z "$c" ]; then
		notok "$2" "$(grep -E 'fatal|ERROR|FAILED' -A6 "$tmp/$1" | head -n 20; recap "$1")"
	elif { [ "$3" = + ] && [ "$c" -gt 0 ]; } || [ "$3" = "$c" ]; then
		ok "$2 (changed=$c)"
	else
		notok "$2 (changed=$c, expected $3)" "$(grep -E '^changed:' -B2 "$tmp/$1" | grep TASK)"
	fi
}
installed() { chroot "$root" dpkg-query -W -f '${Status}' nvme-vwc-sync 2>/dev/null; }

play check0.log --check
played check0.log "--check before the install: reports changes" +
st=$(installed)
if [ "$st" != "install ok installed" ] && [ ! -e "$root/usr/sbin/nvme-vwc-sync" ]; then ok "--check installed nothing"; else notok "--check installed nothing" "$st"; fi
play run1.log
played run1.log "apply: package installed" +
en=$(chroot "$root" systemctl is-enabled nvme-vwc-sync.service 2>&1)
if [ "$(installed)" = "install ok installed" ] && [ "$en" = enabled ]; then
	ok "dpkg: nvme-vwc-sync $(chroot "$root" dpkg-query -W -f '${Version}' nvme-vwc-sync) installed, sidecar enabled"
else
	notok "package installed and sidecar enabled" "dpkg: $(installed); is-enabled: $en"
fi
if jq -e '.schema_version == 1 and .command == "audit"' "$root/out/localhost.json" >/dev/null 2>&1; then
	ok "audit by /usr/sbin/nvme-vwc-sync saved as /out/localhost.json"
else
	notok "audit saved" "$(ls -l "$root/out" 2>&1)"
fi
play run2.log
played run2.log "second apply: changed=0" 0
play check1.log --check
played check1.log "--check after the install: changed=0" 0
# vwc_install=none on the installed package, with a textfile: the drop-in
# runs the package's binary (the role found /usr/sbin's)
play none.log -e vwc_install=none -e vwc_textfile=/var/lib/prometheus/node-exporter/nvme-vwc-sync.prom
played none.log "install none on the package, textfile added: the drop-in and its directory" 2
dropin=$root/etc/systemd/system/nvme-vwc-sync.service.d/textfile.conf
if grep -qx 'ExecStart=/usr/sbin/nvme-vwc-sync watch --textfile=/var/lib/prometheus/node-exporter/nvme-vwc-sync.prom' "$dropin" 2>/dev/null; then
	ok "install none: the drop-in runs the package's /usr/sbin/nvme-vwc-sync"
else
	notok "install none: the drop-in runs the package's binary" "$(cat "$dropin" 2>&1)"
fi
[ "$bad" -eq 0 ]
