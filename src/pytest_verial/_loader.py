"""Benchmark files -> plans of task runs and criteria, with every problem reported at once.

A benchmark file is a benchmark (a mapping with ``tasks``), a list of tasks, or one task, in
YAML or JSON. :func:`load_benchmark` returns a :class:`BenchmarkPlan`: the benchmark, and one
:class:`TaskPlan` per task run (a task bound to entities gives one per entity) whose criteria
have their ``{entity.<field>}`` placeholders filled and their assertions validated against the
check registry. Any problem raises :class:`BenchmarkFileError` listing all of them with file,
line, task, criterion and field.

The controller under xdist calls it with ``registry=None``: ids, weights and axes only.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._contracts.check import AssertionSpec, CheckSpec
from ._display import describe_char, unsafe_char, unsafe_id_char
from ._errors import BenchmarkFileError, BenchmarkProblem
from ._models import Benchmark, Criterion, Entity, Task
from ._nodeids import task_key_of
from ._yamlsource import LineMap, ParseError, parse
from .checks import CheckRegistry

BENCHMARK_SUFFIXES = (".verial.yaml", ".verial.yml", ".verial.json")
_PLACEHOLDER = re.compile(r"\{entity(?:\.([^{}]*))?\}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class CriterionPlan:
    """One criterion of one task run, ready to run.

    Its validated assertion (:attr:`spec`) is not kept: the loader validates every assertion
    once at collection (so each bad one is reported there) and :attr:`spec` validates it again
    when a criterion runs. A session keeps a plan per criterion for its whole length, and the
    check models (nested pydantic models, a field set each) were most of what a plan held
    (BENCHMARKS.md, "issue 33, wave 6").
    """

    id: str
    criterion: Criterion
    assertion: dict[str, Any]  # placeholders filled
    check: CheckSpec | None  # None: unsupported assert, or loaded without a registry
    line: int | None = None
    #: position of the criterion in its task as written (reports keep this order)
    position: int = 0

    @property
    def spec(self) -> AssertionSpec | None:
        """The assertion validated by its check's model (a new one per call; None when the
        check is unknown). The loader refused the file if this could fail."""
        return None if self.check is None else self.check.model.model_validate(self.assertion)

    @property
    def assert_name(self) -> str:
        """The ``assert`` value."""
        return str(self.assertion.get("assert"))

    @property
    def judge(self) -> bool:
        """True for criteria that call the LLM judge (run last in their task)."""
        return bool(self.check and self.check.judge)


@dataclass(frozen=True, slots=True)
class TaskPlan:
    """One task run: a task, maybe bound to one entity, and its criteria."""

    key: str
    task: Task
    entity: Entity | None
    criteria: tuple[CriterionPlan, ...]
    line: int | None = None
    _deterministic: tuple[str, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def deterministic(self) -> tuple[str, ...]:
        """The ids of the criteria that call no judge, in order (every check's context has
        them): found once per task run, not once per criterion run (50 x 50 at 50 criteria)."""
        found = self._deterministic
        if found is None:
            found = tuple(c.id for c in self.criteria if not c.judge)
            object.__setattr__(self, "_deterministic", found)
        return found


@dataclass
class BenchmarkPlan:
    """A loaded benchmark file."""

    path: Path
    benchmark: Benchmark
    tasks: list[TaskPlan] = field(default_factory=list)
    #: loaded for a scored run: generated criterion ids are positional (:func:`_criterion_ids`)
    scored: bool = False
    #: SHA-256 of the file's text: the benchmark's identity in reports, shards and resumes
    sha256: str = ""

    @property
    def slug(self) -> str:
        """The benchmark slug (the file name when the file has none)."""
        return self.benchmark.benchmark or default_slug(self.path)


def is_benchmark_file(path: Path, extra_patterns: tuple[str, ...] = ()) -> bool:
    """True for ``*.verial.yaml|yml|json`` and for names matching an ini pattern."""
    name = path.name
    return name.endswith(BENCHMARK_SUFFIXES) or any(path.match(p) for p in extra_patterns)


def default_slug(path: Path) -> str:
    """``prior-auth.verial.yaml`` -> ``prior-auth``."""
    name = path.name
    for suffix in BENCHMARK_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def slugify(text: str) -> str:
    """A stable id from a label: lower case, words joined by dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80]


