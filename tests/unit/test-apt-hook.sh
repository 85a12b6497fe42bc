#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# nvme-cli-vwc's answer to an nvme-cli update, with fake
# dpkg-query, apt-cache and logger: the APT hook (apt-check) warns, on
# stderr and through logger, exactly while a newer nvme-cli is the
# candidate and nvme-cli-vwc is installed for an older one; prerm's
# message on removal names the cause and the rebuild command, and says
# nothing on upgrade; the APT configuration parses and runs the hook after
# update and after dpkg; the rebuild command's plan names the installed
# nvme-cli. TAP.
# Usage: test-apt-hook.sh APT-CHECK APT-CONF PRERM REBUILD
CHECK=${1:?usage: test-apt-hook.sh APT-CHECK APT-CONF PRERM REBUILD}
CONF=${2:?} PRERM=${3:?} REBUILD=${4:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0 failed=0
t() { # NAME COMMAND...: ok when COMMAND succeeds
	_name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $_name"
	else
		echo "not ok $n - $_name"
		sed 's/^/# /' "$T/err" "$T/logger" 2>/dev/null
		failed=1
	fi
}

# Fakes: the state in $T/state (shell assignments).
mkdir -p "$T/bin"
cat >"$T/bin/dpkg-query" <<'F'
#!/bin/sh
. "$FAKE/state"
fmt=''
for a; do case $a in -f=*) fmt=${a#-f=} ;; esac; done
pkg=$(eval echo "\${$#}")
case "$pkg:$fmt" in
'nvme-cli-vwc:${db:Status-Status}') printf '%s' "$VWC_STATUS" ;;
'nvme-cli-vwc:${Depends}') printf '%s' "$VWC_DEPENDS" ;;
'nvme-cli-vwc:${Version}') printf '%s' "$VWC_VERSION" ;;
'nvme-cli:${db:Status-Status} ${source:Version}') printf 'installed %s' "$CLI_INSTALLED" ;;
'nvme-vwc-sync:${Version}') printf '%s' "$VWC_VERSION" ;;
*) exit 1 ;;
esac
F
cat >"$T/bin/apt-cache" <<'F'
#!/bin/sh
. "$FAKE/state"
[ "$1 $2" = "policy nvme-cli" ] || exit 100
[ -n "$CANDIDATE" ] || exit 100
printf 'nvme-cli:\n  Installed: %s\n  Candidate: %s\n' "$CLI_INSTALLED" "$CANDIDATE"
F
cat >"$T/bin/logger" <<'F'
#!/bin/sh
echo "$*" >>"$FAKE/logger"
F
chmod 755 "$T/bin/"*
export FAKE=$T PATH="$T/bin:$PATH"
state() { # VWC_STATUS CLI_INSTALLED CANDIDATE
	cat >"$T/state" <<S
VWC_STATUS='$1'
VWC_DEPENDS='nvme-cli (= 2.13-2), nvme-vwc-sync (= 0.1.0), libc6 (>= 2.38)'
VWC_VERSION=0.1.0
CLI_INSTALLED='$2'
CANDIDATE='$3'
S
	rm -f "$T/logger" "$T/err"
}
run() { # PROGRAM ARGS...: exit status in $rc, stderr in $T/err
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}
silent() { [ "$rc" = 0 ] && [ ! -s "$T/err" ] && [ ! -s "$T/out" ] && [ ! -e "$T/logger" ]; }

state installed 2.13-2 2.13-2+deb13u1
run sh "$CHECK"
t "hook: newer nvme-cli held back: exit 0" test "$rc" = 0
t "hook: says which nvme-cli is held and why" \
	grep -q '^nvme-cli-vwc: nvme-cli 2.13-2+deb13u1 is available, but nvme-cli-vwc 0.1.0 (nvme vwc-sync) is built for exactly nvme-cli 2.13-2: apt upgrade and unattended-upgrades keep nvme-cli 2.13-2 back' "$T/err"
t "hook: names the rebuild command and what full-upgrade does" \
	sh -c "grep -q '/usr/libexec/nvme-vwc-sync/rebuild-nvme-cli-vwc SOURCE-DIR' '$T/err' && grep -q 'apt full-upgrade, which upgrades nvme-cli and removes nvme-cli-vwc' '$T/err'"
t "hook: the same two lines to the journal (logger, tag nvme-cli-vwc, warning)" \
	sh -c "[ \$(grep -c '^-t nvme-cli-vwc -p user.warning -- ' '$T/logger') = 2 ]"
for c in "2.13-2" "2.12-1" "(none)" ""; do
	state installed 2.13-2 "$c"
	run sh "$CHECK"
	t "hook: candidate '${c:-no answer from apt-cache}': silent, exit 0" silent
