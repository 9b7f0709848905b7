"""Bad inputs of the display area (issue 9): unsafe characters in ids, slugs, axes, tags, file
and directory names; control characters, bidi overrides and bad UTF-8 in sandbox data; numbers
written with other scripts' digits or in odd forms."""

from __future__ import annotations

import json
from typing import Any

from bad_input_case import Case

KEEP = {"sandbox/t/.keep": ""}
NO_OUTPUT = "the agent wrote no output"


def _bench(tasks: list[dict[str, Any]], **top: Any) -> str:
    return json.dumps({"benchmark": "b", **top, "tasks": tasks})


def _crit(cid: str = "c", **extra: Any) -> dict[str, Any]:
    return {"id": cid, "assertion": {"assert": "output-length", "min_words": 5}, **extra}


def _task(tid: str = "t", **extra: Any) -> dict[str, Any]:
    return {"id": tid, "criteria": [_crit()], **extra}


def _id_case(case_id: str, says: str, **where: Any) -> Case:
    """A benchmark whose task, criterion, entity, slug, axis or tag holds a bad character."""
    task = _task(where.get("task", "t"))
    if "criterion" in where:
        task["criteria"] = [_crit(where["criterion"])]
    if "axis" in where:
        task["criteria"] = [_crit(axis=where["axis"])]
    if "tag" in where:
        task["tags"] = ["fine", where["tag"]]
    if "entity" in where:
        task["entities"] = [{"id": where["entity"]}]
    top: dict[str, Any] = {}
    if "named_entity" in where:
        top["entities"] = {where["named_entity"]: {"n": 1}}
        task["entities"] = [where["named_entity"]]
    if "slug" in where:
        top["benchmark"] = where["slug"]
    if "version" in where:
        top["version"] = where["version"]
    return Case(
        case_id, "benchmark", {"b.verial.json": _bench([task], **top), **KEEP}, says, "collect"
    )


ID_CASES = [
    _id_case("id-task-ansi", "a task id contains U+001B ESCAPE", task="t\x1b[31mred"),
    _id_case("id-task-rlo", "a task id contains U+202E RIGHT-TO-LEFT OVERRIDE", task="t\u202eab"),
    _id_case("id-task-zwsp", "a task id contains U+200B ZERO WIDTH SPACE", task="t\u200b"),
    _id_case("id-task-newline", "a task id contains U+000A LINE FEED", task="t\nFAKE PASSED"),
    _id_case("id-task-tab", "a task id contains U+0009 TAB", task="t\t1"),
    _id_case("id-task-at", "a task id contains '@'", task="t@run2"),
    _id_case("id-task-nbsp", "U+00A0 NO-BREAK SPACE (a space other than U+0020)", task="t\xa01"),
    _id_case("id-task-surrogate", "U+DC80 (a lone surrogate", task="t\udc80"),
    _id_case("id-task-long-zero-width", "U+200D ZERO WIDTH JOINER", task="t" + "\u200d" * 10000),
    _id_case(
        "id-crit-lri",
        "a criterion id contains U+2066 LEFT-TO-RIGHT ISOLATE",
        criterion="c\u2066x\u2069",
    ),
    _id_case(
        "id-crit-bom",
        "a criterion id contains U+FEFF ZERO WIDTH NO-BREAK SPACE",
        criterion="\ufeffc",
    ),
    _id_case("id-crit-nul", "a criterion id contains U+0000 NULL", criterion="c\x00"),
    _id_case("id-crit-del", "a criterion id contains U+007F DELETE", criterion="c\x7f"),
    _id_case(
        "id-crit-c1", "a criterion id contains U+0085 (a control character)", criterion="c\x85"
    ),
    _id_case(
        "id-crit-line-sep", "a criterion id contains U+2028 LINE SEPARATOR", criterion="c\u2028d"
    ),
    _id_case(
        "id-crit-word-joiner", "a criterion id contains U+2060 WORD JOINER", criterion="c\u2060d"
    ),
    _id_case(
        "id-crit-carriage-return",
        "a criterion id contains U+000D CARRIAGE RETURN",
        criterion="ok\rFAKE",
    ),
    _id_case("id-crit-slash", "a criterion id contains '/'", criterion="a/b"),
    _id_case("id-crit-bracket", "a criterion id contains '['", criterion="c[1]"),
    _id_case("id-crit-at", "a criterion id contains '@'", criterion="c@2"),
    _id_case("id-entity-zwj", "an entity id contains U+200D ZERO WIDTH JOINER", entity="e\u200dx"),
    _id_case("id-entity-colons", "an entity id contains '::'", entity="e::x"),
    _id_case(
        "id-named-entity-ansi",
        "an entity id contains U+001B ESCAPE",
        named_entity="p\x1b]0;title\x07",
    ),
    _id_case("id-slug-at", "the benchmark slug contains '@'", slug="prior-auth@2"),
    _id_case("id-slug-rlo", "the benchmark slug contains U+202E", slug="b\u202e"),
    _id_case(
        "id-version-newline", "the benchmark version contains U+000A LINE FEED", version="1\n2"
    ),
    _id_case("id-axis-ansi", "an axis contains U+001B ESCAPE", axis="safety\x1b[0m"),
    _id_case("id-tag-para-sep", "a tag contains U+2029 PARAGRAPH SEPARATOR", tag="a\u2029b"),
    _id_case(
        "id-tag-tag-char", "a tag contains U+E0041 TAG LATIN CAPITAL LETTER A", tag="a\U000e0041"
    ),
]

