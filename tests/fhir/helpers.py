"""Running the ``fhir-resource-state`` check on a source without the pytest plumbing."""

from __future__ import annotations

from typing import Any

from pytest_verial import CheckOutcome

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.checks._fhir import FhirResourceState
from pytest_verial.checks._registry import builtin_check

CHECK = builtin_check("fhir-resource-state")

VERIAL_EXAMPLE = {
    "assert": "fhir-resource-state",
    "resource_type": "Appointment",
    "search": {"patient": "Patient/john-smith", "status": "booked"},
    "fields": [{"path": "participant.0.actor.display", "expected": "Dr. Rivera"}],
}


class Ctx:
    """The part of CheckContext the FHIR check reads."""

    def __init__(self, source: Any, benchmark: Any = None) -> None:
        self._source = source
        self.benchmark = benchmark

    def source(self, name: str) -> Any:
        assert name == "fhir"
        return self._source


def run(source: Any, assertion: dict[str, Any], benchmark: Any = None) -> CheckOutcome:
    """Validate ``assertion`` and run the check on ``source`` (within ``benchmark``)."""
    spec = FhirResourceState.model_validate({"assert": "fhir-resource-state", **assertion})
    return CHECK.run(spec, Ctx(source, benchmark))  # type: ignore[arg-type]