class _Reporter:
    """Collects problems with their location resolved from a pydantic ``loc``."""

    def __init__(self, file: str, root: Any, lines: LineMap, scored: bool = False) -> None:
        self.file, self.root, self.lines = file, root, lines
        self.scored = scored  # name criteria by id or position, never by label
        self.problems: list[BenchmarkProblem] = []

    def add(self, message: str, loc: tuple[str | int, ...] = (), field_: str | None = None) -> None:
        task = criterion = None
        rest: list[str | int] = []
        node: Any = self.root
        i = 0
        while i < len(loc):
            step = loc[i]
            if step == "tasks" and i + 1 < len(loc) and isinstance(loc[i + 1], int):
                node = _index(_get(node, "tasks"), loc[i + 1])
                task = _name_of(node, loc[i + 1])
                i += 2
                continue
            if step == "criteria" and i + 1 < len(loc) and isinstance(loc[i + 1], int):
                node = _index(_get(node, "criteria"), loc[i + 1])
                criterion = _name_of(node, loc[i + 1], label=not self.scored)
                i += 2
                continue
            rest = list(loc[i:])
            break
        if field_ is None:
            field_ = _dotted(rest) or None
        self.problems.append(
            BenchmarkProblem(
                self.file, message, self.lines.line_of(self.root, loc), task, criterion, field_
            )
        )


def _get(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, dict) else None


def _list(node: Any) -> list[Any]:
    """``node`` when it is a list, else empty (its type error is reported by validation)."""
    return node if isinstance(node, list) else []


def _index(node: Any, index: Any) -> Any:
    return (
        node[index]
        if isinstance(node, list) and isinstance(index, int) and index < len(node)
        else None
    )


def _name_of(node: Any, index: Any, label: bool = False) -> str:
    if isinstance(node, dict):
        if isinstance(node.get("id"), str):
            return str(node["id"])
        if label and isinstance(node.get("label"), str):
            return str(node["label"])
    return f"#{index + 1}" if isinstance(index, int) else str(index)


def _dotted(loc: list[str | int]) -> str:
    out = ""
    for step in loc:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _model_at(model: Any, path: Sequence[Any]) -> Any:
    """The model class that validates the object at ``path`` under ``model`` (list indexes
    and dict keys step through their container), or None when the path leaves the models."""
    for step in path:
        if isinstance(step, int):
            continue
        fields = getattr(model, "model_fields", None)
        if fields is None:
            return None
        by_name = {(f.alias or name): f for name, f in fields.items()} | dict(fields)
        field = by_name.get(step)
        if field is None:
            return None
        model = _first_model(field.annotation)
    return model


def _first_model(annotation: Any) -> Any:
    """The first pydantic model class inside a type (``list[X] | None`` -> X)."""
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return annotation
    for arg in typing.get_args(annotation):
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def _pydantic_message(error: Any, model: Any = None) -> str:
    if error["type"] == "extra_forbidden":
        hint = ""
        loc = list(error.get("loc") or ())
        owner = _model_at(model, loc[:-1]) if model is not None and loc else None
        if owner is not None and isinstance(loc[-1], str):
            names = [f.alias or name for name, f in owner.model_fields.items()]
            near = difflib.get_close_matches(loc[-1], names, n=1, cutoff=0.7)
            hint = f"; did you mean '{near[0]}'?" if near else ""
        return f"unknown field (not in the criterion format; check the spelling){hint}"
    if error["type"] == "missing":
        return "required field is missing"
    return str(error["msg"])