NAME_CASES = [
    Case(
        "name-benchmark-file-ansi",
        "benchmark",
        {"b\x1b[31m.verial.json": _bench([_task()]), **KEEP},
        "the benchmark file's path contains U+001B ESCAPE",
        "collect",
    ),
    Case(
        "name-benchmark-dir-newline",
        "benchmark",
        {"sub\ndir/b.verial.json": _bench([_task()]), "sub\ndir/sandbox/t/.keep": "", **KEEP},
        "the benchmark file's path contains U+000A LINE FEED",
        "collect",
    ),
    Case(
        "name-run-dir-ansi",
        "run.yaml",
        {"b.verial.json": _bench([_task()]), "r\x1bx/t/.keep": "", **KEEP},
        "the run directory name 'r\\x1bx' contains U+001B ESCAPE",
        "usage",
        args=("--verial-run", "r\x1bx"),
    ),
    Case(
        "name-run-dir-at",
        "run.yaml",
        {"b.verial.json": _bench([_task()]), "r@1/t/.keep": "", "r2/t/.keep": "", **KEEP},
        "the run directory name 'r@1' contains '@'",
        "usage",
        args=("--verial-run", "r@1", "--verial-run", "r2"),
    ),
]

MARKER_CASES = [
    Case(
        "marker-tag-skip",
        "benchmark",
        {"b.verial.json": _bench([_task(tags=["skip", "xfail", "_private"])]), **KEEP},
        NO_OUTPUT,
        criterion="t::c",
    ),
    Case(
        "marker-axis-xfail",
        "benchmark",
        {"b.verial.json": _bench([{"id": "t", "criteria": [_crit(axis="xfail")]}]), **KEEP},
        NO_OUTPUT,
        criterion="t::c",
    ),
]


def _portal(value: Any, expected: Any, op: str = "equals") -> dict[str, str]:
    crit = {
        "id": "p",
        "assertion": {
            "assert": "portal-state-match",
            "correlate_by": {"resource": "requests", "key": "id", "value": "7"},
            "assertions": [{"path": "v", "expected": expected, "op": op}],
        },
    }
    rows = json.dumps([{"id": "7", "v": value}])
    return {
        "b.verial.json": _bench([{"id": "t", "criteria": [crit]}]),
        "sandbox/t/portal/requests.json": rows,
    }


ROW_FAILED = "0 of 1 assertions passed"

