"""The deterministic output checks, on output files as an agent would leave them."""

from __future__ import annotations

import pydantic
import pytest

from pytest_verial.checks import default_registry

LETTER = """\
# Prior authorization request: lumbar MRI

**Patient:** Maria Chen (DOB 1971-03-02), member ID BCX-4471902

## Clinical summary
Low back pain radiating to the left leg for 9 weeks.

## 2. Medical Necessity:
Six weeks of physical therapy and NSAIDs failed; progressive L5 numbness.

```text
## Not a heading (inside a code block)
```

Requested service
-----------------
CPT 72148, MRI lumbar spine without contrast.
"""


def test_format_markdown_counts_headings_outside_code(run_check):
    outcome = run_check(
        {"assert": "output-format", "format": "markdown", "min_headings": 4}, LETTER
    )
    rows = outcome.evidence["fieldResults"]
    assert outcome.score == 1.0
    assert rows[0] == {"path": "headings", "expected": {"min": 4}, "actual": 4, "passed": True}


def test_format_markdown_unclosed_fence_is_half(run_check):
    outcome = run_check({"assert": "output-format", "format": "markdown"}, "# Title\n```\ncode\n")
    assert outcome.score == 0.5
    assert "code_fences: unclosed" in outcome.details


def test_format_json_invalid_names_line_and_column(run_check):
    outcome = run_check(
        {"assert": "output-format", "format": "json"},
        '{"status": "submitted",\n "cpt": 72148,,}',
        name="output.json",
    )
    assert outcome.score == 0.0
    assert "line 2, column 15" in outcome.details


def test_format_yaml_needs_structure(run_check):
    ok = run_check(
        {"assert": "output-format", "format": "yaml"},
        "status: submitted\ncpt: 72148\n",
        name="output.txt",
    )
    scalar = run_check(
        {"assert": "output-format", "format": "yaml"}, "just a sentence", name="output.txt"
    )
    assert ok.score == 1.0
    assert scalar.score == 0.0 and "not a mapping or a list" in scalar.details


def test_no_output_file_scores_zero_with_reason(run_check):
    outcome = run_check({"assert": "output-length", "min_words": 10}, None)
    assert outcome.score == 0.0
    assert "wrote no output" in outcome.details


def test_length_bounds_are_field_rows(run_check):
    outcome = run_check(
        {"assert": "output-length", "min_words": 20, "max_words": 30, "max_chars": 100}, LETTER
    )
    rows = {(r["path"], r["op"]): r for r in outcome.evidence["fieldResults"]}
    assert rows[("words", "gte")]["passed"] is True
    assert rows[("words", "lte")]["passed"] is False
    assert rows[("chars", "lte")]["actual"] == len(LETTER.strip())
    assert outcome.score == pytest.approx(1 / 3)


def test_length_counts_hyphenated_words_once(run_check):
    outcome = run_check(
        {"assert": "output-length", "min_words": 3, "max_words": 3}, "prior-auth patient's request"
    )
    assert outcome.score == 1.0


def test_sections_case_insensitive_ignoring_numbering(run_check):
    outcome = run_check(
        {
            "assert": "output-sections",
            "sections": ["clinical summary", "Medical necessity", "Requested service"],
            "in_order": True,
        },
        LETTER,
    )
    assert outcome.score == 1.0
    assert outcome.evidence["fieldResults"][1]["actual"] == "line 8: 2. Medical Necessity:"


def test_sections_out_of_order_fails_that_section(run_check):
    outcome = run_check(
        {
            "assert": "output-sections",
            "sections": ["Medical necessity", "Clinical summary"],
            "in_order": True,
        },
        LETTER,
    )
    rows = outcome.evidence["fieldResults"]
    assert [r["passed"] for r in rows] == [True, False]
    assert "(out of order)" in rows[1]["actual"]
    assert outcome.score == 0.5


def test_sections_heading_in_code_block_does_not_count(run_check):
    outcome = run_check({"assert": "output-sections", "sections": ["Not a heading"]}, LETTER)
    assert outcome.score == 0.0
    assert "missing or out of order: 'Not a heading'" in outcome.details


