"""Import then export gives back the report, for every kind of report the plugin writes:
trials, scored runs, shards and their merge, recovered reports, on SQLite and PostgreSQL.
(Every report any test of the suite writes also goes through the store: the root conftest.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_support import greeting_project, run_pytest, run_verial

from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import open_store


def _round_trip(store_url: str, path: Path) -> None:
    report = load_report(path)
    with open_store(store_url) as store:
        result = store.import_report(report, origin=str(path))
        assert result.created
        assert store.report_of_session(result.session_id).to_json() == report.to_json()


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One report of each kind, written by child pytest sessions (store off)."""
    base = tmp_path_factory.mktemp("kinds")
    greeting_project(base, tasks=6)
    for trial in ("trial-1", "trial-2"):
        shutil.copytree(base / "sandbox", base / trial)
        (base / trial / "run.yaml").write_text("agent: greeter-v2\nid: " + trial + "\n")
    off = ("-n", "0", "--verial-store", "none")
    run_pytest(
        base,
        *off,
        "--verial-run",
        "trial-1",
        "--verial-run",
        "trial-2",
        "--verial-report",
        "trials.json",
        "greet.verial.yaml",
    )
    run_pytest(base, *off, "--verial-scored", "--verial-report", "scored.json", "greet.verial.yaml")
    for k in (1, 2):
        run_pytest(
            base,
            *off,
            "--verial-shard",
            f"{k}/2",
            "--verial-report",
            f"shard{k}.json",
            "greet.verial.yaml",
        )
    assert (
        main(
            [
                "merge",
                "-o",
                str(base / "merged.json"),
                str(base / "shard1.json"),
                str(base / "shard2.json"),
            ]
        )
        == 0
    )
    names = ["trials", "scored", "shard1", "shard2", "merged"]
    paths = {n: base / f"{n}.json" for n in names}
    assert all(p.exists() for p in paths.values()), list(base.iterdir())
    assert load_report(paths["trials"]).benchmark_runs[0].trials is not None
    assert load_report(paths["scored"]).session.scored
    return paths


@pytest.mark.parametrize("kind", ["trials", "scored", "shard1", "shard2", "merged"])
def test_every_kind_of_report_round_trips(
    store_url: str, kinds: dict[str, Path], kind: str
) -> None:
    _round_trip(store_url, kinds[kind])


def test_import_shards_and_merge_via_the_command(tmp_path: Path, kinds: dict[str, Path]) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    files = [str(kinds[k]) for k in ("shard1", "shard2", "merged")]
    first = run_verial(tmp_path, "import", *files)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count(": stored as ses_") == 3
    again = run_verial(tmp_path, "import", *files)
    assert again.stdout.count("already stored") == 3
    for path in files:  # each exported by its session id gives the file back
        session = next(
            line.split(" as ")[1].split()[0]
            for line in first.stdout.splitlines()
            if line.startswith(path)
        )
        out = tmp_path / "back.json"
        done = run_verial(tmp_path, "export", session, "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert json.loads(out.read_text()) == json.loads(Path(path).read_text())


def test_import_refuses_an_edited_or_unsealed_report_in_one_line(
    tmp_path: Path, kinds: dict[str, Path]
) -> None:
    """A report edited after it was written (one result turned to passed), or re-serialized
    without its seal, is refused by ``verial import`` before anything is stored."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    text = kinds["merged"].read_text()
    assert '"passed": false' in text
    edited = tmp_path / "edited.json"
    edited.write_text(text.replace('"passed": false', '"passed": true', 1))
    unsealed = tmp_path / "unsealed.json"
    data = json.loads(text)
    del data["integrity"]
    unsealed.write_text(json.dumps(data, indent=2))
    for path, words in (
        (edited, "does not match its integrity digest"),
        (unsealed, "carries no integrity digest"),
    ):
        done = run_verial(tmp_path, "import", str(path))
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1 and str(path) in done.stderr, done.stderr
        assert words in done.stderr, done.stderr
    listed = run_verial(tmp_path, "runs", "--json")
    assert json.loads(listed.stdout or "[]") == []


def test_a_nul_character_in_a_report_is_stored_and_given_back(store_url: str) -> None:
    """PostgreSQL's text cannot hold NUL, which a sandbox value quoted in a criterion's details
    can: the report is stored all the same and exported as it was, on both stores."""
    from trend_support import report

    from pytest_verial.store import open_store

    original = report(0, 0.0, {"t1": 0.0})
    original.benchmark_runs[0].task_runs[0].criterion_runs[0].details = "row 'a\x00b' differs"
    with open_store(store_url) as store:
        result = store.import_report(original)
        back = store.report_of_session(result.session_id)
        assert back.to_json() == original.to_json()
        assert store.list_runs(agent="a\x00b") == []  # a query holding NUL matches nothing
