"""sftp-file-present against a sandbox's sftp/ tree: selection, parsing, scoring, evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import DirectoryFiles

from .conftest import run_check


@pytest.fixture
def sftp(tmp_path: Path) -> DirectoryFiles:
    root = tmp_path / "sftp"
    claims = root / "outbound" / "claims"
    claims.mkdir(parents=True)
    (claims / "batch-001.json").write_text(
        json.dumps({"batch_id": "B1", "claims": [{"claim_id": "CLM-1", "amount": 100}]})
    )
    (claims / "batch-002.json").write_text(
        json.dumps({"batch_id": "B2", "claims": [{"claim_id": "CLM-7", "amount": 250.5}]})
    )
    (root / "outbound" / "claims.csv").write_text(
        "claim_id,patient,amount\nCLM-1,Maria Chen,100\nCLM-2,John Smith,80\n"
    )
    (root / "outbound" / "events.ndjson").write_text('{"n": 1}\n\n{"n": 2}\n')
    deep = root / "inbox" / "referrals" / "2026" / "11"
    deep.mkdir(parents=True)
    (deep / "packet.txt").write_text("Referral for Maria Chen\nReason: lumbar MRI, L4-L5\n")
    return DirectoryFiles(root)


def test_pattern_matches_within_one_directory_level(sftp: DirectoryFiles) -> None:
    out = run_check({"pattern": "outbound/claims/*.json"}, sftp)
    assert out.score == 1.0
    assert out.evidence["matched_paths"] == [
        "outbound/claims/batch-001.json",
        "outbound/claims/batch-002.json",
    ]
    assert run_check({"pattern": "outbound/*.json"}, sftp).evidence["matched_count"] == 0


def test_double_star_matches_any_depth(sftp: DirectoryFiles) -> None:
    out = run_check({"pattern": "**/*.txt"}, sftp)
    assert out.evidence["matched_paths"] == ["inbox/referrals/2026/11/packet.txt"]
    assert run_check({"pattern": "inbox/**"}, sftp).evidence["matched_count"] == 1
    assert (
        run_check({"pattern": "**/claims/batch-00[12].json"}, sftp).evidence["matched_count"] == 2
    )


def test_no_match_scores_zero_and_says_where(sftp: DirectoryFiles) -> None:
    out = run_check({"pattern": "outbound/prior-auth/*.pdf"}, sftp)
    assert out.score == 0.0
    assert "0 files matching 'outbound/prior-auth/*.pdf'" in out.details
    assert "expected at least 1" in out.details


def test_count_bounds_gate_the_score(sftp: DirectoryFiles) -> None:
    assert run_check({"pattern": "outbound/claims/*", "min_count": 2}, sftp).score == 1.0
    too_few = run_check({"pattern": "outbound/claims/*", "min_count": 3}, sftp)
    assert too_few.score == 0.0 and "expected at least 3" in too_few.details
    too_many = run_check({"pattern": "outbound/claims/*", "max_count": 1}, sftp)
    assert too_many.score == 0.0 and "expected at most 1" in too_many.details
    absent = run_check({"pattern": "outbound/*.pdf", "min_count": 0, "max_count": 0}, sftp)
    assert absent.score == 1.0


def test_best_file_counts_and_evidence_names_it(sftp: DirectoryFiles) -> None:
    out = run_check(
        {
            "pattern": "outbound/claims/*.json",
            "parse": "json",
            "fields": [
                {"path": "claims.0.claim_id", "expected": "CLM-7"},
                {"path": "claims.0.amount", "expected": 250.5},
            ],
        },
        sftp,
    )
    assert out.score == 1.0
    assert out.evidence["file"]["path"] == "outbound/claims/batch-002.json"
    assert out.evidence["fieldResults"] == [
        {"path": "claims.0.claim_id", "expected": "CLM-7", "actual": "CLM-7", "passed": True},
        {"path": "claims.0.amount", "expected": 250.5, "actual": 250.5, "passed": True},
    ]
    assert "best of 2 matching files" in out.details


def test_partial_score_is_passed_over_all_fields(sftp: DirectoryFiles) -> None:
    out = run_check(
        {
            "pattern": "outbound/claims/batch-001.json",
            "fields": [
                {"path": "batch_id", "expected": "B1"},
                {"path": "claims.0.amount", "expected": 999},
                {"path": "claims.5.claim_id", "op": "exists"},
            ],
        },
        sftp,
    )
    assert out.score == pytest.approx(1 / 3)
    assert [r["passed"] for r in out.evidence["fieldResults"]] == [True, False, False]
    assert out.evidence["fieldResults"][2]["actual"] is None


def test_csv_rows_are_addressed_as_row_dot_column(sftp: DirectoryFiles) -> None:
    out = run_check(
        {
            "pattern": "outbound/claims.csv",
            "parse": "csv",
            "fields": [
                {"path": "0.claim_id", "expected": "CLM-1"},
                {"path": "1.patient", "expected": "John Smith"},
                {"path": "1.amount", "expected": 80},
                {"path": "*.claim_id", "op": "contains", "expected": "CLM-2"},
                {"path": "$rows", "expected": 2},
            ],
        },
        sftp,
    )
    assert out.score == 1.0, out.evidence


def test_ndjson_items_by_line_and_extension_implies_parse(sftp: DirectoryFiles) -> None:
    out = run_check(
        {"pattern": "outbound/events.ndjson", "fields": [{"path": "1.n", "expected": 2}]}, sftp
    )
    assert out.score == 1.0
    assert (
        run_check(
            {"pattern": "outbound/events.ndjson", "fields": [{"path": "$rows", "expected": 2}]},
            sftp,
        ).score
        == 1.0
    )


def test_text_contains_regex_and_not_contains(sftp: DirectoryFiles) -> None:
    out = run_check(
        {
            "pattern": "inbox/referrals/**/*.txt",
            "parse": "text",
            "contains": ["Maria Chen", "lumbar MRI"],
            "not_contains": ["John Smith"],
            "regex": r"L\d-L\d",
            "fields": [{"path": "lines.1", "op": "contains", "expected": "Reason"}],
        },
        sftp,
    )
    assert out.score == 1.0, out.evidence
    rows = out.evidence["fieldResults"]
    assert rows[1]["path"] == "$text" and "Maria Chen" in rows[1]["actual"]
    assert any(r.get("op") == "not_contains" and r["passed"] for r in rows)
    failing = run_check(
        {"pattern": "**/packet.txt", "contains": ["Dr. Rivera"], "not_contains": ["Maria"]}, sftp
    )
    assert failing.score == 0.0
    assert [r["passed"] for r in failing.evidence["fieldResults"]] == [False, False]


def test_size_and_content_type_constraints(sftp: DirectoryFiles) -> None:
    size = (sftp.root / "outbound" / "claims.csv").stat().st_size
    ok = run_check(
        {
            "pattern": "outbound/claims.csv",
            "min_size": 1,
            "max_size": size,
            "content_type": "text/csv",
        },
        sftp,
    )
    assert ok.score == 1.0
    bad = run_check(
        {
            "pattern": "outbound/claims.csv",
            "max_size": size - 1,
            "content_type": ["application/json", "application/x-ndjson"],
        },
        sftp,
    )
    assert bad.score == 0.0
    assert bad.evidence["fieldResults"][0] == {
        "path": "$size",
        "expected": size - 1,
        "actual": size,
        "passed": False,
        "op": "lte",
    }


def test_metadata_paths(sftp: DirectoryFiles) -> None:
    out = run_check(
        {
            "pattern": "outbound/claims/*.json",
            "fields": [
                {"path": "$name", "op": "regex", "expected": r"^batch-\d{3}\.json$"},
                {"path": "$content_type", "expected": "application/json"},
            ],
        },
        sftp,
    )
    assert out.score == 1.0
    with pytest.raises(CheckError, match=r"unknown metadata path '\$owner'"):
        run_check({"pattern": "outbound/claims.csv", "fields": [{"path": "$owner"}]}, sftp)


def test_unknown_extension_without_parse_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "sftp").mkdir()
    (tmp_path / "sftp" / "DROP").write_text("{}")
    with pytest.raises(CheckError, match="cannot tell how to parse it; give 'parse'"):
        run_check({"pattern": "DROP", "fields": [{"path": "a"}]}, DirectoryFiles(tmp_path / "sftp"))


def test_missing_sftp_directory_is_an_empty_tree(tmp_path: Path) -> None:
    out = run_check({"pattern": "**"}, DirectoryFiles(tmp_path / "sftp"))
    assert out.score == 0.0 and out.evidence["matched_count"] == 0


@pytest.mark.parametrize(
    "assertion, message",
    [
        ({"pattern": "a", "min_count": 2, "max_count": 1}, "max_count is smaller"),
        ({"pattern": "a", "regex": "("}, "invalid regex"),
        ({"pattern": "a", "min_count": 0, "contains": ["x"]}, "content checks need min_count"),
        ({"pattern": "a", "parse": "xml"}, "parse"),
        ({"pattern": "a", "colour": "red"}, "colour"),
    ],
)
def test_invalid_assertions_fail_validation(assertion: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        run_check(assertion, None)


def test_path_is_accepted_as_the_pattern_key(sftp: DirectoryFiles) -> None:
    assert run_check({"path": "outbound/claims.csv"}, sftp).score == 1.0
