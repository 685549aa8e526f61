#!/usr/bin/env bash
# Runs the suite (or, with "bench", the benchmarks) against a real PostgreSQL: the one at
# POSTBOX_TEST_DATABASE_URL (default: the local server's "test" database), or a private cluster when
# none answers. Tests that need Temporal start its dev server themselves from ./bin/temporal. Arguments,
# if any, go to go test instead of ./... (make docs-check).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! scripts/pg.sh reachable; then
  base=$(scripts/pg.sh start)
  export POSTBOX_TEST_DATABASE_URL="$base/test?sslmode=disable"
  echo "no database answered; using the private cluster at $base"
fi

if [ "${1:-}" = bench ]; then
  go test -run '^$' -bench . -benchtime "${BENCHTIME:-2s}" -timeout 30m ./...
else
  go test -count=1 -timeout 25m "${@:-./...}"
fi
