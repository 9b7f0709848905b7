"""One bad input or attack of the corpus run by ``test_bad_inputs.py``.

Each module in ``cases/`` holds ``CASES: list[Case]`` for one area (benchmark files, run.yaml,
FHIR, HL7, X12, portal, voice, files, output, ids, secrets, live sources, ...). A case is a
small project: ``files`` maps paths relative to the case's own folder to their contents
(benchmark files and a ``sandbox/<task>/...`` tree beside them). The test runs pytest on it and
checks that the user sees one clear line (``says``) and no traceback, crash, hang or silent pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

#: what a file's content may be: text, bytes, or a function making either (large inputs)
Content = str | bytes | Callable[[], str | bytes]

Where = Literal["criterion", "collect", "usage", "output"]


@dataclass(frozen=True)
class Case:
    """A bad input and the one line it must produce.

    ``where`` says where that line appears:

    - ``criterion``: the criterion run ``criterion`` (``task::criterion``, or
      ``task[entity]::criterion``) is not passed (status ``error`` or ``failed``, score 0
      unless ``score`` says otherwise) and its one-line ``details`` contain ``says``;
    - ``collect``: pytest reports a collection error in the case's folder, and one line of its
      output contains ``says``;
    - ``usage``: the session stops before running anything with exit status 4 and one line of
      its output contains ``says``;
    - ``output``: the session exits non-zero and one line of its output contains ``says``
      (a warning or summary line).

    Cases with ``args`` or ``where="usage"`` run in a session of their own (a usage error
    without ``env`` or ``-n`` in the test's own process: ``test_bad_inputs.runs_in_process``);
    cases with ``env`` share one session with the other cases of the same environment
    (``output`` ones run alone), ``collect`` cases whose ``args`` are one flag naming no path
    share one session per flag (``test_bad_inputs.SHARED_ARGS``); the others of one module
    share a session (each in its own folder). Every session must end within
    ``timeout`` seconds with no ``Traceback`` or ``INTERNALERROR`` in its output, a JSON report
    that is strict JSON, and both JUnit files well-formed XML.
    """

    id: str
    kind: str
    files: Mapping[str, Content]
    says: str
    where: Where = "criterion"
    criterion: str | None = None
    args: tuple[str, ...] = ()
    score: float = 0.0
    timeout: float = 90.0
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def solo(self) -> bool:
        """True when the case needs a pytest session of its own."""
        return bool(self.args) or self.where == "usage" or bool(self.env)
