"""pytest-verial: score healthcare AI agents' sandbox state against typed criteria.

The public names below load their module on first use (PEP 562), so the pytest plugin, which
every pytest run in an environment with this package imports, does not pay for the inline
API, the judge client or the comparison code until something asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import lazy

__version__ = "0.1.0"

#: public name -> the module that defines it
_PUBLIC = {
    **dict.fromkeys(
        ["AssertionSpec", "CheckContext", "CheckOutcome", "CheckRegistry", "CheckSpec"], "checks"
    ),
    **dict.fromkeys(["FieldSpec", "compare", "field_result", "fields_score"], "compare"),
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
        "errors",
    ),
    **dict.fromkeys(["verify_task", "verify_task_async"], "inline"),
    **dict.fromkeys(["BenchmarkPlan", "CriterionPlan", "TaskPlan", "load_benchmark"], "loader"),
    **dict.fromkeys(["Benchmark", "Criterion", "Entity", "Task"], "models"),
    **dict.fromkeys(
        ["BenchmarkRun", "CriterionRun", "InlineTaskRun", "Report", "Status", "TaskRun"], "results"
    ),
    **dict.fromkeys(["Sandbox", "Source"], "sources"),
    "FhirSource": "sources.fhir",
    "FilesSource": "sources.files.base",
    "Hl7Source": "sources.hl7",
    "OutputSource": "sources.output",
    "PortalSource": "sources.portal",
    "VoiceSource": "sources.voice",
    "X12Source": "sources.x12",
}

if TYPE_CHECKING:
    from .checks import AssertionSpec, CheckContext, CheckOutcome, CheckRegistry, CheckSpec
    from .compare import FieldSpec, compare, field_result, fields_score
    from .errors import (
        BenchmarkFileError,
        CheckError,
        CriterionError,
        Problem,
        RunConfigError,
        SourceError,
        UsageError,
        VerialError,
    )
    from .inline import verify_task, verify_task_async
    from .loader import BenchmarkPlan, CriterionPlan, TaskPlan, load_benchmark
    from .models import Benchmark, Criterion, Entity, Task
    from .results import BenchmarkRun, CriterionRun, InlineTaskRun, Report, Status, TaskRun
    from .sources import Sandbox, Source
    from .sources.fhir import FhirSource
    from .sources.files.base import FilesSource
    from .sources.hl7 import Hl7Source
    from .sources.output import OutputSource
    from .sources.portal import PortalSource
    from .sources.voice import VoiceSource
    from .sources.x12 import X12Source


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
