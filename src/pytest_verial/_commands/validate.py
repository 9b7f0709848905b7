"""``verial validate``: what pytest will say about benchmark files, before a run.

Exit codes: 0 every file loads (warnings allowed: an unknown check type is one, as pytest
warns of it; with ``--strict`` it is an error, as ``--verial-strict`` makes it one for pytest);
1 a file has errors, a guard failed
(``--run``: a task has no sandbox folder; ``--oracle``: a task scores below 1.0), or
``--baseline`` found criteria that pass on the baseline sandbox; 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ``verial``'s parser imports this module for every command: keep it light
    from .._loader import BenchmarkPlan
    from .._walk import Project

EPILOG = """exit codes: 0 all files load (warnings allowed: an unknown assert is one unless
--strict); 1 a file has errors, or a guard failed (--run: missing sandbox folder; --baseline: a
criterion passes before the agent acts; --oracle: a task scores below 1.0); 2 usage error"""


def configure(p: argparse.ArgumentParser) -> None:
    """The options of ``verial validate``."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("paths", nargs="+", help="benchmark files or directories")
    p.add_argument(
        "--rootdir",
        metavar="DIR",
        help="load the conftest checks under DIR (default: those pytest loads for PATHS)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="an assert no check knows is an error (exit 1), as --verial-strict makes it a "
        "collection error; without it, a warning",
    )
    p.add_argument("--run", metavar="DIR", help="check every task has a sandbox folder in DIR")
    p.add_argument(
        "--baseline",
        metavar="DIR",
        help="score on the pristine sandboxes in DIR (or 'empty' for empty ones) and list "
        "criteria that already pass",
    )
    p.add_argument("--oracle", metavar="DIR", help="require every task to score 1.0 on DIR")


def _looks_like_benchmark(path: Path) -> bool:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    tasks = data.get("tasks") if isinstance(data, dict) else data
    items = tasks if isinstance(tasks, list) else [data]
    return any(isinstance(t, dict) and "criteria" in t for t in items)


def _files(paths: list[str], project: Project) -> tuple[list[Path], list[str]]:
    """The benchmark files pytest would collect from ``paths`` (skipping what it skips), and
    warnings for files that look like benchmarks under another name."""
    from .._loader import is_benchmark_file

    files: list[Path] = []
    warnings: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            files.append(path)
            continue
        for p in project.walk(path):
            if is_benchmark_file(p):
                files.append(p)
            elif p.suffix in (".yaml", ".yml", ".json") and _looks_like_benchmark(p):
                warnings.append(
                    f"{p}: warning: looks like a benchmark but is not named *.verial.*: "
                    "pytest will not collect it"
                )
    return files, warnings


def _warnings(path: Path, plan: BenchmarkPlan) -> list[str]:
    return [
        f"{path}: task {task.key}: warning: no criteria (it always scores 0)"
        for task in plan.tasks
        if not task.criteria
    ]


def _run_time_errors(path: Path, plan: BenchmarkPlan) -> list[str]:
    """What every run of these criteria would error on, found now: an unknown FHIR resource
    type or search parameter, a FHIRPath that does not compile. (HL7 and X12 path syntax is
    already refused by the loader.)"""
    from .._errors import CheckError
    from ..checks._fhir import _PLAIN, fhirpath_indexes
    from ..fhir._fhirpath import compiled
    from ..fhir._query import build_query

    out: list[str] = []
    for task in plan.tasks:
        for c in task.criteria:
            if c.assert_name != "fhir-resource-state" or c.spec is None:
                continue
            spec: Any = c.spec
            where = f"{path}: task {task.key}: criterion {c.id}"
            try:
                build_query(spec.resource_type, dict(spec.search))
            except CheckError as exc:
                out.append(f"{where}: field 'assertion.search': {exc}")
            for n, field in enumerate(spec.fields):
                if field.syntax == "dotted" or (
                    field.syntax == "auto" and _PLAIN.fullmatch(field.path)
                ):
                    continue
                try:
                    compiled(fhirpath_indexes(field.path))
                except CheckError as exc:
                    out.append(f"{where}: field 'assertion.fields[{n}].path': {exc}")
    return out


def _score(plan: BenchmarkPlan, sandbox_root: Path) -> list[tuple[str, Any]]:
    from .._inline import verify_task

    out = []
    for task in plan.tasks:
        box = sandbox_root / task.key
        if sandbox_root.name == "empty-sandboxes":
            box.mkdir(parents=True, exist_ok=True)
        out.append((task.key, verify_task(task, box)))
    return out


def run(args: argparse.Namespace) -> int:
    """Validate every file, then apply the guards asked for."""
    from .._errors import BenchmarkFileError
    from .._loader import load_benchmark, unknown_checks
    from .._schema import ConftestError, conftest_registry
    from .._walk import Project

    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:  # before any conftest is loaded: a typo is not a third party's import error
        print(f"verial validate: {missing[0]}: no such path", file=sys.stderr)
        return 2
    for option in ("run", "oracle", "baseline", "rootdir"):
        value = getattr(args, option)
        if value and value != "empty" and not Path(value).is_dir():
            print(f"--{option}: {value} is not a directory")
            return 2
    project = Project.of([Path(p) for p in args.paths])
    files, messages = _files(args.paths, project)
    for line in messages:
        print(line)
    if not files:
        print("no benchmark files found")
        return 1
    if args.rootdir:
        conftests = Project.of([Path(args.rootdir)]).conftests([Path(args.rootdir)])
    else:  # the ones pytest loads collecting these paths, once for all files
        conftests = project.conftests([Path(p) for p in args.paths])
    try:
        registry = conftest_registry(project.rootdir, conftests)
    except ConftestError as exc:  # a broken conftest is bad input: one line naming it
        print(str(exc).splitlines()[0])
        return 1
    bad = 0
    for path in files:
        try:
            plan = load_benchmark(path, registry)
        except BenchmarkFileError as exc:
            bad += 1
            for problem in exc.problems:
                print(problem)
            continue
        for line in _warnings(path, plan):
            print(line)
        unknown = [text for _, text in unknown_checks(str(path), plan, registry)]
        if not args.strict:  # a warning, as pytest says it: the criterion runs and fails
            for line in unknown:
                print(line.replace(": field 'assertion.assert': ", ": warning: ", 1))
            unknown = []
        errors = unknown + _run_time_errors(path, plan)
        for line in errors:
            print(line)
        if errors:
            bad += 1
            continue
        count = len(plan.tasks)
        print(f"{path}: ok, {count} task run{'' if count == 1 else 's'}")
        bad += _guards(args, path, plan)
    return 1 if bad else 0


def _guards(args: argparse.Namespace, path: Path, plan: BenchmarkPlan) -> int:
    bad = 0
    if args.run:
        for task in plan.tasks:
            if not (Path(args.run) / task.key).is_dir():
                bad += 1
                print(f"{path}: task {task.key}: no sandbox folder in {args.run} (--run)")
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            root = (
                Path(tmp) / "empty-sandboxes" if args.baseline == "empty" else Path(args.baseline)
            )
            for key, result in _score(plan, root):
                for cr in result.criterion_runs:
                    if cr["status"] == "passed":
                        bad += 1
                        print(
                            f"{path}: task {key}: criterion {cr['criterion_id']}: passes on the "
                            f"baseline sandbox (score {cr['score']}): it rewards doing nothing"
                        )
    if args.oracle:
        for key, result in _score(plan, Path(args.oracle)):
            if result.score < 1.0:
                bad += 1
                print(f"{path}: task {key}: scores {result.score} on the oracle rollout (--oracle)")
    return bad