NUMBER_CASES = [
    Case("number-arabic-indic", "portal", _portal("٤٢", 42, "gte"), ROW_FAILED, criterion="t::p"),
    Case("number-extended-arabic", "portal", _portal("۴۲", 42), ROW_FAILED, criterion="t::p"),
    Case("number-full-width", "portal", _portal("４２", 42), ROW_FAILED, criterion="t::p"),
    Case("number-devanagari", "portal", _portal("४२", 100, "lte"), ROW_FAILED, criterion="t::p"),
    Case("number-superscript", "portal", _portal("4²", 0, "gt"), ROW_FAILED, criterion="t::p"),
    Case("number-underscore", "portal", _portal("1_000", 1000), ROW_FAILED, criterion="t::p"),
    Case("number-hex", "portal", _portal("0x2A", 42), ROW_FAILED, criterion="t::p"),
    Case("number-nan-text", "portal", _portal("nan", 0, "gt"), ROW_FAILED, criterion="t::p"),
    Case(
        "number-infinity-text",
        "portal",
        _portal("Infinity", 1e308, "gte"),
        ROW_FAILED,
        criterion="t::p",
    ),
    Case("number-overflow-text", "portal", _portal("1e999", 1, "gt"), ROW_FAILED, criterion="t::p"),
    Case(
        "number-approx-arabic",
        "portal",
        _portal("٣٫١٤", 3.14, "approx"),
        ROW_FAILED,
        criterion="t::p",
    ),
    Case(
        "number-huge-int-approx",
        "portal",
        {
            **_portal(1, 0, "approx"),
            "sandbox/t/portal/requests.json": lambda: '[{"id": "7", "v": ' + "9" * 4000 + "}]",
        },
        ROW_FAILED,
        criterion="t::p",
    ),
]


def _sftp(names: dict[str, str | bytes], parse: str = "json") -> dict[str, Any]:
    crit = {
        "id": "f",
        "assertion": {
            "assert": "sftp-file-present",
            "pattern": "out/*",
            "parse": parse,
            "fields": [{"path": "x", "expected": 1}],
        },
    }
    files: dict[str, Any] = {"b.verial.json": _bench([{"id": "t", "criteria": [crit]}])}
    files.update({f"sandbox/t/sftp/out/{name}": data for name, data in names.items()})
    return files


DATA_CASES = [
    Case(
        "data-sftp-name-ansi-bidi",
        "files",
        _sftp({"a\x1b[31m\u202ex.json": ""}),
        "a\\x1b[31m\\u202ex.json",
        criterion="t::f",
    ),
    Case(
        "data-sftp-name-newline",
        "files",
        _sftp({"b\nFAKE PASSED.json": "{"}),
        "b\\nFAKE PASSED.json",
        criterion="t::f",
    ),
    Case(
        "data-sftp-name-invalid-utf8",
        "files",
        _sftp({"bad\udcff.json": "["}),
        "bad\\udcff.json",
        criterion="t::f",
    ),
    Case(
        "data-portal-value-ansi",
        "portal",
        _portal("\x1b[32mPASSED\x1b[0m\u202e\x00", "ok"),
        ROW_FAILED,
        criterion="t::p",
    ),
    Case(
        "data-output-ansi",
        "output",
        {
            "b.verial.json": _bench(
                [
                    {
                        "id": "t",
                        "criteria": [
                            {
                                "id": "o",
                                "assertion": {"assert": "output-match", "contains": ["approved"]},
                            }
                        ],
                    }
                ]
            ),
            "sandbox/t/output.md": "\x1b[2J\x1b[H\u202edevorppa\x07\u2028\x1b]8;;http://x\x07",
        },
        "0 of 1",
        criterion="t::o",
    ),
    Case(
        "data-fhir-bidi-string",
        "fhir",
        {
            "b.verial.json": _bench(
                [
                    {
                        "id": "t",
                        "criteria": [
                            {
                                "id": "h",
                                "assertion": {
                                    "assert": "fhir-resource-state",
                                    "resource_type": "Patient",
                                    "fields": [{"path": "name.0.family", "expected": "Chen"}],
                                },
                            }
                        ],
                    }
                ]
            ),
            "sandbox/t/fhir/p.json": json.dumps(
                {"resourceType": "Patient", "id": "p1", "name": [{"family": "Ch\u202ene\x1b[8m"}]}
            ),
        },
        "0 of 1",
        criterion="t::h",
    ),
]

