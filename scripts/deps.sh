#!/usr/bin/env bash
# Installs the system packages Postbox needs (and the tools named as arguments), with apt-get when run as
# root; otherwise prints the command.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
# jq and openssl: the README's curl examples read links out of the answers and compute checksums.
for pkg in gcc pkg-config libxml2-dev jq openssl; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
# Tools some targets need besides (make docs-check: chromium, npm), named by their command and package.
for tool in "$@"; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
# A PostgreSQL server is needed only when we have to run our own cluster.
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && ! scripts/pg.sh reachable >/dev/null 2>&1; then
  missing+=(postgresql postgresql-contrib)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "Postbox needs these packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
