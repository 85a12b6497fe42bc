#!/bin/bash
# The Ansible role contrib/ansible/roles/nvme_vwc_sync against localhost
# (connection local), as far as a machine without NVMe drives and without
# systemd as PID 1 allows, honestly:
#   - install method "tree": the build's own `meson install` tree (made here
#     with DESTDIR) into an offline root (vwc_root, a temp directory), the
#     sidecar enabled there with `systemctl --root`, the textfile drop-in;
#     --check on an empty root changes nothing and reports changes; apply;
#     a second apply reports changed=0; --check after a drifted install (a
#     unit edited, the service disabled) reports it and changes nothing;
#     apply repairs it. The real binary runs `sync` and `audit` (no NVMe
#     here: zero controllers) and the audit is saved per host and as the
#     fact vwc_audit.
#   - the apply's decisions on a drifting host, install method none (the
#     tree's binary found, its drop-in kept; on a root with nothing
#     installed the host fails): vwc_bin is a stand-in that
#     prints the real tool's JSON captured in a 16x4 guest
#     (tests/fleet/fixtures/*.json, from `sync --dry-run`, `audit`, `sync`
#     on a controller with WCE=0) and records every call: --check runs only
#     `sync --dry-run` and reports changed; apply runs `sync` once and
#     reports changed; then changed=0; exit 1 fails the host.
# Not proven here: install methods deb and apt (they need a Debian system
# to install into), the systemd_service path on a running system, and the
# tool against real drives (tests/vm/ does that).
# Usage: ansible-role.sh BUILD   (a configured, compiled meson build dir)
# Output: TAP.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
FIX=$HERE/fixtures

TAP_TAIL=20
# shellcheck source=tests/fleet/lib.sh
. "$HERE/lib.sh"

BUILD=${1:-}
[ -f "$BUILD/build.ninja" ] || bail "meson build dir" "usage: ansible-role.sh BUILD (got '$BUILD')"
BUILD=$(cd "$BUILD" && pwd)
need_ansible
command -v systemctl >/dev/null || bail "systemctl" "systemctl is needed (systemctl --root)"

tmp=$(mktemp -d)
trap '[ -n "${VWC_KEEP:-}" ] || rm -rf "$tmp"' EXIT
ansible_local "$tmp" "$REPO/contrib/ansible/roles"

# The shipped playbook, plus one task that keeps the fact vwc_audit
sed -n '/^- name:/,$p' "$REPO/contrib/ansible/nvme-vwc-sync.yml" >"$tmp/play.yml"
cat >>"$tmp/play.yml" <<EOF
  post_tasks:
    - name: Keep the fact vwc_audit for the test
      ansible.builtin.copy:
        content: "{{ vwc_audit | default({}) | to_json }}"
        dest: "$tmp/fact-{{ inventory_hostname }}.json"
        mode: "0644"
      check_mode: false
      changed_when: false
EOF

ROOT=$tmp/root TREE=$tmp/tree OUT=$tmp/out
TEXTFILE=/var/lib/prometheus/node-exporter/nvme-vwc-sync.prom
play() { # LOG [ansible-playbook args]: run the role on the tree and the root
	local log=$1
	shift
	ansible-playbook -i "$tmp/inventory" "${become[@]}" "$tmp/play.yml" \
		-e "vwc_tree=$TREE" -e "vwc_root=$ROOT" -e "vwc_audit_dir=$OUT" \
		-e "vwc_textfile=$TEXTFILE" "$@" >"$tmp/$log" 2>&1
}
recap() { grep -E '^localhost +:' "$tmp/$1"; }
changed() { recap "$1" | sed -n 's/.* changed=\([0-9]*\) .*/\1/p'; }
failed() { recap "$1" | sed -n 's/.* failed=\([0-9]*\) .*/\1/p'; }
# played LOG NAME WANT: the run succeeded and changed WANT (0, or + for > 0)
played() {
	local log=$1 name=$2 want=$3 c
	c=$(changed "$log")
	if [ "$(failed "$log")" != 0 ] || [ -z "$c" ]; then
		notok "$name" "$(grep -E 'fatal|ERROR|FAILED' -A4 "$tmp/$log" | head -n 20; recap "$log")"
	elif [ "$want" = + ] && [ "$c" -gt 0 ]; then
		ok "$name (changed=$c)"
	elif [ "$want" = "$c" ]; then
		ok "$name (changed=$c)"
	else
		notok "$name (changed=$c, expected $want)" "$(grep -E '^changed:' -B2 "$tmp/$log" | grep TASK)"
	fi
}

