"""JSON Schema (draft 2020-12) of a whole benchmark file, for editors and CI.

Generated from the loader's own models (``Benchmark``, ``Task``, ``Criterion``) and from each
registered check's pydantic spec model, all in one ``$defs`` table so every ``$ref`` resolves.
A criterion whose ``assert`` names a known check must match that check's fields exactly; any
other ``assert`` is accepted (Verial scores an unsupported assertion 0 at run time).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from pydantic.json_schema import models_json_schema

from ._models import Benchmark, Task
from .checks import default_registry
from .checks._registry import CheckRegistry

DRAFT = "https://json-schema.org/draft/2020-12/schema"


class ConftestError(Exception):
    """A ``conftest.py`` raised while it was imported; the message names it, in one line."""


def conftest_registry(rootdir: Path, conftests: list[Path] | None = None) -> CheckRegistry:
    """The built-in checks plus those registered by the ``conftest.py`` files pytest would
    load under ``rootdir`` (never in a virtual environment, ``.git``, ``node_modules``, a build
    folder or the ini file's ``norecursedirs``: :mod:`pytest_verial._walk`), or by
    ``conftests`` when given.

    Each conftest is imported and its ``pytest_verial_checks()`` called, as pytest would.
    """
    from ._walk import Project

    if conftests is None:
        conftests = Project.of([rootdir]).conftests([rootdir])
    registry = default_registry()
    for index, path in enumerate(conftests):
        name = f"_verial_conftest_{index}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.parent))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a conftest's own error: its file named, one line
            raise ConftestError(f"{path}: failed to load: {exc!r}") from None
        finally:
            sys.path.remove(str(path.parent))
        hook = getattr(module, "pytest_verial_checks", None)
        for check in (hook() if callable(hook) else None) or []:
            if check.name not in registry:
                registry.register(check)
    return registry


def benchmark_schema(registry: CheckRegistry | None = None) -> dict[str, Any]:
    """The schema of a benchmark file: a benchmark, a list of tasks, or one task."""
    registry = registry if registry is not None else default_registry()
    specs = list(registry)
    models: list[Any] = [(Benchmark, "validation"), (Task, "validation")]
    models += [(spec.model, "validation") for spec in specs]
    keys, top = models_json_schema(models, ref_template="#/$defs/{model}", by_alias=True)
    defs: dict[str, Any] = top.get("$defs", {})
    branches: list[dict[str, Any]] = []
    for spec in specs:
        ref = keys[(spec.model, "validation")]["$ref"]
        branches.append(
            {
                "if": {
                    "properties": {"assert": {"const": spec.name}},
                    "required": ["assert"],
                },
                "then": {"$ref": ref},
            }
        )
    defs["Assertion"] = {
        "title": "Assertion",
        "description": "A criterion's typed assertion, tagged by its `assert` key.",
        "type": "object",
        "properties": {
            "assert": {
                "type": "string",
                "minLength": 1,
                "description": "the check; known: " + ", ".join(s.name for s in specs),
            }
        },
        "required": ["assert"],
        "allOf": branches,
    }
    criterion = defs.get("Criterion")
    if criterion is not None:
        criterion["properties"]["assertion"] = {"$ref": "#/$defs/Assertion"}
    task_ref = keys[(Task, "validation")]["$ref"]
    return {
        "$schema": DRAFT,
        "$id": "https://github.com/verial/pytest-verial/benchmark.schema.json",
        "title": "pytest-verial benchmark file",
        "description": "A benchmark (with `tasks`), a list of tasks, or one task.",
        "anyOf": [
            {"$ref": keys[(Benchmark, "validation")]["$ref"]},
            {"type": "array", "items": {"$ref": task_ref}},
            {"$ref": task_ref},
        ],
        "$defs": defs,
    }


def criteria_schema(registry: CheckRegistry | None = None) -> dict[str, Any]:
    """Schema of one criterion's ``assertion`` object (with its ``$defs``, so refs resolve)."""
    full = benchmark_schema(registry)
    return {
        "$schema": DRAFT,
        "title": "pytest-verial assertion",
        "description": "The `assertion` object of a criterion, tagged by its `assert` key.",
        "$ref": "#/$defs/Assertion",
        "$defs": full["$defs"],
    }
