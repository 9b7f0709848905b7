"""The check registry: ``assert`` value -> :class:`CheckSpec`. Refuses duplicates."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .base import CheckSpec


class CheckRegistry:
    """A mapping of ``assert`` names to checks, built once per benchmark file's scope."""

    def __init__(self, specs: Iterable[CheckSpec] = ()) -> None:
        self._specs: dict[str, CheckSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: CheckSpec) -> None:
        """Add a check; a second check with the same ``assert`` name is an error."""
        if spec.name in self._specs:
            raise ValueError(f"assert type {spec.name!r} is registered twice")
        self._specs[spec.name] = spec

    def get(self, name: str) -> CheckSpec | None:
        """The check for ``name``, or None (an unsupported assertion, scored 0 at run time)."""
        return self._specs.get(name)

    def names(self) -> list[str]:
        """All registered ``assert`` names, sorted."""
        return sorted(self._specs)

    def __iter__(self) -> Iterator[CheckSpec]:
        return iter(self._specs.values())

    def __contains__(self, name: object) -> bool:
        return name in self._specs
