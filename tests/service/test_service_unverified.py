""" "Could not verify" as a coordinator reads it from the service (issue 30 item 5): the server's
judge absent or unreachable while a task's judge criterion must be scored. The answer never
names the judge's endpoint, a server path or a key; once the engine reports what it could not
evaluate, the answer says so: ``verification: incomplete``, ``not_evaluated``,
a lowered ``confidence`` and no verdict a coordinator could take for the agent's failure."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_support import EXAMPLES, RUNS

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

#: nothing listens there
DOWN = "http://127.0.0.1:9/v1"
#: the task whose deterministic criteria the good agent passes, and whose judge criterion is
#: asked only when the rollout cost more than the bypass threshold (config.cost)
BODY = {
    "benchmark": "verification@1",
    "task_id": "verify-pa-letter",
    "sandbox": {"run_dir": "good-agent"},
    "config": {"cost": 5},
}
JUDGES = {
    "absent": {},
    "down": {"judge_model": "gpt-4o-mini", "judge_base_url": DOWN, "judge_api_key_env": "NO_KEY"},
}


@pytest.fixture(params=sorted(JUDGES))
def answer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """verify-task's answer with the server's judge absent or down (a solver key)."""
    app = create_app(
        f"sqlite:///{tmp_path / 's.db'}", [EXAMPLES], RUNS, judge=JUDGES[request.param]
    )
    _, key = create_key(app.state.store, "solver")
    with TestClient(app) as client:
        response = client.post(
            "/verify-task", json=BODY, headers={"Authorization": f"Bearer {key}"}
        )
        assert response.status_code == 201, response.text
        yield dict(response.json())


def test_the_answer_names_no_endpoint_path_or_key(answer: dict[str, Any]) -> None:
    (judged,) = [c for c in answer["criterion_runs"] if c["judge"]]
    assert judged["status"] == "error"  # never a failed criterion
    text = str(answer)
    for secret in (DOWN, "127.0.0.1", "NO_KEY", str(RUNS.resolve()), str(Path.cwd())):
        assert secret not in text


def test_the_answer_gives_no_set_up_advice(
    answer: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    """Feedback is for the agent's retry: nothing about configuring the server."""
    text = str(answer)
    assert "--verial-" not in text and "verial_judge" not in text and "run.yaml" not in text


def test_the_coordinator_can_tell_could_not_verify_from_failed(answer: dict[str, Any]) -> None:
    (judged,) = [c for c in answer["criterion_runs"] if c["judge"]]
    assert judged["not_evaluated"]
    assert answer["verification"] == "incomplete"
    assert [n["criterion_id"] for n in answer["not_evaluated"]] == [judged["criterion_id"]]
    assert answer["confidence"] < 1.0
    # every deterministic criterion passed: only the judge could still fail the task
    assert answer["verdict"] is None
