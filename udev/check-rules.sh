#!/bin/bash
# Check the rules file. udevadm verify (systemd >= 253) when available;
# otherwise (Debian 12's udev 252) a grammar check: each logical line is
# comma-separated KEY[{attr}] OP "value" items with known keys, and the
# GOTO target exists. TAP output.
set -u
udevadm=$1 rules=$2
if "$udevadm" verify --help >/dev/null 2>&1; then
	if "$udevadm" verify --no-style "$rules"; then echo "ok 1 - udevadm verify"; echo "1..1"; exit 0; fi
	echo "not ok 1 - udevadm verify"; echo "1..1"; exit 1
fi
bad=0
item='(ACTION|SUBSYSTEM|KERNEL|DEVPATH|TEST|ENV\{[A-Z_]+\}|ATTR\{[a-z_/]+\}|RUN|IMPORT\{builtin\}|GOTO|LABEL)(==|!=|=|\+=)"[^"]*"'
# join continuation lines
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$rules" | while IFS= read -r l; do
	case $l in ''|'#'*) continue ;; esac
	rest=$(echo "$l" | sed -E "s/[[:space:]]+/ /g; s/$item//g; s/[ ,]//g")
	if [ -n "$rest" ]; then echo "# bad rule: $l (left: $rest)"; exit 1; fi
done || bad=1
for target in $(grep -o 'GOTO="[^"]*"' "$rules" | cut -d'"' -f2 | sort -u); do
	grep -q "^LABEL=\"$target\"" "$rules" || { echo "# no LABEL $target"; bad=1; }
done
[ $bad = 0 ] && echo "ok 1 - rules grammar (udevadm verify unavailable)" || echo "not ok 1 - rules grammar"
echo "1..1"
exit $bad
