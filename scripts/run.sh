#!/usr/bin/env bash
# The local stack: PostgreSQL (POSTBOX_DATABASE_URL, or a private cluster under .data/), the Temporal dev
# server with its Web UI, Mailpit for the notifications' e-mails with its web UI, versitygw for the file
# bytes (an S3 API over .data/objects), and Postbox (API and worker in one process) with the demo dataset
# imported.
# Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data

started_pg=
pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$started_pg" ] && scripts/pg.sh stop
  echo "stopped"
}
trap cleanup INT TERM EXIT

if [ -z "${POSTBOX_DATABASE_URL:-}" ]; then
  base=$(scripts/pg.sh start)
  started_pg=1
  export POSTBOX_DATABASE_URL="$base/postbox?sslmode=disable"
fi

TEMPORAL_PORT=${POSTBOX_TEMPORAL_PORT:-7233}
export POSTBOX_TEMPORAL_ADDRESS=${POSTBOX_TEMPORAL_ADDRESS:-127.0.0.1:$TEMPORAL_PORT}
# The dynamic-config values are those of every dev server Postbox starts: why in
# internal/temporaltest.DevServerFlags.
bin/temporal server start-dev --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port 8233 \
  --db-filename .data/temporal.db --log-level warn \
  --search-attribute Reportee=Keyword --search-attribute ServiceCode=Keyword \
  --search-attribute ServiceEdition=Int --search-attribute FormTaskStatus=Keyword \
  --dynamic-config-value history.transferProcessorMaxPollRPS=1000 \
  --dynamic-config-value matching.numTaskqueueReadPartitions=1 \
  --dynamic-config-value matching.numTaskqueueWritePartitions=1 \
  >.data/temporal.log 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do
  bin/temporal operator cluster health --address "$POSTBOX_TEMPORAL_ADDRESS" >/dev/null 2>&1 && break
  sleep 1
done
echo "Temporal Web UI: http://127.0.0.1:8233"

# Mailpit receives the notifications' e-mails; its web UI shows them. It drops a mail whose Message-ID it
# has already received, as a receiver that deduplicates does (a send retried after a crash keeps its id).
SMTP_PORT=${POSTBOX_MAILPIT_SMTP_PORT:-1025}
bin/mailpit --smtp 127.0.0.1:"$SMTP_PORT" --listen 127.0.0.1:8025 --database .data/mailpit.db --max 0 \
  --ignore-duplicate-ids --disable-version-check --smtp-disable-rdns --quiet >.data/mailpit.log 2>&1 &
pids+=($!)
export POSTBOX_SMTP_ADDR=${POSTBOX_SMTP_ADDR:-127.0.0.1:$SMTP_PORT}
export POSTBOX_SMTP_TLS=${POSTBOX_SMTP_TLS:-none}
echo "Mailpit (the notifications' e-mails): http://127.0.0.1:8025"

# The file bytes: versitygw serves .data/objects/data as S3 (the objects' metadata in .data/objects/meta).
S3_PORT=${POSTBOX_VERSITYGW_PORT:-7070}
mkdir -p .data/objects/data .data/objects/meta
ROOT_ACCESS_KEY=postbox ROOT_SECRET_KEY=postbox-dev-secret bin/versitygw --port 127.0.0.1:"$S3_PORT" --health /health --quiet \
  posix --sidecar "$PWD/.data/objects/meta" "$PWD/.data/objects/data" >.data/versitygw.log 2>&1 &
pids+=($!)
export POSTBOX_S3_ENDPOINT=${POSTBOX_S3_ENDPOINT:-127.0.0.1:$S3_PORT}
export POSTBOX_S3_ACCESS_KEY=${POSTBOX_S3_ACCESS_KEY:-postbox} POSTBOX_S3_SECRET_KEY=${POSTBOX_S3_SECRET_KEY:-postbox-dev-secret}
echo "Object store (S3) of the file bytes: http://$POSTBOX_S3_ENDPOINT"

# Webhook subscriptions may deliver to local receivers (postbox webhook-echo): plain http, private addresses.
export POSTBOX_WEBHOOK_ALLOW_PRIVATE=${POSTBOX_WEBHOOK_ALLOW_PRIVATE:-true}
# Enterprise certificates need TLS: the demo's server certificate, client certificates from its test CA.
export POSTBOX_TLS_ADDR=${POSTBOX_TLS_ADDR-127.0.0.1:8443}
bin/postbox dev --file deploy/demo/demo.json &
pids+=($!)
echo "Postbox API: http://127.0.0.1:8080 (try: curl -H 'Accept: application/hal+json' http://127.0.0.1:8080/api/metadata)"
wait -n "${pids[@]}"
