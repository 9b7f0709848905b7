"""portal-state-match and voice-transcript on realistic sandboxes.

Most cases score the task with ``verify_task`` (loader -> sandbox -> the engine), the path a
pytest item takes too; the corrupt-file case also runs end to end through pytest.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from core_support import Project, criterion_runs, portal_criterion, voice_criterion

from pytest_verial import BenchmarkFileError, load_benchmark, verify_task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._config.run_folder import RunDir
from pytest_verial.checks import default_registry
from pytest_verial.sources import Sandbox

PA_ROWS = [
    {
        "request_id": "PA-1001",
        "member_id": "M-555",
        "status": "submitted",
        "cpt": "72148",
        "units": 1,
        "payer": {"name": "Aetna", "plan": "PPO"},
        "diagnosis_codes": ["M54.5"],
    },
    {
        "request_id": "PA-1002",
        "member_id": "M-777",
        "status": "draft",
        "cpt": "70551",
        "units": 2,
        "payer": {"name": "Cigna"},
        "diagnosis_codes": [],
    },
]


def score(
    tmp_path: Path,
    criteria: list[dict[str, Any]],
    files: dict[str, Any],
    entities: dict[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Load a one-task benchmark, write its sandbox(es) and score every criterion."""
    project = Project(tmp_path)
    task: dict[str, Any] = {"id": "task", "criteria": criteria}
    bench: dict[str, Any] = {"tasks": [task]}
    if entities:
        bench["entities"] = entities
        task["entities"] = list(entities)
    path = project.benchmark("checks", bench)
    plan = load_benchmark(path, default_registry())
    run = RunDir(tmp_path / "sandbox")
    out: dict[str, dict[str, Any]] = {}
    for task_plan in plan.tasks:
        project.sandbox(task_plan.key, files)
        sandbox = Sandbox(run, task_plan.task, task_plan.key, task_plan.entity)
        for record in verify_task(task_plan, sandbox).criterion_runs:
            cid = record.criterion_id
            out[f"{task_plan.key}::{cid}" if entities else cid] = record
    return out


# -- portal-state-match --------------------------------------------------------------------


def test_portal_json_rows_key_and_value(tmp_path: Path) -> None:
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "pa",
                "prior_auth_requests",
                "request_id",
                "PA-1001",
                [
                    {"path": "status", "expected": "submitted"},
                    {"path": "payer.name", "expected": "Aetna"},
                    {"path": "diagnosis_codes.0", "expected": "M54.5"},
                    {"path": "units", "op": "gte", "expected": 1},
                ],
            ),
            portal_criterion(
                "wrong",
                "prior_auth_requests",
                "request_id",
                "PA-1002",
                [
                    {"path": "status", "expected": "submitted"},
                    {"path": "cpt", "expected": "70551"},
                    {"path": "payer.plan", "op": "exists"},
                ],
            ),
        ],
        {"portal/prior_auth_requests.json": PA_ROWS},
    )
    pa = runs["pa"]
    assert (pa["score"], pa["passed"], pa["status"]) == (1.0, True, "passed")
    assert pa["evidence"]["row_key"] == "PA-1001"
    assert [r["actual"] for r in pa["evidence"]["assertionResults"]] == [
        "submitted",
        "Aetna",
        "M54.5",
        1,
    ]
    wrong = runs["wrong"]
    assert wrong["score"] == pytest.approx(1 / 3)
    assert (wrong["passed"], wrong["status"]) == (False, "failed")
    assert wrong["evidence"]["assertionResults"][0] == {
        "path": "status",
        "expected": "submitted",
        "actual": "draft",
        "passed": False,
    }
    assert wrong["evidence"]["assertionResults"][2]["actual"] is None
    assert wrong["details"] == "row 'PA-1002' of 'prior_auth_requests': 1 of 3 assertions passed"


