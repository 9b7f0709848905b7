#!/usr/bin/env bash
# PostgreSQL for the results store's tests (tests/store/pg_server.py starts its own server with
# initdb + pg_ctl): Debian's postgresql package when initdb is neither on PATH nor in
# /usr/lib/postgresql. Needs root (CI runs as root); idempotent. Not fatal: without it the
# store's PostgreSQL tests skip saying why.
set -euo pipefail
if command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "postgres: initdb already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "postgres: WARNING: initdb is missing and cannot be installed here (needs root and apt-get);" \
    "the store's PostgreSQL tests will skip" >&2
  exit 0
fi
echo "postgres: installing postgresql (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq postgresql >/dev/null 2>&1 ||
  echo "postgres: WARNING: apt-get could not install postgresql; its tests will skip" >&2
