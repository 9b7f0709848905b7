"""Collection: node ids, order, markers, entities, derived ids and Verial's API shapes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from core_support import Project, criterion_runs, portal_criterion, task_runs, voice_criterion


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", *args)
    return [line for line in result.stdout.lines if re.match(r"\S+\.verial\.\w+::", line)]


ORDERED = {
    "benchmark": "ordered",
    "tasks": [
        {
            "id": "zeta-task",
            "tags": ["prior-auth", "urgent"],
            "criteria": [
                voice_criterion("c-3", contains=["a"], axis="safety"),
                voice_criterion("c-1", contains=["a"], axis="correctness", weight=2),
                voice_criterion("b-2", contains=["a"]),
            ],
        },
        {
            "id": "alpha-task",
            "tags": ["referral"],
            "criteria": [
                voice_criterion("only", contains=["a"], axis="safety"),
            ],
        },
    ],
}


def test_node_ids_and_file_order(pytester: pytest.Pytester) -> None:
    Project(pytester.path).benchmark("ordered", ORDERED)
    ids = collected(pytester)
    assert ids == [
        "ordered.verial.yaml::zeta-task::c-3",
        "ordered.verial.yaml::zeta-task::c-1",
        "ordered.verial.yaml::zeta-task::b-2",
        "ordered.verial.yaml::alpha-task::only",
    ]
    assert collected(pytester) == ids  # the same again: a fixed order


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("safety", ["zeta-task::c-3", "alpha-task::only"]),
        ("correctness", ["zeta-task::c-1"]),
        ("prior-auth", ["zeta-task::c-3", "zeta-task::c-1", "zeta-task::b-2"]),
        ("referral and safety", ["alpha-task::only"]),
        ("urgent and not safety", ["zeta-task::c-1", "zeta-task::b-2"]),
    ],
)
def test_markers_from_axis_and_tags(
    pytester: pytest.Pytester, expr: str, expected: list[str]
) -> None:
    Project(pytester.path).benchmark("ordered", ORDERED)
    ids = collected(pytester, "-m", expr, "--strict-markers")
    assert ids == [f"ordered.verial.yaml::{e}" for e in expected]


ENTITIES: dict[str, Any] = {
    "benchmark": "pa",
    "entities": {
        "maria-chen": {"name": "Maria Chen", "request_id": "PA-100", "units": 3},
        "john-smith": {"name": "John Smith", "request_id": "PA-200", "units": 1},
    },
    "tasks": [
        {
            "id": "submit-pa",
            "entities": ["maria-chen", "john-smith"],
            "criteria": [
                portal_criterion(
                    "pa-submitted",
                    "prior_auth_requests",
                    "request_id",
                    "{entity.request_id}",
                    [
                        {"path": "status", "expected": "submitted"},
                        {"path": "units", "expected": "{entity.units}"},
                    ],
                ),
                voice_criterion(
                    "names-patient", contains=["prior authorization for {entity.name}"]
                ),
                voice_criterion(
                    "maria-only", contains=["lumbar MRI"], input_entity_id="maria-chen"
                ),
            ],
        }
    ],
}


def _entity_sandboxes(project: Project) -> None:
    for key, rid, name, units in (
        ("maria-chen", "PA-100", "Maria Chen", 3),
        ("john-smith", "PA-200", "John Smith", 1),
    ):
        other = "PA-200" if rid == "PA-100" else "PA-100"
        project.sandbox(
            f"submit-pa[{key}]",
            {
                # the other entity's row is there too, in the wrong state: correlation picks ours
                "portal/prior_auth_requests.json": [
                    {"request_id": other, "status": "draft", "units": 9},
                    {"request_id": rid, "status": "submitted", "units": units},
                ],
                "voice/turns.json": [
                    {
                        "speaker": "agent",
                        "text": f"I'm calling about a prior authorization for {name}, "
                        "for a lumbar MRI.",
                    }
                ],
            },
        )


def test_entities_parametrize_tasks_and_fill_placeholders(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark("pa", ENTITIES)
    assert collected(pytester) == [
        "pa.verial.yaml::submit-pa[maria-chen]::pa-submitted",
        "pa.verial.yaml::submit-pa[maria-chen]::names-patient",
        "pa.verial.yaml::submit-pa[maria-chen]::maria-only",  # input_entity_id scoping
        "pa.verial.yaml::submit-pa[john-smith]::pa-submitted",
        "pa.verial.yaml::submit-pa[john-smith]::names-patient",
    ]
    _entity_sandboxes(project)
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=5)
    report = project.read_report()
    runs = criterion_runs(report)
    maria = runs["pa.verial.yaml::submit-pa[maria-chen]::pa-submitted"]
    john = runs["pa.verial.yaml::submit-pa[john-smith]::pa-submitted"]
    assert maria["evidence"]["row_key"] == "PA-100"
    assert john["evidence"]["row_key"] == "PA-200"
    # a whole-string placeholder keeps the entity value's type (3, not "3")
    assert maria["evidence"]["assertionResults"][1] == {
        "path": "units",
        "expected": 3,
        "actual": 3,
        "passed": True,
    }
    phrases = runs["pa.verial.yaml::submit-pa[john-smith]::names-patient"]["evidence"]
    assert phrases["phraseResults"][0]["phrase"] == "prior authorization for John Smith"
    tasks = task_runs(report)
    assert {t["entity"] for t in tasks.values()} == {"maria-chen", "john-smith"}


def test_entity_sandbox_directory_is_the_one_read(pytester: pytest.Pytester) -> None:
    """Only ``submit-pa[maria-chen]/`` has data: john's criteria fail, maria's pass."""
    project = Project(pytester.path)
    project.benchmark("pa", ENTITIES)
    _entity_sandboxes(project)
    import shutil

    shutil.rmtree(pytester.path / "sandbox" / "submit-pa[john-smith]")
    project.sandbox(
        "submit-pa",
        {
            "portal/prior_auth_requests.json": [
                {"request_id": "PA-200", "status": "submitted", "units": 1}
            ]
        },
    )  # not an entity dir
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=3, failed=2)
    tasks = task_runs(project.read_report())
    assert tasks["pa.verial.yaml::submit-pa[maria-chen]"]["verdict"] == "pass"
    assert tasks["pa.verial.yaml::submit-pa[john-smith]"]["verdict"] == "fail"


def test_inline_entities_on_the_task(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "inline",
        {
            "tasks": [
                {
                    "id": "call",
                    "entities": [{"id": "p1", "phrase": "member ID"}],
                    "criteria": [voice_criterion("asks", contains=["{entity.phrase}"])],
                }
            ]
        },
    )
    project.sandbox(
        "call[p1]", {"voice/turns.json": [{"speaker": "agent", "text": "What is your member ID?"}]}
    )
    result = pytester.runpytest("-v")
    result.stdout.fnmatch_lines(["inline.verial.yaml::call[[]p1[]]::asks PASSED*"])


def test_criterion_ids_from_labels_and_positions(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    a = {"assert": "voice-transcript", "contains": ["x"]}
    project.benchmark(
        "ids",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {"label": "Appointment booked with Dr. Rivera", "assertion": a},
                        {
                            "label": "Appointment booked with Dr. Rivera!",
                            "assertion": a,
                        },  # same slug
                        {"assertion": a},
                        {"id": "explicit", "assertion": a},
                    ],
                }
            ]
        },
    )
    assert collected(pytester) == [
        "ids.verial.yaml::t::appointment-booked-with-dr-rivera",
        "ids.verial.yaml::t::appointment-booked-with-dr-rivera-2",
        "ids.verial.yaml::t::criterion-3",
        "ids.verial.yaml::t::explicit",
    ]


API_TASK = {
    "id": "tsk_01HPA",
    "task_id": "tsk_01HPA",
    "benchmark_id": "bm_01HXYZ",
    "created_at": "2026-04-20T17:00:00.000Z",
    "updated_at": "2026-04-21T09:00:00.000Z",
    "name": "Submit a PA for a lumbar MRI",
    "task_item": {
        "instruction": "Submit a prior authorization request for a lumbar MRI",
        "patient": "Maria Chen",
    },
    "criteria": [
        {
            "id": "crit_01HA",
            "task_id": "tsk_01HPA",
            "created_at": "2026-04-20T17:00:01.000Z",
            "label": "PA submitted",
            "weight": 1,
            "axis": None,
            "assertion": {
                "assert": "portal-state-match",
                "correlate_by": {"resource": "prior_auth_requests", "key": "request_id"},
                "assertions": [{"path": "status", "expected": "submitted"}],
            },
        }
    ],
}


@pytest.mark.parametrize(
    ("shape", "fmt"),
    [
        ("task-list", "yaml"),
        ("task-list", "json"),
        ("single-task", "json"),
        ("single-task", "yaml"),
    ],
)
def test_bare_task_list_and_single_task_files(
    pytester: pytest.Pytester, shape: str, fmt: str
) -> None:
    project = Project(pytester.path)
    other = {"id": "second", "criteria": [voice_criterion("hi", contains=["hello"])]}
    data: Any = [API_TASK, other] if shape == "task-list" else API_TASK
    project.benchmark("exported", data, fmt=fmt)
    project.sandbox(
        "tsk_01HPA",
        {"portal/prior_auth_requests.json": [{"request_id": "PA-1", "status": "submitted"}]},
    )
    project.sandbox("second", {"voice/turns.json": [{"speaker": "agent", "text": "Hello"}]})
    result = pytester.runpytest("-v", "--verial-report", "report.json")
    expected = 2 if shape == "task-list" else 1
    result.assert_outcomes(passed=expected)
    result.stdout.fnmatch_lines([f"exported.verial.{fmt}::tsk_01HPA::crit_01HA PASSED*"])
    task = task_runs(project.read_report())[f"exported.verial.{fmt}::tsk_01HPA"]
    assert task["name"] == "Submit a PA for a lumbar MRI"
    # the API's own fields are kept in the task snapshot
    assert task["snapshot"]["benchmark_id"] == "bm_01HXYZ"
    assert task["snapshot"]["created_at"] == "2026-04-20T17:00:00.000Z"
    assert task["benchmark"] == "exported"  # no slug in the file: the file name


def test_yml_suffix_and_other_files_ignored(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    (pytester.path / "b.verial.yml").write_text(
        "tasks:\n  - id: t\n    criteria:\n      - id: c\n"
        "        assertion: {assert: voice-transcript, contains: [hi]}\n",
        encoding="utf-8",
    )
    (pytester.path / "notes.yaml").write_text("not: [a benchmark\n", encoding="utf-8")
    project.benchmark(
        "a", {"tasks": [{"id": "t", "criteria": [voice_criterion("c", contains=["hi"])]}]}
    )
    assert collected(pytester) == ["a.verial.yaml::t::c", "b.verial.yml::t::c"]


def test_collect_only_scores_nothing(pytester: pytest.Pytester) -> None:
    """``--collect-only`` lists items; it must not print a run summary calling it cancelled."""
    Project(pytester.path).benchmark("ordered", ORDERED)
    result = pytester.runpytest("--collect-only", "-q", "--verial-report", "report.json")
    assert result.ret == 0
    output = result.stdout.str()
    assert "cancelled" not in output
    assert "verial summary" not in output
    assert not (pytester.path / "report.json").exists()


def test_several_runs_are_trials_of_the_same_tasks(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "trials",
        {
            "benchmark": "trials",
            "tasks": [
                {
                    "id": "call",
                    "criteria": [
                        voice_criterion("greets", contains=["good morning"]),
                        voice_criterion("asks-dob", contains=["date of birth"]),
                    ],
                }
            ],
        },
    )
    good = [{"speaker": "agent", "text": "Good morning! Your date of birth?"}]
    half = [{"speaker": "agent", "text": "Good morning!"}]
    for run, turns in (("run-a", good), ("run-b", good), ("run-c", half)):
        project.sandbox("call", {"voice/turns.json": turns}, run=run)
    assert collected(
        pytester, "--verial-run", "run-a", "--verial-run", "run-b", "--verial-run", "run-c"
    ) == [
        f"trials.verial.yaml::call@{run}::{c}"
        for run in ("run-a", "run-b", "run-c")
        for c in ("greets", "asks-dob")
    ]
    pytester.runpytest(
        "--verial-run",
        "run-a",
        "--verial-run",
        "run-b",
        "--verial-run",
        "run-c",
        "--verial-report",
        "report.json",
        "--verial-trials",
    )
    (run,) = project.read_report()["benchmark_runs"]
    trials = run["trials"]["tasks"]
    assert len(trials) == 1
    trial = trials[0]
    assert (trial["k"], trial["runs"]) == (3, ["run-a", "run-b", "run-c"])
    assert trial["mean"] == pytest.approx(2.5 / 3)
    assert (trial["pass_k"], trial["pass_rate"]) == (False, pytest.approx(2 / 3))
    assert trial["ci95"][0] <= trial["mean"] <= trial["ci95"][1] <= 1.0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--verial-run", "nowhere"), "--verial-run: */nowhere is not a directory"),
        (("--verial-run", "a/run", "--verial-run", "b/run"), "*share the name 'run'*"),
        (("--verial-pass-threshold", "1.2"), "--verial-pass-threshold: 1.2 is outside [[]0, 1]"),
        (("--verial-pass-threshold", "high"), "--verial-pass-threshold: 'high' is not a number"),
    ],
)
def test_unusable_options_are_usage_errors(
    pytester: pytest.Pytester, args: tuple[str, ...], says: str
) -> None:
    Project(pytester.path).benchmark("ordered", ORDERED)
    (pytester.path / "a" / "run").mkdir(parents=True)
    (pytester.path / "b" / "run").mkdir(parents=True)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{says}*"])


def test_a_bad_run_yaml_is_one_clear_error(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark("ordered", ORDERED)
    project.run_yaml({"agent": "pa-bot", "scored": "sometimes", "executer_model": "gpt"})
    result = pytester.runpytest()
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert result.ret != 0
    assert "run.yaml" in output and "executer_model" in output and "scored" in output


def test_options_from_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ini paths are relative to rootdir, wherever pytest is started from."""
    project = Project(pytester.path)
    project.benchmark("ordered", ORDERED)
    turns = {"voice/turns.json": [{"speaker": "agent", "text": "a"}]}
    project.sandbox("zeta-task", turns, run="runs/agent-1")
    project.sandbox("alpha-task", turns, run="runs/agent-1")
    (pytester.path / "pytest.ini").write_text(
        "[pytest]\nverial_run = runs/agent-1\nverial_report = out/report.json\n"
        "verial_pass_threshold = 0.5\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(pytester.mkdir("elsewhere"))
    result = pytester.runpytest(
        "--rootdir", str(pytester.path), str(pytester.path), "-c", str(pytester.path / "pytest.ini")
    )
    result.assert_outcomes(passed=4)
    report = project.read_report("out/report.json")  # relative to rootdir
    assert report["benchmark_runs"][0]["runs"][0]["label"] == "agent-1"
    assert report["benchmark_runs"][0]["pass_threshold"] == 0.5


def test_an_entity_criterion_can_be_run_by_its_node_id(pytester: pytest.Pytester) -> None:
    """Users copy a failing node id from the output to rerun just that criterion."""
    project = Project(pytester.path)
    project.benchmark("pa", ENTITIES)
    _entity_sandboxes(project)
    whole_task = pytester.runpytest("pa.verial.yaml::submit-pa[john-smith]")
    whole_task.assert_outcomes(passed=2)
    one = pytester.runpytest("-v", "pa.verial.yaml::submit-pa[john-smith]::names-patient")
    one.assert_outcomes(passed=1)
    one.stdout.fnmatch_lines(["pa.verial.yaml::submit-pa[[]john-smith[]]::names-patient PASSED*"])


def test_a_source_name_that_is_not_built_in_is_a_warning(pytester: pytest.Pytester) -> None:
    """A conftest check may read its own run.yaml settings; a typo of a built-in is named."""
    project = Project(pytester.path)
    project.benchmark("ordered", ORDERED)
    turns = {"voice/turns.json": [{"speaker": "agent", "text": "a"}]}
    project.sandbox("zeta-task", turns)
    project.sandbox("alpha-task", turns)
    project.run_yaml({"sources": {"fihr": {"base_url": "http://x"}}})
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=4)
    (warning,) = project.read_report()["session"]["warnings"]
    assert "sources.fihr: not a built-in source (did you mean 'fhir'?)" in warning
    assert "did you mean 'fhir'" in result.stdout.str()
