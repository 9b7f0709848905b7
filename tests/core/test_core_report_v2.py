"""Reports written by the previous release (schema ``pytest-verial/report/v2``, evidence in
snake_case for every check type) still open: converted whole as they are read, after their
seal is checked on the bytes as written; ``verial show``, ``compare`` and ``import`` read
them. The fixtures were written by pytest-verial at 0cf5ec2 (tests/fixtures/report-v2)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from core_support import DOCUMENTED, REPO, crash_project, run_subprocess

from pytest_verial import EVIDENCE_MODELS
from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report, write_json_report

FIXTURES = REPO / "tests" / "fixtures" / "report-v2"
SCHEMA_ID = "pytest-verial/report/v3"
V2 = FIXTURES / "flawed-agent.json"
SIGNED = FIXTURES / "interop-good-signed.json"
SIGNING_KEY = "v2-fixture-signing-key"  # signs these fixtures and nothing else

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


def _chained(lines: list[dict[str, Any]]) -> bytes:
    """Journal lines as the release writes them (README, "Sealed reports and journals"): each
    ends with its ``chain`` digest, the SHA-256 of the previous line's digest, a newline and
    the line's bytes before that member."""
    out, previous = b"", ""
    for value in lines:
        body = json.dumps(value, ensure_ascii=False)[:-1].encode("utf-8")
        digest = "sha256:" + hashlib.sha256(previous.encode() + b"\n" + body).hexdigest()
        out += body + b',"chain":"' + digest.encode() + b'"}\n'
        previous = digest
    return out


def test_a_v2_journal_is_recovered_in_the_documented_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The journal a crashed session of the previous release left behind (journal/v2, its
    evidence in the v2 keys) is recovered with the evidence in the documented keys, once its
    digests check out; an edited line is refused before anything is read."""
    crash_project(tmp_path)
    code, output = run_subprocess(tmp_path, "-n", "0", "--verial-report", "report.json")
    journal = tmp_path / "report.json.journal.jsonl"
    assert code != 0 and journal.exists(), output[-3000:]
    header, *rows = [json.loads(line) for line in journal.read_bytes().splitlines()]
    old = [{k: v for k, v in value.items() if k != "chain"} for value in (header, *rows)]
    old[0]["journal"] = "pytest-verial/journal/v2"
    phrases = {}
    for row in old[1:]:  # the previous release's voice evidence
        evidence = row["record"]["evidence"]
        phrases[row["nodeid"]] = evidence["phrase_results"] = evidence.pop("phraseResults")
    assert phrases
    journal.write_bytes(_chained(old))
    assert main(["report", "--recover", str(journal), "-o", str(tmp_path / "rebuilt.json")]) == 0
    capsys.readouterr()
    rebuilt = json.loads((tmp_path / "rebuilt.json").read_text(encoding="utf-8"))
    recovered = {
        c["nodeid"]: c["evidence"]
        for r in rebuilt["benchmark_runs"]
        for t in r["task_runs"]
        for c in t["criterion_runs"]
        if c["status"] != "not_run"
    }
    for nodeid, rows_before in phrases.items():
        assert recovered[nodeid] == {"phraseResults": rows_before}
    journal.write_bytes(_chained(old).replace(b"good morning", b"good evening", 1))
    assert main(["report", "--recover", str(journal), "-o", str(tmp_path / "again.json")]) == 2
    assert "cannot recover: its content does not match" in capsys.readouterr().err
