"""Running the ``fhir-resource-state`` check on a source without the pytest plumbing."""

from __future__ import annotations

from typing import Any

from pytest_verial.checks.base import CheckOutcome
from pytest_verial.checks.fhir import CHECK, FhirResourceState

VERIAL_EXAMPLE = {
    "assert": "fhir-resource-state",
    "resource_type": "Appointment",
    "search": {"patient": "Patient/john-smith", "status": "booked"},
    "fields": [{"path": "participant.0.actor.display", "expected": "Dr. Rivera"}],
}


class Ctx:
    """The part of CheckContext the FHIR check reads."""

    def __init__(self, source: Any) -> None:
        self._source = source

    def source(self, name: str) -> Any:
        assert name == "fhir"
        return self._source


def run(source: Any, assertion: dict[str, Any]) -> CheckOutcome:
    """Validate ``assertion`` and run the check on ``source``."""
    spec = FhirResourceState.model_validate({"assert": "fhir-resource-state", **assertion})
    return CHECK.run(spec, Ctx(source))  # type: ignore[arg-type]