done
for st in config-files not-installed half-configured; do
	state "$st" 2.13-2 2.13-2+deb13u1
	run sh "$CHECK"
	t "hook: nvme-cli-vwc $st: silent, exit 0" silent
done

state installed 2.13-2 2.13-2+deb13u1
run sh "$PRERM" remove
t "prerm remove: exit 0" test "$rc" = 0
t "prerm remove: says what goes, for which nvme-cli" \
	grep -q "^nvme-cli-vwc: removing nvme-cli-vwc 0.1.0, built for nvme-cli 2.13-2: /usr/sbin/nvme is nvme-cli's own again, without nvme vwc-sync" "$T/err"
t "prerm remove: names the cause (the newer nvme-cli)" grep -q '^nvme-cli-vwc: the cause is nvme-cli 2.13-2+deb13u1' "$T/err"
t "prerm remove: says the sidecar stays" grep -q '^nvme-cli-vwc: nvme-vwc-sync and its service stay' "$T/err"
t "prerm remove: names the rebuild command" grep -q '/usr/libexec/nvme-vwc-sync/rebuild-nvme-cli-vwc SOURCE-DIR' "$T/err"
t "prerm remove: every line to the journal too" test "$(wc -l <"$T/logger")" = "$(wc -l <"$T/err")"
state installed 2.13-2 2.13-2
run sh "$PRERM" remove
t "prerm remove, no newer nvme-cli (the admin's choice): no cause line" \
	sh -c "[ $rc = 0 ] && grep -q 'removing nvme-cli-vwc' '$T/err' && ! grep -q 'the cause' '$T/err'" 
for a in upgrade deconfigure failed-upgrade; do
	state installed 2.13-2 2.13-2+deb13u1
	run sh "$PRERM" "$a" 0.1.0
	t "prerm $a: silent, exit 0" silent
done

if command -v apt-config >/dev/null; then
	run apt-config -c "$CONF" dump
	t "apt.conf: apt-config parses it" test "$rc" = 0
	t "apt.conf: the hook after a successful update" \
		grep -q '^APT::Update::Post-Invoke-Success:: "if \[ -x /usr/libexec/nvme-cli-vwc/apt-check \]; then /usr/libexec/nvme-cli-vwc/apt-check; fi || true";' "$T/out"
	t "apt.conf: the hook after every dpkg run" \
		grep -q '^DPkg::Post-Invoke:: "if \[ -x /usr/libexec/nvme-cli-vwc/apt-check \]; then /usr/libexec/nvme-cli-vwc/apt-check; fi || true";' "$T/out"
	run sh -c "$(sed -n 's/^DPkg::Post-Invoke:: "\(.*\)";$/\1/p' "$T/out")"
	t "apt.conf: without apt-check (nvme-cli-vwc removed, conffile left): exit 0" test "$rc" = 0
else
	n=$((n + 1))
	echo "ok $n - # SKIP apt-config not installed"
fi

mkdir -p "$T/src/debian" "$T/src/scripts"
printf 'nvme-vwc-sync (0.1.0) unstable; urgency=medium\n' >"$T/src/debian/changelog"
: >"$T/src/debian/rules"
: >"$T/src/scripts/fetch-nvme-cli.sh"
state installed 2.13-2+deb13u1 2.13-2+deb13u1
run sh "$REBUILD" --print "$T/src"
t "rebuild --print: exit 0" test "$rc" = 0
t "rebuild --print: for the installed nvme-cli, from the tree given" \
	grep -q "^rebuild-nvme-cli-vwc: nvme-cli-vwc 0.1.0 for nvme-cli 2.13-2+deb13u1, from $T/src\$" "$T/out"
t "rebuild --print: builds with the plugin profile" \
	grep -q '^dpkg-buildpackage -us -uc -b --build-profiles=pkg.nvme-vwc-sync.plugin$' "$T/out"
run sh "$REBUILD" --print "$T/nonexistent"
t "rebuild: no such directory: exit 1, says so" \
	sh -c "[ $rc = 1 ] && grep -q 'nonexistent: no such directory' '$T/err'"
run sh "$REBUILD" --print "$T/src/debian"
t "rebuild: not a source tree: exit 1, says so" \
	sh -c "[ $rc = 1 ] && grep -q 'is not an nvme-vwc-sync source tree' '$T/err'"
run sh "$REBUILD"
t "rebuild: no argument: usage, exit 2" sh -c "[ $rc = 2 ] && grep -q '^Usage: rebuild-nvme-cli-vwc' '$T/out'"

echo "1..$n"
exit "$failed"
