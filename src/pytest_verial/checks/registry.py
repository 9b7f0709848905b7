"""The check registry: ``assert`` value -> :class:`CheckSpec`. Refuses duplicates."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .base import CheckSpec


class CheckRegistry:
    """A mapping of ``assert`` names to checks, built once per benchmark file's scope.

    ``builtins`` are ``assert`` names of built-in checks (``checks.BUILTIN``), registered
    without importing them: each is loaded by :func:`~pytest_verial.checks.builtin_check` when
    first asked for, so a benchmark of portal checks never imports the FHIR or X12 code.
    """

    def __init__(self, specs: Iterable[CheckSpec] = (), builtins: Iterable[str] = ()) -> None:
        self._specs: dict[str, CheckSpec | None] = dict.fromkeys(builtins)
        for spec in specs:
            self.register(spec)

    def register(self, spec: CheckSpec) -> None:
        """Add a check; a second check with the same ``assert`` name is an error."""
        if spec.name in self._specs:
            raise ValueError(f"assert type {spec.name!r} is registered twice")
        self._specs[spec.name] = spec

    def get(self, name: str) -> CheckSpec | None:
        """The check for ``name``, or None (an unsupported assertion, scored 0 at run time)."""
        if name not in self._specs:
            return None
        spec = self._specs[name]
        if spec is None:
            from . import builtin_check

            spec = self._specs[name] = builtin_check(name)
        return spec

    def names(self) -> list[str]:
        """All registered ``assert`` names, sorted."""
        return sorted(self._specs)

    def __iter__(self) -> Iterator[CheckSpec]:
        for name in list(self._specs):
            spec = self.get(name)
            assert spec is not None
            yield spec

    def __contains__(self, name: object) -> bool:
        return name in self._specs
