"""What a live FHIR server answered, read for :mod:`pytest_verial.fhir._live`: FHIR JSON or one
line naming the URL and the cause (HTTP status, OperationOutcome diagnostics, content type);
and the Google access token of ``auth: google``."""

from __future__ import annotations

from typing import Any

from .._errors import CheckError, SourceError
from .._secrets import register

GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


def retry_after(response: Any) -> float | None:
    """Seconds a 429/503 asks to wait (at most 30), or None."""
    value = response.headers.get("retry-after")
    try:
        return min(float(value), 30.0) if value is not None else None
    except ValueError:
        return None


def fhir_json(url: str, response: Any) -> dict[str, Any]:
    """The JSON object of a FHIR answer; CheckError for a 400, else SourceError."""
    status = response.status_code
    ctype = response.headers.get("content-type", "")
    body: Any = None
    if "json" in ctype:
        try:
            body = response.json()
        except ValueError:
            raise SourceError(f"GET {url}: HTTP {status} with invalid JSON") from None
    if status >= 400 or body is None:
        said = diagnostics(body) if isinstance(body, dict) else ""
        if body is None and status < 400:
            snippet = " ".join(response.text[:80].split())
            raise SourceError(
                f"GET {url}: answered {ctype or 'no content type'}, not FHIR JSON "
                f"(HTTP {status}: {snippet!r})"
            )
        message = f"GET {url}: HTTP {status}" + (f": {said}" if said else "")
        if status == 400:
            raise CheckError(f"the FHIR server rejected the search: {message}")
        if status in (401, 403):
            raise SourceError(f"authentication failed: {message}")
        raise SourceError(message)
    if not isinstance(body, dict):
        raise SourceError(f"GET {url}: expected a JSON object")
    return body


def diagnostics(body: dict[str, Any]) -> str:
    """An OperationOutcome's issue texts, joined (at most 500 characters)."""
    if body.get("resourceType") != "OperationOutcome":
        return ""
    texts = [
        str(i.get("diagnostics") or (i.get("details") or {}).get("text") or i.get("code"))
        for i in body.get("issue") or []
        if isinstance(i, dict)
    ]
    return "; ".join(texts)[:500]


def google_token() -> tuple[str, float]:
    """An access token from Google application default credentials (Cloud Healthcare API)."""
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError:
        raise SourceError(
            "sources.fhir.auth google needs google-auth and requests "
            "(pip install 'pytest-verial[gcp]')"
        ) from None
    try:
        credentials, _ = google.auth.default(scopes=[GOOGLE_SCOPE])
        credentials.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
    except Exception as exc:  # google-auth raises several unrelated types
        raise SourceError(
            f"Google default credentials unusable: {type(exc).__name__}: {exc}"
        ) from None
    return str(register(str(credentials.token))), 3000.0