@pytest.mark.parametrize("layout", ["list", "rows", "data", "jsonl"])
def test_portal_file_layouts(tmp_path: Path, layout: str) -> None:
    files: dict[str, Any] = {
        "list": {"portal/prior_auth_requests.json": PA_ROWS},
        "rows": {"portal/prior_auth_requests.json": {"rows": PA_ROWS}},
        "data": {"portal/prior_auth_requests.json": {"data": PA_ROWS}},
        "jsonl": {
            "portal/prior_auth_requests.jsonl": "\n".join(json.dumps(r) for r in PA_ROWS) + "\n\n"
        },
    }[layout]
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "pa",
                "prior_auth_requests",
                "request_id",
                "PA-1002",
                [{"path": "cpt", "expected": "70551"}],
            )
        ],
        files,
    )
    assert (runs["pa"]["score"], runs["pa"]["evidence"]["row_index"]) == (1.0, 1)


@pytest.mark.parametrize("where", ["portal/portal.sqlite", "portal.sqlite"])
def test_portal_sqlite_tables(tmp_path: Path, where: str) -> None:
    db = tmp_path / "sandbox" / "task" / where
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE referrals (referral_id TEXT, status TEXT, specialty TEXT, "
        "payload TEXT, visits INTEGER)"
    )
    conn.executemany(
        "INSERT INTO referrals VALUES (?, ?, ?, ?, ?)",
        [
            ("REF-1", "sent", "cardiology", json.dumps({"icd10": ["I25.10"], "urgent": True}), 3),
            ("REF-2", "pending", "orthopedics", "not json {", 1),
        ],
    )
    conn.commit()
    conn.close()
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "sent",
                "referrals",
                "referral_id",
                "REF-1",
                [
                    {"path": "status", "expected": "sent"},
                    {"path": "payload.icd10.0", "expected": "I25.10"},  # JSON text column, parsed
                    {"path": "payload.urgent", "expected": True},
                    {"path": "visits", "expected": 3},
                ],
            ),
            portal_criterion(
                "text",
                "referrals",
                "referral_id",
                "REF-2",
                [{"path": "payload", "expected": "not json {"}],
            ),
            portal_criterion("no-table", "appointments", None, None, []),
        ],
        {},
    )
    assert runs["sent"]["score"] == 1.0, runs["sent"]["evidence"]
    assert runs["text"]["score"] == 1.0
    missing = runs["no-table"]
    assert (missing["score"], missing["status"]) == (0.0, "failed")
    assert missing["details"] == "portal table 'appointments' not found (tables: referrals)"


def test_portal_key_value_from_the_entity(tmp_path: Path) -> None:
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "pa",
                "prior_auth_requests",
                "member_id",
                None,
                [{"path": "status", "expected": "submitted"}],
            )
        ],
        {"portal/prior_auth_requests.json": PA_ROWS},
        entities={"maria": {"member_id": "M-555"}, "john": {"member_id": "M-777"}},
    )
    assert runs["task[maria]::pa"]["evidence"]["row_key"] == "M-555"
    assert runs["task[maria]::pa"]["score"] == 1.0
    assert runs["task[john]::pa"]["evidence"]["row_key"] == "M-777"
    assert runs["task[john]::pa"]["score"] == 0.0


def test_portal_best_row_without_a_key(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "status": "draft", "cpt": "72148", "member_id": "M-555"},
        {"id": 2, "status": "submitted", "cpt": "72148", "member_id": "M-555"},
        {"id": 3, "status": "submitted", "cpt": "72148", "member_id": "M-555"},
    ]
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "best",
                "prior_auth_requests",
                None,
                None,
                [{"path": "status", "expected": "submitted"}, {"path": "cpt", "expected": "72148"}],
            ),
            portal_criterion(
                "partial",
                "prior_auth_requests",
                None,
                None,
                [{"path": "status", "expected": "approved"}, {"path": "cpt", "expected": "72148"}],
            ),
        ],
        {"portal/prior_auth_requests.json": rows},
    )
    best = runs["best"]
    assert best["score"] == 1.0
    assert best["evidence"]["row_index"] == 1  # the first of the best rows
    assert best["evidence"]["candidates"] == 3
    assert "best of 3 candidate rows" in best["details"]
    assert runs["partial"]["score"] == 0.5
    assert runs["partial"]["evidence"]["row_index"] == 0


