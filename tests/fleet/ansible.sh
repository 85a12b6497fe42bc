#!/bin/bash
# Run contrib/ansible/nvme-vwc-audit.yml against localhost (connection local)
# with the standalone nvme-vwc-sync from a build. The host has no NVMe: the
# report has zero controllers, which is fine; what is checked is the play's
# plumbing: the report lands as <dir>/localhost.json and parses with
# schema_version 1, the textfile passes `promtool check metrics` and is
# written atomically (no temp file left, a second run reports no change),
# exit 3 (drift) is tolerated and exit 1 (error) fails the host.
# Installs ansible-core from Debian when ansible-playbook is missing.
# Usage: ansible.sh BUILD        BUILD: a meson build dir (src/nvme-vwc-sync),
#                                a DESTDIR, or the binary itself
# Output: TAP. Environment: PROMTOOL (else tests/fleet/promtool.sh fetches it).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PLAYBOOK=$REPO/contrib/ansible/nvme-vwc-audit.yml

TAP_TAIL=15
# shellcheck source=tests/fleet/lib.sh
. "$HERE/lib.sh"

arg=${1:-}
bin=''
for c in "$arg" "$arg/src/nvme-vwc-sync" "$arg/nvme-vwc-sync" "$arg/usr/local/sbin/nvme-vwc-sync" "$arg/usr/sbin/nvme-vwc-sync"; do
	if [ -n "$arg" ] && [ -f "$c" ] && [ -x "$c" ]; then bin=$(cd "$(dirname "$c")" && pwd)/$(basename "$c"); break; fi
done
[ -n "$bin" ] || bail "nvme-vwc-sync binary" "usage: ansible.sh BUILD_DIR|DESTDIR|BINARY (got '${arg}')"

need_ansible
promtool=${PROMTOOL:-$(bash "$HERE/promtool.sh" 2>/dev/null | tail -n 1)}

echo "1..14"
tmp=$(mktemp -d)
trap '[ -n "${VWC_KEEP:-}" ] || rm -rf "$tmp"' EXIT
ansible_local "$tmp"

play() { # BIN OUTDIR TEXTFILE_DIR [more ansible-playbook args]
	local b=$1 out=$2 tf=$3
	shift 3
	ansible-playbook -i "$tmp/inventory" "${become[@]}" "$PLAYBOOK" \
		-e "vwc_sync_bin=$b" -e "vwc_audit_dir=$out" \
		-e vwc_textfile_enabled=true -e "vwc_textfile_dir=$tf" "$@"
}

# 1-3: the real binary
if play "$bin" "$tmp/out" "$tmp/textfile" >"$tmp/run1.log" 2>&1; then
	ok "playbook against localhost: success"
else
	notok "playbook against localhost: success" "$(cat "$tmp/run1.log")"
fi
j=$tmp/out/localhost.json
check "report fetched as <dir>/localhost.json and parses (jq)" jq -e . "$j"
check "report: schema_version 1, command audit, arrays" \
	jq -e '.schema_version == 1 and .command == "audit" and (.controllers | type) == "array" and (.namespaces | type) == "array"' "$j"
echo "# report: $(jq -c '{controllers: (.controllers | length), namespaces: (.namespaces | length), errors: (.errors | length)}' "$j" 2>/dev/null)"

# 4-7: the textfile
p=$tmp/textfile/nvme_vwc_sync.prom
check "textfile written: $(basename "$p")" test -s "$p"
check "textfile: same bytes as 'audit -o prometheus'" cmp "$p" <("$bin" audit -o prometheus)
if [ -n "$promtool" ] && out=$("$promtool" check metrics <"$p" 2>&1) && [ -z "$out" ]; then
	ok "textfile: promtool check metrics"
else
	notok "textfile: promtool check metrics" "${out:-promtool unavailable}"
fi
left=$(find "$tmp/textfile" -mindepth 1 ! -name nvme_vwc_sync.prom 2>&1)
if [ -d "$tmp/textfile" ] && [ -z "$left" ]; then ok "textfile dir: no temp file left"; else notok "textfile dir: no temp file left" "$left"; fi

# 8-9: idempotent: nothing changes on a second run
if play "$bin" "$tmp/out" "$tmp/textfile" >"$tmp/run2.log" 2>&1; then
	ok "second run: success"
else
	notok "second run: success" "$(cat "$tmp/run2.log")"
fi
recap=$(grep -E '^localhost +:' "$tmp/run2.log")
if [[ $recap == *" changed=0 "* ]]; then ok "second run: changed=0"; else notok "second run: changed=0" "$recap"; fi

# 10-12: exit 3 (drift) tolerated, the report still saved
cat >"$tmp/drift.sh" <<EOS
#!/bin/sh
"$bin" "\$@"
exit 3
EOS
chmod +x "$tmp/drift.sh"
if play "$tmp/drift.sh" "$tmp/out3" "$tmp/textfile3" >"$tmp/run3.log" 2>&1; then
	ok "audit exit 3 (drift): tolerated"
else
	notok "audit exit 3 (drift): tolerated" "$(cat "$tmp/run3.log")"
fi
check "audit exit 3: report saved" jq -e '.schema_version == 1' "$tmp/out3/localhost.json"
check "audit exit 3: textfile written" test -s "$tmp/textfile3/nvme_vwc_sync.prom"

# 13-14: exit 1 (error) fails the host, nothing saved
cat >"$tmp/error.sh" <<EOS
#!/bin/sh
"$bin" "\$@"
echo "nvme-vwc-sync: simulated error" >&2
exit 1
EOS
chmod +x "$tmp/error.sh"
if play "$tmp/error.sh" "$tmp/out1" "$tmp/textfile1" >"$tmp/run4.log" 2>&1; then
	notok "audit exit 1 (error): the host fails" "$(tail -n 20 "$tmp/run4.log")"
else
	recap=$(grep -E '^localhost +:' "$tmp/run4.log")
	if [[ $recap == *" failed=1 "* ]]; then ok "audit exit 1 (error): the host fails"; else notok "audit exit 1 (error): the host fails" "$recap"; fi
fi
if [ ! -e "$tmp/out1/localhost.json" ] && [ ! -e "$tmp/textfile1/nvme_vwc_sync.prom" ]; then
	ok "audit exit 1: no report, no textfile"
else
	notok "audit exit 1: no report, no textfile" "$(ls -R "$tmp/out1" "$tmp/textfile1" 2>&1)"
fi
[ "$bad" -eq 0 ]
