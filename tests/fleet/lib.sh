# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the fleet suite's TAP scripts: source it after setting
# TAP_TAIL (how many lines of a failure's output to show, default 20).
#
#   ok NAME | notok NAME [OUTPUT] | check NAME CMD... | bail NAME [OUTPUT]
#   need_ansible             ansible-core from Debian when missing
#   ansible_local DIR [ROLES]  inventory (localhost, connection local),
#                            become, and an ansible.cfg of our own in DIR
n=0 bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
	n=$((n + 1)) bad=$((bad + 1))
	echo "not ok $n - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n "${TAP_TAIL:-20}" | sed 's/^/#   /'
}
check() { # NAME CMD...: ok when CMD succeeds
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else notok "$name" "$out"; fi
}
bail() { echo "1..$((n + 1))"; notok "$1" "${2:-}"; exit 1; }

need_ansible() {
	command -v ansible-playbook >/dev/null && return 0
	echo "# installing ansible-core from Debian" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends ansible-core >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 &&
		  apt-get install -y --no-install-recommends ansible-core >/dev/null 2>&1; } ||
		bail "ansible-core installed" "apt-get install ansible-core failed"
}

# Sets the array `become` and exports ANSIBLE_*: nothing of the machine's
# or the user's ansible configuration applies, only what is set here.
ansible_local() { # DIR [ROLES_PATH]
	local dir=$1 py=/usr/bin/python3
	# Debian's ansible runs on Debian's python, whatever python3 is first
	[ -x "$py" ] || py=$(command -v python3)
	printf 'localhost ansible_connection=local ansible_python_interpreter=%s\n' \
		"$py" >"$dir/inventory"
	# without sudo on the machine, become through su (root to root)
	become=()
	command -v sudo >/dev/null || become=(-e ansible_become_method=su)
	printf '[defaults]\n' >"$dir/ansible.cfg"
	[ -z "${2:-}" ] || printf 'roles_path = %s\n' "$2" >>"$dir/ansible.cfg"
	export ANSIBLE_CONFIG=$dir/ansible.cfg ANSIBLE_NOCOLOR=1 \
		ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_LOCAL_TEMP=$dir/ansible-local \
		ANSIBLE_REMOTE_TEMP=$dir/ansible-remote ANSIBLE_HOME=$dir/ansible-home
}
