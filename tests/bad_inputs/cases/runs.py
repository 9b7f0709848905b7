"""Run folders, symbolic links out of a task folder, and bad run.yaml values (issue 9).

A run folder holding no sandbox for any selected task run is a usage error; a task run whose
folder alone is missing is an error; a link anywhere under a task folder that leads out of it
is refused by every source; run.yaml settings with bad values or format strings are one line
naming the file and key. Links are made by a ``conftest.py`` in the case's folder when it is
loaded (the case format writes files only), so those cases run in sessions of their own.
"""

from __future__ import annotations

import json

from bad_input_case import Case

OUTPUT = "{assert: output-length, min_chars: 1}"
ASSERTIONS = {
    "output": OUTPUT,
    "voice": "{assert: voice-transcript, contains: [hi]}",
    "portal": "{assert: portal-state-match, correlate_by: {resource: claims}, "
    "assertions: [{path: id, expected: '1'}]}",
    "files": "{assert: sftp-file-present, pattern: '**'}",
    "fhir": "{assert: fhir-resource-state, resource_type: Patient, fields: []}",
    "fhir-baseline": "{assert: fhir-resource-state, resource_type: Patient, fields: [], "
    "changed_since_baseline: true}",
    "hl7": "{assert: hl7-structural, fields: [{path: MSH.9, expected: ADT^A01}]}",
    "x12": "{assert: x12-response, transaction: '271'}",
}


def benchmark(*tasks: str, assertion: str = OUTPUT, entities: str = "") -> str:
    """A benchmark whose tasks each have one criterion ``c``."""
    bound = f"\n  entities: [{entities}]" if entities else ""
    return "tasks:\n" + "".join(
        f"- id: {t}{bound}\n  criteria:\n  - id: c\n    assertion: {assertion}\n" for t in tasks
    )


def _usage(case_id: str, says: str, files: dict[str, str], *args: str) -> Case:
    return Case(id=case_id, kind="run-folder", files=files, says=says, where="usage", args=args)


# -- links: a conftest makes <link> under sandbox/t point at outside/<target> ------------------

LINKER = """\
import os
from pathlib import Path

here = Path(__file__).resolve().parent
link = here / "sandbox" / "t" / {link!r}
link.parent.mkdir(parents=True, exist_ok=True)
try:  # both xdist workers of a -n 2 session import this conftest
    os.symlink(here / "outside" / {target!r}, link)
except FileExistsError:
    pass
"""
OUTSIDE = {
    "outside/secret.json": json.dumps({"resourceType": "Patient", "id": "p", "password": "x"}),
    "outside/dir/a.json": "{}",
    "outside/dir/p.json": json.dumps({"resourceType": "Patient", "id": "p"}),
    "outside/dir/m.hl7": "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\r",
    "outside/dir/r.x12": "ISA*00*",
    "outside/dir/events.jsonl": "",
    "outside/dir/turns.json": "[]",
    "outside/dir/claims.json": "[]",
}


def _link(case_id: str, source: str, link: str, target: str, **extra: str) -> Case:
    return Case(
        id=case_id,
        kind="symlink",
        files={
            "b.verial.yaml": benchmark("t", assertion=ASSERTIONS[source]),
            "sandbox/t/.keep": "",
            "conftest.py": LINKER.format(link=link, target=target),
            **OUTSIDE,
            **{k.replace("__", "/").replace("_json", ".json"): v for k, v in extra.items()},
        },
        says="outside the task folder",
        # the criterion's own run says so on one line (the case shares its module's session:
        # its conftest makes the link in its own folder when pytest collects that folder)
        criterion="t::c",
    )


def _setting(case_id: str, source: str, run_yaml: str, says: str) -> Case:
    return Case(
        id=case_id,
        kind="run.yaml",
        files={
            "b.verial.yaml": benchmark("t", assertion=ASSERTIONS[source]),
            "sandbox/t/.keep": "",
            "sandbox/run.yaml": run_yaml,
        },
        says=says,
        criterion="t::c",
    )


def _top_level(case_id: str, run_yaml: str, says: str) -> Case:
    return Case(
        id=case_id,
        kind="run.yaml",
        files={
            "b.verial.yaml": benchmark("t"),
            "sandbox/t/.keep": "",
            "sandbox/run.yaml": run_yaml,
        },
        says=says,
        where="collect",
    )


TWELVE = [f"t{i:02}" for i in range(12)]

