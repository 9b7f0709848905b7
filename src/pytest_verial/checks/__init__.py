"""Built-in checks, one module per ``assert`` type, registered in :mod:`._registry` and nowhere
else.

Public API: the names in ``__all__``: what a custom check is made of (:class:`CheckSpec`,
:class:`AssertionSpec`, :class:`CheckContext`, :class:`CheckOutcome`), the registry, the
built-in checks with their assertion models (``FhirResourceState``, ...), each model loaded
with its private module on first use, and the helpers the built-in checks share beside the
field operators of :mod:`pytest_verial`: :func:`resolve` (a dotted JSON path, as
``portal-state-match`` reads rows), :func:`quantified` (a field over several values, ``any``
or ``all``) and :func:`correlation_matches` (``correlate_by`` over the values a path
selects); and the bounded readers every JSON or YAML text the plugin reads goes through,
:func:`load_json` and :func:`load_yaml` (depth, number and alias limits, :class:`DataError`
naming the line; docs/limits.md); and :func:`register_secret`, for a custom check that reads
a credential, so that every record of the run masks it as it masks the plugin's own.
Conftests add checks through the ``pytest_verial_checks`` hook; :mod:`pytest_verial.testing`
runs one in a test.

To add a built-in check: write ``checks/_<name>.py`` with its model and a
``CHECK = CheckSpec(...)``, add its ``assert`` name and module to ``_registry.BUILTIN`` and its
model to ``_MODELS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._lazy import exports
from ._registry import BUILTIN, CheckRegistry, builtin_check, builtin_checks, default_registry

if TYPE_CHECKING:
    from .._compare import correlation_matches, quantified
    from .._paths import resolve
    from .._safeparse import MAX_DEPTH, MAX_INT_DIGITS, DataError, load_json, load_yaml
    from .._secrets import register_secret
    from ._fhir import FhirResourceState
    from ._files import SftpFilePresent
    from ._hl7 import Hl7Structural
    from ._llm_rubric import LlmRubric
    from ._output_consistency import OutputConsistency
    from ._output_format import OutputFormat
    from ._output_length import OutputLength
    from ._output_match import OutputMatch
    from ._output_schema import OutputJsonSchema
    from ._output_sections import OutputSections
    from ._portal import PortalStateMatch
    from ._voice import VoiceTranscript
    from ._x12 import X12Response

#: the built-in checks' assertion models -> their module (loaded on first use)
_MODELS = {
    "FhirResourceState": "_fhir",
    "SftpFilePresent": "_files",
    "Hl7Structural": "_hl7",
    "LlmRubric": "_llm_rubric",
    "OutputConsistency": "_output_consistency",
    "OutputFormat": "_output_format",
    "OutputLength": "_output_length",
    "OutputMatch": "_output_match",
    "OutputJsonSchema": "_output_schema",
    "OutputSections": "_output_sections",
    "PortalStateMatch": "_portal",
    "VoiceTranscript": "_voice",
    "X12Response": "_x12",
}
#: the helpers the built-in checks share -> their module in the parent package
_HELPERS = {
    "correlation_matches": "._compare",
    "quantified": "._compare",
    "resolve": "._paths",
    "register_secret": "._secrets",
    **dict.fromkeys(
        ["DataError", "MAX_DEPTH", "MAX_INT_DIGITS", "load_json", "load_yaml"], "._safeparse"
    ),
}
__getattr__, __dir__ = exports(__name__, {**_MODELS, **_HELPERS})

__all__ = [
    "BUILTIN",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "AssertionSpec",
    "CheckContext",
    "CheckOutcome",
    "CheckRegistry",
    "CheckSpec",
    "DataError",
    "builtin_check",
    "builtin_checks",
    "correlation_matches",
    "default_registry",
    "load_json",
    "load_yaml",
    "quantified",
    "register_secret",
    "resolve",
    "FhirResourceState",
    "Hl7Structural",
    "LlmRubric",
    "OutputConsistency",
    "OutputFormat",
    "OutputJsonSchema",
    "OutputLength",
    "OutputMatch",
    "OutputSections",
    "PortalStateMatch",
    "SftpFilePresent",
    "VoiceTranscript",
    "X12Response",
]
