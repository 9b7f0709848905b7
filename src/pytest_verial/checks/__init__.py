"""Built-in checks, one module per ``assert`` type, registered in :mod:`._registry` and nowhere
else.

Public API (README, "Public API"): the registry the plugin, ``verial validate``, the inline
API and the service build (:data:`BUILTIN`, :class:`CheckRegistry`, :func:`default_registry`),
and :func:`register_secret`, for a custom check that reads a credential, so that every record
of the run masks it as it masks the plugin's own. What a custom check is made of
(``CheckSpec``, ``AssertionSpec``, ``CheckContext``, ``CheckOutcome``) is exported by
:mod:`pytest_verial`; conftests add checks through the ``pytest_verial_checks`` hook, and
:mod:`pytest_verial.testing` runs one in a test. The built-in checks' assertion models and the
helpers they share are private (``checks._<name>``, ``_compare``, ``_paths``, ``_safeparse``).

To add a built-in check: write ``checks/_<name>.py`` with its model and a
``CHECK = CheckSpec(...)`` and add its ``assert`` name and module to ``_registry.BUILTIN``.
"""

from __future__ import annotations

from .._secrets import register_secret
from ._registry import BUILTIN, CheckRegistry, default_registry

__all__ = ["BUILTIN", "CheckRegistry", "default_registry", "register_secret"]
