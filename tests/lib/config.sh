# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The test runner's configuration (tests/check): tests/check.conf names
# every setting, each as a commented line "#KEY=DEFAULT" under the text
# that says what it does; a line "KEY=VALUE" (not commented) in
# tests/check.conf, then tests/check.local (untracked), then the file
# $VWC_CONFIG sets it. KEY is the lower-case name of the environment
# variable the runners read: cases=core sets VWC_CASES=core. A variable
# set in the environment wins over every file (the runners' older
# interface, kept for scripts and CI). Values are taken as written, one
# pair of enclosing quotes removed; nothing is expanded.

# config_keys CONF: the keys CONF declares ("#KEY=" or "KEY=" lines)
config_keys() {
	sed -nE 's/^#?([a-z][a-z0-9_]*)=.*/\1/p' "$1" | awk '!seen[$0]++'
}

# config_load CONF [FILE...]: export VWC_KEY for each KEY=VALUE of CONF
# and of each FILE that exists, the later file winning, unless VWC_KEY
# is in the environment. CONFIG_FROM[KEY] says where a value came from.
# A $VWC_CONFIG that is not there is an error, and so is a key CONF does
# not declare (a misspelt key is not dropped quietly): returns 1 after
# naming it.
declare -A CONFIG_FROM=()
config_load() {
	local conf=$1 f line key val var known bad=0
	declare -A cfg=()
	known=" $(config_keys "$conf" | tr '\n' ' ') "
	if [ -n "${VWC_CONFIG:-}" ] && [ ! -e "$VWC_CONFIG" ]; then
		echo "config: VWC_CONFIG names no file: $VWC_CONFIG" >&2
		bad=1
	fi
	for f in "$@"; do
		[ -f "$f" ] || continue
		while IFS= read -r line || [ -n "$line" ]; do
			line=${line%"${line##*[![:space:]]}"}
			[[ $line =~ ^([a-z][a-z0-9_]*)=(.*)$ ]] || {
				case $line in '' | '#'*) continue ;; esac
				echo "config: $f: not KEY=VALUE: $line" >&2
				bad=1
				continue
			}
			key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
			if [[ $known != *" $key "* ]]; then
				echo "config: $f: unknown key '$key' (the keys are in $conf)" >&2
				bad=1
				continue
			fi
			if [[ $val =~ ^\"(.*)\"$ ]] || [[ $val =~ ^\'(.*)\'$ ]]; then
				val=${BASH_REMATCH[1]}
			fi
			cfg[$key]=$val
			CONFIG_FROM[$key]=$f
		done <"$f"
	done
	for key in "${!cfg[@]}"; do
		var=VWC_${key^^}
		if [ -n "${!var+x}" ]; then
			CONFIG_FROM[$key]="environment ($var)"
		else
			export "$var=${cfg[$key]}"
		fi
	done
	return "$bad"
}

# config_show CONF: every key, its value and where it came from
config_show() {
	local key var
	for key in $(config_keys "$1"); do
		var=VWC_${key^^}
		if [ -n "${!var+x}" ]; then
			printf '%-19s %s  (%s)\n' "$key" "'${!var}'" "${CONFIG_FROM[$key]:-environment ($var)}"
		else
			printf '%-19s %s  (default)\n' "$key" "'$(sed -n "s/^#$key=//p" "$1" | head -n 1)'"
		fi
	done
}