echo "1..27"
# 1. the meson install tree of this build
if DESTDIR=$TREE meson install -C "$BUILD" --no-rebuild >"$tmp/install.log" 2>&1 &&
	[ -x "$TREE/usr/local/sbin/nvme-vwc-sync" ]; then
	ok "meson install tree (DESTDIR) of $(basename "$BUILD")"
else
	bail "meson install tree" "$(tail -n 20 "$tmp/install.log")"
fi

# 2-3. --check on a host where nothing is installed
play check0.log --check
played check0.log "--check, nothing installed: reports changes" +
if [ ! -e "$ROOT" ] && [ ! -e "$OUT" ]; then ok "--check, nothing installed: nothing created"; else notok "--check, nothing installed: nothing created" "$(find "$ROOT" "$OUT" 2>&1 | head)"; fi

# 4-10. first apply
play run1.log
played run1.log "first apply: changes" +
check "installed binary runs" "$ROOT/usr/local/sbin/nvme-vwc-sync" --version
check "unit installed as built" cmp "$TREE/lib/systemd/system/nvme-vwc-sync.service" "$ROOT/lib/systemd/system/nvme-vwc-sync.service"
if [ ! -e "$ROOT/usr/local/sbin/nvme" ]; then ok "excluded: the tree's nvme binary (vwc_tree_exclude)"; else notok "excluded: the tree's nvme binary"; fi
st=$(systemctl --root="$ROOT" is-enabled nvme-vwc-sync.service 2>&1)
if [ "$st" = enabled ]; then ok "sidecar enabled in the root (systemctl --root)"; else notok "sidecar enabled in the root" "$st"; fi
dropin=$ROOT/etc/systemd/system/nvme-vwc-sync.service.d/textfile.conf
if grep -qx "ExecStart=/usr/local/sbin/nvme-vwc-sync watch --textfile=$TEXTFILE" "$dropin" 2>/dev/null &&
	grep -qx "ReadWritePaths=$(dirname "$TEXTFILE")" "$dropin"; then
	ok "textfile drop-in: watch --textfile, ReadWritePaths"
else
	notok "textfile drop-in" "$(cat "$dropin" 2>&1)"
fi
if jq -e '.schema_version == 1 and .command == "audit" and (.namespaces | type) == "array"' "$OUT/localhost.json" >/dev/null 2>&1 &&
	cmp -s <(jq -S . "$OUT/localhost.json") <(jq -S . "$tmp/fact-localhost.json"); then
	ok "audit saved as <dir>/localhost.json and as the fact vwc_audit (same report)"
else
	notok "audit saved per host and as a fact" "$(head -c 300 "$OUT/localhost.json" 2>&1; echo; head -c 300 "$tmp/fact-localhost.json" 2>&1)"
fi

# 11-12. idempotent
play run2.log
played run2.log "second apply: nothing to do" 0
play check1.log --check
played check1.log "--check on a host in step: nothing to report" 0

# 13-17. drift in the installation: an edited unit, the sidecar disabled
echo "# edited by hand" >>"$ROOT/lib/systemd/system/nvme-vwc-sync.service"
systemctl --root="$ROOT" disable nvme-vwc-sync.service >/dev/null 2>&1
sum=$(sha256sum "$ROOT/lib/systemd/system/nvme-vwc-sync.service")
play check2.log --check
played check2.log "--check, unit edited and sidecar disabled: reported" +
if [ "$(changed check2.log)" -ge 2 ] 2>/dev/null; then ok "--check: both drifts reported (unit file, enablement)"; else notok "--check: both drifts reported" "$(recap check2.log)"; fi
st=$(systemctl --root="$ROOT" is-enabled nvme-vwc-sync.service 2>&1)
if [ "$sum" = "$(sha256sum "$ROOT/lib/systemd/system/nvme-vwc-sync.service")" ] && [ "$st" = disabled ]; then
	ok "--check changed nothing (unit still edited, sidecar still $st)"
else
	notok "--check changed nothing" "unit: $(tail -n 1 "$ROOT/lib/systemd/system/nvme-vwc-sync.service"); is-enabled: $st"
fi
play run3.log
played run3.log "apply repairs the drift" +
if cmp -s "$TREE/lib/systemd/system/nvme-vwc-sync.service" "$ROOT/lib/systemd/system/nvme-vwc-sync.service" &&
	[ "$(systemctl --root="$ROOT" is-enabled nvme-vwc-sync.service 2>&1)" = enabled ]; then
	ok "after apply: unit as built, sidecar enabled"
else
	notok "after apply: unit as built, sidecar enabled"
fi

