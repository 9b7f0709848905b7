"""Issue 31: a number that is not finite is refused wherever the service takes one, naming the
field (it used to be taken as ``inf`` and stored as null), over SQLite and PostgreSQL; nothing
is stored."""

from __future__ import annotations

import pytest
from service_support import Api, count_rows
from test_service_api import is_problem, verify_body


@pytest.mark.parametrize(
    "number, field",
    [
        (b"1e999", "config.cost"),
        (b"Infinity", "config.cost"),
        (b"-Infinity", "config.cost"),
        (b"NaN", "config.cost"),
        (b"1E+0400", "config.cost"),
    ],
)
def test_a_non_finite_cost_is_a_400_naming_the_field(api: Api, number: bytes, field: str) -> None:
    before = count_rows(api.app.state.store)
    body = (
        b'{"benchmark": "sftp-drops@1", "task_id": "sftp-referral-packet", '
        b'"sandbox": {"run_dir": "good-agent"}, "config": {"cost": ' + number + b"}}"
    )
    headers = {**api.h(api.org), "content-type": "application/json"}
    answer = is_problem(api.client.post("/v1/verify-task", content=body, headers=headers), 400)
    assert answer["detail"].startswith(f"body {field}: not a finite number")
    assert count_rows(api.app.state.store) == before


def test_non_finite_text_where_a_number_belongs_is_refused_too(api: Api) -> None:
    # pydantic would read the text "Infinity" as inf for a float field
    for text in ("Infinity", "1e999", "NaN"):
        body = verify_body(config={"cost": text})
        answer = api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))
        detail = is_problem(answer, 400)["detail"]
        assert detail.startswith("body config.cost:") and "finite" in detail


def test_a_non_finite_weight_in_an_inline_task_names_its_criterion(api: Api) -> None:
    body = (
        b'{"task": {"id": "t", "criteria": [{"id": "c", "weight": 1e999, "assertion": '
        b'{"assert": "output-match", "contains": ["x"]}}]}, '
        b'"sandbox": {"files": {"output.md": "x"}}}'
    )
    headers = {**api.h(api.org), "content-type": "application/json"}
    answer = is_problem(api.client.post("/v1/verify-task", content=body, headers=headers), 400)
    assert answer["detail"].startswith("body task.criteria.0.weight: not a finite number")


def test_finite_numbers_and_the_text_nan_are_still_taken(api: Api) -> None:
    body = verify_body(config={"cost": 1e308, "task_type": "NaN Infinity 1e999"})
    answer = api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))
    assert answer.status_code == 201, answer.text
