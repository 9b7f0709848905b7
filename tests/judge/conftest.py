"""Fixtures of the judge tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_support import StubJudge


@pytest.fixture(scope="session")
def stub_judge() -> Iterator[StubJudge]:
    """A stub OpenAI-compatible server on 127.0.0.1 (shared; each test sets its script)."""
    stub = StubJudge()
    yield stub
    stub.close()
