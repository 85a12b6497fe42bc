#!/bin/bash
# The Prometheus alert rules of contrib/prometheus/, checked with Debian's
# promtool (tests/fleet/promtool.sh fetches it without installing the
# prometheus package):
#   - `promtool check rules` on the rules file;
#   - every nvme_vwc_* metric the rules use is one the tool prints
#     (`BIN audit -o prometheus`, which prints every family's HELP even
#     with no NVMe device) or the sidecar's textfile gauge (src/watch/watch-textfile.c);
#   - `promtool test rules` on the unit tests;
#   - every alert of the rules file fires in at least one test case, and
#     every alert has a case where it is expected not to fire;
#   - the rules on real `audit -o prometheus` output (tests/fleet/
#     fixtures/audit-*.prom, recorded in a 16 x 4 + multipath guest), and
#     with one namespace forced into the unsafe state;
#   - the tests can fail: mutants of the rules (the multipath join dropped,
#     "unknown" counted as safe, no `for:` on drift, a stale threshold of
#     3 h) must each make `promtool test rules` fail.
# Usage: promtool-rules.sh BUILD   (a meson build dir, a DESTDIR or the
#        binary, as tests/fleet/ansible.sh takes)
# Output: TAP. Environment: PROMTOOL (else tests/fleet/promtool.sh).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIR=$REPO/contrib/prometheus
RULES=$DIR/nvme-vwc-sync.rules.yml
TESTS=$DIR/nvme-vwc-sync.rules.test.yml

TAP_TAIL=25
# shellcheck source=tests/fleet/lib.sh
. "$HERE/lib.sh"

arg=${1:-}
bin=''
for c in "$arg" "$arg/src/nvme-vwc-sync" "$arg/nvme-vwc-sync" "$arg/usr/local/sbin/nvme-vwc-sync" "$arg/usr/sbin/nvme-vwc-sync"; do
	if [ -n "$arg" ] && [ -f "$c" ] && [ -x "$c" ]; then bin=$c; break; fi
done
[ -n "$bin" ] || bail "nvme-vwc-sync binary" "usage: promtool-rules.sh BUILD_DIR|DESTDIR|BINARY (got '${arg}')"

promtool=${PROMTOOL:-$(bash "$HERE/promtool.sh" 2>/dev/null | tail -n 1)}
[ -n "$promtool" ] && "$promtool" --version >/dev/null 2>&1 || bail "promtool available" "tests/fleet/promtool.sh failed"
py=/usr/bin/python3
if ! "$py" -c 'import yaml' 2>/dev/null; then
	echo "# installing python3-yaml from Debian" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-yaml >/dev/null 2>&1 ||
		bail "python3-yaml" "apt-get install python3-yaml failed"
fi

echo "1..11"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. syntax, PromQL, templates
if out=$("$promtool" check rules "$RULES" 2>&1); then ok "promtool check rules: $(echo "$out" | grep -o '[0-9]* rules found')"; else notok "promtool check rules" "$out"; fi

