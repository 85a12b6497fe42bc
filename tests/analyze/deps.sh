#!/bin/bash
# Debian packages the hardening suites need (tests/analyze, tests/fuzz,
# tests/sanitize, tests/coverage); installs what is missing, like
# scripts/deps.sh. Usage: deps.sh PACKAGE...
set -euo pipefail
missing=()
for p in "$@"; do
	dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed ||
		missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need root to install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
