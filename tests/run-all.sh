#!/bin/bash
# The former name of tests/check, kept for scripts and habits: the same
# arguments (--suite NAME, --list: the suites, one a line) and the same
# output. See tests/check --help.
[ "${1:-}" != --list ] || set -- --list-suites "${@:2}"
exec bash "$(dirname "$0")/check" "$@"
