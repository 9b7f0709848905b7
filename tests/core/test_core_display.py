"""Issue 9: ids refuse invisible and control characters; sandbox text is escaped on the
terminal and in both JUnit files; numbers written as text are ASCII only."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from core_support import (
    HOSTILE,
    LINKS,
    REPO,
    Project,
    bad_characters,
    portal_criterion,
    run_subprocess,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_verial import BenchmarkFileError, load_benchmark

# private: internals with no public face (issue 32: a test is not a user)
# private: unit tests of the escaping and number helpers each output format shares, no public face
from pytest_verial._compare import FieldSpec, as_number, compare, values_equal
from pytest_verial._display import escape, sanitize, unlink, unsafe_id_char
from pytest_verial._ui._index_html import _e  # every cell of the store's index page
from pytest_verial.checks import CheckRegistry

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.checks._registry import builtin_checks
from pytest_verial.reporting._markdown import cell


def builtin_registry() -> CheckRegistry:
    return CheckRegistry(builtin_checks())


#: characters an id must never hold, one of each class
BAD = {
    "esc": "\x1b",
    "nul": "\x00",
    "bel": "\x07",
    "del": "\x7f",
    "c1": "\x85",
    "newline": "\n",
    "cr": "\r",
    "tab": "\t",
    "rlo": "\u202e",
    "lri": "\u2066",
    "zwsp": "\u200b",
    "zwj": "\u200d",
    "wj": "\u2060",
    "bom": "\ufeff",
    "line-sep": "\u2028",
    "para-sep": "\u2029",
    "nbsp": "\u00a0",
    "tag-char": "\U000e0041",
    "surrogate": "\udc80",
    "colons": "::",
    "open": "[",
    "close": "]",
    "at": "@",
    "slash": "/",
    "backslash": "\\",
}


def _shared() -> Path:
    env = os.environ.get("VERIAL_SHARED")
    for candidate in (Path(env) if env else None, REPO.parent / "shared"):
        if candidate is not None and candidate.is_dir():
            return candidate
    return REPO.parent / "shared"


JUNIT_XSD = _shared() / "data" / "junit-10.xsd"


def _task(tid: str = "t", cid: str = "c", **crit: Any) -> dict[str, Any]:
    criterion = {"id": cid, "assertion": {"assert": "file-exists", "path": "x"}, **crit}
    return {"id": tid, "criteria": [criterion]}


def _bad_id_benchmark(where: str, bad: str) -> dict[str, Any]:
    data: dict[str, Any] = {"benchmark": "b", "tasks": [_task()]}
    if where == "task":
        data["tasks"][0]["id"] = bad
    elif where == "criterion":
        data["tasks"][0]["criteria"][0]["id"] = bad
    elif where == "entity":
        data["tasks"][0]["entities"] = [{"id": bad}]
    elif where == "named-entity":
        data["entities"] = {bad: {"n": 1}}
        data["tasks"][0]["entities"] = [bad]
    else:
        data[where] = bad
    return data


WHERE = ["task", "criterion", "entity", "named-entity", "benchmark", "version"]


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("where", WHERE)
def test_unsafe_characters_in_ids_are_refused_at_load(
    tmp_path: Path, name: str, where: str
) -> None:
    path = tmp_path / "b.verial.json"
    path.write_text(json.dumps(_bad_id_benchmark(where, f"a{BAD[name]}b")), "utf-8")
    with pytest.raises(BenchmarkFileError) as info:
        load_benchmark(path, builtin_registry())
    message = str(info.value)
    assert "contains" in message and "b.verial.json:" in message
    assert message.isprintable(), repr(message)  # the bad character never shown raw
    if not BAD[name].isprintable():
        assert f"U+{ord(BAD[name]):04X}" in message


@pytest.mark.parametrize("where", WHERE)
def test_refused_ids_are_one_escaped_line_in_a_session(
    pytester: pytest.Pytester, where: str
) -> None:
    project = Project(pytester.path)
    for name in ("esc", "rlo", "newline", "surrogate", "zwsp"):
        project.benchmark(name, _bad_id_benchmark(where, f"a{BAD[name]}b"), fmt="json")
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--collect-only")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0
    assert "Traceback" not in out
    for name, code in (
        ("esc", "U+001B"),
        ("rlo", "U+202E"),
        ("newline", "U+000A"),
        ("surrogate", "U+DC80"),
        ("zwsp", "U+200B"),
    ):
        assert any(f"{name}.verial.json:" in line and code in line for line in out.splitlines())
    for raw in ("\x1b", "\u202e", "\u200b"):
        assert raw not in out


def test_load_error_names_file_line_task_criterion_and_field(pytester: pytest.Pytester) -> None:
    Project(pytester.path).benchmark(
        "b",
        '{"tasks": [{"id": "t", "criteria": [\n{"id": "c\\u202e", "assertion": '
        '{"assert": "file-exists", "path": "x"}}]}]}',
        fmt="json",
    )
    out = pytester.runpytest_inprocess("--collect-only").stdout.str()
    assert (
        "b.verial.json:2: task 't', criterion 'c\\u202e', field 'id': a criterion id contains "
        "U+202E RIGHT-TO-LEFT OVERRIDE (an invisible format character)" in out
    )
    assert "\u202e" not in out


@pytest.mark.parametrize("field", ["axis", "tags"])
def test_unsafe_axis_and_tags_are_refused(pytester: pytest.Pytester, field: str) -> None:
    task = _task(**({"axis": "safe\x1b[2Jty"} if field == "axis" else {}))
    if field == "tags":
        task["tags"] = ["ok", "a\u200bb"]
    Project(pytester.path).benchmark("b", {"tasks": [task]}, fmt="json")
    out = pytester.runpytest_inprocess("--collect-only").stdout.str()
    assert ("U+001B ESCAPE" if field == "axis" else "U+200B ZERO WIDTH SPACE") in out
    assert "\x1b" not in out and "\u200b" not in out


@pytest.mark.parametrize("name", ["skip", "xfail", "usefixtures", "filterwarnings", "skipif"])
def test_tags_and_axes_named_like_acting_markers_do_not_act(
    pytester: pytest.Pytester, name: str
) -> None:
    """A tag 'skip' or axis 'xfail' must not skip or xfail a failing criterion."""
    task = _task(axis=name)
    task["tags"] = [name, "_private"]
    project = Project(pytester.path)
    project.benchmark("b", {"tasks": [task]})
    project.sandbox("t", {})
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-rA")
    result.assert_outcomes(failed=1)
    assert "is not made a pytest marker" in result.stdout.str()


def test_ini_declared_marker_still_selects(pytester: pytest.Pytester) -> None:
    (pytester.path / "pytest.ini").write_text("[pytest]\nmarkers =\n  safety: an axis\n")
    project = Project(pytester.path)
    project.benchmark("b", {"tasks": [_task(axis="safety"), _task("u", "d")]})
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-m", "safety")
    assert "b.verial.yaml::t::c" in result.stdout.str()
    assert "b.verial.yaml::u::d" not in result.stdout.str()


def test_verial_id_shapes_stay_valid() -> None:
    for good in (
        "prior-auth",
        "crit_01H8XK",
        "tr_abc123",
        "3f2b8c1e-9d4a-4c1e-8f00-1a2b3c4d5e6f",
        "Check the note",
        "a.b",
        "ñandú-2",
        "患者",
    ):
        assert unsafe_id_char(good) is None, good


# -- sandbox data on the terminal, in JUnit and the JSON report ------------------------------

NASTY = "Ma\x1b[31mria\u202e\u200b\x00\udc80\r\nX\u2028Y\ufffe\U000e0041"


def _nasty_project(path: Path) -> Project:
    project = Project(path)
    project.benchmark(
        "b",
        {
            "benchmark": "nasty",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        portal_criterion(
                            "name",
                            "patients",
                            "id",
                            "p1",
                            [{"path": "name", "expected": "Maria"}],
                            label="Name \x1b[1mbold",
                        ),
                        {
                            "id": "file",
                            "assertion": {"assert": "file-exists", "path": "inbox/missing\x1b.txt"},
                        },
                    ],
                }
            ],
        },
        fmt="json",
    )
    rows = json.dumps([{"id": "p1", "name": NASTY}], ensure_ascii=True)
    project.sandbox("t", {"portal/patients.json": rows})
    return project


def _strict_xml(path: Path) -> ET.Element:
    data = path.read_bytes()
    data.decode("utf-8")  # strict UTF-8
    return ET.fromstring(data)


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_nasty_data_is_escaped_on_terminal_and_xml_stays_valid(tmp_path: Path, family: str) -> None:
    project = _nasty_project(tmp_path)
    code, out = run_subprocess(
        tmp_path,
        "-p",
        "no:randomly",
        "-n",
        "0",
        "-o",
        f"junit_family={family}",
        "--verial-report",
        "report.json",
        "--verial-junit",
        "tasks.xml",
        "--junitxml",
        "pytest.xml",
    )
    assert code == 1, out
    assert "Traceback" not in out and "INTERNALERROR" not in out
    for raw in ("\x1b", "\u202e", "\u200b", "\x00", "\u2028", "\ufffe"):
        assert raw not in out, repr(raw)
    assert "\\x1b[31m" in out and "\\u202e" in out
    for name in ("tasks.xml", "pytest.xml"):
        _strict_xml(tmp_path / name)
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    runs = [t for r in report["benchmark_runs"] for t in r["task_runs"]][0]["criterion_runs"]
    actual = next(r for r in runs if r["criterion_id"] == "name")["evidence"]
    assert NASTY in json.dumps(actual, ensure_ascii=False) or "\\udc80" in json.dumps(actual)
    if JUNIT_XSD.is_file():
        xmlschema = pytest.importorskip("xmlschema")
        schema = xmlschema.XMLSchema(str(JUNIT_XSD))
        schema.validate(str(tmp_path / "tasks.xml"))
    del project


def test_junit_text_and_attributes_are_escaped() -> None:
    from pytest_verial.reporting._junit import xml_safe  # private: JUnit's escaping helper

    root = ET.Element("testsuites", name="a\x1bb")
    ET.SubElement(root, "failure", message="m\x00\u202e").text = "line1\nline2\x1b\udc80"
    xml_safe(root)
    text = ET.tostring(root, encoding="unicode")
    back = ET.fromstring(text.encode("utf-8"))
    assert back.get("name") == "a\\x1bb"
    assert back[0].get("message") == "m\\x00\\u202e"
    assert back[0].text == "line1\nline2\\x1b\\udc80"


@pytest.mark.skipif(not JUNIT_XSD.is_file(), reason=f"JUnit XSD absent at {JUNIT_XSD}")
def test_xsd_validates_escaped_task_junit(tmp_path: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    _nasty_project(tmp_path)
    run_subprocess(tmp_path, "-p", "no:randomly", "--verial-junit", "tasks.xml")
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(tmp_path / "tasks.xml"))


def test_escape_is_printable_and_keeps_printable_text() -> None:
    assert escape("Maria Chen ñ 患者") == "Maria Chen ñ 患者"
    assert escape("a\x1b[31m\u202e\n") == "a\\x1b[31m\\u202e\\n"
    assert escape("a\nb", keep="\n") == "a\nb"


@given(st.text())
def test_escape_output_is_printable_xml_text(text: str) -> None:
    out = escape(text)
    assert out.isprintable()
    xml = ET.tostring(ET.Element("a", b=out), encoding="unicode").encode("utf-8", "strict")
    assert ET.fromstring(xml).get("b") == out


# -- numbers ---------------------------------------------------------------------------------

NOT_NUMBERS = [
    "٤٢",  # Arabic-Indic
    "۴۲",  # Extended Arabic-Indic
    "４２",  # full-width
    "४२",  # Devanagari
    "4²",  # superscript
    "1_000",
    "0x2A",
    "nan",
    "NaN",
    "inf",
    "-Infinity",
    "Infinity",
    "4 2",
    "42\u00a0",  # non-ASCII padding
    "",
    "1e999",
]


@pytest.mark.parametrize("text", NOT_NUMBERS)
@pytest.mark.parametrize("op", ["equals", "gt", "gte", "lt", "lte", "approx", "in"])
def test_non_ascii_or_odd_number_text_is_not_a_number(text: str, op: str) -> None:
    expected: Any = {"gt": 0, "gte": 0, "lt": 10**6, "lte": 10**6}.get(op, 42)
    if op == "in":
        expected = [42, 1000, 0]
    spec = FieldSpec(path="x", expected=expected, op=op, tolerance=None if op != "approx" else 1e9)
    assert compare(spec, text) is False
    assert as_number(text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (" 42 ", 42),
        ("+42", 42),
        ("4.2e1", 42.0),
        ("042", 42),
        ("-0.5", -0.5),
        (".5", 0.5),
        ("271.10", 271.1),
    ],
)
def test_plain_ascii_number_forms_are_numbers(text: str, value: float) -> None:
    assert values_equal(value, text)
    assert compare(FieldSpec(path="x", expected=value - 1, op="gt"), text)


def test_big_integers_compare_exactly_without_crashing() -> None:
    big = 10**400
    assert values_equal(big, str(big))
    assert not values_equal(big, str(big + 1))
    assert compare(FieldSpec(path="x", expected=1.5, op="gt"), big)
    assert compare(FieldSpec(path="x", expected=big, op="approx"), big)
    assert as_number("9" * 5000) is None


@given(
    st.text(alphabet=st.characters(categories=["Nd"]), min_size=1).filter(lambda s: not s.isascii())
)
def test_any_non_ascii_decimal_digits_are_not_numbers(text: str) -> None:
    assert as_number(text) is None
    assert not values_equal(int("".join(str(int(c)) for c in text)), text)


def test_portal_row_with_arabic_digits_does_not_match_a_number(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "b",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        portal_criterion(
                            "units",
                            "requests",
                            "id",
                            7,
                            [{"path": "units", "expected": 42, "op": "gte"}],
                        )
                    ],
                }
            ]
        },
    )
    project.sandbox(
        "t", {"portal/requests.json": [{"id": "٧", "units": 50}, {"id": "7", "units": "٤٢"}]}
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert "'٤٢'" in result.stdout.str() or "\\u0664" in result.stdout.str()


@pytest.mark.parametrize("text", ["٢٠٢٤", "٢٠٢٤-٠١-٠٥", "２０２４-01-05"])
def test_dates_in_other_scripts_digits_are_not_dates(text: str) -> None:
    assert not compare(FieldSpec(path="x", expected="2000-01-01", op="gt"), text)
    from pytest_verial.fhir._values import date_range  # private: FHIR's date parser

    assert date_range(text) is None


@settings(deadline=None)  # the first example builds the check registry
@given(st.text(min_size=1, max_size=12), st.sampled_from(WHERE))
def test_any_id_loads_or_gives_printable_one_line_problems(text: str, where: str) -> None:
    """Whatever an id holds, the loader never crashes and never shows a character raw."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "b.verial.json"
        path.write_text(json.dumps(_bad_id_benchmark(where, text)), "utf-8", errors="surrogatepass")
        try:
            load_benchmark(path, builtin_registry())
        except BenchmarkFileError as exc:
            for problem in exc.problems:
                assert str(problem).isprintable(), repr(str(problem))
        else:
            assert unsafe_id_char(text) is None


# -- control characters: each format's cell escaping (the surfaces: test_core_control_chars)


@pytest.mark.parametrize(
    "text",
    [HOSTILE, "see https://a.example", "WWW.Example.org", "x\r\ny", "a|b`c`[d](e)", "\u202e"],
)
def test_markdown_cells_and_the_sanitizer(text: str) -> None:
    for out in (cell(text), sanitize(text, markdown=True), sanitize(text, keep="\n"), _e(text)):
        assert bad_characters(out) == []
    assert LINKS.findall(cell(text)) == [] and LINKS.findall(unlink(text)) == []
    # nothing else changes: the break is an entity a page shows as nothing
    plain = "https://a www.b c@d.org mailto:e"
    assert unlink(plain).replace("&#8203;", "") == plain
