#!/usr/bin/env bash
# Runs once, when the PostgreSQL volume is new (docker-entrypoint-initdb.d): a role and a database for
# Postbox, and a role for Temporal that may create its own databases (temporal, temporal_visibility).
# Passwords come from the environment of the postgres service; nothing secret is in this file.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v postbox_pw="$POSTBOX_DB_PASSWORD" -v temporal_pw="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE postbox LOGIN PASSWORD :'postbox_pw';
CREATE DATABASE postbox OWNER postbox;
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_pw';
CREATE DATABASE temporal OWNER temporal;
SQL
