#!/usr/bin/env bash
# The TypeScript client example of `verial serve` (examples/ts-client): its compiler and
# openapi-typescript (its api.d.ts is generated from the served /openapi.json by
# scripts/ts_client.py), so the test suite can regenerate, build and run it against a real
# server. Idempotent; needs node >= 20 and npm.
set -euo pipefail
dir=examples/ts-client
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "70-ts-client: node/npm not found; the TypeScript client test will be skipped" >&2
  exit 0
fi
if [ ! -x "$dir/node_modules/.bin/tsc" ] || [ ! -x "$dir/node_modules/.bin/openapi-typescript" ]; then
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi
