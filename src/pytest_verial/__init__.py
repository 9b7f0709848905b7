"""pytest-verial: score healthcare AI agents' sandbox state against typed criteria.

The public names below load their module on first use (PEP 562), so the pytest plugin, which
every pytest run in an environment with this package imports, does not pay for the inline
API, the judge client or the comparison code until something asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy as lazy

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    **dict.fromkeys(
        ["AssertionSpec", "CheckContext", "CheckOutcome", "CheckRegistry", "CheckSpec"], "checks"
    ),
    **dict.fromkeys(["FieldSpec", "compare", "field_result", "fields_score"], "_compare"),
    **dict.fromkeys(
        [
            "BenchmarkFileError",
            "CheckError",
            "CriterionError",
            "Problem",
            "RunConfigError",
            "SourceError",
            "UsageError",
            "VerialError",
        ],
        "_errors",
    ),
    **dict.fromkeys(["verify_task", "verify_task_async"], "_inline"),
    **dict.fromkeys(["BenchmarkPlan", "CriterionPlan", "TaskPlan", "load_benchmark"], "_loader"),
    **dict.fromkeys(["Benchmark", "Criterion", "Entity", "Task"], "_models"),
    **dict.fromkeys(
        ["BenchmarkRun", "CriterionRun", "InlineTaskRun", "Report", "Status", "TaskRun"], "_results"
    ),
    **dict.fromkeys(["Sandbox", "Source"], "sources"),
    "FhirSource": "sources._fhir",
    "FilesSource": "sources._files.base",
    "Hl7Source": "sources._hl7",
    "OutputSource": "sources._output",
    "PortalSource": "sources._portal",
    "VoiceSource": "sources._voice",
    "X12Source": "sources._x12",
}

if TYPE_CHECKING:
    from ._compare import FieldSpec, compare, field_result, fields_score
    from ._errors import (
        BenchmarkFileError,
        CheckError,
        CriterionError,
        Problem,
        RunConfigError,
        SourceError,
        UsageError,
        VerialError,
    )
    from ._inline import verify_task, verify_task_async
    from ._loader import BenchmarkPlan, CriterionPlan, TaskPlan, load_benchmark
    from ._models import Benchmark, Criterion, Entity, Task
    from ._results import BenchmarkRun, CriterionRun, InlineTaskRun, Report, Status, TaskRun
    from .checks import AssertionSpec, CheckContext, CheckOutcome, CheckRegistry, CheckSpec
    from .sources import Sandbox, Source
    from .sources._fhir import FhirSource
    from .sources._files.base import FilesSource
    from .sources._hl7 import Hl7Source
    from .sources._output import OutputSource
    from .sources._portal import PortalSource
    from .sources._voice import VoiceSource
    from .sources._x12 import X12Source


__getattr__, __dir__ = lazy.exports(__name__, _PUBLIC)

__all__ = [
    "AssertionSpec",
    "Benchmark",
    "BenchmarkFileError",
    "BenchmarkPlan",
    "CheckContext",
    "CheckError",
    "CheckOutcome",
    "CheckRegistry",
    "CheckSpec",
    "Criterion",
    "CriterionError",
    "CriterionPlan",
    "Entity",
    "FhirSource",
    "FieldSpec",
    "FilesSource",
    "Hl7Source",
    "OutputSource",
    "PortalSource",
    "Problem",
    "RunConfigError",
    "Sandbox",
    "Source",
    "SourceError",
    "Task",
    "TaskPlan",
    "TaskRun",
    "InlineTaskRun",
    "CriterionRun",
    "BenchmarkRun",
    "Report",
    "Status",
    "UsageError",
    "VerialError",
    "VoiceSource",
    "X12Source",
    "__version__",
    "compare",
    "field_result",
    "fields_score",
    "load_benchmark",
    "verify_task",
    "verify_task_async",
]
