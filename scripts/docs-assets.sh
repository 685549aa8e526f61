#!/usr/bin/env bash
# The renderer of GET /api/docs is Redoc's standalone bundle at the version pinned in api/docs/package.json
# and package-lock.json. The binary embeds the copy committed in api/docs, so building and testing need no
# npm; this script makes that copy from the installed lock (`make docs-assets`, after changing the version)
# or, with `check`, fails when the committed copy is not the locked package's (make docs-check).
set -euo pipefail
cd "$(dirname "$0")/../api/docs"

redoc=node_modules/redoc
version=$(node -p "require('./$redoc/package.json').version")
license() {
  echo "Redoc $version (npm package redoc, bundles/redoc.standalone.js), MIT License:"
  echo
  cat "$redoc/LICENSE"
  echo
  echo "The bundle includes these packages, under their licenses:"
  echo
  cat "$redoc/bundles/redoc.standalone.js.LICENSE.txt"
}

if [ "${1:-}" = check ]; then
  if ! cmp -s "$redoc/bundles/redoc.standalone.js" redoc.standalone.js || ! cmp -s <(license) redoc.LICENSE.txt; then
    echo "api/docs/redoc.standalone.js or redoc.LICENSE.txt is not redoc $version's: run make docs-assets and commit them" >&2
    exit 1
  fi
  echo "api/docs holds redoc $version as locked"
else
  cp "$redoc/bundles/redoc.standalone.js" .
  license >redoc.LICENSE.txt
  echo "api/docs: redoc $version"
fi
