#!/bin/bash
# Debian packages the hardening suites need (tests/analyze, tests/fuzz,
# tests/sanitize, tests/coverage): scripts/deps.sh with a package list.
# Usage: deps.sh PACKAGE...
exec bash "$(dirname "$0")/../../scripts/deps.sh" "$@"
