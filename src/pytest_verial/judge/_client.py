"""An OpenAI-compatible chat-completions client for rubric judging.

``POST {base_url}/chat/completions`` with temperature 0, a seed, and JSON output requested.
Bearer token from the environment variable named by ``api_key_env`` (none sent when it is
unset, as local servers need none). Transport errors, timeouts, 429 and 5xx are retried, and so
are replies that do not parse (:mod:`._reply`), with the bad reply and the reason added to the
conversation so that a temperature-0 judge does not repeat itself. After ``retries`` more
attempts the criterion is *not evaluated* (:class:`JudgeError`, a
:class:`~pytest_verial._errors.NotEvaluatedError` whose ``reason`` says which of
:data:`~pytest_verial._not_evaluated.REASONS`), never a pass and never the agent's failure.
Other 4xx (bad key, unknown model) are not retried. Good replies are cached on disk by the
hash of the first request. No message names the judge's URL or its key.

The API key is registered for masking (:mod:`pytest_verial._secrets`) when the client is made,
before any cache lookup, so a cached reply that quotes it is masked too; the cache itself only
ever stores masked replies (:mod:`._cache`).

One client per process and settings (:func:`shared_client`), so the connection pool is reused
by every criterion of a worker.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._errors import NotEvaluatedError
from .._not_evaluated import (
    NOT_CONFIGURED,
    NOT_INSTALLED,
    REFUSED,
    TIMED_OUT,
    UNAVAILABLE,
    UNPARSEABLE,
    UNREACHABLE,
)
from .._secrets import register_setting
from ._cache import ReplyCache
from ._prompt import build_payload, correction, max_tokens, prompt_hash, response_format
from ._reply import MalformedReply, Ratings, parse_reply
from ._settings import JudgeSettings


class JudgeError(NotEvaluatedError):
    """The judge gave no usable reply (not configured, unreachable, timed out, errors, or
    malformed after retries): the criterion is not evaluated, for ``reason``.

    ``calls``, ``tokens`` (prompt, completion) and ``cost`` say what the attempts consumed;
    ``problems`` why each attempt failed (no URL, no key).
    """

    def __init__(
        self,
        message: str,
        calls: int = 0,
        tokens: tuple[int, int] = (0, 0),
        cost: float = 0.0,
        reason: str = UNREACHABLE,
        problems: list[str] | None = None,
    ) -> None:
        super().__init__(reason, message)
        self.calls, self.tokens, self.cost = calls, tokens, cost
        self.problems = problems or []


@dataclass
class Judgement:
    """The outcome of one rubric evaluation, with its cost."""

    ratings: Ratings
    prompt_hash: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    cached: bool = False
    calls: int = 0  # HTTP requests made for this evaluation (0 when cached)
    problems: list[str] = field(default_factory=list)  # why earlier attempts were retried


class JudgeClient:
    """Rates principles through an OpenAI-compatible endpoint."""

    def __init__(self, settings: JudgeSettings, transport: Any = None) -> None:
        try:
            import httpx
        except ImportError:
            raise JudgeError(
                "the LLM judge needs httpx: pip install 'pytest-verial[live]'",
                reason=NOT_INSTALLED,
            ) from None

        self.settings = settings
        self._api_key()  # registered before any cache lookup or request
        self.cache = ReplyCache(settings.cache_dir)
        self._httpx = httpx
        self._http = httpx.Client(timeout=settings.timeout, transport=transport)
        self.calls = 0
        self.cache_hits = 0
        # judge criteria scored at once (pytest_verial/_judge_concurrency.py) share this client
        self._lock = threading.Lock()
        self._keys: dict[str, tuple[threading.Lock, int]] = {}

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _api_key(self) -> str:
        """The API key from the environment (stripped; registered as a secret), or ''."""
        value = os.environ.get(self.settings.api_key_env, "")
        register_setting("api_key_env", value)
        return value.strip()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def rate(
        self, principles: list[str], messages: list[dict[str, str]], sample: int = 0
    ) -> Judgement:
        """Rate ``principles`` given prepared ``messages``; raise JudgeError when impossible.

        ``sample`` > 0 (``--verial-judge-samples``): another draw of the same evaluation, with
        the seed moved by ``sample`` and its own cache key."""
        settings = self.settings
        if not settings.model:
            raise JudgeError(
                "no judge model configured: set --verial-judge-model, the ini key "
                "verial_judge_model, or sources.judge.model in run.yaml",
                reason=NOT_CONFIGURED,
            )
        count = len(principles)
        payload = build_payload(
            settings.model,
            messages,
            temperature=settings.temperature,
            seed=settings.seed + sample if settings.seed is not None else None,
            fmt=response_format(settings.response_format, count),
            limit=settings.max_tokens or max_tokens(count),
        )
        # the sample index is in the key (never sent): samples differ even without a seed
        key = prompt_hash(payload) if not sample else prompt_hash({**payload, "sample": sample})
        with self._evaluation(key):
            return self._rate(key, payload, count)

    @contextmanager
    def _evaluation(self, key: str) -> Iterator[None]:
        """One evaluation of ``key`` at a time: with judge criteria scored at once, a second
        identical evaluation waits for the first and is then served from the cache, as it
        would be had they run one after another (and is sent itself when the cache is off)."""
        with self._lock:
            lock, users = self._keys.get(key, (threading.Lock(), 0))
            self._keys[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                lock, users = self._keys[key]
                if users > 1:
                    self._keys[key] = (lock, users - 1)
                else:
                    del self._keys[key]

    def _count(self, calls: int = 0, cache_hits: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.cache_hits += cache_hits

    def _rate(self, key: str, payload: dict[str, Any], count: int) -> Judgement:
        """``rate`` for one cache key: from the cache, else from the judge."""
        settings = self.settings
        assert settings.model is not None  # rate refused to start without one
        cached = self.cache.get(key)
        if cached is not None:
            try:
                ratings = parse_reply(cached["content"], count)
            except MalformedReply:
                cached = None
            else:
                self._count(cache_hits=1)
                usage = cached.get("usage") or {}
                return Judgement(
                    ratings,
                    key,
                    settings.model,
                    int(usage.get("prompt_tokens", 0)),
                    int(usage.get("completion_tokens", 0)),
                    cost=0.0,
                    cached=True,
                    calls=0,
                )
        url = settings.base_url.rstrip("/") + "/chat/completions"
        problems: list[str] = []
        reason = UNREACHABLE  # of the last attempt
        tokens = [0, 0]
        request = payload
        attempts = max(0, settings.retries) + 1
        for attempt in range(attempts):
            if attempt and settings.backoff > 0:
                time.sleep(settings.backoff * 2 ** (attempt - 1))
            self._count(calls=1)
            try:
                content, usage = self._post(url, request)
            except JudgeError as exc:  # refused (4xx): not retried
                exc.calls, exc.problems = attempt + 1, [*problems, *exc.problems]
                raise
            except _Retry as exc:
                problems.append(str(exc))
                reason = exc.reason
                continue
            tokens[0] += int(usage.get("prompt_tokens") or 0)
            tokens[1] += int(usage.get("completion_tokens") or 0)
            try:
                ratings = parse_reply(content, count)
            except MalformedReply as exc:
                problems.append(f"malformed reply: {exc}")
                reason = UNPARSEABLE
                reply = content if isinstance(content, str) else json.dumps(content)
                request = correction(payload, reply, str(exc), count)
                continue
            cost, known = settings.cost(*tokens)
            self.cache.put(key, {"content": content, "usage": usage, "model": settings.model})
            return Judgement(
                ratings,
                key,
                settings.model,
                tokens[0],
                tokens[1],
                cost,
                known,
                cached=False,
                calls=attempt + 1,
                problems=problems,
            )
        raise JudgeError(
            f"judge {settings.model} gave no usable reply in {attempts} attempt(s): "
            + "; ".join(problems[-3:]),
            calls=attempts,
            tokens=(tokens[0], tokens[1]),
            cost=settings.cost(*tokens)[0],
            reason=reason,
            problems=problems,
        )

    def _post(self, url: str, payload: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """One request; returns (content, usage) or raises _Retry / JudgeError."""
        httpx = self._httpx
        try:
            response = self._http.post(url, json=payload, headers=self._headers())
        except httpx.TimeoutException:
            raise _Retry(TIMED_OUT, f"timed out after {self.settings.timeout:g}s") from None
        except httpx.HTTPError as exc:
            # the exception's type only: its text may carry the judge's address
            raise _Retry(UNREACHABLE, f"cannot reach the judge: {type(exc).__name__}") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Retry(f"{UNAVAILABLE} (HTTP {status})", f"HTTP {status}")
        if status >= 400:
            raise JudgeError(
                f"judge {self.settings.model}: HTTP {status}: {_snippet(response.text)} "
                "(not retried)",
                calls=1,
                reason=f"{REFUSED} (HTTP {status})",
                problems=[f"HTTP {status} (not retried)"],
            )
        try:
            body = response.json()
            content = body["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _Retry(
                UNPARSEABLE, f"response is not a chat completion: {_snippet(response.text)}"
            ) from None
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        return content, usage


class _Retry(Exception):
    """A failed attempt worth retrying, and the reason it gives when it is the last."""

    def __init__(self, reason: str, problem: str) -> None:
        super().__init__(problem)
        self.reason = reason


def _snippet(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


_CLIENTS: dict[str, JudgeClient] = {}
_LOCK = threading.Lock()


def shared_client(settings: JudgeSettings) -> JudgeClient:
    """The process-wide client for ``settings`` (created on first use)."""
    with _LOCK:
        key = repr(settings)  # the settings hold a dict (prices): key by their full repr
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = JudgeClient(settings)
        return client


def close_clients() -> None:
    """Close every shared client (end of session)."""
    with _LOCK:
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()
