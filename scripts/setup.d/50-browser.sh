#!/usr/bin/env bash
# Headless Chromium and its WebDriver for the HTML report's browser test
# (tests/core/test_core_html.py): Debian's chromium and chromium-driver packages, so Selenium
# never downloads a browser or a driver. Needs root (CI runs as root); idempotent and quick
# when both are installed. Not fatal: without them the browser test skips saying why (and
# fails where CI is set).
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  echo "browser: chromium and chromedriver already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "browser: WARNING: chromium is missing and cannot be installed here (needs root and apt-get);" \
    "the HTML browser test will skip (and fail where CI is set)" >&2
  exit 0
fi
echo "browser: installing chromium and chromium-driver (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 ||
  echo "browser: WARNING: apt-get could not install chromium; the HTML browser test will skip" >&2