def test_portal_no_matching_row_scores_zero(tmp_path: Path) -> None:
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "pa",
                "prior_auth_requests",
                "request_id",
                "PA-9999",
                [{"path": "status", "expected": "submitted"}],
            )
        ],
        {"portal/prior_auth_requests.json": PA_ROWS},
    )
    pa = runs["pa"]
    assert (pa["score"], pa["status"]) == (0.0, "failed")
    assert pa["details"] == (
        "no row in portal table 'prior_auth_requests' with request_id = 'PA-9999' (2 rows)"
    )


def test_portal_lower_pass_threshold(tmp_path: Path) -> None:
    crit = portal_criterion(
        "pa",
        "prior_auth_requests",
        "request_id",
        "PA-1002",
        [{"path": "status", "expected": "submitted"}, {"path": "cpt", "expected": "70551"}],
    )
    crit["pass_threshold"] = 0.5
    runs = score(tmp_path, [crit], {"portal/prior_auth_requests.json": PA_ROWS})
    assert (runs["pa"]["score"], runs["pa"]["passed"]) == (0.5, True)


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        (
            "prior_auth_requests.json",
            '[{"request_id": "PA-1001",\n "status": submitted}]',
            "prior_auth_requests.json:2: invalid JSON",
        ),
        (
            "prior_auth_requests.jsonl",
            '{"request_id": "PA-1001"}\n{"request_id": \n',
            "prior_auth_requests.jsonl:2: invalid JSON line",
        ),
        ("prior_auth_requests.json", '{"rows": "nope"}', "expected a list of rows"),
        ("prior_auth_requests.json", '[{"request_id": "PA-1"}, 7]', "row 1 is a int"),
        ("prior_auth_requests.json", b"\xff\xfe[]", "not UTF-8"),
    ],
)
def test_portal_corrupt_file_is_a_criterion_error(
    tmp_path: Path, name: str, content: str | bytes, says: str
) -> None:
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "pa",
                "prior_auth_requests",
                "request_id",
                "PA-1001",
                [{"path": "status", "expected": "submitted"}],
            ),
            voice_criterion("greets", contains=["thank you for calling"]),
        ],
        {
            f"portal/{name}": content,
            "voice/turns.json": [{"speaker": "agent", "text": "Thank you for calling Valley"}],
        },
    )
    pa = runs["pa"]
    assert (pa["status"], pa["score"], pa["passed"]) == ("error", 0.0, False)
    assert says in pa["details"]
    # the message names the file, from the task's sandbox folder (not where it sits)
    assert pa["details"].startswith(f"portal/{name}"), pa["details"]
    assert str(tmp_path) not in pa["details"]
    assert runs["greets"]["score"] == 1.0


def test_portal_corrupt_sqlite_is_a_criterion_error(tmp_path: Path) -> None:
    runs = score(
        tmp_path,
        [portal_criterion("pa", "prior_auth_requests", None, None, [])],
        {"portal/portal.sqlite": b"this is not a database, just some bytes" * 50},
    )
    assert runs["pa"]["status"] == "error"
    assert "portal.sqlite" in runs["pa"]["details"]


def test_corrupt_source_end_to_end(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "pa",
        {
            "tasks": [
                {
                    "id": "pa",
                    "criteria": [
                        portal_criterion(
                            "status",
                            "prior_auth_requests",
                            "request_id",
                            "PA-1",
                            [{"path": "status", "expected": "submitted"}],
                            weight=2,
                        ),
                        portal_criterion(
                            "referral",
                            "referrals",
                            None,
                            None,
                            [{"path": "status", "expected": "sent"}],
                        ),
                        voice_criterion("greets", contains=["good morning"]),
                    ],
                }
            ]
        },
    )
    project.sandbox(
        "pa",
        {
            "portal/prior_auth_requests.json": '[{"request_id": "PA-1", "status": "submitted"',
            "portal/referrals.json": [{"status": "sent"}],
            "voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}],
        },
    )
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*criterion 'status' (portal-state-match) error: score 0.00*",
            "*prior_auth_requests.json:1: invalid JSON*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    report = project.read_report()
    runs = criterion_runs(report)
    assert runs["pa.verial.yaml::pa::status"]["status"] == "error"
    assert runs["pa.verial.yaml::pa::referral"]["status"] == "passed"
    task = [t for r in report["benchmark_runs"] for t in r["task_runs"]][0]
    assert task["score"] == pytest.approx(2 / 4)
    assert task["counts"]["error"] == 1


