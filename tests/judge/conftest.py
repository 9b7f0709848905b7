"""Fixtures of the judge tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NoReturn

import pytest
from judge_support import StubJudge
from local_model import ModelServerError, server_missing, start_model_server, stop_model_server


@pytest.fixture(scope="session")
def stub_server() -> Iterator[StubJudge]:
    """A stub OpenAI-compatible server on 127.0.0.1, one per test process."""
    stub = StubJudge()
    yield stub
    stub.close()


@pytest.fixture
def stub_judge(stub_server: StubJudge) -> StubJudge:
    """The shared stub with a base URL of its own, no script and no recorded requests: each
    test sets its script. (Tests of one module may run on different workers, after any other
    test.)"""
    stub_server.fresh()
    return stub_server


def _unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine without the model server; in CI (``CI`` set, as the
    project's CI does) the wire tests are required, so their absence fails."""
    if os.environ.get("CI"):
        pytest.fail(f"judge wire tests are required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's server (xllamacpp) with SmolLM2 on a free port, in a child process of its
    own session (``model_server.py``); yields its /v1 base URL and stops it by PID.

    One per test process for the wire tests and the calibration ones: their tests are one
    xdist group (``cpu-heavy``), so one worker runs them all against one server, which loads
    the model and evaluates the judge's system prompt once (llama.cpp keeps a slot's prompt
    prefix; each new server paid ~575 prompt tokens again)."""
    missing = server_missing()
    if missing:
        _unavailable(f"{missing}: run scripts/setup.d/40-judge.sh (./scripts/test does)")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        try:
            base, proc = start_model_server(out, ctx=2048, threads=2)
        except ModelServerError as exc:
            pytest.fail(f"{exc}:\n{log.read_text(errors='replace')[-2000:]}", pytrace=False)
    try:
        yield base
    finally:
        stop_model_server(proc)
