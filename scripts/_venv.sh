# Sourced by scripts/demo and scripts/test: create .venv on first use and install the package.
# $1: the extras to install ("" for the plugin alone, "test" for the test suite).
set -euo pipefail
extras="${1:-}"
py="${PYTHON:-python3}"
"$py" - <<'PY' || { echo "pytest-verial needs Python 3.11 or newer ($py is older)" >&2; exit 2; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv with $py"
  # the pip venv bundles (Python >= 3.11: pip >= 22.3) installs the editable package
  # (PEP 660); upgrading it first cost 5-8 s of each fresh clone's set-up
  "$py" -m venv .venv
fi
stamp=".venv/.installed-${extras:-base}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  target="."
  [ -n "$extras" ] && target=".[$extras]"
  echo "installing pytest-verial${extras:+[$extras]} into .venv"
  # uv (a PyPI package) resolves, downloads and byte-compiles in parallel: the ~110 packages of
  # the test extras cost it about a quarter of pip's CPU (BENCHMARKS.md, "issue 33, wave 8:
  # i33-suite-g"). It reads PyPI, not pip's configuration: where it cannot be installed or
  # cannot install, pip does the same install as before.
  if ! { .venv/bin/python -m pip install -q uv >/dev/null 2>&1 &&
    .venv/bin/python -m uv pip install -q --python .venv/bin/python --compile-bytecode \
      -e "$target"; }; then
    echo "uv could not be installed or could not install it: installing with pip"
    .venv/bin/python -m pip install -q -e "$target" 2>&1 | grep -v -i "warning" || true
  fi
  .venv/bin/python -c "import pytest_verial" && touch "$stamp"
fi
export PATH="$PWD/.venv/bin:$PATH"
