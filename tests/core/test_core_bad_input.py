"""Malformed benchmark files: one clear collection error each, no traceback, others still run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from core_support import Project, criterion_runs, run_subprocess

V = "{assert: voice-transcript, contains: [hello]}"


@dataclass(frozen=True)
class Bad:
    """A malformed benchmark file and what its error message must name."""

    name: str
    content: str | bytes
    fmt: str = "yaml"
    line: int | None = None
    task: str | None = None
    criterion: str | None = None
    field: str | None = None
    says: str = ""

    @property
    def filename(self) -> str:
        return f"{self.name}.verial.{self.fmt}"


def _crit(lines: str) -> str:
    """A file with task ``t`` and criterion ``c`` whose criterion body is ``lines``."""
    return f"tasks:\n  - id: t\n    criteria:\n      - id: c\n{lines}"


BAD = [
    Bad(
        "yaml-syntax",
        f"tasks:\n  - id: t\n    criteria: [\n      {{id: c, assertion: {V}\n",
        line=5,
        says="invalid YAML",
    ),
    Bad(
        "json-syntax",
        '{"tasks": [\n {"id": "t",\n  "criteria": [],\n }]}\n',
        fmt="json",
        line=4,
        says="invalid JSON",
    ),
    Bad(
        "wrong-type-weight",
        _crit(f"        weight: heavy\n        assertion: {V}\n"),
        line=5,
        task="t",
        criterion="c",
        field="weight",
        says="valid number",
    ),
    Bad(
        "wrong-type-tags",
        f"tasks:\n  - id: t\n    tags: prior-auth\n    criteria:\n"
        f"      - id: c\n        assertion: {V}\n",
        line=3,
        task="t",
        field="tags",
        says="valid list",
    ),
    Bad(
        "unknown-benchmark-field",
        f"benchmark: b\nversoin: 2\ntasks:\n  - id: t\n    criteria:\n"
        f"      - id: c\n        assertion: {V}\n",
        line=2,
        field="versoin",
        says="unknown field",
    ),
    Bad(
        "unknown-task-field",
        f"tasks:\n  - id: t\n    criterias:\n      - id: c\n        assertion: {V}\n",
        line=3,
        task="t",
        field="criterias",
        says="unknown field",
    ),
    Bad(
        "unknown-criterion-field",
        _crit(f"        wieght: 2\n        assertion: {V}\n"),
        line=5,
        task="t",
        criterion="c",
        field="wieght",
        says="unknown field",
    ),
    Bad(
        "unknown-assertion-field",
        _crit(
            "        assertion:\n          assert: portal-state-match\n"
            "          correlate_by: {resource: prior_auth_requests}\n"
            "          assertion: [{path: status, expected: submitted}]\n"
        ),
        line=8,
        task="t",
        criterion="c",
        field="assertion.assertion",
        says="unknown field",
    ),
    Bad(
        "duplicate-task-ids",
        f"tasks:\n  - id: t\n    criteria:\n      - id: c\n"
        f"        assertion: {V}\n  - id: t\n    criteria:\n      - id: c\n"
        f"        assertion: {V}\n",
        line=6,
        task="t",
        field="id",
        says="duplicate task id",
    ),
    Bad(
        "duplicate-criterion-ids",
        _crit(f"        assertion: {V}\n      - id: c\n        assertion: {V}\n"),
        line=6,
        task="t",
        criterion="c",
        field="id",
        says="duplicate criterion id",
    ),
    Bad(
        "weight-zero",
        _crit(f"        weight: 0\n        assertion: {V}\n"),
        line=5,
        task="t",
        criterion="c",
        field="weight",
        says="greater than 0",
    ),
    Bad(
        "weight-negative",
        _crit(f"        weight: -1.5\n        assertion: {V}\n"),
        line=5,
        task="t",
        criterion="c",
        field="weight",
        says="greater than 0",
    ),
    Bad(
        "unknown-entity",
        f"entities:\n  maria-chen: {{member_id: M1}}\ntasks:\n  - id: t\n"
        f"    entities: [maria-chen, jon-smith]\n    criteria:\n      - id: c\n"
        f"        assertion: {V}\n",
        line=5,
        task="t",
        field="entities[1]",
        says="unknown entity 'jon-smith'",
    ),
    Bad(
        "unknown-input-entity",
        f"entities:\n  maria-chen: {{member_id: M1}}\ntasks:\n"
        f"  - id: t\n    entities: [maria-chen]\n    criteria:\n      - id: c\n"
        f"        input_entity_id: john-smith\n        assertion: {V}\n",
        line=8,
        task="t",
        criterion="c",
        field="input_entity_id",
        says="'john-smith'",
    ),
    Bad(
        "placeholder-unknown-field",
        "entities:\n  maria-chen: {member_id: M1}\ntasks:\n"
        "  - id: t\n    entities: [maria-chen]\n    criteria:\n      - id: c\n"
        '        assertion: {assert: voice-transcript, contains: ["{entity.dob}"]}\n',
        line=8,
        task="t",
        criterion="c",
        field="assertion",
        says="no field 'dob'",
    ),
    Bad(
        "placeholder-without-entities",
        _crit('        assertion: {assert: voice-transcript, contains: ["{entity.member_id}"]}\n'),
        line=5,
        task="t",
        criterion="c",
        field="assertion",
        says="the task has no entities",
    ),
    Bad(
        "placeholder-malformed",
        "entities:\n  maria-chen: {member_id: M1}\ntasks:\n"
        "  - id: t\n    entities: [maria-chen]\n    criteria:\n      - id: c\n"
        '        assertion: {assert: voice-transcript, contains: ["id {entity.member id}"]}\n',
        line=8,
        task="t",
        criterion="c",
        field="assertion",
        says="malformed placeholder",
    ),
    Bad("empty", "", says="file is empty"),
    Bad("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", says="binary file"),
    Bad("not-utf8", b'tasks:\n  - id: t\n    name: "Caf\xe9 visit"\n', says="not UTF-8"),
    Bad("top-level-scalar", "just a string\n", says="expected a mapping or a list"),
    Bad(
        "duplicate-yaml-keys",
        _crit(f"        weight: 2\n        weight: 3\n        assertion: {V}\n"),
        line=6,
        task="t",
        criterion="c",
        field="weight",
        says="appears twice",
    ),
    Bad(
        "known-assert-missing-field",
        _crit(
            "        assertion:\n          assert: portal-state-match\n"
            "          assertions: [{path: status, expected: submitted}]\n"
        ),
        line=5,
        task="t",
        criterion="c",
        field="assertion.correlate_by",
        says="required field is missing",
    ),
    Bad(
        "recursive-alias",
        "tasks:\n  - &t\n    id: t\n    task_item: {again: *t}\n",
        line=2,
        says="recursive",
    ),
    Bad(
        "task-id-with-separator",
        f"tasks:\n  - id: 'a::b'\n    criteria:\n      - id: c\n        assertion: {V}\n",
        line=2,
        task="a::b",
        field="id",
        says="'::'",
    ),
    # a task id is a directory name in the run: it must not climb out of it
    Bad(
        "task-id-escapes-the-run",
        f"tasks:\n  - id: ../../etc\n    criteria:\n      - id: c\n        assertion: {V}\n",
        line=2,
        task="../../etc",
        field="id",
    ),
    Bad(
        "task-id-with-slash",
        f"tasks:\n  - id: pa/mri\n    criteria:\n      - id: c\n        assertion: {V}\n",
        line=2,
        task="pa/mri",
        field="id",
    ),
    Bad(
        "weight-not-a-number",
        _crit(f"        weight: .nan\n        assertion: {V}\n"),
        line=5,
        task="t",
        criterion="c",
        field="weight",
        says="finite number",
    ),
    # nesting deeper than Python's recursion limit: a message, not a RecursionError
    Bad("deeply-nested-yaml", "tasks: " + "[" * 3000 + "]" * 3000 + "\n"),
    Bad("deeply-nested-json", '{"tasks": ' + "[" * 3000 + "]" * 3000 + "}\n", fmt="json"),
    Bad(
        "assertion-without-assert",
        _crit("        assertion: {contains: [hello]}\n"),
        line=5,
        task="t",
        criterion="c",
        field="assertion",
        says="'assert' key",
    ),
]

GOOD = {
    "benchmark": "good",
    "tasks": [
        {
            "id": "good-task",
            "criteria": [
                {
                    "id": "greets",
                    "assertion": {
                        "assert": "voice-transcript",
                        "speaker": "agent",
                        "contains": ["good morning"],
                    },
                }
            ],
        }
    ],
}


def _good(project: Project) -> None:
    project.benchmark("good", GOOD)
    project.sandbox(
        "good-task",
        {"voice/turns.json": [{"speaker": "agent", "text": "Good morning, Valley Health."}]},
    )


def _write(project: Project, bad: Bad) -> None:
    project.benchmark(bad.name, bad.content, fmt=bad.fmt)


def test_there_are_at_least_15_kinds_of_bad_file() -> None:
    assert len(BAD) >= 15
    assert len({b.filename for b in BAD}) == len(BAD)


@pytest.mark.parametrize("bad", BAD, ids=[b.name for b in BAD])
def test_bad_file_is_one_clear_collection_error(pytester: pytest.Pytester, bad: Bad) -> None:
    project = Project(pytester.path)
    _good(project)
    _write(project, bad)
    # --continue-on-collection-errors isolates this file's message from the separate question
    # of whether a bad file stops the session (test_bad_files_do_not_stop_the_session).
    result = pytester.runpytest("--continue-on-collection-errors")
    result.assert_outcomes(errors=1, passed=1)
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert "pydantic" not in output.lower()
    assert "RecursionError" not in output
    section = output.split(f"ERROR collecting {bad.filename}", 1)[1].split("=====", 1)[0]
    assert section.strip(), output
    where = f"{bad.filename}:{bad.line}:" if bad.line else f"{bad.filename}:"
    assert where in section
    for label, value in (("task", bad.task), ("criterion", bad.criterion), ("field", bad.field)):
        if value is not None:
            assert f"{label} {value!r}" in section
    assert bad.says in section
    result.stdout.fnmatch_lines([f"ERROR {bad.filename}*"])


def test_all_problems_of_a_file_in_one_error(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    body = f"        weight: 0\n        axsis: safety\n        assertion: {V}\n"
    project.benchmark("many", _crit(body) + f"  - id: t\n    criteria:\n      - assertion: {V}\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "3 problems in benchmark file:",
            "many.verial.yaml:5: task 't', criterion 'c', field 'weight': *greater than 0*",
            "many.verial.yaml:6: task 't', criterion 'c', field 'axsis': unknown field*",
            "many.verial.yaml:8: task 't', field 'id': duplicate task id*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("workers", [0, 2])
def test_bad_files_do_not_stop_the_session(pytester: pytest.Pytester, workers: int) -> None:
    """Every bad file is its own error and the good file still runs, with no extra option."""
    project = Project(pytester.path)
    _good(project)
    for bad in BAD:
        _write(project, bad)
    if workers:
        code, output = run_subprocess(
            pytester.path, "-n", str(workers), "--verial-report", "report.json"
        )
    else:
        result = pytester.runpytest("--verial-report", "report.json")
        code, output = result.ret, result.stdout.str()
    assert f"{len(BAD)} errors" in output
    assert "1 passed" in output, output[-3000:]
    assert "Traceback" not in output
    assert code == 1
    report = project.read_report()
    assert len(report["session"]["collection_errors"]) == len(BAD)
    good = criterion_runs(report)["good.verial.yaml::good-task::greets"]
    assert good["status"] == "passed"
    assert report["session"]["status"] == "completed"


def test_unknown_assert_is_not_a_collection_error(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "future",
        {
            "tasks": [
                {
                    "id": "fax",
                    "criteria": [
                        {"id": "fax-sent", "assertion": {"assert": "fax-received", "pages": 2}},
                        {
                            "id": "greets",
                            "assertion": {"assert": "voice-transcript", "contains": ["hello"]},
                        },
                    ],
                }
            ]
        },
    )
    project.sandbox("fax", {"voice/turns.json": [{"speaker": "agent", "text": "Hello!"}]})
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*unsupported assertion: fax-received*"])
    runs = criterion_runs(project.read_report())
    fax = runs["future.verial.yaml::fax::fax-sent"]
    assert (fax["score"], fax["passed"]) == (0.0, False)
    assert fax["details"] == "unsupported assertion: fax-received"
    assert runs["future.verial.yaml::fax::greets"]["score"] == 1.0


def test_a_broken_python_test_file_still_stops_the_session(pytester: pytest.Pytester) -> None:
    """Only benchmark files are exempt from pytest's stop-on-collection-error rule."""
    project = Project(pytester.path)
    _good(project)
    _write(project, BAD[0])
    pytester.makepyfile(test_broken="def test_x(:\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*Interrupted: 2 errors during collection*"])


def _alias_bomb(depth: int) -> str:
    """A few hundred bytes of YAML whose aliases expand to 10**depth values."""
    defs = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, depth + 1):
        defs.append(f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]")
    return (
        "tasks:\n  - id: t\n    task_item: {" + ", ".join(defs) + f", payload: *a{depth}}}\n"
        f"    criteria:\n      - id: c\n        assertion: {V}\n"
    )


def test_a_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    """Safe loading is not enough: aliases that expand to a million values are an error.

    Unchecked, this 500-byte file takes ~10 s per session to score and its JSON report is
    hundreds of megabytes (every alias expanded into the task snapshot).
    """
    project = Project(tmp_path)
    project.benchmark("bomb", _alias_bomb(6))
    _good(project)
    code, output = run_subprocess(tmp_path, "-p", "no:xdist", timeout=120)
    assert "1 error" in output and "1 passed" in output, output[-2000:]
    assert "bomb.verial.yaml" in output and "alias" in output
    assert "Traceback" not in output
