"""``verial runs``, ``runs delete``, ``prune``, and ``show`` / ``compare`` taking stored runs
(ids, prefixes, latest, latest~N) mixed with report files, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trend_support import report

from pytest_verial import Report
from pytest_verial.cli import main
from pytest_verial.store import open_store


@pytest.fixture
def store(store_url: str) -> str:
    """bench@1 scored 0.0, 1.0, 0.5 by agent-1, agent-2, agent-1; other@1 once (newest)."""
    with open_store(store_url) as s:
        s.import_report(report(0, 0.0, {"t1": 0.0, "t2": 0.0}))
        s.import_report(report(1, 1.0, {"t1": 1.0, "t2": 1.0}, agent="agent-2"))
        s.import_report(report(2, 0.5, {"t1": 1.0, "t2": 0.0}))
        s.import_report(report(3, 1.0, {"t1": 1.0}, benchmark="other"))
    return store_url


def _runs(store: str, capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    assert main(["runs", "--json", "--store", store, *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_runs_lists_newest_first_with_the_columns(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "--store", store]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["id", "when", "(UTC)"]
    assert [line.split()[3] for line in lines[1:]] == ["other@1", "bench@1", "bench@1", "bench@1"]
    newest_bench = lines[2].split()
    assert newest_bench[5:7] == ["0.50", "partial"]  # score, verdict
    data = _runs(store, capsys)
    assert [r["score"] for r in data] == [1.0, 0.5, 1.0, 0.0]
    assert all(r["id"].startswith("br_") for r in data)
    assert {"criteria_passed", "criteria_failed", "verdict", "agent", "git_commit"} <= set(data[1])
    assert [r["agent"] for r in data] == ["agent-1", "agent-1", "agent-2", "agent-1"]


def test_runs_filters_and_limit(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert [r["score"] for r in _runs(store, capsys, "--benchmark", "bench@1")] == [0.5, 1.0, 0.0]
    assert [r["score"] for r in _runs(store, capsys, "--agent", "agent-2")] == [1.0]
    assert len(_runs(store, capsys, "--limit", "2")) == 2
    assert [r["score"] for r in _runs(store, capsys, "--since", "2026-11-01T13:30:00")] == [
        1.0,
        0.5,
    ]
    assert main(["runs", "--store", store, "--benchmark", "nope"]) == 0
    assert capsys.readouterr().out.strip() == "no stored runs match"


@pytest.mark.parametrize(
    "args, word",
    [
        (["--limit", "0"], "--limit"),
        (["--limit", "x"], "--limit"),
        (["--since", "soon"], "--since"),
    ],
)
def test_runs_bad_arguments_are_one_line(
    store: str, capsys: pytest.CaptureFixture[str], args: list[str], word: str
) -> None:
    assert main(["runs", "--store", store, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_reading_commands_never_create_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "none" / "results.db"
    for args in (["runs"], ["prune", "--keep", "1"], ["show", "latest"], ["runs", "delete", "x"]):
        assert main([*args, "--store", f"sqlite:///{path}"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "no results store" in err
    assert not path.parent.exists()


def test_runs_delete_all_or_nothing(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    ids = [r["id"] for r in _runs(store, capsys)]
    assert main(["runs", "delete", ids[0], "br_nothing_like_it", "--store", store]) == 2
    assert "br_nothing_like_it" in capsys.readouterr().err
    assert len(_runs(store, capsys)) == 4  # nothing deleted
    assert main(["runs", "delete", "latest~4", "--store", store]) == 2  # 4 sessions
    assert "latest~4" in capsys.readouterr().err
    assert main(["runs", "delete", ids[0], ids[2], "--store", store]) == 0
    assert "deleted 2 benchmark runs" in capsys.readouterr().out
    left = [r["id"] for r in _runs(store, capsys)]
    assert left == [ids[1], ids[3]]
    # latest names a session: every benchmark run of the newest one left goes
    assert main(["runs", "delete", "latest", "--store", store]) == 0
    assert capsys.readouterr().out == f"deleted 1 benchmark run: {ids[1]}\n"
    assert [r["id"] for r in _runs(store, capsys)] == [ids[3]]


def test_prune_keep_and_older_than(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prune", "--keep", "1", "--store", store]) == 0
    assert capsys.readouterr().out.strip() == "pruned 2 benchmark runs"
    assert sorted(r["score"] for r in _runs(store, capsys)) == [0.5, 1.0]
    assert main(["prune", "--older-than", "0", "--store", store]) == 0
    assert capsys.readouterr().out.strip() == "pruned 2 benchmark runs"
    assert main(["runs", "--store", store]) == 0
    assert capsys.readouterr().out.strip() == "no stored runs"


@pytest.mark.parametrize(
    "args",
    [[], ["--keep", "1", "--older-than", "2"], ["--keep", "-1"], ["--older-than", "nan"]],
)
def test_prune_needs_exactly_one_valid_rule(
    store: str, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    try:
        status = main(["prune", *args, "--store", store])
    except SystemExit as exc:  # argparse: a usage error
        status = exc.code
    assert status == 2
    assert capsys.readouterr().err.strip()
    assert len(_runs(store, capsys)) == 4  # nothing pruned


def test_show_a_stored_run_at_three_levels(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "latest", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "other" in out and "bench@1" not in out
    bench = [r["id"] for r in _runs(store, capsys, "--benchmark", "bench@1")]
    assert main(["show", bench[0], "--store", store]) == 0
    assert "0.50" in capsys.readouterr().out
    assert main(["show", bench[0], "t1", "--store", store]) == 0
    assert "c1" in capsys.readouterr().out
    assert main(["show", bench[0], "t1", "c1", "--store", store]) == 0
    assert "SECRET-EXPECTED" in capsys.readouterr().out
    assert main(["show", "br_", "--store", store]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1


def test_show_of_a_stored_scored_run_elides(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_store(store_url) as s:
        s.import_report(report(0, 0.0, {"t1": 0.0}, scored=True, details="HIDDEN-DETAIL"))
    for args in (["latest"], ["latest", "t1"], ["latest", "t1", "c1"]):
        assert main(["show", *args, "--store", store_url]) == 0
        out = capsys.readouterr().out
        assert "HIDDEN-DETAIL" not in out and "SECRET-EXPECTED" not in out
        assert "label of t1" not in out


def test_compare_stored_runs_and_files_mixed(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = [r["id"] for r in _runs(store, capsys, "--benchmark", "bench@1")]
    assert main(["compare", bench[1], bench[0], "--store", store]) == 1  # 1.0 -> 0.5
    out = capsys.readouterr().out
    assert "1.000 -> 0.500" in out and "regression" in out
    assert main(["compare", bench[2], bench[1], "--store", store]) == 0  # 0.0 -> 1.0
    capsys.readouterr()
    path = tmp_path / "base.json"
    assert main(["export", bench[2], "-o", str(path), "--store", store]) == 0
    capsys.readouterr()
    assert main(["compare", str(path), bench[0], "--store", store]) == 0  # file -> stored
    assert "0.000 -> 0.500" in capsys.readouterr().out
    assert main(["compare", "latest~9", str(path), "--store", store]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "latest~9" in err


def test_compare_of_stored_runs_reads_the_same_scores_as_their_exports(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``verial compare`` reads a stored run's score columns alone: its result is the one of
    the same two runs exported to files."""
    bench = [r["id"] for r in _runs(store, capsys, "--benchmark", "bench@1")]
    files = []
    for run in bench[:2]:
        files.append(str(tmp_path / f"{run}.json"))
        assert main(["export", run, "-o", files[-1], "--store", store]) == 0
    capsys.readouterr()
    results = []
    for sides in ([bench[1], bench[0]], files[::-1]):
        out = tmp_path / "c.json"
        code = main(["compare", *sides, "--store", store, "--json", str(out)])
        assert code == 1, capsys.readouterr()
        results.append(json.loads(out.read_text()))
    for result in results:
        for key in ("base", "head"):
            result.pop(key, None)
    assert results[0] == results[1]
    assert results[0]["benchmark_runs"][0]["tasks"], results[0]


