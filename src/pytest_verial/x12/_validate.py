"""Optional implementation-guide validation of X12 with pyx12 (``validate: true``).

pyx12 (BSD, a dependency of pytest-verial) carries 005010 maps for 835 (X221A1),
999 (X231A1), 837, 834 and 820, but none for 271 (X279A1), 278 (X217) or the 277 claim
status response (X212); asking to validate those is a :class:`~pytest_verial._errors.CheckError`
naming the implementation guide. pyx12 reports some problems in its JSON error tree and others
only through its logger; both are collected.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from .._errors import CheckError


@dataclass(frozen=True)
class Validation:
    """The outcome of validating one interchange text."""

    valid: bool
    errors: list[str] = field(default_factory=list)
    validator: str = "pyx12"

    def evidence(self) -> dict[str, Any]:
        """``{validator, valid, errors}`` for the evidence (first 50 errors)."""
        return {"validator": self.validator, "valid": self.valid, "errors": self.errors[:50]}


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _tree_errors(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "errors" and isinstance(value, list):
                out.extend(
                    str(e.get("err_str", e)) if isinstance(e, dict) else str(e) for e in value
                )
            else:
                _tree_errors(value, out)
    elif isinstance(node, list):
        for value in node:
            _tree_errors(value, out)


#: a Python object's repr (``<_io.StringIO object at 0x7f...>``), which pyx12 writes into some
#: messages in place of the file's name: an address differs in every process
_OBJECT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


def validate(text: str, origin: str) -> Validation:
    """Validate X12 ``text`` against pyx12's maps; CheckError when it cannot be validated."""
    try:
        import pyx12  # type: ignore[import-untyped]
        import pyx12.errors  # type: ignore[import-untyped]
        import pyx12.params  # type: ignore[import-untyped]
        import pyx12.x12n_document  # type: ignore[import-untyped]
    except ImportError:
        raise CheckError(
            "validate: true needs the 'pyx12' package (a dependency): pip install pyx12"
        ) from None
    logger = logging.getLogger("pyx12")
    collect = _Collect()
    saved = (logger.level, logger.propagate)
    logger.addHandler(collect)
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    report = io.StringIO()
    try:
        ok = pyx12.x12n_document.x12n_document(
            pyx12.params.params(), io.StringIO(text), None, None, None, report
        )
    except pyx12.errors.EngineError as exc:
        raise CheckError(f"validate: pyx12 cannot validate {origin}: {exc}") from None
    except Exception as exc:  # pyx12 raises assorted errors on input it does not expect
        raise CheckError(
            f"validate: pyx12 failed on {origin}: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        logger.removeHandler(collect)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
    # pyx12 names the file it reads by its repr: the file's own name in its place, so the
    # evidence says which file and is the same in every session
    errors = [_OBJECT_REPR.sub(origin, m) for m in collect.messages]
    tree: list[str] = []
    with contextlib.suppress(json.JSONDecodeError):
        _tree_errors(json.loads(report.getvalue() or "{}"), tree)
    tree = [_OBJECT_REPR.sub(origin, e) for e in tree]
    logged = "\n".join(errors)
    errors.extend(e for e in tree if e not in logged)  # most are logged too
    version = getattr(pyx12, "__version__", "")
    return Validation(bool(ok) and not errors, errors, f"pyx12 {version}".strip())
