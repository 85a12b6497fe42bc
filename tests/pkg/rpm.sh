#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/pkg/rpm.sh - the RPM spec built with Debian's rpm tools, and the
# release tarball's source copy (host side, no VM, no chroot)
#
# Usage: tests/pkg/rpm.sh [OUTDIR]	(default build/rpm)
#
#	tarball		an unpacked `git archive HEAD` (with a build/ and an
#			nvme-cli/ added) gives scripts/build-debs.sh --stage-only
#			exactly the commit's files, without git
#	version		the spec's Version is meson.build's and debian/
#			changelog's upstream version
#	rpmbuild	`rpmbuild -ba` of packaging/rpm/nvme-vwc-sync.spec from a
#			tarball of this tree (the files build-debs.sh copies),
#			its %check running the unit tests; Fedora's meson and
#			systemd macros from tests/pkg/rpm-macros, build
#			dependencies not checked (--nodeps: Debian's rpm
#			database is empty; the host has them as Debian packages)
#	files		the binary package holds the command, udev rules, hwdb,
#			unit, dracut module, man pages; no initramfs-tools
#	scriptlets	%post (systemd preset, hwdb update, rules reload),
#			%preun (stop, restore --all), %postun (try-restart,
#			leftovers), %posttrans (dracut); each passes sh -n
#	srpm		the source package holds the spec and the tarball
#	rpmlint		no error on spec, SRPM and RPM (filters in
#			packaging/rpm/nvme-vwc-sync.rpmlintrc, each justified)
#	plugin		--with plugin declares nvme-cli-vwc; without
#			nvme_cli_version it stops with the error saying so
#
# Prints "rpm: N passed, N failed[, N skipped]" last; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
OUT=${1:-$REPO/build/rpm}
SPEC=$REPO/packaging/rpm/nvme-vwc-sync.spec
MACROS=$REPO/tests/pkg/rpm-macros
LINTRC=$REPO/packaging/rpm/nvme-vwc-sync.rpmlintrc

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
bad() { failed=$((failed + 1)); echo "not ok - $1${2:+ ($2)}"; }
skp() { skipped=$((skipped + 1)); echo "ok - $1 # SKIP $2"; }
finish() {
	echo "rpm: $passed passed, $failed failed${skipped:+, $skipped skipped}" | sed 's/, 0 skipped//'
	[ "$failed" = 0 ]
	exit
}
t0=$SECONDS

need=()
for p in rpm rpmlint; do
	dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
	echo "rpm: installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		{ bad "install ${need[*]}"; finish; }
fi

rm -rf "$OUT"
mkdir -p "$OUT"

# --- tarball: build-debs.sh's source copy from an unpacked git archive ---
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	x=$OUT/tarball
	mkdir -p "$x/tree"
	git archive HEAD | tar -x -C "$x/tree"
	mkdir -p "$x/tree/build/junk" "$x/tree/nvme-cli"
	touch "$x/tree/build/junk/x.o" "$x/tree/nvme-cli/meson.build"
	if st=$(cd "$x/tree" && bash scripts/build-debs.sh --stage-only trixie "$x/out" 2>"$x/err"); then
		git ls-tree -r --name-only HEAD | sort >"$x/want"
		(cd "$st" && find . -type f -o -type l | sed 's|^\./||' | sort) >"$x/got"
		if cmp -s "$x/want" "$x/got"; then
			ok "tarball: build-debs.sh in an unpacked git archive copies the commit's $(wc -l <"$x/want") files, no build/ nor nvme-cli/"
		else
			bad "tarball: staged files = the commit's" "$(diff "$x/want" "$x/got" | head -n 5 | tr '\n' ' ')"
		fi
	else
		bad "tarball: build-debs.sh --stage-only in an unpacked git archive" "$(tail -n 2 "$x/err" | tr '\n' ' ')"
	fi
	out=$(cd "$x/tree" && bash scripts/build-debs.sh --head --stage-only trixie "$x/out2" 2>&1)
	if [ $? != 0 ] && grep -q 'needs a git checkout' <<<"$out"; then
		ok "tarball: --head refused there with the reason"
	else
		bad "tarball: --head refused without git" "$out"
	fi
	rm -rf "$x"
else
	skp "tarball" "not a git checkout"
fi