def read_benchmark_text(path: Path) -> tuple[str | None, BenchmarkProblem | None]:
    """The file's text, or the problem that makes it unreadable (binary, empty, encoding)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, BenchmarkProblem(str(path), f"cannot read file: {exc.strerror or exc}")
    if b"\x00" in raw[:8192]:
        return None, BenchmarkProblem(str(path), "binary file, not YAML or JSON text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, BenchmarkProblem(
            str(path), f"not UTF-8 text (invalid byte at offset {exc.start})"
        )
    return text, None


def load_benchmark(
    path: Path, registry: CheckRegistry | None, display: str | None = None, scored: bool = False
) -> BenchmarkPlan:
    """Load, validate and expand one benchmark file. Raises BenchmarkFileError.

    ``scored``: the file is scored on a scored run, where a label may quote an expected value,
    so criteria without an explicit id get positional ids and problems name criteria by
    position (:func:`_criterion_ids`).
    """
    name = display or str(path)
    text, problem = read_benchmark_text(path)
    if problem is not None:
        raise BenchmarkFileError([BenchmarkProblem(name, problem.message)])
    assert text is not None
    try:
        data, lines = parse(text, as_json=path.suffix == ".json")
    except ParseError as exc:
        if exc.loc is not None and exc.lines is not None:  # a refused value: name its field
            located = _Reporter(name, exc.root, exc.lines)
            located.add(str(exc), exc.loc)
            raise BenchmarkFileError(located.problems) from None
        raise BenchmarkFileError([BenchmarkProblem(name, str(exc), exc.line)]) from None
    if data is None:
        raise BenchmarkFileError(
            [
                BenchmarkProblem(
                    name, "file is empty: expected a benchmark, a list of tasks or a task"
                )
            ]
        )
    root, shape_problem = _as_benchmark(data)
    reporter = _Reporter(name, root, lines, scored)
    for line, key, holder in lines.duplicates:
        loc = _loc_of(root, holder)
        message = f"key {key!r} appears twice in one mapping (the last one would win)"
        if loc is None:
            reporter.problems.append(BenchmarkProblem(name, message, line))
        else:
            before = len(reporter.problems)
            reporter.add(message, (*loc, key))
            reporter.problems[before:] = [
                BenchmarkProblem(p.file, p.message, line, p.task, p.criterion, p.field)
                for p in reporter.problems[before:]
            ]
    if shape_problem:
        raise BenchmarkFileError(
            [BenchmarkProblem(name, shape_problem, lines.containers.get(id(data)))]
        )
    # Benchmark-level `consistency:` criteria join their anchor task (PRD-103 §10).
    from .judge._consistency import expand as expand_consistency

    for message, loc in expand_consistency(root):
        reporter.add(message, loc)
    _check_ids(root, reporter)
    try:
        benchmark = _share_field_sets(Benchmark.model_validate(root))
    except ValidationError as exc:
        for error in exc.errors():
            reporter.add(_pydantic_message(error, Benchmark), tuple(error["loc"]))
        benchmark = None
    # No "{entity" and no escape that could spell one: no criterion holds a placeholder, so
    # neither is searched for per criterion and each assertion is validated once, here.
    plain = "{entity" not in text and "\\" not in text
    valid = _validate_assertions(root, registry, reporter, plain) if registry is not None else {}
    if benchmark is None or reporter.problems:
        raise BenchmarkFileError(_dedupe(reporter.problems))
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    plan = BenchmarkPlan(path, benchmark, scored=scored, sha256=digest)
    _expand(plan, root, registry, reporter, scored, valid if plain else None)
    if reporter.problems:
        raise BenchmarkFileError(_dedupe(reporter.problems))
    return plan


def _share_field_sets(benchmark: Benchmark) -> Benchmark:
    """The benchmark, its criteria sharing one set of explicitly given field names per
    distinct set (pydantic makes one per model, 216 bytes: a plan keeps every criterion for
    the whole session). Criteria are frozen, so nothing adds to the set; a copy of one
    (``model_copy``) copies it first."""
    shared: dict[frozenset[str], set[str]] = {}
    for task in benchmark.tasks:
        for crit in task.criteria:
            names = crit.__pydantic_fields_set__
            one = shared.setdefault(frozenset(names), names)
            if one is not names:
                object.__setattr__(crit, "__pydantic_fields_set__", one)
    return benchmark


def _loc_of(
    root: Any, target: int, loc: tuple[str | int, ...] = ()
) -> tuple[str | int, ...] | None:
    """The path from ``root`` to the container whose ``id`` is ``target``."""
    if id(root) == target:
        return loc
    items: Any = (
        root.items()
        if isinstance(root, dict)
        else (enumerate(root) if isinstance(root, list) else ())
    )
    for key, value in items:
        if isinstance(value, (dict, list)):
            found = _loc_of(value, target, (*loc, key))
            if found is not None:
                return found
    return None


def _dedupe(problems: list[BenchmarkProblem]) -> list[BenchmarkProblem]:
    """Each problem once, in file order."""
    seen: dict[BenchmarkProblem, None] = {}
    for p in problems:
        seen.setdefault(p, None)
    return sorted(seen, key=lambda p: p.line or 0)


def _as_benchmark(data: Any) -> tuple[Any, str | None]:
    """Wrap a task list or a single task into a benchmark mapping."""
    if isinstance(data, list):
        return {"tasks": data}, None
    if isinstance(data, dict):
        if "tasks" in data:
            return data, None
        if "criteria" in data or "id" in data:
            return {"tasks": [data]}, None
        return data, "expected a benchmark (with 'tasks'), a list of tasks or a task (with 'id')"
    return data, f"expected a mapping or a list at the top level, found {type(data).__name__}"


def _validate_assertions(
    root: Any, registry: CheckRegistry, reporter: _Reporter, plain: bool = False
) -> dict[tuple[int, int], dict[str, Any]]:
    """Validate each known ``assert`` of the raw data (placeholders masked), all at once.
    ``plain``: the file holds no placeholder (nothing to mask); each assertion validated, by
    task and criterion position, needs no second validation then (the result is not kept:
    :attr:`CriterionPlan.spec`)."""
    valid: dict[tuple[int, int], dict[str, Any]] = {}
    for ti, task in enumerate(_list(_get(root, "tasks"))):
        for ci, crit in enumerate(_list(_get(task, "criteria"))):
            assertion = _get(crit, "assertion")
            if not isinstance(assertion, dict):
                continue
            check = registry.get(str(assertion.get("assert")))
            if check is None:
                continue
            try:
                check.model.model_validate(assertion if plain else _mask_placeholders(assertion))
            except ValidationError as exc:
                for error in exc.errors():
                    loc = ("tasks", ti, "criteria", ci, "assertion", *error["loc"])
                    reporter.add(_pydantic_message(error, check.model), loc)
            else:
                valid[ti, ci] = assertion
    return valid


def _mask_placeholders(value: Any) -> Any:
    """A copy where a string that is only a placeholder validates as a plausible value."""
    if isinstance(value, dict):
        return {k: _mask_placeholders(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_placeholders(v) for v in value]
    if isinstance(value, str) and _PLACEHOLDER.fullmatch(value):
        return "entity"
    return value


def _placeholders(value: Any) -> list[str | None]:
    found: list[str | None] = []
    if isinstance(value, dict):
        for v in value.values():
            found.extend(_placeholders(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(_placeholders(v))
    elif isinstance(value, str):
        found.extend(m.group(1) for m in _PLACEHOLDER.finditer(value))
    return found


def fill(value: Any, entity: Entity) -> Any:
    """Replace ``{entity.<field>}``; a string that is only a placeholder keeps the value's type."""
    fields = entity.fields()
    if isinstance(value, dict):
        return {k: fill(v, entity) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, entity) for v in value]
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return fields[str(whole.group(1))]
        return _PLACEHOLDER.sub(lambda m: str(fields[str(m.group(1))]), value)
    return value


