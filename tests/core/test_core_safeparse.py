"""Hostile JSON/YAML, regexes and schemas: bounded, refused by name, never fetched (issue 9).

The end-to-end cases (every format, one line each) are in ``tests/bad_inputs/cases/parsing.py``;
this module pins the mechanisms: the depth scan, the number and alias limits, the regex
timeout, the remote ``$ref`` refusal (against a real local HTTP server that counts requests)
and the report writer's strict-JSON backstop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from core_support import Project, QuietHandler, criterion_runs, local_http
from pydantic import Field

from pytest_verial import AssertionSpec, BenchmarkFileError, CheckSpec, load_benchmark

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._compare import FieldSpec, compare
from pytest_verial._errors import BenchmarkProblem, CheckError
from pytest_verial._safeparse import MAX_DEPTH, DataError, load_json, load_yaml
from pytest_verial.checks import CheckRegistry
from pytest_verial.checks._registry import builtin_check, builtin_checks
from pytest_verial.hl7 import parse_stream

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._output import OutputSnapshot
from pytest_verial.sources._portal import PortalSnapshot
from pytest_verial.testing import run_check

MSH = "MSH|^~\\&|A|B|C|D|20260101||ADT^A01|{}|P|2.5"


def benchmark_problems(folder: Path, text: str, suffix: str = ".yaml") -> list[BenchmarkProblem]:
    """The problems loading ``text`` as a benchmark file gives (it must give some)."""
    path = folder / f"b.verial{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BenchmarkFileError) as caught:
        load_benchmark(path, CheckRegistry(builtin_checks()))
    return caught.value.problems


# -- depth ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "[" * (MAX_DEPTH + 1),  # truncated too: the depth is refused before the syntax
    ],
    ids=["list", "object", "truncated"],
)
def test_deep_json_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(DataError, match=f"f.json:1: nested deeper than {MAX_DEPTH} levels"):
        load_json(text, "f.json")


def test_json_depth_at_the_limit_loads_and_strings_do_not_count() -> None:
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    value = load_json(at_limit, "f.json")
    for _ in range(MAX_DEPTH - 1):
        (value,) = value
    assert value == []
    brackets_in_strings = json.dumps({"s": "[" * 5000, "t": ['\\"[' * 300]})
    assert load_json(brackets_in_strings, "f.json")["s"] == "[" * 5000


def test_the_json_depth_error_names_the_line() -> None:
    text = '{\n"a": 1,\n"b": ' + "[" * 300 + "]" * 300 + "}"
    with pytest.raises(DataError) as caught:
        load_json(text, "f.json")
    assert caught.value.line == 3


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 100_000,
        "a: " + "{b: " * 100_000,
        "".join(" " * i + "k:\n" for i in range(3000)) + " " * 3000 + "1\n",
        "- " * 5000 + "x\n",
    ],
    ids=["flow-list", "flow-map", "block-map", "block-dashes"],
)
def test_deep_yaml_is_refused_without_reaching_libyaml_loader(text: str, tmp_path: Path) -> None:
    """libyaml's C loader would kill the process on the first two (a segfault)."""
    with pytest.raises(DataError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_yaml(text, "f.yaml")
    (problem,) = benchmark_problems(tmp_path, text)
    assert f"nested deeper than {MAX_DEPTH} levels" in str(problem)


def test_benchmark_json_keeps_its_line_numbers_and_limits(tmp_path: Path) -> None:
    (problem,) = benchmark_problems(tmp_path, '{"tasks":\n' + "[" * 1000, ".json")
    assert "nested deeper" in problem.message and problem.line == 2
    (problem,) = benchmark_problems(tmp_path, '{"tasks": [\n {"id": "t", "weight": 1}]}', ".json")
    assert (problem.task, problem.line) == ("t", 2)


# -- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[NaN]", "NaN is not accepted"),
        ('{"a": Infinity}', "Infinity is not accepted"),
        ("[-Infinity]", "-Infinity is not accepted"),
        ("[1e999]", "1e999 is out of range"),
        ("[" + "9" * 5000 + "]", "an integer of 5,000 digits is longer than 4,300 digits"),
        ("[-" + "9" * 4301 + "]", "4,301 digits"),
    ],
)
def test_json_numbers_that_cannot_be_compared_are_refused(text: str, says: str) -> None:
    with pytest.raises(DataError, match=says):
        load_json(text, "f.json")


