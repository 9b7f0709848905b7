"""Reports written by the previous release (schema ``pytest-verial/report/v2``, evidence in
snake_case for every check type) still open: converted whole as they are read, after their
seal is checked on the bytes as written; ``verial show``, ``compare`` and ``import`` read
them. The fixtures were written by pytest-verial at 0cf5ec2 (tests/fixtures/report-v2)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from core_support import REPO

from pytest_verial import EVIDENCE_MODELS, __version__
from pytest_verial._results import SCHEMA_ID
from pytest_verial.cli import main
from pytest_verial.reporting import load_report, write_json_report
from pytest_verial.reporting._journal import _line, read_journal

FIXTURES = REPO / "tests" / "fixtures" / "report-v2"
V2 = FIXTURES / "flawed-agent.json"
SIGNED = FIXTURES / "interop-good-signed.json"
SIGNING_KEY = "v2-fixture-signing-key"  # signs these fixtures and nothing else

#: the row key each check type documents (Verial's table; ours for output and judge checks)
DOCUMENTED = {
    "fhir-resource-state": "fieldResults",
    "hl7-structural": "field_results",
    "portal-state-match": "assertionResults",
    "sftp-file-present": "fieldResults",
    "voice-transcript": "phraseResults",
    "x12-response": "fieldResults",
    "output-format": "fieldResults",
    "output-length": "fieldResults",
    "output-sections": "fieldResults",
    "output-match": "fieldResults",
    "output-json-schema": "fieldResults",
    "llm-rubric": "rubric_results",
    "output-consistency": "rubric_results",
}
#: what the previous release wrote instead
V2_KEYS = {
    **dict.fromkeys(DOCUMENTED, "field_results"),
    "portal-state-match": "assertion_results",
    "voice-transcript": "phrase_results",
    "llm-rubric": "rubric_results",
    "output-consistency": "rubric_results",
}
#: every row key either release ever wrote
ROW_KEYS = {*DOCUMENTED.values(), *V2_KEYS.values()}


def _raw_criteria(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        (task["id"], crit["criterion_id"]): crit
        for run in data["benchmark_runs"]
        for task in run["task_runs"]
        for crit in task["criterion_runs"]
    }


def test_the_fixture_is_a_v2_report_of_every_check_type() -> None:
    data = json.loads(V2.read_text(encoding="utf-8"))
    assert data["schema"] == "pytest-verial/report/v2"
    asserts = {c["assert"] for c in _raw_criteria(V2).values()}
    assert asserts == set(DOCUMENTED)  # so the conversion below is seen for each of them


def test_a_v2_report_is_converted_whole_on_read() -> None:
    raw = _raw_criteria(V2)
    report = load_report(V2)
    assert report.schema_ == SCHEMA_ID == "pytest-verial/report/v3"
    converted = 0
    for task in report.task_runs():
        for run in task.criterion_runs:
            assert run.assertion is not None
            old = raw[(task.id, run.criterion_id)]["evidence"] or {}
            assert type(run.evidence) is EVIDENCE_MODELS[run.assertion]
            new = run.evidence.to_json()
            before, after = V2_KEYS[run.assertion], DOCUMENTED[run.assertion]
            # every other key as written; the rows under the documented key, as written
            assert {k: v for k, v in new.items() if k != after} == {
                k: v for k, v in old.items() if k != before
            }, run.criterion_id
            assert new.get(after) == old.get(before), run.criterion_id
            # no other row key left behind (a half-converted criterion run)
            assert ROW_KEYS & set(new) <= {after}, run.criterion_id
            converted += after != before and before in old
    assert converted >= 40  # most criterion runs of the fixture had a key to move


def test_voice_rows_are_phrase_found_turn() -> None:
    rows = [
        row
        for task in load_report(V2).task_runs()
        for run in task.criterion_runs
        if run.assertion == "voice-transcript" and run.evidence is not None
        for row in run.evidence.to_json().get("phraseResults", [])
    ]
    assert rows
    for row in rows:
        assert {"phrase", "found", "turn"} <= set(row)
        assert row["found"] == (row["turn"] is not None)


def test_show_reads_a_v2_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(V2)]) == 0
    out = capsys.readouterr().out
    assert "schedule-followup" in out and "partial" in out
    task = "example_benchmarks/prior-auth.verial.yaml::schedule-followup"
    assert main(["show", str(V2), task, "appointment-booked"]) == 0
    out = capsys.readouterr().out
    assert '"assertionResults"' in out and '"assertion_results"' not in out
    assert "FAIL" in out  # the expected / actual rows, read from the converted key


def test_compare_reads_a_v2_report_against_its_v3_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v3 = tmp_path / "v3.json"
    write_json_report(v3, load_report(V2))
    assert json.loads(v3.read_text(encoding="utf-8"))["schema"] == SCHEMA_ID
    out = tmp_path / "compare.json"
    for base, head in ((V2, v3), (v3, V2)):
        assert main(["compare", str(base), str(head), "--json", str(out)]) == 0
        diff = json.loads(out.read_text(encoding="utf-8"))
        runs = diff["benchmark_runs"]
        assert len(runs) == 5 and diff["unpaired"] == [] and not diff["regression"]
        changed = [t for r in runs for t in r["tasks"] if t["base_score"] != t["head_score"]]
        assert changed == []
    capsys.readouterr()


def test_import_stores_a_v2_report_in_the_documented_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "results.db"
    url = f"sqlite:///{store}"
    assert main(["import", str(V2), "--store", url]) == 0
    assert "stored as ses_" in capsys.readouterr().out
    rows = sqlite3.connect(store).execute("select assertion, evidence from criterion_runs")
    seen = set()
    for assertion, evidence in rows:
        keys = set(json.loads(evidence) or {}) & ROW_KEYS
        assert keys <= {DOCUMENTED[assertion]}, (assertion, keys)
        seen.add(assertion)
    assert seen == set(DOCUMENTED)
    assert main(["show", "latest", "--store", url]) == 0
    assert "verify-pa-letter" in capsys.readouterr().out  # the last benchmark run stored
    assert main(["import", str(V2), "--store", url]) == 0  # idempotent, as for v3
    assert "already stored" in capsys.readouterr().out


@pytest.mark.invalid_report
def test_a_sealed_v2_report_verifies_before_it_is_converted(tmp_path: Path) -> None:
    assert load_report(V2, sealed=True).integrity is not None
    edited = tmp_path / "edited.json"
    edited.write_bytes(V2.read_bytes().replace(b"Dr. Rivera", b"Dr. Riverb", 1))
    with pytest.raises(ValueError, match="does not match its integrity digest"):
        load_report(edited)


def test_a_signed_v2_report_verifies_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("VERIAL_SIGNING_KEY", raising=False)
    with pytest.raises(ValueError, match="signed .hmac-sha256. and VERIAL_SIGNING_KEY is not set"):
        load_report(SIGNED, sealed=True)
    monkeypatch.setenv("VERIAL_SIGNING_KEY", "another key")
    with pytest.raises(ValueError, match="does not match its integrity digest"):
        load_report(SIGNED, sealed=True)
    monkeypatch.setenv("VERIAL_SIGNING_KEY", SIGNING_KEY)
    report = load_report(SIGNED, sealed=True)
    assert report.integrity is not None and report.integrity.digest.startswith("hmac-sha256:")
    hl7 = [
        c for t in report.task_runs() for c in t.criterion_runs if c.assertion == "hl7-structural"
    ]
    assert hl7 and all("field_results" in c.evidence.to_json() for c in hl7 if c.evidence)
    assert main(["import", str(SIGNED), "--store", f"sqlite:///{tmp_path / 'r.db'}"]) == 0
    assert "stored as" in capsys.readouterr().out


def _edited(tmp_path: Path, change: Any) -> Path:
    data = json.loads(V2.read_text(encoding="utf-8"))
    data.pop("integrity")  # unsealed: read as it is by show and compare
    change(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.invalid_report
def test_evidence_holding_both_keys_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def both(data: dict[str, Any]) -> None:
        crit = data["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][0]
        crit["evidence"]["fieldResults"] = crit["evidence"]["field_results"]

    path = _edited(tmp_path, both)
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0]
    assert "criterion appointment-booked" in err[0]
    assert "holds both field_results and fieldResults" in err[0]


@pytest.mark.invalid_report
def test_an_unknown_schema_id_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _edited(tmp_path, lambda d: d.update(schema="pytest-verial/report/v9"))
    for command in (["show", str(path)], ["compare", str(path), str(V2)]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "'pytest-verial/report/v9' is not one this version reads" in err[0]


def test_a_v2_journal_is_converted_once_its_digests_check_out(tmp_path: Path) -> None:
    """A journal the previous release left behind (a crashed session) is recovered with its
    evidence in the documented keys; an edited line is refused before anything is read."""
    report = json.loads(V2.read_text(encoding="utf-8"))
    task = report["benchmark_runs"][3]["task_runs"][0]  # pa-lumbar-mri[maria-chen]
    records = {c["nodeid"]: c for c in task["criterion_runs"]}
    header = {
        "journal": "pytest-verial/journal/v2",
        "plugin": __version__,
        "files": [],
        "selected": sorted(records),
        "report": "report.json",
        "started_at": report["session"]["started_at"],
    }
    lines, previous = [], ""
    for value in [header, *({"nodeid": n, "record": r} for n, r in records.items())]:
        line, previous = _line(value, previous)
        lines.append(line)
    path = tmp_path / "report.json.journal.jsonl"
    path.write_bytes(b"".join(lines))
    _, read = read_journal(path)
    for nodeid, record in read.items():
        before, after = V2_KEYS[record["assert"]], DOCUMENTED[record["assert"]]
        assert record["evidence"][after] == records[nodeid]["evidence"][before]
        assert before == after or before not in record["evidence"]
    path.write_bytes(b"".join(lines).replace(b'"submitted"', b'"Submitted"', 1))
    with pytest.raises(ValueError, match="cannot recover: its content does not match"):
        read_journal(path)
