#!/usr/bin/env bash
# A private PostgreSQL cluster under .data/pg for `make run` and `make test` when no database is given.
#   pg.sh start       start it (creating it the first time) and print its URL
#   pg.sh stop        stop it
#   pg.sh reachable   exit 0 when the test database answers
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="$PWD/.data"
PGDATA="$DATA/pg"
PORT_FILE="$DATA/pg.port"

pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# Runs a PostgreSQL tool as the postgres user when we are root (initdb and postgres refuse root).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; else "$@"; fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

case "${1:-}" in
  start)
    BIN=$(pgbin)
    [ -n "$BIN" ] || { echo "no PostgreSQL server found; run: make deps" >&2; exit 1; }
    mkdir -p "$DATA"
    if [ ! -f "$PGDATA/PG_VERSION" ]; then
      mkdir -p "$PGDATA"
      [ "$(id -u)" -eq 0 ] && chown postgres: "$PGDATA"
      as_owner "$BIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 >/dev/null
    fi
    if [ ! -s "$PORT_FILE" ]; then
      port=55432
      while ! port_free "$port"; do port=$((port + 1)); done
      echo "$port" >"$PORT_FILE"
    fi
    PORT=$(cat "$PORT_FILE")
    if ! as_owner "$BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
      touch "$DATA/pg.log" && { [ "$(id -u)" -ne 0 ] || chown postgres: "$DATA/pg.log"; }
      as_owner "$BIN/pg_ctl" -D "$PGDATA" -l "$DATA/pg.log" -w \
        -o "-p $PORT -c listen_addresses=127.0.0.1 -k $PGDATA" start >/dev/null
    fi
    for db in postbox test; do
      "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 ||
        "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qc "CREATE DATABASE $db" >/dev/null
    done
    echo "postgres://postgres@127.0.0.1:$PORT"
    ;;
  stop)
    BIN=$(pgbin)
    [ -f "$PGDATA/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1 || true
    ;;
  reachable)
    url="${POSTBOX_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
    command -v psql >/dev/null && psql "$url" -tAc 'SELECT 1' >/dev/null 2>&1
    ;;
  *)
    echo "usage: $0 start|stop|reachable" >&2; exit 2 ;;
esac
