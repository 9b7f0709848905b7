"""``verial serve`` (issue 20): the verification engine over HTTP, over the results store.

Public API (README, "Public API"): :func:`create_app` builds the FastAPI application, for a
deployment that serves it under its own ASGI server; API keys are managed with ``verial keys``
(``_keys.py``). The modules behind them are private: ``_app.py`` assembles the routers of
``_routes/`` over the dependencies of ``_deps.py``; the store's repositories
(``store/_repo_*.py``) hold every statement they run. FastAPI and uvicorn come with the
``[serve]`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI


def create_app(
    store_url: str,
    benchmark_paths: Any = (),
    runs_root: Any = ".",
    *,
    max_body: int | None = None,
    judge: Mapping[str, str] | None = None,
    limits: Mapping[str, Any] | None = None,
) -> FastAPI:
    """The FastAPI application over the store at ``store_url`` (see ``service/_app.py``):
    ``max_body`` caps a request body (default 8 MiB), ``judge`` holds the server's judge
    settings (``judge_model``, ``judge_base_url``, ``judge_api_key_env``), ``limits`` the
    settings of ``verial serve``'s limits by name (``max_file_size="64MiB"``,
    ``max_inline_criteria=200``, ...: README, "Serving"; ValueError for a bad one)."""
    from ._app import create_app as build
    from ._http import MAX_BODY
    from ._limits import ServiceLimits

    limit = MAX_BODY if max_body is None else max_body
    bounds = ServiceLimits.from_mapping(limits)
    return build(store_url, benchmark_paths, runs_root, max_body=limit, judge=judge, limits=bounds)


__all__ = ["create_app"]