CASES: list[Case] = [
    # -- run folders scored against nothing: usage errors before anything runs ---------------
    _usage(
        "run-is-the-parent-of-the-runs",
        "holds none of its task folders; expected task folders t/",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/.keep": "", "runs/r1/t/.keep": ""},
        "--verial-run",
        "runs",
    ),
    _usage(
        "run-is-an-empty-folder",
        "holds none of its task folders; expected task folders t/",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/.keep": "", "empty/.keep": ""},
        "--verial-run",
        "empty",
    ),
    _usage(
        "run-is-a-task-folder",
        "holds none of its task folders",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/output.md": "hi"},
        "--verial-run",
        "sandbox/t",
    ),
    _usage(
        "run-holds-other-tasks-only",
        "expected task folders t/",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/.keep": "", "runs/r/other/output.md": "hi"},
        "--verial-run",
        "runs/r",
    ),
    _usage(
        "run-holds-only-run-yaml",
        "expected task folders t/",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/.keep": "", "runs/r/run.yaml": "agent: x"},
        "--verial-run",
        "runs/r",
    ),
    _usage(
        "run-task-folder-is-a-file",
        "holds none of its task folders",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/.keep": "", "runs/r/t": "not a folder"},
        "--verial-run",
        "runs/r",
    ),
    _usage(
        "run-many-tasks-listed-briefly",
        "t00/, t01/, t02/, t03/, t04/ ... and 7 more",
        {"b.verial.yaml": benchmark(*TWELVE), "sandbox/other/.keep": "", "empty/.keep": ""},
        "--verial-run",
        "empty",
    ),
    _usage(
        "run-empty-under-xdist",
        "holds none of its task folders",
        {"b.verial.yaml": benchmark("t"), "sandbox/t/.keep": "", "empty/.keep": ""},
        "--verial-run",
        "empty",
        "-n",
        "2",
    ),
    _usage(
        "run-selection-has-no-folder",
        "expected task folders u/",
        {"b.verial.yaml": benchmark("t", "u"), "sandbox/t/output.md": "hi"},
        "b.verial.yaml::u",
    ),
    _usage(
        "run-entity-folders-missing",
        "expected task folders t[e1]/, t[e2]/",
        {"b.verial.yaml": benchmark("t", entities="{id: e1}, {id: e2}"), "sandbox/t/.keep": ""},
    ),
    _usage(
        "run-default-sandbox-has-none",
        "(the default sandbox/ beside it) holds none of its task folders",
        {"b.verial.yaml": benchmark("t"), "sandbox/not-t/.keep": ""},
    ),
    # -- some task folders missing: those task runs are errors ---------------------------------
    Case(
        id="run-one-task-folder-missing",
        kind="run-folder",
        files={"b.verial.yaml": benchmark("t", "u"), "sandbox/t/output.md": "hi"},
        says="no sandbox folder for task run 'u'",
        criterion="u::c",
    ),
    Case(
        id="run-one-entity-folder-missing",
        kind="run-folder",
        files={
            "b.verial.yaml": benchmark("t", entities="{id: e1}, {id: e2}"),
            "sandbox/t[e1]/output.md": "hi",
        },
        says="no sandbox folder for task run 't[e2]'",
        criterion="t[e2]::c",
    ),
    Case(
        id="run-two-files-share-a-task-folder",
        kind="run-folder",
        files={
            "a.verial.yaml": benchmark("t"),
            "b.verial.yaml": benchmark("t"),
            "sandbox/t/.keep": "",
        },
        says="reads the same sandbox folder",
        where="output",
    ),
    # -- links out of the task folder, for every source ----------------------------------------
    _link("link-output-file", "output", "output.md", "secret.json"),
    _link("link-voice-file", "voice", "voice/turns.json", "secret.json"),
    _link("link-voice-folder", "voice", "voice", "dir"),
    _link("link-portal-json", "portal", "portal/claims.json", "secret.json"),
    _link("link-portal-folder", "portal", "portal", "dir"),
    _link("link-portal-sqlite", "portal", "portal.sqlite", "secret.json"),
    _link("link-sftp-file", "files", "sftp/a.json", "secret.json"),
    _link("link-sftp-folder", "files", "sftp", "dir"),
    _link("link-sftp-nested-folder", "files", "sftp/in/deeper", "dir"),
    _link("link-fhir-file", "fhir", "fhir/p.json", "secret.json"),
    _link("link-fhir-folder", "fhir", "fhir", "dir"),
    _link(
        "link-fhir-baseline-folder",
        "fhir-baseline",
        "fhir-baseline",
        "dir",
        sandbox__t__fhir__p_json=json.dumps({"resourceType": "Patient", "id": "p"}),
    ),
    _link("link-hl7-file", "hl7", "hl7_outbound/m.hl7", "dir/m.hl7"),
    _link("link-hl7-nested-folder", "hl7", "hl7_outbound/old", "dir"),
    _link("link-hl7-events-export", "hl7", "events.jsonl", "dir/events.jsonl"),
    _link("link-x12-file", "x12", "x12/r.x12", "dir/r.x12"),
    _link("link-x12-folder", "x12", "x12", "dir"),
    # -- run.yaml source settings: one line naming the file and key ----------------------------
    _setting(
        "files-timeout-not-a-number",
        "files",
        "sources: {files: {timeout: soon}}",
        "sources.files.timeout: expected a number > 0, got 'soon'",
    ),
    Case(  # run.yaml's own parser refuses NaN before any setting is read
        id="files-timeout-nan",
        kind="run.yaml",
        where="collect",
        files={
            "b.verial.yaml": benchmark("t", assertion=ASSERTIONS["files"]),
            "sandbox/t/.keep": "",
            "sandbox/run.yaml": "sources: {files: {timeout: .nan}}",
        },
        says="run.yaml: field 'sources.files.timeout': the non-finite number nan is not accepted",
    ),
    _setting(
        "files-page-size-fraction",
        "files",
        "sources: {files: {page_size: 2.5}}",
        "sources.files.page_size: expected a whole number > 0, got 2.5",
    ),
    _setting(
        "files-max-read-bytes-bool",
        "files",
        "sources: {files: {max_read_bytes: true}}",
        "sources.files.max_read_bytes: expected a whole number > 0, got True",
    ),
    # an unknown key of any source is refused when run.yaml is read, before anything runs
    _top_level(
        "files-unknown-key", "sources: {files: {colour: red}}", "sources.files.colour: unknown key"
    ),
    _setting(
        "files-prefix-attribute",
        "files",
        "sources: {files: {bucket: b, prefix: '{task_key.__class__}'}}",
        "unknown placeholder {task_key.__class__}",
    ),
    _setting(
        "files-prefix-index",
        "files",
        "sources: {files: {bucket: b, prefix: '{task_key[0]}'}}",
        "unknown placeholder {task_key[0]}",
    ),
    _setting(
        "files-prefix-positional",
        "files",
        "sources: {files: {bucket: b, prefix: '{}'}}",
        "sources.files.prefix: unknown placeholder {}",
    ),
    _setting(
        "files-prefix-stray-brace",
        "files",
        "sources: {files: {bucket: b, prefix: 'a}'}}",
        "sources.files.prefix: unbalanced brace",
    ),
    _setting(
        "portal-url-not-text",
        "portal",
        "sources: {portal: {database_url: 5}}",
        "sources.portal.database_url: expected text, got 5",
    ),
    # an unknown key of any source is refused when run.yaml is read, before anything runs
    _top_level(
        "portal-unknown-key", "sources: {portal: {dsn: x}}", "sources.portal.dsn: unknown key"
    ),
    _setting(
        "hl7-events-format-string",
        "hl7",
        "sources: {hl7: {events: '{task.__dict__}.jsonl'}}",
        "sources.hl7.events: unknown placeholder {task.__dict__}",
    ),
    _setting(
        "x12-records-not-text",
        "x12",
        "sources: {x12: {records: [a]}}",
        "sources.x12.records: expected text",
    ),
    # -- run.yaml top-level fields --------------------------------------------------------------
    _top_level("run-yaml-negative-cost", "tasks: {t: {cost: -1}}", "field 'tasks.t.cost'"),
    _top_level("run-yaml-scored-maybe", "scored: maybe", "field 'scored'"),
    _top_level(
        "voice-takes-no-settings",
        "sources: {voice: {events: x}}",
        "sources.voice.events: unknown key; known: none: voice is read from the task folder",
    ),
    _top_level(
        "judge-unknown-key",
        "sources: {judge: {modle: gpt-4o}}",
        "sources.judge.modle: unknown key (did you mean 'model'?)",
    ),
    _top_level(
        "hl7-unknown-key",
        "sources: {hl7: {event: a.jsonl}}",
        "sources.hl7.event: unknown key (did you mean 'events'?); known: events",
    ),
    _top_level("run-yaml-not-a-mapping", "- a\n- b\n", "expected a mapping at the top level"),
]
