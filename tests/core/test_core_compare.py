"""The shared comparison module (README, "Field operators") and 0-based dotted paths."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from pytest_verial import MISSING

# private: internals with no public face (issue 32: a test is not a user)
# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._compare import (
    FieldSpec,
    compare,
    correlation_matches,
    field_result,
    fields_score,
    quantified,
)
from pytest_verial._paths import resolve

APPOINTMENT = {
    "resourceType": "Appointment",
    "status": "booked",
    "participant": [
        {"actor": {"reference": "Patient/john-smith", "display": "John Smith"}},
        {"actor": {"reference": "Practitioner/rivera", "display": "Dr. Rivera"}},
    ],
    "meta.source": "portal",  # a key that itself contains a dot
    "meta": {"source": "fhir", "tag": []},
    "note": None,
}


def spec(op: str = "equals", expected: Any = None, **extra: Any) -> FieldSpec:
    return FieldSpec(path="x", expected=expected, op=op, **extra)  # type: ignore[arg-type]


# -- paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("participant.0.actor.display", "John Smith"),  # 0-based, as in Verial's example
        ("participant.1.actor.display", "Dr. Rivera"),
        ("participant[1].actor.reference", "Practitioner/rivera"),
        ("status", "booked"),
        ("meta.source", "portal"),  # the whole dotted key wins over nesting
        ("meta.tag", []),
        ("note", None),  # present and null is not missing
    ],
)
def test_resolve_finds_values(path: str, expected: Any) -> None:
    assert resolve(APPOINTMENT, path) == expected


def test_resolve_reaches_nested_keys_when_no_dotted_key_matches() -> None:
    assert resolve({"meta": {"source": "fhir"}}, "meta.source") == "fhir"
    assert resolve({"a.b": {"c": 1}}, "a.b.c") == 1


@pytest.mark.parametrize(
    "path",
    [
        "participant.2.actor",
        "participant.first.actor",
        "participant.0.actor.missing",
        "status.0",
        "nothing",
        "meta.tag.0",
        "note.text",
    ],
)
def test_resolve_missing_paths(path: str) -> None:
    assert resolve(APPOINTMENT, path) is MISSING


# -- operators -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "expected", "actual", "result"),
    [
        ("equals", "booked", "booked", True),
        ("equals", "booked", "Booked", False),
        ("equals", 271, "271", True),  # X12/HL7 values are text
        ("equals", 1, 1.0, True),
        ("equals", True, 1, False),  # booleans only equal booleans
        ("equals", True, "true", True),
        ("equals", None, None, True),
        ("equals", "x", None, False),
        ("not_equals", "denied", "approved", True),
        ("not_equals", "denied", "denied", False),
        ("not_equals", None, None, False),  # "must not be null" fails on null
        ("not_equals", None, "2026-04-20", True),
        ("contains", "MRI", "Lumbar MRI w/o contrast", True),
        ("contains", "CT", "Lumbar MRI", False),
        ("contains", "M54.5", ["M54.5", "M51.26"], True),
        ("contains", 72148, ["72148"], True),
        ("contains", "M54", ["M54.5"], False),  # list members compare whole
        ("regex", r"^PA-\d{4}$", "PA-2024", True),
        ("regex", r"^PA-\d{4}$", "PA-20245", False),
        ("regex", r"^721", 72148, True),  # numbers are matched as their text
        ("exists", None, "anything", True),
        ("exists", None, None, False),
        ("exists", False, None, True),  # exists: false means it must not be there
        ("absent", None, None, True),
        ("absent", None, "x", False),
        ("in", ["approved", "pending"], "pending", True),
        ("in", ["approved", "pending"], "denied", False),
        ("in", [1, 2], "2", True),
        ("gt", 5, 6, True),
        ("gt", 5, 5, False),
        ("gte", 5, "5", True),
        ("lt", 100.5, 99, True),
        ("lte", 3, 4, False),
        ("gt", "2026-04-01", "2026-04-02T08:00:00Z", True),
        ("lt", "2026-04", "2026-03-31", True),  # partial dates
        ("gte", "2026-04-20T10:00:00+02:00", "2026-04-20T08:00:00Z", True),  # same instant
        ("lt", "2026-04-20T10:00:00+02:00", "2026-04-20T08:00:01Z", False),
        ("gt", 5, "not a number", False),
        ("gt", "2026-01-01", "yesterday", False),
        ("approx", 100.0, 100.00001, True),  # default relative 1e-6
        ("approx", 100.0, 100.01, False),
        ("approx", "12.50", 12.5, True),
    ],
)
def test_operators(op: str, expected: Any, actual: Any, result: bool) -> None:
    assert compare(spec(op, expected), actual) is result


def test_not_equals_null_fails_on_a_missing_path() -> None:
    """``{op: not_equals, expected: null}`` reads "has a value": a missing field has none."""
    assert compare(spec("not_equals", None), MISSING) is False
    assert compare(spec("not_equals", "x"), MISSING) is True


def test_approx_uses_an_absolute_tolerance() -> None:
    assert compare(spec("approx", 250, tolerance=5), 254.9)
    assert not compare(spec("approx", 250, tolerance=5), 255.1)


@pytest.mark.parametrize(
    ("op", "expected", "result"),
    [
        ("equals", "x", False),
        ("equals", None, False),
        ("contains", "x", False),
        ("regex", ".*", False),
        ("in", ["x"], False),
        ("gt", 1, False),
        ("approx", 1, False),
        ("exists", None, False),
        ("absent", None, True),
        ("not_equals", "x", True),
    ],
)
def test_missing_path_fails_every_operator_but_absent_and_not_equals(
    op: str, expected: Any, result: bool
) -> None:
    assert compare(spec(op, expected), MISSING) is result


def test_field_result_row_shape() -> None:
    row = field_result(FieldSpec(path="status", expected="submitted"), "draft")
    assert row == {"path": "status", "expected": "submitted", "actual": "draft", "passed": False}
    row = field_result(FieldSpec(path="units", expected=3, op="gte"), MISSING)
    assert row == {"path": "units", "expected": 3, "actual": None, "passed": False, "op": "gte"}


def test_field_result_cuts_long_values() -> None:
    row = field_result(FieldSpec(path="note", expected="x"), "a" * 5000)
    assert isinstance(row["actual"], str) and len(row["actual"]) < 2100
    assert row["actual"].endswith("(5000 chars)")


def test_fields_score() -> None:
    rows = [{"passed": True}, {"passed": False}, {"passed": True}, {"passed": True}]
    assert fields_score(rows) == 0.75  # type: ignore[arg-type]
    assert fields_score([]) == 1.0  # a target with no fields asked


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"op": "in", "expected": "approved"}, "op 'in' needs 'expected' to be a list"),
        ({"op": "regex", "expected": 5}, "op 'regex' needs 'expected' to be a string"),
        ({"op": "regex", "expected": "("}, "invalid regex"),
        ({"op": "gt", "expected": None}, "op 'gt' needs 'expected' to be a number or a date"),
        ({"op": "approx", "expected": [1]}, "needs 'expected' to be a number"),
        ({"op": "startswith", "expected": "x"}, "Input should be"),
        ({"op": "approx", "expected": 1, "tolerance": -1}, "greater than or equal to 0"),
        ({"expected": "x", "value": "y"}, "Extra inputs are not permitted"),
        ({"path": "", "expected": "x"}, "at least 1 character"),
    ],
)
def test_field_spec_rejects_bad_combinations(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        FieldSpec.model_validate({"path": "x", **data})


# -- properties ----------------------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
)
numbers = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False))


@given(scalars, scalars)
def test_not_equals_is_the_negation_of_equals(expected: Any, actual: Any) -> None:
    assert compare(spec("not_equals", expected), actual) is (
        not compare(spec("equals", expected), actual)
    )


@given(scalars, scalars)
def test_in_a_one_item_list_is_equals(expected: Any, actual: Any) -> None:
    assert compare(spec("in", [expected]), actual) is compare(spec("equals", expected), actual)


@given(numbers, numbers)
def test_order_operators_agree_on_numbers(expected: float, actual: float) -> None:
    gt, lt = compare(spec("gt", expected), actual), compare(spec("lt", expected), actual)
    gte, lte = compare(spec("gte", expected), actual), compare(spec("lte", expected), actual)
    assert gte is (gt or actual == expected)
    assert lte is (lt or actual == expected)
    assert not (gt and lt)
    # and the same comparison holds when the value arrives as text (HL7, X12, CSV)
    assert compare(spec("gt", expected), str(actual)) is gt


def test_quantified_fields_over_several_values() -> None:
    final = FieldSpec(path="OBX[*].11", expected="F")
    assert quantified(final, ["F", "F"], "all") and quantified(final, ["C", "F"], "any")
    assert not quantified(final, ["C", "F"], "all") and not quantified(final, [], "any")
    absent = FieldSpec(path="OBX[*].5", op="absent")
    assert quantified(absent, [], "all") and quantified(absent, [], "any")


def test_correlation_matches_any_value_one_of_expected_or_absent() -> None:
    assert correlation_matches("R01", ["A04", "R01"])
    assert correlation_matches(["A04", "A08"], ["A08"])
    assert correlation_matches(271, ["271 "])  # fixed-width X12 element, number vs text
    assert not correlation_matches("R01", [])
    assert correlation_matches(None, []) and correlation_matches(None, ["", None])
    assert not correlation_matches(None, ["W123"])