# 18-26. the apply's decisions on a drifting host: a stand-in for the tool
# that prints the real tool's JSON (fixtures from a 16x4 guest) by state
echo drift >"$tmp/state"
cat >"$tmp/fake-vwc" <<EOF
#!/bin/sh
# stand-in for nvme-vwc-sync: the real tool's JSON, by the state in $tmp/state
echo "\$*" >>"$tmp/calls"
state=\$(cat "$tmp/state")
case "\$*" in
*--dry-run*)
	if [ "\$state" = drift ]; then cat "$FIX/dryrun.json"; else jq '.dry_run = true' "$FIX/sync-unchanged.json"; fi ;;
sync*)
	case \$state in
	drift) cat "$FIX/sync-changed.json"; echo clean >"$tmp/state" ;;
	error) echo "nvme-vwc-sync: nvme0: Get Features 06h failed: Input/output error" >&2; exit 1 ;;
	*) cat "$FIX/sync-unchanged.json" ;;
	esac ;;
audit*)
	if [ "\$state" = drift ]; then cat "$FIX/audit-drift.json"; exit 3; fi
	cat "$FIX/audit-clean.json" ;;
*) echo "fake-vwc: unexpected arguments: \$*" >&2; exit 2 ;;
esac
EOF
chmod +x "$tmp/fake-vwc"
# vwc_install=none (already installed: the service, apply and audit only),
# as an admin runs the role on hosts in place. The tree above is what is
# installed: the role finds its binary, and the textfile drop-in stays as
# it is (before, none named /usr/sbin's binary and rewrote it: changed=2
# below). Also for time: the tree's copy file by file was half of each
# play's CPU.
fake=(-e "vwc_bin=$tmp/fake-vwc" -e vwc_install=none)
: >"$tmp/calls"
play fcheck.log --check "${fake[@]}"
played fcheck.log "drifting host, --check: reports the drift" 1
if grep -q '"msg": "nvme0n1 nvme0n2 nvme0n3 nvme0n4.*(dry run)"' "$tmp/fcheck.log"; then ok "--check names the namespaces that would change"; else notok "--check names the namespaces that would change" "$(grep -A3 'What the apply' "$tmp/fcheck.log")"; fi
if ! grep -qvE -- '--dry-run|^audit ' "$tmp/calls" && [ "$(cat "$tmp/state")" = drift ]; then
	ok "--check ran only sync --dry-run and audit (calls: $(tr '\n' ';' <"$tmp/calls"))"
else
	notok "--check ran only sync --dry-run and audit" "$(cat "$tmp/calls")"
fi
if jq -e '[.namespaces[] | select(.drift)] | length == 4' "$OUT/localhost.json" >/dev/null 2>&1; then ok "--check: the saved audit shows the drift (exit 3 tolerated)"; else notok "--check: the saved audit shows the drift" "$(head -c 300 "$OUT/localhost.json")"; fi
: >"$tmp/calls"
play fapply.log "${fake[@]}"
played fapply.log "drifting host, apply: changed" 1
if [ "$(grep -c '^sync -o json$' "$tmp/calls")" = 1 ] && [ "$(cat "$tmp/state")" = clean ]; then ok "apply ran sync once"; else notok "apply ran sync once" "$(cat "$tmp/calls")"; fi
play fapply2.log "${fake[@]}"
played fapply2.log "drifting host, second apply: changed=0" 0
play fcheck2.log --check "${fake[@]}"
played fcheck2.log "drifting host after apply, --check: changed=0" 0
echo error >"$tmp/state"
play ferror.log "${fake[@]}"
if [ "$(failed ferror.log)" = 1 ] && grep -q 'Input/output error' "$tmp/ferror.log"; then ok "sync exit 1 fails the host, with the tool's message"; else notok "sync exit 1 fails the host" "$(recap ferror.log)"; fi
# vwc_install=none on a root where nothing is installed: the host fails,
# naming both places looked at (not a drop-in naming a missing binary)
mkdir -p "$tmp/empty"
play fnone.log -e vwc_install=none -e "vwc_root=$tmp/empty"
if [ "$(failed fnone.log)" = 1 ] && grep -q 'vwc_install=none: no nvme-vwc-sync under .* at /usr/sbin' "$tmp/fnone.log" &&
	[ ! -e "$tmp/empty/etc" ]; then
	ok "install none, nothing installed: the host fails, saying where it looked; nothing written"
else
	notok "install none, nothing installed: the host fails" "$(recap fnone.log; grep -A3 fatal "$tmp/fnone.log" | head -n 8)"
fi
[ "$bad" -eq 0 ]