def test_sections_level_filter(run_check):
    outcome = run_check(
        {"assert": "output-sections", "sections": ["Clinical summary"], "level": 1}, LETTER
    )
    assert outcome.score == 0.0


def test_match_contains_regex_and_forbidden(run_check):
    outcome = run_check(
        {
            "assert": "output-match",
            "contains": ["member id", "CPT 72148"],
            "not_contains": ["approved"],
            "regex": r"BCX-\d{7}",
            "not_regex": [r"\bSSN\b"],
        },
        LETTER,
    )
    assert outcome.score == 1.0
    rows = outcome.evidence["fieldResults"]
    assert rows[0]["actual"] == "found at line 3"
    assert rows[3] == {
        "path": r"regex[BCX-\d{7}]",
        "expected": "match",
        "actual": "BCX-4471902",
        "passed": True,
    }


def test_match_case_sensitive(run_check):
    outcome = run_check(
        {"assert": "output-match", "contains": ["member id"], "case_sensitive": True}, LETTER
    )
    assert outcome.score == 0.0


def test_match_fields_of_json_output(run_check):
    text = '{"request": {"status": "submitted", "cpt": "72148", "units": 1}}'
    outcome = run_check(
        {
            "assert": "output-match",
            "fields": [
                {"path": "request.status", "expected": "submitted"},
                {"path": "request.cpt", "expected": 72148},
                {"path": "request.units", "expected": 2, "op": "gte"},
            ],
        },
        text,
        name="output.json",
    )
    assert [r["passed"] for r in outcome.evidence["fieldResults"]] == [True, True, False]
    assert outcome.evidence["fieldResults"][2]["actual"] == 1


def test_match_fields_on_prose_fail_with_reason(run_check):
    outcome = run_check(
        {"assert": "output-match", "fields": [{"path": "status", "expected": "submitted"}]},
        "plain prose",
        name="output.txt",
    )
    assert outcome.score == 0.0
    assert "fields not checked" in outcome.details


SCHEMA = {
    "type": "object",
    "required": ["member_id", "cpt", "diagnosis"],
    "properties": {
        "member_id": {"type": "string", "pattern": "^BCX-[0-9]{7}$"},
        "cpt": {"type": "string"},
        "diagnosis": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    },
}


def test_json_schema_valid(run_check):
    text = '{"member_id": "BCX-4471902", "cpt": "72148", "diagnosis": ["M54.16"]}'
    outcome = run_check({"assert": "output-json-schema", "schema": SCHEMA}, text, "output.json")
    assert outcome.score == 1.0


def test_json_schema_violations_listed_with_paths(run_check):
    text = '{"member_id": "4471902", "diagnosis": [42]}'
    outcome = run_check({"assert": "output-json-schema", "schema": SCHEMA}, text, "output.json")
    paths = [r["path"] for r in outcome.evidence["fieldResults"]]
    assert outcome.score == 0.0
    assert paths == ["$", "$.diagnosis[0]", "$.member_id"]
    assert outcome.evidence["violations"] == 3
    assert "'cpt' is a required property" in outcome.evidence["fieldResults"][0]["message"]


def test_json_schema_on_non_json(run_check):
    outcome = run_check(
        {"assert": "output-json-schema", "schema": SCHEMA}, "{not json", "output.json"
    )
    assert outcome.score == 0.0
    assert "is not JSON" in outcome.details


@pytest.mark.parametrize(
    "assertion, message",
    [
        ({"assert": "output-json-schema", "schema": {"type": "objekt"}}, "not a valid JSON Schema"),
        ({"assert": "output-length"}, "give at least one of"),
        ({"assert": "output-length", "min_words": 10, "max_words": 5}, "greater than max_words"),
        ({"assert": "output-match", "regex": "(unclosed"}, "invalid regex"),
        ({"assert": "output-format", "format": "xml"}, "'json', 'yaml' or 'markdown'"),
        ({"assert": "output-sections", "sections": []}, "at least 1 item"),
    ],
)
def test_invalid_assertions_are_rejected_at_load(assertion, message):
    check = default_registry().get(assertion["assert"])
    with pytest.raises(pydantic.ValidationError, match=message.replace("(", r"\(")):
        check.model.model_validate(assertion)
