"""End to end through pytest: the example benchmark, bad files among good ones, a GCS run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from .conftest import BUCKET, SANDBOXES
from .emulator import Emulator

EXAMPLES = Path(__file__).resolve().parents[2] / "example_benchmarks"


def _copy_examples(pytester: pytest.Pytester) -> Path:
    shutil.copy(EXAMPLES / "files.verial.yaml", pytester.path / "files.verial.yaml")
    shutil.copytree(EXAMPLES / "runs", pytester.path / "runs")
    return pytester.path


def test_example_good_run_passes(pytester: pytest.Pytester) -> None:
    root = _copy_examples(pytester)
    result = pytester.runpytest("files.verial.yaml", "--verial-run", str(root / "runs/good-agent"))
    result.assert_outcomes(passed=8)


def test_example_flawed_run_reports_evidence(pytester: pytest.Pytester) -> None:
    root = _copy_examples(pytester)
    report = root / "report.json"
    result = pytester.runpytest(
        "files.verial.yaml",
        "--verial-run",
        str(root / "runs/flawed-agent"),
        "--verial-report",
        str(report),
    )
    result.assert_outcomes(passed=1, failed=7)
    result.stdout.fnmatch_lines(
        ["*2 files matching 'outbound/referrals/*.json'*expected at most 1*"]
    )
    runs = {
        c["criterion_id"]: c
        for t in [
            t for r in json.loads(report.read_text())["benchmark_runs"] for t in r["task_runs"]
        ]
        for c in t["criterion_runs"]
    }
    rows = runs["batch-rows"]
    assert rows["score"] == pytest.approx(0.6)
    assert rows["evidence"]["file"]["path"] == "outbound/claims/batch-20261121.csv"
    assert rows["evidence"]["matched_paths"] == ["outbound/claims/batch-20261121.csv"]
    assert {r["path"]: r["passed"] for r in rows["evidence"]["fieldResults"]} == {
        "0.claim_id": True,
        "0.cpt": True,
        "1.amount": False,
        "*.member_id": True,
        "$rows": False,
    }


def test_a_corrupt_file_errors_its_criterion_only(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".verial.yaml",
        drops="""
        tasks:
          - id: sftp-drops
            criteria:
              - id: broken
                assertion: {assert: sftp-file-present, pattern: "outbound/broken.json",
                            fields: [{path: claim_id, expected: CLM-1}]}
              - id: good
                assertion: {assert: sftp-file-present, pattern: "outbound/good.json",
                            fields: [{path: claim_id, expected: CLM-1}]}
              - id: present
                assertion: {assert: sftp-file-present, pattern: "outbound/*.json", min_count: 2}
        """,
    )
    outbound = pytester.path / "run" / "sftp-drops" / "sftp" / "outbound"
    outbound.mkdir(parents=True)
    (outbound / "broken.json").write_text('{"claim_id": "CLM-1",\n}')
    (outbound / "good.json").write_text('{"claim_id": "CLM-1"}')
    result = pytester.runpytest("--verial-run", str(pytester.path / "run"))
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*outbound/broken.json:2: invalid JSON*"])
    assert "Traceback" not in result.stdout.str()


def test_an_escaping_pattern_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".verial.yaml",
        escape="""
        tasks:
          - id: sftp-escape
            criteria:
              - assertion: {assert: sftp-file-present, pattern: "../../etc/passwd"}
        """,
    )
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*would leave the SFTP prefix*"])
    assert result.ret != 0


def test_gcs_run_gives_the_disk_results(
    pytester: pytest.Pytester, emulator: Emulator, tree: tuple[Path, int]
) -> None:
    criteria = [
        {
            "id": "claims",
            "assertion": {
                "assert": "sftp-file-present",
                "pattern": "outbound/claims/*.json",
                "min_count": 100,
            },
        },
        {
            "id": "batch",
            "assertion": {
                "assert": "sftp-file-present",
                "pattern": "outbound/claims/batch-0001.json",
                "fields": [
                    {"path": "payer", "expected": "Aetna"},
                    {"path": "claims.0.cpt", "expected": "99213"},
                ],
            },
        },
        {
            "id": "csv",
            "assertion": {
                "assert": "sftp-file-present",
                "pattern": "outbound/*.csv",
                "fields": [{"path": "$rows", "expected": 5}],
            },
        },
    ]
    pytester.makefile(
        ".verial.yaml",
        parity=yaml.safe_dump(
            {"tasks": [{"id": sandbox, "criteria": criteria} for sandbox in SANDBOXES]}
        ),
    )
    gcs_run = pytester.path / "gcs-run"
    gcs_run.mkdir()
    (gcs_run / "run.yaml").write_text(
        yaml.safe_dump(
            {
                "sources": {
                    "files": {
                        "bucket": BUCKET,
                        "prefix": "{task_key}",
                        "endpoint": emulator.endpoint,
                    }
                }
            }
        )
    )
    disk_run = pytester.path / "disk-run"
    disk_run.mkdir()
    for sandbox in SANDBOXES:
        shutil.copytree(tree[0] / sandbox, disk_run / sandbox / "sftp")
    outcomes = {}
    for name, run in (("gcs", gcs_run), ("disk", disk_run)):
        report = pytester.path / f"{name}.json"
        result = pytester.runpytest("--verial-run", str(run), "--verial-report", str(report))
        result.assert_outcomes(passed=8, failed=4)
        outcomes[name] = [
            (
                c["task_key"],
                c["criterion_id"],
                c["score"],
                c["evidence"]["matched_paths"],
                c["evidence"]["fieldResults"],
            )
            for t in [
                t for r in json.loads(report.read_text())["benchmark_runs"] for t in r["task_runs"]
            ]
            for c in t["criterion_runs"]
        ]
    assert outcomes["gcs"] == outcomes["disk"]
