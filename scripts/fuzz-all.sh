#!/usr/bin/env bash
# Runs every fuzz target in the module for the given time each (default 60s) and prints a
# line per target. Usage: scripts/fuzz-all.sh [60s]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-60s}
status=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func \(Fuzz[A-Za-z0-9_]*\)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sed 's/(.*//' | sort -u); do
    echo "== $pkg $target ($fuzztime)"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tail -3; then
      status=1
    fi
  done
done
exit $status
