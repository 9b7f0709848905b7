"""Benchmark-level cross-task consistency criteria (PRD-103 §10).

::

    consistency:
      - id: pa-outputs-agree
        label: The PA letter and the PA summary agree
        tasks: [verify-pa-letter, verify-pa-summary]
        principles: [...]      # optional (defaults: no contradictions on shared facts)
        weight: 1              # optional, like any criterion; also axis, pass_threshold

Each entry becomes an ``output-consistency`` criterion of the *last* task it lists, comparing
that task's output with the others'. It therefore runs after that task's deterministic
criteria, is gated and bypassed like any judge criterion, and counts in that task's score.
"""

from __future__ import annotations

from typing import Any

_KEYS = {"id", "label", "tasks", "principles", "weight", "axis", "pass_threshold"}


def expand(root: Any) -> list[tuple[str, tuple[str | int, ...]]]:
    """Attach ``root["consistency"]`` entries to their anchor tasks, in place.

    Returns problems as (message, location) pairs for the loader to report.
    """
    entries = root.get("consistency") if isinstance(root, dict) else None
    if not entries:
        return []
    if not isinstance(entries, list):
        return [("expected a list of consistency criteria", ("consistency",))]
    tasks = {t.get("id"): t for t in root.get("tasks") or [] if isinstance(t, dict)}
    problems: list[tuple[str, tuple[str | int, ...]]] = []
    for i, entry in enumerate(entries):
        where: tuple[str | int, ...] = ("consistency", i)
        if not isinstance(entry, dict):
            problems.append(("expected a mapping with id and tasks", where))
            continue
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            problems.append(
                (
                    f"unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})",
                    where,
                )
            )
            continue
        ids = entry.get("tasks")
        if not isinstance(entry.get("id"), str) or not entry["id"]:
            problems.append(("a consistency criterion needs an 'id'", (*where, "id")))
            continue
        if not isinstance(ids, list) or len(ids) < 2 or not all(isinstance(t, str) for t in ids):
            problems.append(("'tasks' must list at least two task ids", (*where, "tasks")))
            continue
        missing = [t for t in ids if t not in tasks]
        if missing:
            problems.append((f"unknown task(s) {', '.join(missing)}", (*where, "tasks")))
            continue
        anchor = tasks[ids[-1]]
        assertion: dict[str, Any] = {"assert": "output-consistency", "tasks": ids[:-1]}
        for key in ("principles", "pass_threshold"):
            if key in entry:
                assertion[key] = entry[key]
        criterion: dict[str, Any] = {
            "id": entry["id"],
            "label": entry.get("label") or f"outputs of {', '.join(ids)} agree",
            "assertion": assertion,
        }
        for key in ("weight", "axis"):
            if key in entry:
                criterion[key] = entry[key]
        anchor.setdefault("criteria", [])
        if isinstance(anchor["criteria"], list):
            anchor["criteria"].append(criterion)
    return problems
