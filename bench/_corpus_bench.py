"""A benchmark over the real third-party corpus (``../shared/corpus/``) and the suite's own HL7 and
X12 corpora, for :mod:`outputs_equal`'s ``--corpus``: the files are copied into a temporary run
folder (never into the project), each one a task whose criteria pass, fail or cannot be
evaluated on it, so both sides of a comparison score real data through every outcome.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "corpus"
SUITE = {"hl7": ROOT / "tests" / "hl7" / "corpus", "x12": ROOT / "tests" / "x12" / "corpus"}


def _files(*folders: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(
        p
        for f in folders
        if f.is_dir()
        for p in f.iterdir()
        if p.is_file() and p.suffix in suffixes
    )


def _msh_type(path: Path) -> str | None:
    """MSH-9.1 read crudely from the file (the criterion's own parser is what is compared)."""
    text = path.read_bytes().decode("utf-8", "replace").lstrip("\ufeff\x0b")
    for line in text.replace("\r\n", "\r").replace("\n", "\r").split("\r"):
        if line.startswith("MSH") and len(line) > 4:
            fields = line.split(line[3])
            if len(fields) > 8:
                return fields[8].split(line[4:5] or "^")[0] or None
    return None


def _hl7_task(n: int, path: Path) -> tuple[dict[str, Any], str]:
    kind = _msh_type(path)
    correlate = {"MSH.9.1": kind} if kind else {}
    criteria = [
        {
            "id": "message-found",
            "axis": "correctness",
            "assertion": {
                "assert": "hl7-structural",
                "correlate_by": correlate,
                "fields": [{"path": "MSH.9.1", "op": "exists"}, {"path": "MSH.12", "op": "exists"}],
            },
        },
        {
            "id": "patient-named",
            "weight": 2,
            "axis": "completeness",
            "assertion": {
                "assert": "hl7-structural",
                "correlate_by": correlate,
                "match": "any",
                "fields": [{"path": "PID.5.1", "expected": "NOBODY"}],
            },
        },
    ]
    return {"id": f"hl7-{n:02d}", "name": path.name, "criteria": criteria}, "hl7_outbound"


def _x12_task(n: int, path: Path) -> tuple[dict[str, Any], str]:
    criteria = [
        {
            "id": "transaction-found",
            "axis": "correctness",
            "assertion": {"assert": "x12-response", "fields": [{"path": "ST01", "op": "exists"}]},
        },
        {
            "id": "validated",
            "axis": "safety",
            "assertion": {
                "assert": "x12-response",
                "validate": True,
                "fields": [{"path": "ST02", "expected": "0000"}],
            },
        },
    ]
    return {"id": f"x12-{n:02d}", "name": path.name, "criteria": criteria}, "x12"


def _fhir_tasks() -> list[tuple[dict[str, Any], list[Path]]]:
    synthea = _files(SHARED / "fhir" / "synthea-10-patients", suffixes=(".ndjson",))
    examples = _files(SHARED / "fhir" / "r4-examples", suffixes=(".json",))
    state = {"assert": "fhir-resource-state"}
    tasks = []
    if synthea:
        patients = [
            json.loads(line)
            for line in (SHARED / "fhir" / "synthea-10-patients" / "Patient.000.ndjson")
            .read_text(encoding="utf-8")
            .splitlines()
            if line.strip()
        ]
        first = patients[0]["id"]
        criteria = [
            {
                "id": "ten-patients",
                "axis": "correctness",
                "assertion": {**state, "resource_type": "Patient", "count": len(patients)},
            },
            {
                "id": "conditions",
                "axis": "completeness",
                "assertion": {
                    **state,
                    "resource_type": "Condition",
                    "search": {"patient": f"Patient/{first}"},
                    "match": "any",
                    "fields": [{"path": "code.coding.0.system", "op": "exists"}],
                },
            },
            {
                "id": "wrong-gender",
                "weight": 2,
                "axis": "safety",
                "assertion": {
                    **state,
                    "resource_type": "Patient",
                    "search": {"_id": first},
                    "fields": [{"path": "gender", "expected": "unknown"}],
                },
            },
            {
                "id": "fhirpath",
                "axis": "correctness",
                "assertion": {
                    **state,
                    "resource_type": "Observation",
                    "match": "all",
                    "fields": [{"path": "status", "expected": "final"}],
                },
            },
        ]
        tasks.append(({"id": "fhir-synthea", "name": "Synthea", "criteria": criteria}, synthea))
    if examples:
        criteria = [
            {
                "id": "pat1",
                "axis": "correctness",
                "assertion": {
                    **state,
                    "resource_type": "Patient",
                    "search": {"_id": "pat1"},
                    "fields": [{"path": "gender", "expected": "male"}],
                },
            },
            {
                "id": "bundle-observations",
                "axis": "completeness",
                "assertion": {
                    **state,
                    "resource_type": "Observation",
                    "count": {"op": "gte", "expected": 1},
                },
            },
            {
                "id": "no-such-type",
                "axis": "safety",
                "assertion": {**state, "resource_type": "Claim", "count": 0},
            },
        ]
        tasks.append(
            ({"id": "fhir-r4-examples", "name": "R4 examples", "criteria": criteria}, examples)
        )
    return tasks


def build(folder: Path) -> tuple[Path, Path] | None:
    """Writes ``corpus.verial.json`` and a run folder into ``folder``; None without the corpus."""
    if not SHARED.is_dir():
        return None
    run = folder / "corpus-run"
    run.mkdir(parents=True)
    (run / "run.yaml").write_text(
        "id: br-corpus\nagent: corpus\nexecutor_model: none/none\n"
        "started_at: '2026-11-28T00:00:00Z'\nscored: false\n",
        encoding="utf-8",
    )
    tasks = []
    hl7 = _files(
        SHARED / "hl7v2", SUITE["hl7"] / "valid", SUITE["hl7"] / "malformed", suffixes=(".hl7",)
    )
    x12 = _files(
        SHARED / "x12",
        SUITE["x12"] / "valid",
        SUITE["x12"] / "malformed",
        suffixes=(".x12", ".txt", ".edi"),
    )
    made = [_hl7_task(n, p) + ([p],) for n, p in enumerate(hl7)]
    made += [_x12_task(n, p) + ([p],) for n, p in enumerate(x12)]
    made += [(task, "fhir", files) for task, files in _fhir_tasks()]
    for task, sub, files in made:
        target = run / task["id"] / sub
        target.mkdir(parents=True)
        for f in files:
            shutil.copyfile(f, target / f.name)
        task["task_item"] = {"instruction": f"Corpus sample {task['name']}"}
        tasks.append(task)
    bench = folder / "corpus.verial.json"
    bench.write_text(
        json.dumps({"benchmark": "corpus", "version": 1, "name": "Real corpus", "tasks": tasks}),
        encoding="utf-8",
    )
    return bench, run
