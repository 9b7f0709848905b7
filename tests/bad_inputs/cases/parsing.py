# ruff: noqa: E501 - a table of cases, one per line, reads better unwrapped
"""Hostile JSON/YAML and regexes in every format the plugin parses (issue 9, parsing).

Deep nesting (libyaml segfaults, ``json`` recurses), integers of thousands of digits, NaN and
Infinity, YAML alias bombs and cycles, patterns that backtrack without bound, remote ``$ref``s,
empty, truncated, binary and non-UTF-8 files. See ``src/pytest_verial/_safeparse.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from bad_input_case import Case

DEEP = 100_000
DEEP_LINE = "nested deeper than 200"
NAN = "NaN and Infinity are refused"
HUGE = "longer than 4,300 digits"
BOMB = "alias bomb"
KEEP = {"sandbox/t/.keep": ""}
#: a pattern that backtracks without bound on a long run of x with no y after it
REDOS = "(x+x+)+y"
REDOS_TEXT = "x" * 5_000


def _deep_list() -> str:
    return "[" * DEEP + "]" * DEEP


def _deep_object() -> str:
    return '{"a":' * DEEP + "1" + "}" * DEEP


def _bomb() -> str:
    """Billion laughs: 9 levels of 9 aliases each (387,420,489 leaves once expanded)."""
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def _bench(criterion_yaml: str) -> str:
    """A benchmark with task ``t`` and criterion ``c`` whose ``assertion`` is given (flow)."""
    return f"tasks:\n  - id: t\n    criteria:\n      - id: c\n        assertion: {criterion_yaml}\n"


def _bench_with(value: str) -> Callable[[], str]:
    """A benchmark whose criterion holds ``value`` (YAML text) under an extra key."""
    return lambda: (
        "tasks:\n  - id: t\n    criteria:\n      - id: c\n"
        "        assertion: {assert: voice-transcript, contains: [hi]}\n"
        f"        metadata: {value}\n"
    )


def _collect(cid: str, files: dict[str, object], says: str) -> Case:
    return Case(cid, "benchmark", {**files, **KEEP}, says, where="collect")  # type: ignore[arg-type]


def _crit(cid: str, kind: str, assertion: str, sandbox: dict[str, object], says: str) -> Case:
    files = {"b.verial.yaml": _bench(assertion)}
    files.update({f"sandbox/t/{k}": v for k, v in sandbox.items()})  # type: ignore[misc]
    return Case(cid, kind, files, says, criterion="t::c")  # type: ignore[arg-type]


def _run_yaml(cid: str, content: object, says: str) -> Case:
    files = {
        "b.verial.yaml": _bench("{assert: voice-transcript, contains: [hi]}"),
        "sandbox/run.yaml": content,
        "sandbox/t/voice/turns.json": '[{"speaker": "agent", "text": "hi"}]',
    }
    return Case(cid, "run.yaml", files, says, where="collect")  # type: ignore[arg-type]


def _json_row(value: str) -> str:
    return '{"id": "r1", "status": "ok", "extra": ' + value + "}"


VOICE = "{assert: voice-transcript, contains: [hello]}"
PORTAL = (
    "{assert: portal-state-match, correlate_by: {resource: orders, key: id, value: r1},"
    " assertions: [{path: status, expected: ok}]}"
)
PORTAL_REGEX = (
    "{assert: portal-state-match, correlate_by: {resource: orders, key: id, value: r1},"
    f" assertions: [{{path: note, op: regex, expected: '{REDOS}'}}]}}"
)
FHIR = "{assert: fhir-resource-state, resource_type: Patient, search: {}, fields: []}"
X12 = "{assert: x12-response, transaction: '271'}"
HL7 = "{assert: hl7-structural, correlate_by: {}}"
SFTP_JSON = "{assert: sftp-file-present, pattern: 'out/*.json', parse: json, fields: [{path: a, expected: 1}]}"
SFTP_NDJSON = "{assert: sftp-file-present, pattern: 'out/*.ndjson', parse: ndjson, fields: [{path: 0.a, expected: 1}]}"
SFTP_REGEX = f"{{assert: sftp-file-present, pattern: 'out/*.txt', regex: '{REDOS}'}}"
OUT_JSON = "{assert: output-format, format: json}"
OUT_YAML = "{assert: output-format, format: yaml}"
OUT_SCHEMA = "{assert: output-json-schema, schema: {type: object}}"
OUT_REGEX = f"{{assert: output-match, regex: ['{REDOS}']}}"
OUT_FIELD_REGEX = (
    f"{{assert: output-match, fields: [{{path: note, op: regex, expected: '{REDOS}'}}]}}"
)


CASES: list[Case] = [
    # -- benchmark files: YAML ---------------------------------------------------------------
    _collect(
        "parse-bench-yaml-deep-flow", {"b.verial.yaml": lambda: "tasks: " + "[" * DEEP}, DEEP_LINE
    ),
    _collect(
        "parse-bench-yaml-deep-block",
        {
            "b.verial.yaml": lambda: (
                "".join(" " * i + "a:\n" for i in range(3000)) + " " * 3000 + "1\n"
            )
        },
        DEEP_LINE,
    ),
    _collect(
        "parse-bench-yaml-deep-dashes", {"b.verial.yaml": lambda: "- " * 5000 + "x\n"}, DEEP_LINE
    ),
    _collect(
        "parse-bench-yaml-deep-map", {"b.verial.yaml": lambda: "tasks: " + "{a: " * DEEP}, DEEP_LINE
    ),
    _collect(
        "parse-bench-yaml-alias-bomb", {"b.verial.yaml": lambda: _bomb() + "tasks: []\n"}, BOMB
    ),
    _collect(
        "parse-bench-yaml-alias-cycle",
        {"b.verial.yaml": "x: &a [*a]\ntasks: []\n"},
        "recursive node",
    ),
    _collect("parse-bench-yaml-int-5000", {"b.verial.yaml": _bench_with("1" + "0" * 5000)}, HUGE),
    _collect("parse-bench-yaml-int-4301", {"b.verial.yaml": _bench_with("9" * 4301)}, HUGE),
    _collect("parse-bench-yaml-nan", {"b.verial.yaml": _bench_with(".nan")}, NAN),
    _collect("parse-bench-yaml-inf", {"b.verial.yaml": _bench_with("-.inf")}, NAN),
    _collect(
        "parse-bench-yaml-bad-date",
        {"b.verial.yaml": _bench_with("2026-13-45")},
        "month must be in 1..12",
    ),
    _collect(
        "parse-bench-yaml-truncated",
        {"b.verial.yaml": "tasks:\n  - id: t\n    criteria: [\n"},
        "invalid YAML",
    ),
    # -- benchmark files: JSON ---------------------------------------------------------------
    _collect(
        "parse-bench-json-deep-list",
        {"b.verial.json": lambda: '{"tasks": ' + _deep_list() + "}"},
        DEEP_LINE,
    ),
    _collect("parse-bench-json-deep-object", {"b.verial.json": _deep_object}, DEEP_LINE),
    _collect("parse-bench-json-nan", {"b.verial.json": '{"tasks": [], "x": NaN}'}, NAN),
    _collect("parse-bench-json-infinity", {"b.verial.json": '{"tasks": [], "x": -Infinity}'}, NAN),
    _collect(
        "parse-bench-json-1e999", {"b.verial.json": '{"tasks": [], "x": 1e999}'}, "out of range"
    ),
    _collect(
        "parse-bench-json-int-5000",
        {"b.verial.json": lambda: '{"tasks": [], "x": ' + "7" * 5000 + "}"},
        HUGE,
    ),
    _collect(
        "parse-bench-json-brackets-in-strings-then-deep",
        {
            "b.verial.json": lambda: (
                '{"s": "' + "]" * 300 + '", "tasks": ' + "[" * 300 + "]" * 300 + "}"
            )
        },
        DEEP_LINE,
    ),
    # -- remote $ref in output-json-schema ---------------------------------------------------
    _collect(
        "parse-schema-remote-ref",
        {
            "b.verial.yaml": _bench(
                "{assert: output-json-schema, schema: {properties: {a: {$ref: 'http://127.0.0.1:9/s.json'}}}}"
            )
        },
        "remote references are not fetched",
    ),
    _collect(
        "parse-schema-relative-ref",
        {"b.verial.yaml": _bench("{assert: output-json-schema, schema: {$ref: 'other.json#/x'}}")},
        "remote references are not fetched",
    ),
    # -- run.yaml ----------------------------------------------------------------------------
    _run_yaml("parse-run-yaml-deep", lambda: "sources: " + "[" * DEEP, DEEP_LINE),
    _run_yaml("parse-run-yaml-alias-bomb", lambda: _bomb(), BOMB),
    _run_yaml("parse-run-yaml-int-5000", lambda: "x: " + "5" * 5000 + "\n", HUGE),
    _run_yaml("parse-run-yaml-non-utf8", b"scored: false\nx: \xff\xfe\n", "not UTF-8"),
    # -- FHIR snapshot -----------------------------------------------------------------------
    _crit("parse-fhir-ndjson-deep", "fhir", FHIR, {"fhir/Patient.ndjson": _deep_list}, DEEP_LINE),
    _crit("parse-fhir-json-deep", "fhir", FHIR, {"fhir/bundle.json": _deep_object}, DEEP_LINE),
    _crit(
        "parse-fhir-nan",
        "fhir",
        FHIR,
        {
            "fhir/p.json": '{"resourceType": "Observation", "id": "o", "valueQuantity": {"value": NaN}}'
        },
        NAN,
    ),
    _crit(
        "parse-fhir-int-5000",
        "fhir",
        FHIR,
        {
            "fhir/p.ndjson": lambda: (
                '{"resourceType": "Patient", "id": "p", "x": ' + "3" * 5000 + "}\n"
            )
        },
        HUGE,
    ),
    # -- portal ------------------------------------------------------------------------------
    _crit(
        "parse-portal-json-deep", "portal", PORTAL, {"portal/orders.json": _deep_list}, DEEP_LINE
    ),
    _crit(
        "parse-portal-jsonl-nan",
        "portal",
        PORTAL,
        {"portal/orders.jsonl": _json_row("Infinity") + "\n"},
        NAN,
    ),
    _crit(
        "parse-portal-json-int",
        "portal",
        PORTAL,
        {"portal/orders.json": lambda: "[" + _json_row("1" * 4400) + "]"},
        HUGE,
    ),
    _crit(
        "parse-portal-regex-redos",
        "portal",
        PORTAL_REGEX,
        {"portal/orders.json": json.dumps([{"id": "r1", "note": REDOS_TEXT}])},
        "timed out after 2 s",
    ),
    # -- voice -------------------------------------------------------------------------------
    _crit("parse-voice-turns-deep", "voice", VOICE, {"voice/turns.json": _deep_object}, DEEP_LINE),
    _crit(
        "parse-voice-turns-jsonl-nan",
        "voice",
        VOICE,
        {"voice/turns.jsonl": '{"speaker": "agent", "text": "hello", "started_at": NaN}\n'},
        NAN,
    ),
    # -- X12 records -------------------------------------------------------------------------
    _crit(
        "parse-x12-records-deep",
        "x12",
        X12,
        {"x12/records.jsonl": lambda: _deep_list() + "\n"},
        DEEP_LINE,
    ),
    _crit(
        "parse-x12-records-int",
        "x12",
        X12,
        {"x12/records.jsonl": lambda: '{"transaction": "271", "n": ' + "2" * 5000 + "}\n"},
        HUGE,
    ),
    # -- HL7 events --------------------------------------------------------------------------
    _crit(
        "parse-hl7-events-deep",
        "hl7",
        HL7,
        {"hl7_outbound/events.jsonl": lambda: _deep_object() + "\n"},
        DEEP_LINE,
    ),
    _crit(
        "parse-hl7-events-nan",
        "hl7",
        HL7,
        {"events.jsonl": '{"type": "hl7_outbound", "payload": "MSH", "n": NaN}\n'},
        NAN,
    ),
    # -- the agent's output ------------------------------------------------------------------
    _crit("parse-output-json-deep", "output", OUT_JSON, {"output.json": _deep_list}, DEEP_LINE),
    _crit("parse-output-json-nan", "output", OUT_SCHEMA, {"output.json": '{"score": NaN}'}, NAN),
    _crit(
        "parse-output-json-int",
        "output",
        OUT_SCHEMA,
        {"output.json": lambda: '{"n": ' + "8" * 5000 + "}"},
        HUGE,
    ),
    _crit(
        "parse-output-yaml-deep",
        "output",
        OUT_YAML,
        {"output.md": lambda: "a: " + "[" * DEEP},
        DEEP_LINE,
    ),
    _crit("parse-output-yaml-alias-bomb", "output", OUT_YAML, {"output.md": _bomb}, BOMB),
    _crit(
        "parse-output-yaml-cycle",
        "output",
        OUT_YAML,
        {"output.md": "a: &a {b: *a}\n"},
        "containing itself",
    ),
    _crit(
        "parse-output-regex-redos",
        "output",
        OUT_REGEX,
        {"output.md": REDOS_TEXT},
        "timed out after 2 s",
    ),
    _crit(
        "parse-output-field-regex-redos",
        "output",
        OUT_FIELD_REGEX,
        {"output.json": json.dumps({"note": REDOS_TEXT})},
        "timed out after 2 s",
    ),
    # -- files on SFTP -----------------------------------------------------------------------
    _crit("parse-sftp-json-deep", "files", SFTP_JSON, {"sftp/out/a.json": _deep_object}, DEEP_LINE),
    _crit(
        "parse-sftp-ndjson-nan", "files", SFTP_NDJSON, {"sftp/out/a.ndjson": '{"a": NaN}\n'}, NAN
    ),
    _crit(
        "parse-sftp-json-int",
        "files",
        SFTP_JSON,
        {"sftp/out/a.json": lambda: '{"a": ' + "4" * 5000 + "}"},
        HUGE,
    ),
    _crit(
        "parse-sftp-regex-redos",
        "files",
        SFTP_REGEX,
        {"sftp/out/a.txt": REDOS_TEXT},
        "timed out after 2 s",
    ),
    _crit(
        "parse-sftp-glob-backtracking",
        "files",
        "{assert: sftp-file-present, pattern: 'out/" + "*a" * 12 + "b'}",
        {"sftp/out/" + "a" * 200: "x"},
        "0 files matching",
    ),
    # -- empty, truncated, binary and non-UTF-8 files ---------------------------------------
    _crit(
        "parse-hl7-zero-byte-file",
        "hl7",
        HL7,
        {"hl7_outbound/a.hl7": b""},
        "a.hl7: empty (0 bytes): no message in it",
    ),
    _crit(
        "parse-hl7-bytes-outside-frames",
        "hl7",
        "{assert: hl7-structural, correlate_by: {MSH.9.1: ORU}}",
        {
            "hl7_outbound/a.hl7": b"MSH|^~\\&|A|B|C|D|20260101||ORU^R01|1|P|2.5\r\x0b"
            + b"MSH|^~\\&|A|B|C|D|20260101||ADT^A01|2|P|2.5\r\x1c\r"
        },
        "characters outside MLLP frames (before frame 1) ignored",
    ),
    _crit(
        "parse-x12-zero-byte-file", "x12", X12, {"x12/a.x12": b""}, "a.x12: empty file (0 bytes)"
    ),
    _crit(
        "parse-fhir-zero-byte-json",
        "fhir",
        FHIR,
        {"fhir/p.json": b""},
        "p.json: empty file (0 bytes)",
    ),
    _crit(
        "parse-voice-zero-byte-turns",
        "voice",
        VOICE,
        {"voice/turns.json": b""},
        "turns.json: empty file (0 bytes)",
    ),
    _crit(
        "parse-portal-blank-json",
        "portal",
        PORTAL,
        {"portal/orders.json": " \n\n"},
        "empty file (only blank space)",
    ),
    _crit(
        "parse-voice-turns-non-utf8",
        "voice",
        VOICE,
        {"voice/turns.json": b'[{"speaker": "agent", "text": "h\xe9llo"}]'},
        "not UTF-8 text",
    ),
    _crit(
        "parse-portal-json-binary",
        "portal",
        PORTAL,
        {"portal/orders.json": b"\x00\x01\x02PK\x03\x04"},
        "binary data where text was expected",
    ),
    _crit(
        "parse-fhir-truncated-ndjson",
        "fhir",
        FHIR,
        {"fhir/p.ndjson": '{"resourceType": "Patient", "id": "p"}\n{"resourceType": "Pat'},
        "p.ndjson:2: invalid JSON",
    ),
    _crit(
        "parse-output-json-truncated",
        "output",
        OUT_SCHEMA,
        {"output.json": '{"a": [1, 2'},
        "invalid JSON at line 1",
    ),
    _crit("parse-output-json-bom-nan", "output", OUT_SCHEMA, {"output.json": "\ufeff[NaN]"}, NAN),
    # -- impossible numbers in criteria ------------------------------------------------------
    _collect(
        "parse-negative-fhir-count",
        {
            "b.verial.yaml": _bench(
                "{assert: fhir-resource-state, resource_type: Patient, count: -1}"
            )
        },
        "count of resources cannot be negative",
    ),
    _collect(
        "parse-negative-count-spec",
        {
            "b.verial.yaml": _bench(
                "{assert: fhir-resource-state, resource_type: Patient, count: {op: gte, expected: -1}}"
            )
        },
        "greater than or equal to 0",
    ),
    _collect(
        "parse-negative-min-words",
        {"b.verial.yaml": _bench("{assert: output-length, min_words: -1}")},
        "greater than or equal to 0",
    ),
    _collect(
        "parse-negative-tolerance",
        {
            "b.verial.yaml": _bench(
                "{assert: output-match, fields: [{path: a, op: approx, expected: 1, tolerance: -0.1}]}"
            )
        },
        "greater than or equal to 0",
    ),
    _collect(
        "parse-negative-max-count",
        {"b.verial.yaml": _bench("{assert: sftp-file-present, pattern: '*.csv', max_count: -2}")},
        "greater than or equal to 0",
    ),
    Case(
        "parse-run-yaml-negative-fhir-pages",
        "run.yaml",
        {
            "b.verial.yaml": _bench(FHIR),
            "sandbox/run.yaml": "sources:\n  fhir:\n    base_url: http://127.0.0.1:9/\n    max_pages: -1\n",
            "sandbox/t/.keep": "",
        },
        "sources.fhir.max_pages: expected a whole number >= 1, got -1",
        criterion="t::c",
    ),
    # -- more of the same classes in other formats --------------------------------------------
    _collect(
        "parse-bench-yaml-bom-deep",
        {"b.verial.yaml": lambda: "\ufeff" + "tasks: " + "[" * DEEP},
        DEEP_LINE,
    ),
    _collect(
        "parse-bench-invalid-regex",
        {"b.verial.yaml": _bench("{assert: output-match, regex: ['(unclosed']}")},
        "invalid regex",
    ),
    _crit(
        "parse-output-yaml-int",
        "output",
        OUT_YAML,
        {"output.md": lambda: "a: " + "6" * 5000 + "\n"},
        HUGE,
    ),
    _crit(
        "parse-output-json-neg-infinity",
        "output",
        OUT_JSON,
        {"output.json": '{"a": -Infinity}'},
        NAN,
    ),
    _crit(
        "parse-fhir-ndjson-1e999",
        "fhir",
        FHIR,
        {"fhir/o.ndjson": '{"resourceType": "Observation", "id": "o", "valueDecimal": 1e999}\n'},
        "out of range",
    ),
    _crit(
        "parse-voice-turns-int",
        "voice",
        VOICE,
        {
            "voice/turns.json": lambda: (
                '[{"speaker": "agent", "text": "hello", "n": ' + "1" * 5000 + "}]"
            )
        },
        HUGE,
    ),
    _crit(
        "parse-sftp-ndjson-deep",
        "files",
        SFTP_NDJSON,
        {"sftp/out/a.ndjson": lambda: _deep_list() + "\n"},
        DEEP_LINE,
    ),
    _crit(
        "parse-x12-records-nan",
        "x12",
        X12,
        {"x12/records.jsonl": '{"transaction": "271", "response": "ISA", "n": NaN}\n'},
        NAN,
    ),
    _crit(
        "parse-hl7-events-1e999",
        "hl7",
        HL7,
        {"hl7_outbound/events.jsonl": '{"type": "hl7_outbound", "payload": "MSH", "n": -1e999}\n'},
        "out of range",
    ),
]