CASES: list[Case] = [*ID_CASES, *NAME_CASES, *MARKER_CASES, *NUMBER_CASES, *DATA_CASES]


def _one(crit: dict[str, Any]) -> str:
    return _bench([{"id": "t", "criteria": [crit]}])


def _x12_with_paid(paid: str) -> str:
    from tests.x12.x12_build import claims_835, interchange

    body = [s.replace("*120.00*25.00", f"*{paid}*25.00") for s in claims_835(1)]
    return interchange([("835", "005010X221A1", body)])


_X12_CRIT = {
    "id": "x",
    "assertion": {
        "assert": "x12-response",
        "transaction": "835",
        "fields": [{"path": "CLP04", "expected": 120}],
    },
}
_HL7 = (
    "MSH|^~\\&|A|B|C|D|20240101120000||ORU^R01|1|P|2.5\rPID|1||MRN1||{name}^MARIA\r"
    "OBX|1|NM|GLU||{value}|mg/dL\r"
)
_HL7_CRIT = {
    "id": "h",
    "assertion": {
        "assert": "hl7-structural",
        "correlate_by": {"message_type": "ORU"},
        "fields": [
            {"path": "PID.5.1", "expected": "CHEN"},
            {"path": "OBX.5", "expected": 40, "op": "gte"},
        ],
    },
}
_FHIR_OBS = json.dumps(
    {
        "resourceType": "Observation",
        "id": "o1",
        "status": "final",
        "code": {"text": "glucose"},
        "valueQuantity": {"value": 42, "unit": "mg/dL"},
    }
)

FORMAT_CASES = [
    Case(
        "x12-amount-arabic-indic",
        "x12",
        {"b.verial.json": _one(_X12_CRIT), "sandbox/t/x12/r.x12": _x12_with_paid("١٢٠.٠٠")},
        "0 of 1 fields passed",
        criterion="t::x",
    ),
    Case(
        "x12-amount-underscore",
        "x12",
        {"b.verial.json": _one(_X12_CRIT), "sandbox/t/x12/r.x12": _x12_with_paid("1_20")},
        "0 of 1 fields passed",
        criterion="t::x",
    ),
    Case(
        "hl7-file-name-newline-ansi-value",
        "hl7",
        {
            "b.verial.json": _one(_HL7_CRIT),
            "sandbox/t/hl7_outbound/a\nb\x1b.hl7": _HL7.format(name="CH\x1b[31mEN", value="42"),
        },
        "hl7_outbound/a\\nb\\x1b.hl7: binary data (byte 0x1b)",
        criterion="t::h",
    ),
    Case(
        "hl7-value-bidi-and-arabic-digits",
        "hl7",
        {
            "b.verial.json": _one(_HL7_CRIT),
            "sandbox/t/hl7_outbound/m\u202e.hl7": _HL7.format(name="CH\u202eEN", value="٤٢"),
        },
        "0 of 2 fields passed",
        criterion="t::h",
    ),
    Case(
        "fhir-search-number-arabic-indic",
        "fhir",
        {
            "b.verial.json": _one(
                {
                    "id": "q",
                    "assertion": {
                        "assert": "fhir-resource-state",
                        "resource_type": "Observation",
                        "search": {"value-quantity": "gt٤٠"},
                    },
                }
            ),
            "sandbox/t/fhir/o.json": _FHIR_OBS,
        },
        "invalid quantity search value",
        criterion="t::q",
    ),
    Case(
        "fhir-search-number-nan",
        "fhir",
        {
            "b.verial.json": _one(
                {
                    "id": "q",
                    "assertion": {
                        "assert": "fhir-resource-state",
                        "resource_type": "Observation",
                        "search": {"value-quantity": "gtNaN"},
                    },
                }
            ),
            "sandbox/t/fhir/o.json": _FHIR_OBS,
        },
        "invalid quantity search value",
        criterion="t::q",
    ),
]

CASES += FORMAT_CASES
