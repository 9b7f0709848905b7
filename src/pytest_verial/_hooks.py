"""Hook specifications of pytest-verial, for conftest.py files and plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._contracts.check import CheckSpec


def pytest_verial_checks() -> list[CheckSpec]:  # type: ignore[empty-body]
    """Return extra checks (new ``assert`` types) for benchmark files under this conftest."""


def pytest_verial_report(report: dict[str, Any]) -> None:
    """Inspect or extend the JSON report just before it is written (controller only).

    ``report`` is the report's JSON form; add your own data under ``report["extensions"]``
    (any JSON, under a key of your own). The report is checked against its schema afterwards:
    a hook that breaks it is one ERROR line, and the report is written as it was before."""