# 2. the rules use only metrics that exist
known=$({
	"$bin" audit -o prometheus 2>/dev/null | sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p'
	grep -oh 'nvme_vwc_sync_textfile_timestamp_seconds' "$REPO"/src/*/*.c | sort -u
} | sort -u)
used=$("$py" - "$RULES" <<'EOF'
import re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
names = set()
for g in doc["groups"]:
    for r in g["rules"]:
        names |= set(re.findall(r"\bnvme_vwc_[a-z_]+", r["expr"]))
print("\n".join(sorted(names)))
EOF
)
missing=$(comm -23 <(echo "$used") <(echo "$known"))
if [ -n "$used" ] && [ -z "$missing" ] && [ "$(echo "$known" | wc -l)" -gt 10 ]; then
	ok "rules use only metrics the tool prints ($(echo "$used" | wc -l) used)"
else
	notok "rules use only metrics the tool prints" "unknown: ${missing:-none}; known: $(echo $known)"
fi

# 3. the unit tests pass
if out=$(cd "$DIR" && "$promtool" test rules "$(basename "$TESTS")" 2>&1); then
	ok "promtool test rules"
else
	notok "promtool test rules" "$out"
fi

# 4-5. coverage: every alert fires in some case and is silent in another
cov=$("$py" - "$RULES" "$TESTS" <<'EOF'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
tests = yaml.safe_load(open(sys.argv[2]))
alerts = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
fired, silent = set(), set()
for t in tests["tests"]:
    for a in t.get("alert_rule_test", []):
        exp = a.get("exp_alerts") or []
        (fired if exp else silent).add(a["alertname"])
for name in alerts:
    print(name, "fired" if name in fired else "NEVER-FIRED",
          "silent" if name in silent else "NEVER-SILENT")
EOF
)
nf=$(echo "$cov" | grep -c NEVER-FIRED)
ns=$(echo "$cov" | grep -c NEVER-SILENT)
na=$(echo "$cov" | grep -c .)
if [ "$na" -ge 8 ] && [ "$nf" -eq 0 ]; then ok "every alert fires in a test case ($na alerts)"; else notok "every alert fires in a test case" "$cov"; fi
if [ "$na" -ge 8 ] && [ "$ns" -eq 0 ]; then ok "every alert has a case where it must not fire"; else notok "every alert has a case where it must not fire" "$cov"; fi

# 6. the rules on the real tool's output: `audit -o prometheus` of a
# 16 x 4 + multipath guest before and after `sync` (fixtures/*.prom), as
# one host's series: the write-through rule's expression finds nothing,
# the drift rule's finds exactly the namespaces the file marks; the synced
# file with one WCE-on namespace forced to write through (the bug the
# rule is for) makes the write-through expression find exactly that one.
real=$("$py" - "$RULES" "$HERE/fixtures" "$tmp" <<'EOF2'
import os, re, sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
fix, out = sys.argv[2], sys.argv[3]
expr = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.e+]+)$')

def parse(path):
    samples = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        m = line_re.match(line)
        if not m:
            sys.exit("unparsable line in %s: %s" % (path, line))
        samples.append((m.group(1), m.group(3) or "", float(m.group(4))))
    return samples

def labels_of(lbl):
    return dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', lbl))

def series(samples):
    res = []
    for name, lbl, v in samples:
        extra = 'instance="real",job="node"'
        res.append({"series": "%s{%s%s}" % (name, extra, "," + lbl if lbl else ""),
                    "values": "%gx20" % v})
    return res

def exp(samples, name, pred):
    res = []
    for n, lbl, v in samples:
        if n == name and pred(labels_of(lbl), v):
            l = labels_of(lbl)
            l.update(instance="real", job="node")
            res.append({"labels": "%s{%s}" % (n, ",".join('%s="%s"' % kv for kv in sorted(l.items()))),
                        "value": v})
    return res

tests = []
names = []
for f in ("audit-drift.prom", "audit-synced.prom"):
    path = os.path.join(fix, f)
    if not os.path.exists(path):
        sys.exit("missing fixture " + path)
    s = parse(path)
    ndrift = sum(1 for n, l, v in s if n == "nvme_vwc_namespace_drift" and v == 1)
    tests.append({"interval": "1m", "input_series": series(s), "promql_expr_test": [
        {"expr": expr["NvmeVwcWriteThroughWithCacheOn"], "eval_time": "15m", "exp_samples": []},
        {"expr": expr["NvmeVwcDrift"], "eval_time": "15m",
         "exp_samples": exp(s, "nvme_vwc_namespace_drift", lambda l, v: v == 1)}]})
    names.append("%s: %d series, %d drifting" % (f, len(s), ndrift))
    if f == "audit-synced.prom":
        # the bug: a namespace of a WCE-on controller in write through
        on = {labels_of(l)["controller"] for n, l, v in s if n == "nvme_vwc_cache_enabled" and v == 1}
        victim = next(labels_of(l)["namespace"] for n, l, v in s
                      if n == "nvme_vwc_namespace_write_back" and v == 1 and labels_of(l)["controller"] in on)
        bug = [(n, l, 0.0 if n == "nvme_vwc_namespace_write_back" and labels_of(l).get("namespace") == victim else v)
               for n, l, v in s]
        tests.append({"interval": "1m", "input_series": series(bug), "promql_expr_test": [
            {"expr": expr["NvmeVwcWriteThroughWithCacheOn"], "eval_time": "15m",
             "exp_samples": exp(bug, "nvme_vwc_namespace_write_back",
                                lambda l, v: l.get("namespace") == victim)}]})
        names.append("bug injected: %s in write through" % victim)
yaml.safe_dump({"rule_files": [sys.argv[1]], "evaluation_interval": "1m", "tests": tests},
               open(os.path.join(out, "real.test.yml"), "w"), sort_keys=False)
print("; ".join(names))
EOF2
) || real="generator failed: $real"
if out=$("$promtool" test rules "$tmp/real.test.yml" 2>&1); then
	ok "rules on the real output ($real)"
else
	notok "rules on the real output ($real)" "$out"
fi

# 7-11. the tests catch broken rules: each mutant must fail
mutant() { # NAME PYTHON-REPLACEMENT(old, new) ...
	local name=$1 old=$2 new=$3 count
	mkdir -p "$tmp/m"
	cp "$TESTS" "$tmp/m/"
	count=$(OLD=$old NEW=$new "$py" - "$RULES" "$tmp/m/$(basename "$RULES")" <<'EOF'
import os, sys
s = open(sys.argv[1]).read()
old, new = os.environ["OLD"], os.environ["NEW"]
print(s.count(old))
open(sys.argv[2], "w").write(s.replace(old, new))
EOF
)
	if [ "$count" -lt 1 ]; then
		notok "mutant '$name' fails the tests" "pattern not found in the rules: $old"
	elif (cd "$tmp/m" && "$promtool" test rules "$(basename "$TESTS")" >"$tmp/m.out" 2>&1); then
		notok "mutant '$name' fails the tests" "promtool test rules passed on the mutant"
	else
		ok "mutant '$name' fails the tests"
	fi
}
mutant "multipath join dropped" "nvme_vwc_namespace_controller" "nvme_vwc_no_such_metric"
mutant "unknown WCE counted as safe" "nvme_vwc_cache_enabled == 0" "nvme_vwc_cache_enabled <= 0"
mutant "join across hosts (on controller only)" "unless ignoring(namespace)" "unless on(controller)"
mutant "drift without for:" "for: 10m" "for: 0m"
mutant "stale after 3 h" "> 180" "> 10800"
[ "$bad" -eq 0 ]