# --- version ---
spec_v=$(sed -n 's/^Version:[[:space:]]*//p' "$SPEC")
meson_v=$(sed -n "s/^[[:space:]]*version: '\([^']*\)'.*/\1/p" meson.build | head -n 1)
deb_v=$(dpkg-parsechangelog -l debian/changelog -S Version)
deb_v=${deb_v%%-*}
if [ "$spec_v" = "$meson_v" ] && [ "$spec_v" = "$deb_v" ]; then
	ok "version: spec $spec_v = meson.build = debian/changelog"
else
	bad "version: spec '$spec_v', meson.build '$meson_v', debian/changelog '$deb_v' agree"
fi

# --- rpmbuild ---
top=$OUT/top
mkdir -p "$top/SOURCES"
name=nvme-vwc-sync-$spec_v
if ! st=$(bash scripts/build-debs.sh --stage-only trixie "$OUT/stage" 2>"$OUT/stage.err"); then
	bad "rpmbuild: source copy" "$(tail -n 2 "$OUT/stage.err")"
	finish
fi
tar -C "$(dirname "$st")" -czf "$top/SOURCES/$name.tar.gz" --transform "s|^$(basename "$st")|$name|" "$(basename "$st")"
rm -rf "$OUT/stage"
rpmb=(rpmbuild --nodeps --load="$MACROS" --define "_topdir $top")
tb=$SECONDS
if "${rpmb[@]}" -ba "$SPEC" >"$OUT/rpmbuild.log" 2>&1; then
	ok "rpmbuild -ba: $(cd "$top" && echo SRPMS/*.rpm RPMS/*/*.rpm) ($((SECONDS - tb)) s; %check: $(sed -n 's/^Ok:[[:space:]]*\([0-9]*\).*/\1/p' "$OUT/rpmbuild.log" | tail -n 1) ok)"
else
	tail -n 20 "$OUT/rpmbuild.log"
	bad "rpmbuild -ba" "$OUT/rpmbuild.log"
	finish