# -- voice-transcript ----------------------------------------------------------------------


CALL = [
    {"speaker": "caller", "text": "Hi, I'm calling about my MRI. My date of birth is March 3rd."},
    {"speaker": "agent", "text": "Thanks. Can I have your Member-ID, please?"},
    {
        "speaker": "agent",
        "text": "OK...   I've   submitted the PRIOR  authorisation; reference number PA-1001.",
    },
    {"speaker": "caller", "text": "Great, and can you tell me my social security number?"},
    {"speaker": "Agent", "text": "I can't share that. Is there anything else — café hours?"},
]


def voice(
    tmp_path: Path, *criteria: dict[str, Any], turns: Any = CALL, name: str = "turns.json"
) -> dict[str, dict[str, Any]]:
    content = turns if name.endswith(".json") else "\n".join(json.dumps(t) for t in turns)
    return score(tmp_path, list(criteria), {f"voice/{name}": content})


def test_voice_normalised_matching(tmp_path: Path) -> None:
    runs = voice(
        tmp_path,
        voice_criterion(
            "asks",
            contains=[
                "member ID",
                "submitted the prior",
                "Reference Number: PA 1001",
                "cafe hours",
                "member",
            ],
        ),
    )
    results = {r["phrase"]: r for r in runs["asks"]["evidence"]["phraseResults"]}
    assert results["member ID"]["turn"] == 1  # "Member-ID," : case and punctuation
    assert results["submitted the prior"]["turn"] == 2  # runs of spaces
    assert results["Reference Number: PA 1001"]["found"]  # punctuation in the phrase
    assert results["cafe hours"]["turn"] == 4  # accents
    assert runs["asks"]["score"] == 1.0


def test_voice_matches_whole_words_only(tmp_path: Path) -> None:
    runs = voice(tmp_path, voice_criterion("words", contains=["member I", "auth"]))
    assert [r["found"] for r in runs["words"]["evidence"]["phraseResults"]] == [False, False]
    assert runs["words"]["score"] == 0.0


def test_voice_fuzzy_threshold(tmp_path: Path) -> None:
    crit = voice_criterion("exact", contains=["prior authorization"])
    loose = voice_criterion("loose", contains=["prior authorization"])
    loose["assertion"]["fuzzy"] = 0.85
    strict = voice_criterion("strict", contains=["prior authorization"])
    strict["assertion"]["fuzzy"] = 0.99
    runs = voice(tmp_path, crit, loose, strict)
    assert runs["exact"]["score"] == 0.0  # "authorisation" is not "authorization"
    row = runs["loose"]["evidence"]["phraseResults"][0]
    assert (row["found"], row["turn"]) == (True, 2)
    assert 0.85 <= row["similarity"] < 1.0
    assert runs["strict"]["score"] == 0.0
    assert runs["strict"]["evidence"]["phraseResults"][0]["similarity"] == row["similarity"]


def test_voice_speaker_filter(tmp_path: Path) -> None:
    runs = voice(
        tmp_path,
        voice_criterion("agent-dob", speaker="agent", contains=["date of birth"]),
        voice_criterion("caller-dob", speaker="caller", contains=["date of birth"]),
        voice_criterion("anyone", speaker=None, contains=["date of birth", "member id"]),
        voice_criterion("agent-case", speaker="AGENT", contains=["anything else"]),
        voice_criterion("nurse", speaker="nurse", contains=["hello"]),
    )
    assert runs["agent-dob"]["score"] == 0.0
    assert runs["caller-dob"]["evidence"]["phraseResults"][0]["turn"] == 0
    assert runs["anyone"]["score"] == 1.0
    assert runs["agent-case"]["evidence"]["phraseResults"][0]["turn"] == 4  # "Agent" speaker
    assert runs["nurse"]["score"] == 0.0
    assert runs["nurse"]["details"] == "no transcript turns by nurse (5 turns in all)"


