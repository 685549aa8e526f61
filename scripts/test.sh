#!/usr/bin/env bash
# Runs the checks and the suite (or, with "bench", the benchmarks) against a real PostgreSQL: the one at
# POSTBOX_TEST_DATABASE_URL (default: the local server's "test" database), or a private cluster when
# none answers. Tests that need Temporal start its dev server themselves from ./bin/temporal.
#
# The suite: go vet, gofmt, staticcheck, workflowcheck over the workflow code, then every package under
# the race detector, with the reference page rendered in headless Chromium (make deps installs it).
# Arguments, if any, go to go test instead of ./... and skip the static checks (make docs-check).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! scripts/pg.sh reachable; then
  base=$(scripts/pg.sh start)
  export POSTBOX_TEST_DATABASE_URL="$base/test?sslmode=disable"
  echo "no database answered; using the private cluster at $base"
fi

if [ "${1:-}" = bench ]; then
  exec go test -run '^$' -bench . -benchtime "${BENCHTIME:-2s}" -timeout 30m ./...
fi

if command -v chromium >/dev/null; then
  export POSTBOX_TEST_CHROMIUM=${POSTBOX_TEST_CHROMIUM:-$(command -v chromium)}
fi

if [ $# -gt 0 ]; then
  exec go test -count=1 -timeout 25m "$@"
fi

echo "go vet"
go vet ./...
echo "gofmt"
unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:" $unformatted >&2
  exit 1
fi
echo "staticcheck"
bin/staticcheck ./...
echo "workflowcheck"
bin/workflowcheck ./formtask/... ./events/... ./correspondence/... ./notification/... ./files/... ./retention/...
go test -race -count=1 -timeout 60m ./...