fi
rpmf=$(ls "$top"/RPMS/*/nvme-vwc-sync-"$spec_v"-*.rpm | head -n 1)
srpm=$(ls "$top"/SRPMS/*.src.rpm | head -n 1)

# --- files ---
list=$(rpm -qlp "$rpmf" 2>/dev/null)
udevdir=$(pkg-config --variable=udevdir udev)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
miss=()
for f in /usr/sbin/nvme-vwc-sync "$udevdir/rules.d/71-nvme-vwc-sync.rules" \
	"$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb" "$unitdir/nvme-vwc-sync.service" \
	"$unitdir/nvme-vwc-sync-rebind-guard.path" "$unitdir/nvme-vwc-sync-rebind-guard.service" \
	/usr/lib/dracut/modules.d/98nvme-vwc-sync/module-setup.sh \
	/usr/lib/dracut/modules.d/98nvme-vwc-sync/nvme-vwc-sync-quirks.sh \
	/usr/lib/dracut/modules.d/98nvme-vwc-sync/nvme-vwc-sync-premount.sh \
	/usr/share/man/man8/nvme-vwc-sync.8 /usr/share/man/man5/nvme-vwc-sync.conf.5 \
	/usr/share/bash-completion/completions/nvme-vwc-sync; do
	grep -qx "$f\(\.gz\|\.bz2\|\.xz\)\{0,1\}" <<<"$list" || miss+=("$f")
done
if [ "${#miss[@]}" -eq 0 ] && ! grep -q initramfs-tools <<<"$list" && ! grep -qx /usr/sbin/nvme <<<"$list"; then
	ok "files: command, rules, hwdb, units, dracut module, man pages, completion ($(wc -l <<<"$list") entries); no initramfs-tools, no nvme"
else
	bad "files" "missing: ${miss[*]:-none}; $(grep -e initramfs-tools -e '^/usr/sbin/nvme$' <<<"$list" | head -n 2 | tr '\n' ' ')"
fi

# --- scriptlets ---
scripts=$(rpm -qp --scripts "$rpmf" 2>/dev/null)
# section NAME: the body of "NAME scriptlet (using /bin/sh):"
section() {
	awk -v want="$1" '/^[a-z]+ scriptlet .*:$/ { on = ($1 == want); next } on' <<<"$scripts"
}
sc_ok=1 why=''
for pair in "postinstall:systemctl --no-reload preset nvme-vwc-sync.service" \
	"postinstall:nvme-vwc-sync-rebind-guard.path" "preuninstall:nvme-vwc-sync-rebind-guard.path" \
	"postinstall:systemd-hwdb update" "postinstall:udevadm control --reload" \
	"postinstall:udevadm trigger --subsystem-match=nvme" \
	"preuninstall:systemctl --no-reload disable --now nvme-vwc-sync.service" \
	"preuninstall:/usr/sbin/nvme-vwc-sync restore --all" \
	"postuninstall:systemctl try-restart nvme-vwc-sync.service" \
	"postuninstall:rm -f /etc/modprobe.d/zz-nvme-vwc-sync.conf" \
	"posttrans:dracut -f --kver"; do
	sec=${pair%%:*} want=${pair#*:}
	body=$(section "$sec")
	if ! grep -qF -- "$want" <<<"$body"; then
		sc_ok='' why+="$sec lacks '$want'; "
	fi
	if ! sh -n <<<"$body" 2>/dev/null; then
		sc_ok='' why+="$sec: sh -n fails; "
	fi
done
if [ -n "$sc_ok" ]; then
	ok "scriptlets: %post preset, hwdb update, rules reload, trigger; %preun stop, restore --all; %postun try-restart, leftovers; %posttrans dracut; sh -n clean"
else
	bad "scriptlets" "$why"
fi
reqs=$(rpm -qp --requires "$rpmf" 2>/dev/null)
if grep -qx 'udev' <<<"$reqs" && grep -q '^systemd' <<<"$reqs" &&
	grep -qx 'diffutils' <<<"$reqs"; then
	ok "requires: udev, systemd for the scriptlets, diffutils (cmp in the initramfs's hwdb helper)"
else
	bad "requires udev, systemd and diffutils" "$(tr '\n' ' ' <<<"$reqs" | cut -c1-200)"
fi

# --- srpm ---
# the list first: grep -q ends at its match, and with pipefail a writer
# still writing (SIGPIPE) would fail the test (seen once, at load)
srpm_files=$(rpm -qlp "$srpm" 2>/dev/null)
if grep -qx nvme-vwc-sync.spec <<<"$srpm_files" &&
   grep -qx "$name.tar.gz" <<<"$srpm_files"; then
	ok "srpm: $(basename "$srpm") holds the spec and $name.tar.gz"
else
	bad "srpm holds the spec and the tarball" "$(rpm -qlp "$srpm" 2>&1 | tr '\n' ' ')"
fi

# --- rpmlint ---
rpmlint -r "$LINTRC" "$SPEC" "$srpm" "$rpmf" >"$OUT/rpmlint.txt" 2>&1
lsum=$(grep -E '[0-9]+ errors, [0-9]+ warnings' "$OUT/rpmlint.txt" | tail -n 1)
lerr=$(sed -n 's/.* \([0-9][0-9]*\) errors.*/\1/p' <<<"$lsum")
if [ "${lerr:-x}" = 0 ]; then
	ok "rpmlint $(rpmlint --version 2>/dev/null | head -n 1): 0 errors, $(sed -n 's/.* \([0-9][0-9]*\) warnings.*/\1/p' <<<"$lsum") warnings ($OUT/rpmlint.txt)"
else
	grep ' E: ' "$OUT/rpmlint.txt" | head -n 10
	bad "rpmlint: no errors" "${lsum:-no summary}"
fi

# --- plugin subpackage (declared; its build needs the distribution's nvme-cli source) ---
pk=$(rpmspec -q --qf '%{name}\n' --load="$MACROS" --with plugin --define 'nvme_cli_version 2.13' "$SPEC" 2>&1)
err=$(rpmspec -q --load="$MACROS" --with plugin "$SPEC" 2>&1)
if grep -qx nvme-cli-vwc <<<"$pk" && grep -q 'needs --define "nvme_cli_version' <<<"$err"; then
	ok "plugin: --with plugin declares nvme-cli-vwc; without nvme_cli_version it stops saying so"
else
	bad "plugin subpackage declared" "$(tr '\n' ' ' <<<"$pk$err" | cut -c1-200)"
fi

echo "rpm: suite time $((SECONDS - t0)) s"
finish
