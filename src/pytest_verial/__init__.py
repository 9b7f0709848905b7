"""pytest-verial: score healthcare AI agents' sandbox state against typed criteria.

Public API (README, "Public API", says why each group is public): the names in ``__all__``
below, and the packages :mod:`pytest_verial.sources`, :mod:`~pytest_verial.checks`,
:mod:`~pytest_verial.store`, :mod:`~pytest_verial.service`, :mod:`~pytest_verial.hl7` and
:mod:`~pytest_verial.x12` through their own ``__all__``; :mod:`pytest_verial.testing` for
authors of custom checks; :mod:`pytest_verial.cli` (the ``verial`` command) and the pytest
plugins :mod:`pytest_verial.plugin` and :mod:`pytest_verial.judge_plugin`. Every module whose
name starts with ``_`` is private and may change without notice.

Every pytest run in an environment with this package imports it (the plugin lives in it), so
the names below load their module on first use (PEP 562): the run does not pay for the inline
API, the results models or the evidence models until something asks for them. ``_PUBLIC`` is
the one table of them; the ``TYPE_CHECKING`` imports (what editors and type checkers follow)
and ``__all__`` repeat it, and tests/core/test_public_api.py fails when the three disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy as lazy
from ._version import __version__

if TYPE_CHECKING:
    from ._compare import MISSING
    from ._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
    from ._errors import BenchmarkFileError, NotEvaluatedError, UsageError, VerialError
    from ._evidence import (
        EVIDENCE_MODELS,
        AnyEvidence,
        FhirResourceStateEvidence,
        Hl7StructuralEvidence,
        LlmRubricEvidence,
        OutputEvidence,
        PortalStateMatchEvidence,
        SftpFilePresentEvidence,
        VoiceTranscriptEvidence,
        X12ResponseEvidence,
    )
    from ._inline import verify_task, verify_task_async
    from ._loader import BenchmarkPlan, TaskPlan, load_benchmark
    from ._models import Task
    from ._record import Status
    from ._results import BenchmarkRun, CriterionRun, InlineTaskRun, Report, TaskRun

#: public name -> the private module that defines it
_PUBLIC = {
    # inline verification (README, "Verification with an LLM judge"): what it takes and returns
    **dict.fromkeys(["verify_task", "verify_task_async"], "_inline"),
    **dict.fromkeys(["BenchmarkPlan", "TaskPlan", "load_benchmark"], "_loader"),
    "Task": "_models",
    # writing a check (README, "Extending")
    **dict.fromkeys(
        ["AssertionSpec", "CheckContext", "CheckOutcome", "CheckSpec"], "_contracts.check"
    ),
    # reading results: the report hook's argument, verify_task's answer
    **dict.fromkeys(
        ["BenchmarkRun", "CriterionRun", "InlineTaskRun", "Report", "TaskRun"], "_results"
    ),
    "Status": "_record",
    # a criterion run's evidence, one model per check type (README, "Checks")
    **dict.fromkeys(
        [
            "AnyEvidence",
            "EVIDENCE_MODELS",
            "FhirResourceStateEvidence",
            "Hl7StructuralEvidence",
            "LlmRubricEvidence",
            "OutputEvidence",
            "PortalStateMatchEvidence",
            "SftpFilePresentEvidence",
            "VoiceTranscriptEvidence",
            "X12ResponseEvidence",
        ],
        "_evidence",
    ),
    # what a caller catches
    **dict.fromkeys(
        ["BenchmarkFileError", "NotEvaluatedError", "UsageError", "VerialError"], "_errors"
    ),
    # a path that selects nothing (hl7.get, x12.get)
    "MISSING": "_compare",
}

__getattr__, __dir__ = lazy.exports(__name__, _PUBLIC)

__all__ = [
    "EVIDENCE_MODELS",
    "MISSING",
    "AnyEvidence",
    "AssertionSpec",
    "BenchmarkFileError",
    "BenchmarkPlan",
    "BenchmarkRun",
    "CheckContext",
    "CheckOutcome",
    "CheckSpec",
    "CriterionRun",
    "FhirResourceStateEvidence",
    "Hl7StructuralEvidence",
    "InlineTaskRun",
    "LlmRubricEvidence",
    "NotEvaluatedError",
    "OutputEvidence",
    "PortalStateMatchEvidence",
    "Report",
    "SftpFilePresentEvidence",
    "Status",
    "Task",
    "TaskPlan",
    "TaskRun",
    "UsageError",
    "VerialError",
    "VoiceTranscriptEvidence",
    "X12ResponseEvidence",
    "load_benchmark",
    "verify_task",
    "verify_task_async",
    "__version__",
]
