"""Fixtures of the judge tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_support import StubJudge


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