def test_json_numbers_within_limits_load() -> None:
    assert load_json("[" + "9" * 4300 + ", 1.5e300, -0.0]", "f.json")[1] == 1.5e300


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a: .nan", "nan is not accepted"),
        ("a: [-.inf]", "inf is not accepted"),
        ("a: " + "1" * 5000, "longer than 4,300 digits"),
        ("a: " + "1" * 4301, "longer than 4,300 digits"),
        ("a: 2026-13-45", "month must be in 1..12"),
    ],
)
def test_yaml_scalars_that_cannot_be_used_are_refused(text: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(DataError, match=says):
        load_yaml(text, "f.yaml")
    (problem,) = benchmark_problems(tmp_path, text)
    assert says in str(problem)


# -- aliases ---------------------------------------------------------------------------------


def _bomb(levels: int) -> str:
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="alias bomb"):
        load_yaml(_bomb(10), "f.yaml")
    (problem,) = benchmark_problems(tmp_path, _bomb(10))
    assert "alias bomb" in str(problem)


def test_alias_cycles_are_refused() -> None:
    for text in ("a: &a [*a]", "a: &a {b: [1, *a]}"):
        with pytest.raises(DataError, match="containing itself"):
            load_yaml(text, "f.yaml")


def test_ordinary_aliases_still_load() -> None:
    data = load_yaml("base: &b {x: 1}\nuse: [*b, *b]\nmerged: {<<: *b, y: 2}\n", "f.yaml")
    assert data["merged"] == {"x": 1, "y": 2}
    assert load_yaml(_bomb(3), "f.yaml")["l2"][0] == ["lol"] * 9


# -- regexes ---------------------------------------------------------------------------------


def test_a_backtracking_regex_is_a_criterion_error_naming_the_field(tmp_path: Path) -> None:
    spec = FieldSpec(path="note", op="regex", expected="(x+x+)+y")
    with pytest.raises(CheckError) as caught:
        compare(spec, "x" * 5000)
    message = str(caught.value)
    assert "regex 'note' timed out after" in message
    assert "(x+x+)+y" not in message  # the pattern may hold an expected value
    (tmp_path / "portal").mkdir()
    (tmp_path / "portal" / "notes.json").write_text(json.dumps([{"note": "x" * 5000}]))
    run = run_check(
        "portal-state-match",
        {"correlate_by": {"resource": "notes"}, "assertions": [spec.model_dump()]},
        {"portal": PortalSnapshot(tmp_path / "portal")},
    )
    assert (run["status"], run["score"], run["evidence"]) == (
        "error",
        0.0,
        {"error": "RegexTimeout"},
    )
    assert "regex 'note' timed out after" in run["details"]
    assert "(x+x+)+y" not in run["details"]


def test_regexes_still_match_as_before() -> None:
    assert compare(FieldSpec(path="a", op="regex", expected=r"^\d{3}-\w+$"), "123-abc")
    assert not compare(FieldSpec(path="a", op="regex", expected="(?i)ZZZ"), "abc")
    with pytest.raises(ValueError, match="invalid regex"):
        FieldSpec(path="a", op="regex", expected="(")


# -- HL7: empty files and bytes outside frames -----------------------------------------------


def test_hl7_text_outside_frames_and_empty_files_become_warnings() -> None:
    warnings: list[str] = []
    text = "junk before\r\x0b" + MSH.format(1) + "\x1c\r" + "junk after\r"
    messages = parse_stream(text, "a.hl7", warnings)
    assert [m.control_id for m in messages] == ["1"]
    assert any("before frame 1" in w and w.startswith("a.hl7: ") for w in warnings), warnings
    assert any("after frame 1" in w for w in warnings), warnings
    empty: list[str] = []
    assert parse_stream("", "b.hl7", empty) == []
    assert empty == ["b.hl7: empty (0 bytes): no message in it"]


