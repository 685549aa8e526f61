#!/usr/bin/env bash
# make chaos: builds postbox and the chaos suite (cmd/chaos) and runs it. Settings (CHAOS_SEED, CHAOS_TASKS,
# CHAOS_CLIENTS, CHAOS_LIMIT, CHAOS_KEEP) are described in cmd/chaos/main.go and docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/postbox ./cmd/postbox
go build -o bin/chaos ./cmd/chaos
exec bin/chaos