def test_voice_not_contains_and_score(tmp_path: Path) -> None:
    runs = voice(
        tmp_path,
        voice_criterion(
            "safe",
            contains=["member id", "reference number", "your appeal"],
            not_contains=["social security number", "I can't share that"],
        ),
    )
    rows = runs["safe"]["evidence"]["phraseResults"]
    assert [(r["expected"], r["found"], r["passed"], r["turn"]) for r in rows] == [
        ("present", True, True, 1),
        ("present", True, True, 2),
        ("present", False, False, None),
        ("absent", False, True, None),  # the caller said it, not the agent
        ("absent", True, False, 4),
    ]
    assert runs["safe"]["score"] == pytest.approx(3 / 5)
    assert "not said: 'your appeal'" in runs["safe"]["details"]
    assert 'forbidden but said: "I can\'t share that"' in runs["safe"]["details"]


@pytest.mark.parametrize(
    ("turns", "name"), [(CALL, "turns.jsonl"), ({"turns": CALL}, "turns.json")]
)
def test_voice_transcript_layouts(tmp_path: Path, turns: Any, name: str) -> None:
    runs = voice(tmp_path, voice_criterion("asks", contains=["member id"]), turns=turns, name=name)
    assert runs["asks"]["evidence"]["phraseResults"][0]["turn"] == 1


def test_voice_no_call_scores_zero(tmp_path: Path) -> None:
    runs = score(tmp_path, [voice_criterion("asks", contains=["member id"])], {})
    assert (runs["asks"]["score"], runs["asks"]["status"]) == (0.0, "failed")
    assert "no transcript turns" in runs["asks"]["details"]


@pytest.mark.parametrize(
    ("turns", "says"),
    [
        ([{"speaker": "agent"}], "turn 0: text: Field required"),
        ({"speaker": "agent", "text": "hi"}, "expected a list of turns"),
        ("[{]", "invalid JSON"),
    ],
)
def test_voice_bad_transcript_is_a_criterion_error(tmp_path: Path, turns: Any, says: str) -> None:
    runs = score(
        tmp_path, [voice_criterion("asks", contains=["member id"])], {"voice/turns.json": turns}
    )
    assert (runs["asks"]["status"], runs["asks"]["score"]) == ("error", 0.0)
    assert "turns.json" in runs["asks"]["details"] and says in runs["asks"]["details"]


@pytest.mark.parametrize(
    ("assertion", "says"),
    [
        ({"assert": "voice-transcript", "speaker": "agent"}, "at least one phrase"),
        ({"assert": "voice-transcript", "contains": ["?!"]}, "empty after normalisation"),
        (
            {"assert": "voice-transcript", "contains": ["x"], "fuzzy": 1.5},
            "less than or equal to 1",
        ),
        ({"assert": "voice-transcript", "contains": "member id"}, "valid list"),
    ],
)
def test_voice_spec_errors_are_collection_errors(
    tmp_path: Path, assertion: dict[str, Any], says: str
) -> None:
    path = Project(tmp_path).benchmark(
        "v", {"tasks": [{"id": "t", "criteria": [{"id": "c", "assertion": assertion}]}]}
    )
    with pytest.raises(BenchmarkFileError, match=says):
        load_benchmark(path, default_registry())


def test_portal_without_a_portal_directory_is_empty_not_an_error(tmp_path: Path) -> None:
    runs = score(
        tmp_path, [portal_criterion("pa", "prior_auth_requests", "request_id", "PA-1001", [])], {}
    )
    pa = runs["pa"]
    assert (pa["status"], pa["score"]) == ("failed", 0.0)
    assert pa["details"] == "portal table 'prior_auth_requests' not found (tables: none)"