# -- remote $ref -----------------------------------------------------------------------------


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A schema server on 127.0.0.1 recording every request it gets."""
    hits: list[str] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            hits.append(self.path)
            self.reply(json.dumps({"type": "string"}).encode(), "application/schema+json")

    with local_http(Handler) as url:
        yield url, hits


def _schema_benchmark(project: Project, schema: dict[str, Any]) -> None:
    project.benchmark(
        "s",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {"id": "c", "assertion": {"assert": "output-json-schema", "schema": schema}}
                    ],
                }
            ]
        },
    )
    project.sandbox("t", {"output.json": {"a": 1}})


@pytest.mark.parametrize("where", ["property", "root", "id-relative"])
def test_a_remote_ref_is_a_collection_error_and_nothing_is_fetched(
    pytester: pytest.Pytester, counting_server: tuple[str, list[str]], where: str
) -> None:
    base, hits = counting_server
    schema: dict[str, Any] = {
        "property": {"type": "object", "properties": {"a": {"$ref": f"{base}/a.json"}}},
        "root": {"$ref": f"{base}/root.json#/defs/x"},
        "id-relative": {"$id": f"{base}/main.json", "properties": {"a": {"$ref": "other.json"}}},
    }[where]
    project = Project(pytester.path)
    _schema_benchmark(project, schema)
    result = pytester.runpytest("--verial-report", "report.json")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*s.verial.yaml*remote references are not fetched*"])
    assert "Traceback" not in result.stdout.str()
    assert hits == []


def test_local_refs_still_validate(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    _schema_benchmark(
        project,
        {
            "$id": "https://example.test/s.json",
            "$defs": {"n": {"type": "integer"}},
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/n"},
                "b": {"$ref": "https://example.test/s.json#/$defs/n"},
            },
        },
    )
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=1)


class UncheckedSchema(AssertionSpec):
    """``output-json-schema`` without its load-time check of the schema."""

    kind: Literal["output-json-schema"] = Field(alias="assert")
    schema_: dict[str, Any] = Field(alias="schema")


def test_the_validator_never_retrieves_even_when_asked(
    counting_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    """The runtime backstop: a schema that slipped past the load-time check (here, a check
    running the built-in one with a model that checks nothing) is an error, and not fetched."""
    base, hits = counting_server
    builtin = builtin_check("output-json-schema")
    unchecked = CheckSpec(
        name=builtin.name, model=UncheckedSchema, run=builtin.run, sources=builtin.sources
    )
    (tmp_path / "output.json").write_text(json.dumps({"a": 1}))
    run = run_check(
        "output-json-schema",
        {"schema": {"properties": {"a": {"$ref": f"{base}/a.json"}}}},
        {"output": OutputSnapshot(tmp_path)},
        registry=CheckRegistry([unchecked]),
    )
    assert (run["status"], run["score"]) == ("error", 0.0)
    assert "schema reference cannot be resolved" in run["details"]
    assert "remote references are not fetched while grading" in run["details"]
    assert hits == []


# -- the report is strict JSON whatever the evidence holds -----------------------------------

ODD_EVIDENCE = """
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec


class OddEvidence(AssertionSpec):
    kind: Literal["odd-evidence"] = Field(alias="assert")


def odd(spec, ctx):
    loop = {"name": "loop"}
    loop["self"] = loop
    evidence = {
        "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"),
        "big": 10 ** 6000, "loop": loop, "keys": {1: "one", None: "none"},
    }
    return CheckOutcome(0.0, "odd evidence", evidence)


def pytest_verial_checks():
    return [CheckSpec(name="odd-evidence", model=OddEvidence, run=odd)]
"""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the report holds {name}")


def test_report_is_strict_json_whatever_a_check_puts_in_evidence(
    pytester: pytest.Pytester,
) -> None:
    project = Project(pytester.path)
    project.conftest(ODD_EVIDENCE)
    project.benchmark(
        "odd",
        {
            "tasks": [
                {"id": "t", "criteria": [{"id": "c", "assertion": {"assert": "odd-evidence"}}]}
            ]
        },
    )
    project.sandbox("t", {})
    result = pytester.runpytest("--verial-report", "report.json", "--verial-junit", "j.xml")
    result.assert_outcomes(failed=1)
    text = (pytester.path / "report.json").read_text(encoding="utf-8")
    report = json.loads(text, parse_constant=_refuse_constant)
    (run,) = criterion_runs(report).values()
    evidence = run["evidence"]
    assert (evidence["nan"], evidence["inf"], evidence["ninf"]) == ("NaN", "Infinity", "-Infinity")
    assert evidence["big"].startswith("<integer of ")
    assert evidence["loop"]["self"] == "<cycle>"
    assert evidence["keys"] == {"1": "one", "None": "none"}
    assert (pytester.path / "j.xml").exists()


ORDINARY_EVIDENCE = ODD_EVIDENCE.replace(
    """    loop = {"name": "loop"}
    loop["self"] = loop
    evidence = {
        "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"),
        "big": 10 ** 6000, "loop": loop, "keys": {1: "one", None: "none"},
    }""",
    """    evidence = {"a": [1, 2.5, "x", None, True, {"b": -0.0}], "c": 10**100}""",
)


def test_ordinary_evidence_reaches_the_report_unchanged(pytester: pytest.Pytester) -> None:
    assert ORDINARY_EVIDENCE != ODD_EVIDENCE
    project = Project(pytester.path)
    project.conftest(ORDINARY_EVIDENCE)
    project.benchmark(
        "odd",
        {
            "tasks": [
                {"id": "t", "criteria": [{"id": "c", "assertion": {"assert": "odd-evidence"}}]}
            ]
        },
    )
    project.sandbox("t", {})
    pytester.runpytest("--verial-report", "report.json")
    text = (pytester.path / "report.json").read_text(encoding="utf-8")
    (run,) = criterion_runs(json.loads(text, parse_constant=_refuse_constant)).values()
    evidence = run["evidence"]
    assert evidence == {"a": [1, 2.5, "x", None, True, {"b": -0.0}], "c": 10**100}
    assert str(evidence["a"][5]["b"]) == "-0.0" and evidence["c"] == 10**100
