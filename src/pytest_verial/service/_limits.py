"""What one request may cost the service (issue 31): the reads of its sandbox, an inline task's
criteria, the size of its answer, and how slowly it may arrive.

:class:`ServiceLimits` holds ``verial serve``'s settings of them (declared in
:mod:`pytest_verial._config.options`: the read limits shared with the plugin, :data:`SERVE_OPTIONS`
for the service's own); every worker process gets them (:meth:`ServiceLimits.to_env`).

- ``--max-file-size`` / ``--max-sandbox-size``: every file a criterion reads from a run folder
  under ``--runs-root`` (``run.yaml`` included) is admitted by its size first and read no
  further (:mod:`pytest_verial._sandbox_io.limits`); an archive or inline files whose entry
  passes the per-file limit, or that unpack past the per-sandbox limit, are a 413.
- ``--max-inline-criteria``: a task given in the request (``task``) with more criteria is a
  413 before anything is scored.
- ``--max-answer-size``: an answer (a task run with its evidence) larger than this is a 413,
  and nothing is stored.
- ``--header-timeout`` / ``--body-timeout``: :mod:`._guard`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from .._config.options import SERVE_OPTIONS, option
from .._sandbox_io.sizes import ReadLimits, parse_size, shown_size
from ._http import Problem

#: the environment variable that carries the limits to each worker process
LIMITS_ENV = "VERIAL_SERVE_LIMITS"


def _seconds(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number of seconds, got {value!r}") from None
    if not 0 < number < 86400:  # NaN and infinity fail too
        raise ValueError(f"expected a number of seconds above 0, got {value!r}")
    return number


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not str(value).strip().isdigit() or int(value) < 1:
        raise ValueError(f"expected a whole number above 0, got {value!r}")
    return int(value)


_READERS = {"size": parse_size, "seconds": _seconds, "whole": _whole}


def _default(name: str) -> Any:
    """A setting's default as declared in the options table."""
    shared = {
        "max_file_size": "verial_max_file_size",
        "max_sandbox_size": "verial_max_sandbox_size",
    }
    if name in shared:
        declared = option(shared[name])
        return _READERS["size"](declared.serve_default)
    spec = SERVE_OPTIONS[name]
    return _READERS[spec.kind](spec.default)


@dataclass(frozen=True)
class ServiceLimits:
    """``verial serve``'s limits (defaults: the options table's)."""

    max_file_size: int = _default("max_file_size")
    max_sandbox_size: int = _default("max_sandbox_size")
    max_inline_criteria: int = _default("max_inline_criteria")
    max_answer_size: int = _default("max_answer_size")
    header_timeout: float = _default("header_timeout")
    body_timeout: float = _default("body_timeout")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> ServiceLimits:
        """From settings by name (``max_file_size="64MiB"``, ``header_timeout=10``); a
        ValueError naming the flag of a bad value or an unknown name."""
        known = {f.name for f in fields(cls)}
        parsed: dict[str, Any] = {}
        for name, value in (values or {}).items():
            if name not in known:
                raise ValueError(
                    f"unknown service limit {name!r}; known: {', '.join(sorted(known))}"
                )
            if value is None:
                continue
            kind = "size" if name in ("max_file_size", "max_sandbox_size") else None
            kind = kind or SERVE_OPTIONS[name].kind
            try:
                parsed[name] = _READERS[kind](value)
            except ValueError as exc:
                raise ValueError(f"--{name.replace('_', '-')}: {exc}") from None
        return cls(**parsed)

    def read_limits(self) -> ReadLimits:
        """The limits of every read of a sandbox this service scores."""
        return ReadLimits(
            self.max_file_size,
            self.max_sandbox_size,
            "verial serve --max-file-size",
            "verial serve --max-sandbox-size",
        )

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServiceLimits:
        """The limits ``verial serve`` handed its worker processes (defaults without)."""
        raw = os.environ.get(LIMITS_ENV)
        return cls(**json.loads(raw)) if raw else cls()

    # -- checks a route makes (one line each there) --------------------------------------------
    def check_inline_task(self, task: Mapping[str, Any] | None) -> None:
        """A task given in the request holds at most ``max_inline_criteria`` criteria (a 413
        before the task is loaded or scored)."""
        if task is None:
            return
        criteria = task.get("criteria")
        count = len(criteria) if isinstance(criteria, list) else 0
        if count > self.max_inline_criteria:
            raise Problem(
                413,
                f"body task.criteria: {count:,} criteria, over the {self.max_inline_criteria:,} "
                "an inline task may hold (verial serve --max-inline-criteria)",
            )

    def check_answer(self, answer: Any) -> None:
        """An answer (a report of one task run) at most ``max_answer_size`` bytes as JSON; a
        413 otherwise, before anything is stored."""
        text = (
            answer.model_dump_json() if hasattr(answer, "model_dump_json") else json.dumps(answer)
        )
        if len(text) > self.max_answer_size:
            raise Problem(
                413,
                f"the answer would be {len(text):,} bytes, over the "
                f"{shown_size(self.max_answer_size)} one may be (verial serve "
                "--max-answer-size); nothing stored",
            )


__all__ = ["LIMITS_ENV", "ServiceLimits"]
