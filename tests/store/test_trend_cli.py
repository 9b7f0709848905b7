"""``verial trend``: the sparkline (gaps for runs without a score), per axis and per task,
--last, --json, and the one-line errors (unknown benchmark, unknown task, missing store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trend_support import report

from pytest_verial.cli import main
from pytest_verial.store import open_store


@pytest.fixture
def store(store_url: str) -> str:
    """Three runs of bench@1 (the middle one cancelled) and one of other@1, on SQLite and on
    PostgreSQL."""
    url = store_url
    with open_store(url) as s:
        s.import_report(report(0, 0.0, {"t1": 0.0, "t2": 1.0}, axes={"accuracy": 0.0}))
        s.import_report(report(1, None, {"t1": None}))  # cancelled: no score
        s.import_report(report(2, 1.0, {"t1": 1.0, "t2": 0.5}, axes={"accuracy": 1.0}))
        s.import_report(report(3, 0.5, {"t1": 0.5}, benchmark="other"))
    return url


def _score_line(store: str, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["trend", "spark@1", *args, "--store", store]) == 0
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith("score"))


def test_spark_scales_zero_to_one_and_shows_gaps(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_store(store_url) as s:
        for i, score in enumerate([0.0, None, 1.0, 0.5]):
            s.import_report(report(i, score, {"t1": score}, benchmark="spark"))
    assert "▁ █▅" in _score_line(store_url, capsys)


def test_spark_keeps_the_newest_sixty_runs(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_store(store_url) as s:
        for i in range(70):
            s.import_report(report(i, 1.0, {"t1": 1.0}, benchmark="spark"))
    assert "…" + "█" * 60 in _score_line(store_url, capsys)


def test_trend_table_has_score_axes_and_tasks_with_gaps(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trend", "bench@1", "--store", store]) == 0
    out = capsys.readouterr().out
    lines = {line.split("  ")[0].strip(): line for line in out.splitlines() if "  " in line}
    assert "3 run(s)" in out
    assert "▁ █" in lines["score"]  # the cancelled run is a gap, newest last
    assert "▁ █" in lines["axis accuracy"]
    assert "▁ █" in lines["task t1"]
    assert "█ ▄" in lines["task t2"] or "█ ▅" in lines["task t2"]  # 0.5 is a middle bar
    assert "other" not in out
    assert "cancelled" in out


def test_trend_by_slug_task_and_last(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trend", "bench", "--task", "t2", "--last", "1", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "1 run(s)" in out and "task t2" in out and "task t1" not in out


def test_trend_json(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trend", "bench@1", "--json", "--store", store]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["score"] for r in data["runs"]] == [0.0, None, 1.0]
    assert data["runs"][2]["tasks"] == {"t1": 1.0, "t2": 0.5}
    assert data["runs"][0]["axes"] == {"accuracy": 0.0}
    assert all(r["id"].startswith("br_") for r in data["runs"])


def test_unknown_benchmark_names_the_known_ones(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trend", "nope", "--store", store]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "nope" in err and "bench@1" in err and "other@1" in err


def test_unknown_task_and_bad_last(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trend", "bench@1", "--task", "zz", "--store", store]) == 2
    assert "zz" in capsys.readouterr().err
    assert main(["trend", "bench@1", "--last", "0", "--store", store]) == 2
    assert "--last" in capsys.readouterr().err


def test_missing_store_is_one_line_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "none" / "results.db"
    assert main(["trend", "bench", "--store", f"sqlite:///{path}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no results store" in err
    assert not path.exists() and not path.parent.exists()


def test_many_tasks_and_runs_are_cut_with_a_hint(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = store_url
    with open_store(url) as s:
        for i in range(70):
            s.import_report(report(i, (i % 8) / 7, {f"k{n:02d}": 0.5 for n in range(25)}))
    assert main(["trend", "bench@1", "--store", url]) == 0
    out = capsys.readouterr().out
    assert "... 5 more task(s)" in out and "task k19" in out and "task k20" not in out
    assert "the newest 20 of 70 runs" in out
    score = next(line for line in out.splitlines() if line.startswith("score"))
    assert "…" in score and score.count("█") == 7  # the newest 60 runs; 1.0 every 8th
    assert main(["trend", "bench@1", "--last", "5", "--store", url]) == 0
    assert "5 run(s)" in capsys.readouterr().out


def test_hostile_names_are_escaped_in_the_terminal(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_store(store_url) as s:
        s.import_report(report(0, 0.5, {"evil\x1b[2J": 0.5}, agent="a\x1b]0;x\x07"))
    assert main(["trend", "bench@1", "--store", store_url]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "task evil\\x1b[2J" in out


def test_trend_without_task_runs_for_plots(store: str) -> None:
    with open_store(store) as s:
        points = s.trend("bench@1", per_task=False)
    assert [p.score for p in points] == [0.0, None, 1.0]
    assert all(p.tasks == {} for p in points) and points[2].axes == {"accuracy": 1.0}
