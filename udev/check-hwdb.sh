#!/bin/bash
# Grammar of the quirk database: comments, blank lines, PCI match keys in
# the documented form, and one-space-indented NVME_VWC_SYNC_QUIRKS lines
# naming known quirks. Then systemd-hwdb must compile it. TAP output.
set -u
f=$1 n=0 bad=0
known='disable_write_zeroes'
while IFS= read -r line; do
	n=$((n + 1))
	case $line in
	''|'#'*) continue ;;
	pci:v0000[0-9A-F][0-9A-F][0-9A-F][0-9A-F]d0000[0-9A-F][0-9A-F][0-9A-F][0-9A-F]\*) ;;
	' NVME_VWC_SYNC_QUIRKS='*)
		for q in $(echo "${line#*=}" | tr ',' ' '); do
			[[ " $known " == *" $q "* ]] || { echo "# line $n: unknown quirk $q"; bad=1; }
		done ;;
	*) echo "# line $n: bad line: $line"; bad=1 ;;
	esac
done < "$f"
echo "$( [ $bad = 0 ] && echo ok || echo 'not ok') 1 - grammar of $(basename "$f")"
if ! command -v systemd-hwdb >/dev/null; then
	echo "ok 2 # SKIP systemd-hwdb not installed"
	echo "ok 3 # SKIP systemd-hwdb not installed"
	echo "1..3"
	exit $bad
fi
root=$(mktemp -d)
mkdir -p "$root/etc/udev/hwdb.d"
cp "$f" "$root/etc/udev/hwdb.d/"
if systemd-hwdb update --root="$root" --strict 2>"$root/err" && [ -s "$root/etc/udev/hwdb.bin" ]; then
	echo "ok 2 - systemd-hwdb compiles it"
else
	echo "not ok 2 - systemd-hwdb compiles it"; sed 's/^/# /' "$root/err"; bad=1
fi
if [ -s "$root/etc/udev/hwdb.bin" ] && systemd-hwdb query --root="$root" 'pci:v0000C0A9d00005419sv0000C0A9sd00005419bc01sc08i02' 2>/dev/null | grep -qx 'NVME_VWC_SYNC_QUIRKS=disable_write_zeroes'; then
	echo "ok 3 - a T700 modalias finds disable_write_zeroes"
else
	echo "not ok 3 - a T700 modalias finds disable_write_zeroes"; bad=1
fi
rm -rf "$root"
echo "1..3"
exit $bad
