#!/bin/sh
# Installed as /etc/vwc-test/after in the sanitized guest (tests/sanitize):
# print every ASan/UBSan/LSan report written under /run/vwc-san, each line
# prefixed "VWC-SAN: ", then "VWC-SAN-REPORTS: N" (files with a report).
n=0
for f in /run/vwc-san/*; do
	[ -s "$f" ] || continue
	n=$((n + 1))
	echo "VWC-SAN: ==== $f"
	sed 's/^/VWC-SAN: /' "$f"
done
echo "VWC-SAN-REPORTS: $n"
