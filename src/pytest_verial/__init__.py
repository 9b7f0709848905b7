"""pytest-verial: score healthcare AI agents' sandbox state against typed criteria."""

from __future__ import annotations

__version__ = "0.1.0"

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
    "FieldSpec",
    "Problem",
    "RunConfigError",
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
    "__version__",
    "compare",
    "field_result",
    "fields_score",
    "load_benchmark",
    "verify_task",
    "verify_task_async",
]
