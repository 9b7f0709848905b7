"""The contract every check follows: a spec model, a function, the sources it reads.

A check is registered as a :class:`CheckSpec`. Its function receives the validated assertion
and a :class:`CheckContext` and returns a :class:`CheckOutcome`; it raises
:class:`~pytest_verial._errors.SourceError` or :class:`~pytest_verial._errors.CheckError` when it
cannot score, which the item records as an error with score 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from .._config.source_table import SOURCE_NAMES
from .._models import Benchmark, Criterion, Entity, Task

if TYPE_CHECKING:
    from .._results import CriterionRun
    from ..judge._source import JudgeSource
    from ..sources._fhir import FhirSource
    from ..sources._files.base import FilesSource
    from ..sources._hl7 import Hl7Source
    from ..sources._output import OutputSource
    from ..sources._portal import PortalSource
    from ..sources._voice import VoiceSource
    from ..sources._x12 import X12Source
    from .sandbox import Sandbox, Source


class AssertionSpec(BaseModel):
    """Base of every assertion model: the ``assert`` tag plus the check's own fields.

    Subclasses declare ``kind: Literal["my-check"] = Field(alias="assert")``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    kind: str = Field(alias="assert")


@dataclass
class CheckOutcome:
    """What a check returns. ``passed`` defaults to ``score >= pass threshold``."""

    score: float
    details: str
    evidence: dict[str, JsonValue] = field(default_factory=dict)
    passed: bool | None = None
    #: ``gated`` (judge not called, counts as 0) or ``skipped`` (bypassed, left out of the mean).
    status: str | None = None
    #: the verifier could not evaluate the criterion, and why (its judge absent, unreachable,
    #: slow, unparseable): an error left out of the mean, never the agent's failure. Short, no
    #: URL, path, key or advice; raising :class:`~pytest_verial.NotEvaluatedError` does the same
    not_evaluated: str | None = None


@dataclass
class CheckContext:
    """Everything a check may need besides its assertion."""

    sources: Mapping[str, Any]
    task: Task
    task_key: str
    criterion: Criterion
    criterion_id: str
    entity: Entity | None
    pass_threshold: float
    options: Mapping[str, Any] = field(default_factory=dict)
    #: results of criteria of the same task run already scored in this process, by criterion id
    prior: Mapping[str, CriterionRun] = field(default_factory=dict)
    #: the benchmark the task belongs to (benchmark-wide settings such as fhir_validation)
    benchmark: Benchmark | None = None
    #: ids of this task run's deterministic criteria (its checks' ``judge`` flag is False):
    #: a judge criterion is gated until all of them ran and passed
    deterministic: tuple[str, ...] = ()
    #: the task run's sandbox (None when a check is run on sources alone, as in tests)
    sandbox: Sandbox | None = None

    @overload
    def source(self, name: Literal["fhir"]) -> FhirSource: ...
    @overload
    def source(self, name: Literal["files"]) -> FilesSource: ...
    @overload
    def source(self, name: Literal["hl7"]) -> Hl7Source: ...
    @overload
    def source(self, name: Literal["judge"]) -> JudgeSource: ...
    @overload
    def source(self, name: Literal["output"]) -> OutputSource: ...
    @overload
    def source(self, name: Literal["portal"]) -> PortalSource: ...
    @overload
    def source(self, name: Literal["voice"]) -> VoiceSource: ...
    @overload
    def source(self, name: Literal["x12"]) -> X12Source: ...
    @overload
    def source(self, name: str) -> Source: ...
    def source(self, name: str) -> Any:
        """The source object the fixture ``verial_<name>`` gave, typed by its name
        (:mod:`pytest_verial._config.source_table`)."""
        return self.sources[name]


CheckFunction = Callable[[Any, CheckContext], CheckOutcome]


@dataclass(frozen=True)
class CheckSpec:
    """One registered ``assert`` type."""

    name: str
    model: type[AssertionSpec]
    run: CheckFunction
    #: source names read by the check; the item requests ``verial_<name>`` for each
    sources: tuple[str, ...] = ()
    #: judge criteria run after all deterministic ones of their task and may be gated
    judge: bool = False

    #: the source names a check may read: the sandbox's, declared once (sourcetable.SOURCE_NAMES)
    KNOWN_SOURCES: ClassVar[tuple[str, ...]] = SOURCE_NAMES

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in self.KNOWN_SOURCES]
        if unknown:
            raise ValueError(
                f"check {self.name!r} names unknown sources {unknown}; "
                f"known: {', '.join(self.KNOWN_SOURCES)}"
            )