def _incomplete(index: int) -> Report:
    """A run of bench@1 whose task left out deselected criteria (``-k``/``-m``)."""
    data = report(index, 1.0, {"t1": 1.0}).to_json()
    data["benchmark_runs"][0]["task_runs"][0]["status"] = "incomplete"
    data["benchmark_runs"][0]["counts"] = {"task_runs": 1, "incomplete": 1}
    return Report.from_json(data)


def test_runs_have_a_status_column_and_sessions_are_listed(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cancelled or incomplete run is listed as such, not like a completed one; ``--sessions``
    lists what ``latest`` and ``latest~N`` name."""
    with open_store(store) as s:
        s.import_report(report(4, None, {"t1": None}, agent="agent-3"))  # cancelled
        s.import_report(_incomplete(5))
    assert main(["runs", "--store", store]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split()
    status = head.index("status")  # "when (UTC)" is two words, as a time is
    assert [line.split()[status] for line in lines[1:]] == [
        "incomplete",
        "cancelled",
        "completed",
        "completed",
        "completed",
        "completed",
    ]
    assert [r["status"] for r in _runs(store, capsys)][:2] == ["incomplete", "cancelled"]
    assert main(["runs", "--sessions", "--store", store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["session", "when", "(UTC)", "runs"]
    assert [line.split()[0][:4] for line in out[1:]] == ["ses_"] * 6
    assert "incomplete" in out[1] and "cancelled" in out[2] and "agent-3" in out[2]
    sessions = _runs(store, capsys, "--sessions", "--agent", "agent-2")
    assert len(sessions) == 1 and sessions[0]["names"] == ["agent-2"]
    assert sessions[0]["verdicts"] == {"pass": 1} and sessions[0]["benchmark_runs"] == 1


def test_agent_matches_the_run_name_and_the_run_folder_label(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--agent`` takes the name ``verial runs`` shows (run.yaml's agent) or the run folder's
    label (``r1`` in these reports), as its help says."""
    assert len(_runs(store, capsys, "--agent", "agent-1")) == 3
    assert len(_runs(store, capsys, "--agent", "r1")) == 4
    assert _runs(store, capsys, "--agent", "r") == []  # a label is matched whole
    assert {r["name"] for r in _runs(store, capsys)} == {"agent-1", "agent-2"}