def _expand(
    plan: BenchmarkPlan,
    root: Any,
    registry: CheckRegistry | None,
    reporter: _Reporter,
    scored: bool = False,
    valid: dict[tuple[int, int], dict[str, Any]] | None = None,
) -> None:
    """Resolve entities, give criteria ids, fill placeholders, build task runs. ``valid``: the
    file holds no placeholder and these are its assertions validated (by task and criterion
    position)."""
    for ti, task in enumerate(plan.benchmark.tasks):
        where: tuple[str | int, ...] = ("tasks", ti)
        entities = _entities(plan.benchmark, task, where, reporter)
        ids = _criterion_ids(task, scored)
        line = reporter.lines.line_of(root, where, need=False)
        for ci, crit in enumerate(task.criteria):
            cwhere = (*where, "criteria", ci)
            names = _placeholders(crit.assertion) if valid is None else []
            for name in names:
                if name is None or not _IDENT.fullmatch(name):
                    reporter.add(
                        f"malformed placeholder {{entity.{name or ''}}}: use {{entity.<field>}}",
                        (*cwhere, "assertion"),
                    )
                elif not entities:
                    reporter.add(
                        f"placeholder {{entity.{name}}} but the task has no entities",
                        (*cwhere, "assertion"),
                    )
                else:
                    missing = [e.id for e in entities if name not in e.fields()]
                    if missing:
                        reporter.add(
                            f"placeholder {{entity.{name}}}: entity {missing[0]!r} has no field "
                            f"{name!r} (fields: {', '.join(sorted(entities[0].fields()))})",
                            (*cwhere, "assertion"),
                        )
            if crit.input_entity_id and crit.input_entity_id not in {e.id for e in entities}:
                reporter.add(
                    f"input_entity_id {crit.input_entity_id!r} is not one of the task's entities",
                    (*cwhere, "input_entity_id"),
                )
        if reporter.problems:
            continue
        bindings: list[Entity | None] = list(entities) or [None]
        for entity in bindings:
            key = task_key_of(task.id, entity.id if entity else None)
            criteria = []
            for ci, crit in enumerate(task.criteria):
                if entity and crit.input_entity_id and crit.input_entity_id != entity.id:
                    continue
                assertion = fill(crit.assertion, entity) if entity else crit.assertion
                done = valid.get((ti, ci)) if valid is not None and not entity else None
                if done is not None and done == assertion and registry is not None:
                    check = registry.get(str(assertion.get("assert")))  # validated
                else:
                    check = _validated(assertion, registry, reporter, (*where, "criteria", ci))
                cline = reporter.lines.line_of(root, (*where, "criteria", ci), need=False)
                criteria.append(CriterionPlan(ids[ci], crit, assertion, check, cline, ci))
            if registry is not None:  # deterministic criteria first, judge criteria last
                criteria.sort(key=lambda c: c.judge)
            plan.tasks.append(TaskPlan(key, task, entity, tuple(criteria), line))


def _validated(
    assertion: dict[str, Any],
    registry: CheckRegistry | None,
    reporter: _Reporter,
    where: tuple[str | int, ...],
) -> CheckSpec | None:
    """The assertion's check, its problems reported (None: no registry, or no such check)."""
    if registry is None:
        return None
    check = registry.get(str(assertion.get("assert")))
    if check is None:
        return None
    try:
        check.model.model_validate(assertion)
    except ValidationError as exc:
        for error in exc.errors():
            reporter.add(
                f"{_pydantic_message(error, check.model)} (after filling entity placeholders)",
                (*where, "assertion", *error["loc"]),
            )
    return check


def _entities(
    benchmark: Benchmark, task: Task, where: tuple[str | int, ...], reporter: _Reporter
) -> list[Entity]:
    entities: list[Entity] = []
    seen: set[str] = set()
    for ei, ref in enumerate(task.entities):
        if isinstance(ref, str):
            data = benchmark.entities.get(ref)
            if data is None:
                known = ", ".join(sorted(benchmark.entities)) or "none defined"
                reporter.add(
                    f"unknown entity {ref!r} (benchmark entities: {known})",
                    (*where, "entities", ei),
                )
                continue
            entity = Entity.model_validate({**data, "id": ref})
        else:
            entity = ref
        if entity.id in seen:
            reporter.add(f"entity {entity.id!r} is bound twice", (*where, "entities", ei))
        seen.add(entity.id)
        entities.append(entity)
    return entities


def _check_ids(root: Any, reporter: _Reporter) -> None:
    """Duplicate and unusable ids, slugs, axes and tags, on the raw data (so they are reported
    together with any type error elsewhere in the file). See :func:`_display.unsafe_id_char`."""
    for key in ("benchmark", "version"):
        value = _get(root, key)
        if isinstance(value, str) and (why := unsafe_id_char(value)) is not None:
            reporter.add(f"the benchmark {'slug' if key == 'benchmark' else key} {why}", (key,))
    entities = _get(root, "entities")
    for name in entities if isinstance(entities, dict) else {}:
        if isinstance(name, str) and (why := unsafe_id_char(name)) is not None:
            reporter.add(f"an entity id {why}", ("entities", name))
    seen_tasks: dict[str, int] = {}
    for ti, task in enumerate(_list(_get(root, "tasks"))):
        task_id = _get(task, "id")
        if isinstance(task_id, str):
            if task_id.strip() in ("", ".", ".."):
                reporter.add(
                    "a task id names its sandbox directory: it must be non-empty and not '.' "
                    "or '..'",
                    ("tasks", ti, "id"),
                )
            elif (why := unsafe_id_char(task_id)) is not None:
                reporter.add(f"a task id {why}", ("tasks", ti, "id"))
            if task_id in seen_tasks:
                reporter.add(
                    f"duplicate task id (also task #{seen_tasks[task_id] + 1})", ("tasks", ti, "id")
                )
            seen_tasks.setdefault(task_id, ti)
        for gi, tag in enumerate(_list(_get(task, "tags"))):
            if isinstance(tag, str) and (char := unsafe_char(tag)) is not None:
                reporter.add(f"a tag contains {describe_char(char)}", ("tasks", ti, "tags", gi))
        for ei, ref in enumerate(_list(_get(task, "entities"))):
            entity_id = _get(ref, "id")
            if isinstance(entity_id, str) and (why := unsafe_id_char(entity_id)) is not None:
                reporter.add(f"an entity id {why}", ("tasks", ti, "entities", ei, "id"))
        explicit: dict[str, int] = {}
        criteria = _get(task, "criteria")
        _check_points(ti, _list(criteria), reporter)
        for ci, crit in enumerate(criteria if isinstance(criteria, list) else []):
            axis = _get(crit, "axis")
            if isinstance(axis, str) and (char := unsafe_char(axis)) is not None:
                reporter.add(
                    f"an axis contains {describe_char(char)}",
                    ("tasks", ti, "criteria", ci, "axis"),
                )
            crit_id = _get(crit, "id")
            if not isinstance(crit_id, str):
                continue
            where = ("tasks", ti, "criteria", ci, "id")
            if not crit_id.strip():
                reporter.add("a criterion id must be non-empty", where)
            elif (why := unsafe_id_char(crit_id)) is not None:
                reporter.add(f"a criterion id {why}", where)
            if crit_id in explicit:
                reporter.add(
                    f"duplicate criterion id (also criterion #{explicit[crit_id] + 1})", where
                )
            explicit.setdefault(crit_id, ci)


def _check_points(ti: int, criteria: list[Any], reporter: _Reporter) -> None:
    """A task scores by points or by weights, never both (README "Points and penalties"):
    once one criterion has ``points``, each one needs them and none may have ``weight``."""
    with_points = [ci for ci, crit in enumerate(criteria) if _get(crit, "points") is not None]
    if not with_points:
        return
    first = _name_of(criteria[with_points[0]], with_points[0])
    for ci, crit in enumerate(criteria):
        if not isinstance(crit, dict):
            continue
        if "weight" in crit:
            reporter.add(
                "a task scores by points or by weights, not both: this criterion has 'weight' "
                f"and criterion {first} has 'points' (give every criterion points instead)",
                ("tasks", ti, "criteria", ci, "weight"),
            )
        if crit.get("points") is None:
            reporter.add(
                f"this task scores by points (criterion {first} has 'points'): every criterion "
                "needs 'points', a non-zero integer",
                ("tasks", ti, "criteria", ci, "points"),
            )


def _criterion_ids(task: Task, scored: bool = False) -> list[str]:
    """Explicit ids, else a slug of the label, else ``criterion-<n>`` (made unique).

    In a scored run a label may quote an expected value that the agent must not read, so a
    criterion without an explicit id is ``criterion-<n>`` (its 1-based position in the task:
    stable across runs of the same file) and no label text reaches a node id, the terminal or
    a JUnit file (README "Scored runs").
    """
    ids: list[str] = []
    explicit = {crit.id for crit in task.criteria if crit.id is not None}
    for ci, crit in enumerate(task.criteria):
        if crit.id is not None:
            ids.append(crit.id)
            continue
        base = ("" if scored else slugify(crit.label or "")) or f"criterion-{ci + 1}"
        candidate, n = base, 2
        while candidate in explicit or candidate in ids:
            candidate, n = f"{base}-{n}", n + 1
        ids.append(candidate)
    return ids


def unknown_checks(
    shown: str, plan: BenchmarkPlan, registry: CheckRegistry
) -> list[tuple[int | None, str]]:
    """A line per criterion whose ``assert`` names no check (it can only fail, score 0), with
    the nearest known name, and the criterion's line in the file: ``verial validate`` and
    pytest's collection say the same."""
    out: list[tuple[int | None, str]] = []
    names = registry.names()
    for task in plan.tasks:
        for c in task.criteria:
            if c.check is None:
                near = difflib.get_close_matches(c.assert_name, names, n=1)
                hint = f"; did you mean '{near[0]}'?" if near else ""
                out.append(
                    (
                        c.line,
                        f"{shown}: task {task.key}: criterion {c.id}: field 'assertion.assert': "
                        f"unknown check '{c.assert_name}' (it fails with score 0){hint}",
                    )
                )
    return out
