#!/usr/bin/env bash
# The FHIR server of the test suite: Medplum's FHIR router (npm) behind tests/servers/medplum.
# Idempotent: installs node_modules only when missing. Needs node >= 20 and npm.
set -euo pipefail
dir=tests/servers/medplum
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "30-medplum: node/npm not found; the live FHIR tests will be skipped (apt-get install nodejs npm)" >&2
  exit 0
fi
if [ ! -d "$dir/node_modules/@medplum/fhir-router" ]; then
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi
