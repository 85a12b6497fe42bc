#!/bin/bash
# Grammar of the quirk database: comments, blank lines, PCI match keys in
# the documented form, and one-space-indented NVME_VWC_SYNC_QUIRKS lines
# naming known quirks. Then systemd-hwdb must compile it, and (given the man
# page) the page's override example, compiled beside it, must empty the
# T700's quirks. TAP output.
# Usage: check-hwdb.sh HWDB [MANPAGE]
set -u
f=$1 man=${2:-} n=0 bad=0
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
	echo "ok 4 # SKIP systemd-hwdb not installed"
	echo "1..4"
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
T700=pci:v0000C0A9d00005419sv0000C0A9sd00005419bc01sc08i02
if [ -s "$root/etc/udev/hwdb.bin" ] && systemd-hwdb query --root="$root" "$T700" 2>/dev/null | grep -qx 'NVME_VWC_SYNC_QUIRKS=disable_write_zeroes'; then
	echo "ok 3 - a T700 modalias finds disable_write_zeroes"
else
	echo "not ok 3 - a T700 modalias finds disable_write_zeroes"; bad=1
fi
# the man page's override: its file beside the shipped one (files are
# ordered by name across folders: one folder orders them the same)
if [ -n "$man" ]; then
	name=$(sed -n 's|^\tcat > /etc/udev/hwdb.d/\([^ ]*\) <<EOF$|\1|p' "$man")
	if [ -n "$name" ]; then
		sed -n "/^\tcat > \/etc\/udev\/hwdb.d\/$name <<EOF\$/,/^\tEOF\$/p" "$man" |
			sed '1d;$d;s/^\t//' >"$root/etc/udev/hwdb.d/$name"
		systemd-hwdb update --root="$root" 2>"$root/err"
	fi
	got=$(systemd-hwdb query --root="$root" "$T700" 2>/dev/null | grep '^NVME_VWC_SYNC_QUIRKS=')
	if [ -n "$name" ] && [ "$got" = NVME_VWC_SYNC_QUIRKS= ]; then
		echo "ok 4 - the man page's override ($name) empties the T700's quirks"
	else
		echo "not ok 4 - the man page's override (${name:-not found}) empties the T700's quirks"
		echo "# got: ${got:-nothing}"
		bad=1
	fi
else
	echo "ok 4 # SKIP no man page given"
fi
rm -rf "$root"
echo "1..4"
exit $bad
