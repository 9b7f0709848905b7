"""``POST /v1/consistency-checks`` (issue 20, PRD-103 §10): the server's judge compares the
outputs of related task runs, each brought with its sandbox; stored as a task run whose one
criterion is ``output-consistency``. The judge is an OpenAI-compatible stub on 127.0.0.1 (the
judge's own tests cover real model servers)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_support import FILES, ROOT, RUNS, count_rows

sys.path.insert(0, str(ROOT / "tests" / "judge"))
from judge_support import StubJudge, completion, ratings  # noqa: E402

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

LETTER = {"output.md": "# Letter\nCPT 72148 requested for Maria Chen."}


def _body(summary: str, **extra: Any) -> dict[str, Any]:
    return {
        "tasks": [
            {"name": "verify-letter", "sandbox": {"files": LETTER}},
            {"name": "verify-summary", "sandbox": {"files": {"output.json": summary}}},
        ],
        **extra,
    }


@pytest.fixture(scope="module")
def stub() -> Iterator[StubJudge]:
    judge = StubJudge()
    yield judge
    judge.close()


@pytest.fixture
def client(tmp_path: Path, stub: StubJudge) -> Iterator[tuple[Any, dict[str, str], Any]]:
    stub.reply((200, completion(ratings(2, 3))))
    stub.requests.clear()
    judge = {
        "judge_model": "gpt-4o-mini",
        "judge_base_url": stub.url,
        "judge_cache_dir": "off",
    }
    app = create_app(f"sqlite:///{tmp_path / 's.db'}", [FILES], RUNS, judge=judge)
    _, key = create_key(app.state.store, "org")
    with TestClient(app) as http:
        yield http, {"Authorization": f"Bearer {key}"}, app


def test_related_outputs_are_compared_by_the_servers_judge(
    client: tuple[Any, dict[str, str], Any], stub: StubJudge
) -> None:
    http, auth, app = client
    answer = http.post(
        "/v1/consistency-checks",
        json=_body('{"cpt_code": "72149"}', config={"executor_model": "claude-sonnet-4-5"}),
        headers={**auth, "Idempotency-Key": "check-1"},
    )
    assert answer.status_code == 201, answer.text
    result = answer.json()
    (crit,) = result["criterion_runs"]
    assert crit["criterion_id"] == "consistency" and crit["assert"] == "output-consistency"
    assert (crit["status"], crit["score"]) == ("failed", 0.375)
    assert result["verdict"] == "partial" and result["task_key"] == "verify-summary"
    prompt = stub.requests[0]["messages"][1]["content"]
    assert "=== task verify-letter (output.md) ===\n# Letter\nCPT 72148" in prompt
    assert '=== task verify-summary (output.json) ===\n{"cpt_code": "72149"}' in prompt
    assert stub.requests[0]["model"] == "gpt-4o-mini"  # the server's judge, never the caller's
    stored = http.get(f"/task-runs/{result['task_run_id']}", headers=auth).json()
    assert stored["score"] == 0.375
    again = http.post(
        "/v1/consistency-checks",
        json=_body('{"cpt_code": "72149"}', config={"executor_model": "claude-sonnet-4-5"}),
        headers={**auth, "Idempotency-Key": "check-1"},
    )
    assert again.json() == result and len(stub.requests) == 1
    assert count_rows(app.state.store)["task_runs"] == 1


def test_the_judge_is_never_the_executor_and_bad_requests_are_4xx(
    client: tuple[Any, dict[str, str], Any], stub: StubJudge
) -> None:
    http, auth, app = client

    def post(body: dict[str, Any]) -> Any:
        return http.post("/v1/consistency-checks", json=body, headers=auth)

    same = post(_body("{}", config={"executor_model": "gpt-4o-mini"}))
    assert same.status_code == 422 and "judge" in same.json()["detail"], same.text
    assert "--" not in same.json()["detail"]  # no server set-up advice for a caller
    one = {"tasks": _body("{}")["tasks"][:1]}
    assert post(one).status_code == 400
    twice = _body("{}")
    twice["tasks"][1]["name"] = "verify-letter"
    assert "its own name" in post(twice).json()["detail"]
    escape = _body("{}")
    escape["tasks"][0]["name"] = "../etc"
    assert post(escape).status_code == 400
    outside = _body("{}")
    outside["tasks"][0]["sandbox"] = {"run_dir": "../.."}
    assert post(outside).status_code == 422
    assert http.post("/v1/consistency-checks", json=_body("{}")).status_code == 401
    assert stub.requests == [] and count_rows(app.state.store)["task_runs"] == 0


@pytest.mark.parametrize("workers", ["1", "2"])
def test_verial_serve_passes_its_judge_options_to_every_worker(
    tmp_path: Path, stub: StubJudge, workers: str
) -> None:
    import httpx
    from service_support import new_key, serve

    stub.reply((200, completion(ratings(5, 5))))
    stub.requests.clear()
    store = f"sqlite:///{tmp_path / 's.db'}"
    _, key = new_key(tmp_path, store, "org")
    args = (str(FILES), "--runs-root", str(RUNS), "--workers", workers)
    judge = ("--judge-model", "gpt-4o-mini", "--judge-base-url", stub.url)
    with serve(tmp_path, store, *args, *judge) as server:
        answer = httpx.post(
            server.url + "/v1/consistency-checks",
            json=_body('{"cpt_code": "72148"}'),
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
    assert answer.status_code == 201, answer.text
    assert answer.json()["criterion_runs"][0]["status"] == "passed"
    assert [r["model"] for r in stub.requests] == ["gpt-4o-mini"]