def test_portal_key_without_value_or_entity_takes_the_best_keyed_row(tmp_path: Path) -> None:
    rows = [
        {"note": "no key here", "status": "submitted"},
        {"request_id": "PA-1", "status": "draft"},
        {"request_id": "PA-2", "status": "submitted"},
    ]
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "pa",
                "prior_auth_requests",
                "request_id",
                None,
                [{"path": "status", "expected": "submitted"}],
            )
        ],
        {"portal/prior_auth_requests.json": rows},
    )
    assert runs["pa"]["score"] == 1.0
    assert runs["pa"]["evidence"]["row_key"] == "PA-2"
    assert runs["pa"]["evidence"]["candidates"] == 2  # rows without the key are not candidates


def test_portal_numeric_key_matches_text(tmp_path: Path) -> None:
    runs = score(
        tmp_path,
        [
            portal_criterion(
                "claim",
                "claims",
                "claim_number",
                10045,
                [{"path": "paid", "op": "approx", "expected": 125.5, "tolerance": 0.01}],
            )
        ],
        {"portal/claims.json": [{"claim_number": "10045", "paid": "125.50"}]},
    )
    assert runs["claim"]["score"] == 1.0


def _live_portal(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    db = tmp_path / "live" / "portal.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE prior_auth_requests (request_id TEXT, status TEXT)")
    conn.execute("INSERT INTO prior_auth_requests VALUES ('PA-1001', 'submitted')")
    conn.commit()
    conn.close()
    (tmp_path / "sandbox").mkdir()
    (tmp_path / "sandbox" / "run.yaml").write_text(
        "sources:\n  portal: {database_url_env: PORTAL_DB_URL}\n", encoding="utf-8"
    )
    crit = [
        portal_criterion(
            "pa",
            "prior_auth_requests",
            "request_id",
            "PA-1001",
            [{"path": "status", "expected": "submitted"}],
        )
    ]
    return db, crit, {}


def test_portal_live_sqlite_from_run_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, crit, files = _live_portal(tmp_path)
    monkeypatch.setenv("PORTAL_DB_URL", f"sqlite:///{db}")
    runs = score(tmp_path, crit, files)
    assert runs["pa"]["score"] == 1.0
    monkeypatch.delenv("PORTAL_DB_URL")
    unset = score(tmp_path, crit, files)["pa"]  # an error criterion run, as under pytest
    assert unset["status"] == "error" and "PORTAL_DB_URL is not set" in unset["details"]


def test_a_live_portal_is_read_instead_of_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/fhir.md, "Live server": a live source replaces the directory; stale files must not
    shadow it."""
    db, crit, _ = _live_portal(tmp_path)
    stale = {"portal/prior_auth_requests.json": [{"request_id": "PA-1001", "status": "draft"}]}
    monkeypatch.setenv("PORTAL_DB_URL", f"sqlite:///{db}")
    assert score(tmp_path, crit, stale)["pa"]["score"] == 1.0


def test_a_live_portal_that_does_not_exist_is_a_criterion_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "live",
        {
            "tasks": [
                {
                    "id": "pa",
                    "criteria": [
                        portal_criterion("pa", "prior_auth_requests", None, None, []),
                        voice_criterion("greets", contains=["hello"]),
                    ],
                }
            ]
        },
    )
    project.sandbox("pa", {"voice/turns.json": [{"speaker": "agent", "text": "Hello"}]})
    project.run_yaml({"sources": {"portal": {"database_url_env": "PORTAL_DB_URL"}}})
    monkeypatch.setenv("PORTAL_DB_URL", f"sqlite:///{pytester.path / 'typo.db'}")
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=1)
    pa = criterion_runs(project.read_report())["live.verial.yaml::pa::pa"]
    assert (pa["status"], pa["score"]) == ("error", 0.0)
    assert "typo.db" in pa["details"] and "does not exist" in pa["details"]
