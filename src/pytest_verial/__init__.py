"""pytest-verial: score healthcare AI agents' sandbox state against typed criteria.

Public API (README, "Public API"): the names in ``__all__`` below, and the packages
:mod:`pytest_verial.checks`, :mod:`~pytest_verial.sources`, :mod:`~pytest_verial.judge`,
:mod:`~pytest_verial.store`, :mod:`~pytest_verial.service`, :mod:`~pytest_verial.reporting`,
:mod:`~pytest_verial.fhir`, :mod:`~pytest_verial.hl7`, :mod:`~pytest_verial.x12` through their
own ``__all__``; :mod:`pytest_verial.testing` for authors of custom checks;
:mod:`pytest_verial.cli` (the ``verial`` command) and the pytest plugins
:mod:`pytest_verial.plugin` and :mod:`pytest_verial.judge_plugin`. Every module whose name
starts with ``_`` is private and may change without notice.

The public names below load their module on first use (PEP 562), so the pytest plugin, which
every pytest run in an environment with this package imports, does not pay for the inline
API, the judge client or the comparison code until something asks for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy as lazy
from ._version import __version__

#: public name -> the private module that defines it, or the public package that exports it
_PUBLIC = {
    **dict.fromkeys(
        ["AssertionSpec", "CheckContext", "CheckOutcome", "CheckRegistry", "CheckSpec"], "checks"
    ),
    **dict.fromkeys(
        ["FieldSpec", "MISSING", "compare", "describe_field", "field_result", "fields_score"],
        "_compare",
    ),
    **dict.fromkeys(
        [
            "BenchmarkFileError",
            "CheckError",
            "CriterionError",
            "NotEvaluatedError",
            "BenchmarkProblem",
            "RunConfigError",
            "SourceError",
            "UsageError",
            "VerialError",
        ],
        "_errors",
    ),
    # what a check saw, one model per check type (Verial's documented evidence keys)
    **dict.fromkeys(
        [
            "AnyEvidence",
            "EVIDENCE_MODELS",
            "Evidence",
            "FhirResourceStateEvidence",
            "FieldResult",
            "Hl7StructuralEvidence",
            "LlmRubricEvidence",
            "OutputEvidence",
            "PhraseResult",
            "PortalStateMatchEvidence",
            "RubricResult",
            "SftpFilePresentEvidence",
            "VoiceTranscriptEvidence",
            "X12ResponseEvidence",
        ],
        "_evidence",
    ),
    **dict.fromkeys(["verify_task", "verify_task_async"], "_inline"),
    **dict.fromkeys(["BenchmarkPlan", "CriterionPlan", "TaskPlan", "load_benchmark"], "_loader"),
    **dict.fromkeys(["Benchmark", "Criterion", "Entity", "Task"], "_models"),
    **dict.fromkeys(
        [
            "BenchmarkInfo",
            "BenchmarkRun",
            "CriterionRun",
            "Generator",
            "InlineTaskRun",
            "NotEvaluated",
            "Report",
            "RunInfo",
            "RunStatus",
            "Session",
            "Status",
            "TaskRun",
            "TaskStatus",
            "report_schema",
        ],
        "_results",
    ),
    **dict.fromkeys(
        ["RunConfig", "RunDir", "TaskRunMeta", "load_run_config"], "_config.run_folder"
    ),
    # the sandbox and each source kind's Protocol, as the sources package exports them
    **dict.fromkeys(
        [
            "FhirSource",
            "FilesSource",
            "Hl7Source",
            "OutputSource",
            "PortalSource",
            "Sandbox",
            "Source",
            "VoiceSource",
            "X12Source",
        ],
        "sources",
    ),
}

if TYPE_CHECKING:
    from ._compare import MISSING, FieldSpec, compare, describe_field, field_result, fields_score
    from ._config.run_folder import RunConfig, RunDir, TaskRunMeta, load_run_config
    from ._errors import (
        BenchmarkFileError,
        BenchmarkProblem,
        CheckError,
        CriterionError,
        NotEvaluatedError,
        RunConfigError,
        SourceError,
        UsageError,
        VerialError,
    )
    from ._evidence import (
        EVIDENCE_MODELS,
        AnyEvidence,
        Evidence,
        FhirResourceStateEvidence,
        FieldResult,
        Hl7StructuralEvidence,
        LlmRubricEvidence,
        OutputEvidence,
        PhraseResult,
        PortalStateMatchEvidence,
        RubricResult,
        SftpFilePresentEvidence,
        VoiceTranscriptEvidence,
        X12ResponseEvidence,
    )
    from ._inline import verify_task, verify_task_async
    from ._loader import BenchmarkPlan, CriterionPlan, TaskPlan, load_benchmark
    from ._models import Benchmark, Criterion, Entity, Task
    from ._results import (
        BenchmarkInfo,
        BenchmarkRun,
        CriterionRun,
        Generator,
        InlineTaskRun,
        NotEvaluated,
        Report,
        RunInfo,
        RunStatus,
        Session,
        Status,
        TaskRun,
        TaskStatus,
        report_schema,
    )
    from .checks import AssertionSpec, CheckContext, CheckOutcome, CheckRegistry, CheckSpec
    from .sources import (
        FhirSource,
        FilesSource,
        Hl7Source,
        OutputSource,
        PortalSource,
        Sandbox,
        Source,
        VoiceSource,
        X12Source,
    )


__getattr__, __dir__ = lazy.exports(__name__, _PUBLIC)

__all__ = [
    "AnyEvidence",
    "AssertionSpec",
    "Benchmark",
    "BenchmarkFileError",
    "BenchmarkInfo",
    "BenchmarkPlan",
    "BenchmarkRun",
    "CheckContext",
    "CheckError",
    "CheckOutcome",
    "CheckRegistry",
    "CheckSpec",
    "Criterion",
    "CriterionError",
    "CriterionPlan",
    "CriterionRun",
    "EVIDENCE_MODELS",
    "Entity",
    "Evidence",
    "FhirResourceStateEvidence",
    "FhirSource",
    "FieldResult",
    "FieldSpec",
    "FilesSource",
    "Generator",
    "Hl7Source",
    "Hl7StructuralEvidence",
    "InlineTaskRun",
    "LlmRubricEvidence",
    "MISSING",
    "NotEvaluated",
    "NotEvaluatedError",
    "OutputEvidence",
    "OutputSource",
    "PhraseResult",
    "PortalSource",
    "PortalStateMatchEvidence",
    "BenchmarkProblem",
    "Report",
    "RubricResult",
    "RunConfig",
    "RunConfigError",
    "RunDir",
    "RunInfo",
    "RunStatus",
    "Sandbox",
    "Session",
    "SftpFilePresentEvidence",
    "Source",
    "SourceError",
    "Status",
    "Task",
    "TaskPlan",
    "TaskRun",
    "TaskRunMeta",
    "TaskStatus",
    "UsageError",
    "VerialError",
    "VoiceSource",
    "VoiceTranscriptEvidence",
    "X12ResponseEvidence",
    "X12Source",
    "compare",
    "describe_field",
    "field_result",
    "fields_score",
    "load_benchmark",
    "load_run_config",
    "report_schema",
    "verify_task",
    "verify_task_async",
    "__version__",
]
