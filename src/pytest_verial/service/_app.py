"""The service's FastAPI application, assembled: :func:`create_app` opens the store, loads the
benchmarks, and puts together the middleware, the error handlers, the routers
(:mod:`._routes`), the documentation page and the browser's pages. Nothing is decided here.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from .._sandbox_io.kept import keep_indexes
from .._version import __version__
from ..store import open_store
from ._deps import refused_unchecked
from ._hide import ServerPaths, server_folders
from ._http import (
    MAX_BODY,
    BodyGuard,
    document_errors,
    document_parameters,
    install_problem_handlers,
)
from ._jobs import JobRunner
from ._limits import ServiceLimits
from ._routes import ROUTERS, docs
from ._routes.verify import job_worker
from ._schemas import type_evidence
from ._verifier import Verifier, load_benchmarks
from ._views import install_views

__all__ = ["create_app", "load_benchmarks"]

DESCRIPTION = """The verification engine of pytest-verial over HTTP (PRD-103's verify-task and
Verial's run API). Every route but /healthz, /readyz and /openapi.json needs
`Authorization: Bearer KEY`: an organization key (`vk_`) for the internal routes and to read task
runs and criterion runs; a solver key (`vrl_slv_`) or a run's bearer token (`vrl_run_`) for the v1
flow. A body that breaks this schema is a 400; one that keeps it but names what the server does
not have or cannot use is a 422; what a key may not see is a 404. Errors are
application/problem+json."""


def create_app(
    store_url: str,
    benchmark_paths: Sequence[str | Path] = (),
    runs_root: str | Path = ".",
    *,
    max_body: int = MAX_BODY,
    judge: Mapping[str, str] | None = None,
    limits: ServiceLimits | None = None,
) -> FastAPI:
    """The service over the store at ``store_url`` (opened, created and migrated now), scoring
    the benchmarks in ``benchmark_paths`` on run folders under ``runs_root``. ``judge``: the
    server's judge settings (``judge_model``, ``judge_base_url``, ``judge_api_key_env``), used
    for every judge criterion; a caller never chooses the judge. ``limits``: what one request
    may cost (:mod:`._limits`; the options table's defaults without).

    Raises StoreError or ValueError (one line) when the store or a benchmark is unusable."""
    store = open_store(store_url)
    try:
        benchmarks = load_benchmarks(benchmark_paths)
        root = Path(runs_root).resolve()
        if not root.is_dir():
            raise ValueError(f"--runs-root {runs_root}: no such folder")
    except BaseException:
        store.close()
        raise
    verifier = Verifier(benchmarks, root, judge, limits or ServiceLimits())
    paths = ServerPaths(
        server_folders(root, [Path(p).resolve() for p in benchmark_paths]),
        (judge or {}).get("judge_base_url"),
    )
    runner = JobRunner(store, job_worker(store, verifier), hide=paths.text)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runner.start()  # async verify-task jobs, claimed from the store (:mod:`._jobs`)
        keep_indexes()  # a run folder scored again is not read again while it is unchanged
        try:
            yield
        finally:
            keep_indexes(False)
            runner.stop()
            store.close()

    app = FastAPI(
        lifespan=lifespan,
        title="pytest-verial service",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # served from a local package by :mod:`._routes.docs`
        redoc_url=None,  # ReDoc loads its script and fonts from elsewhere: not served
        swagger_ui_oauth2_redirect_url=None,
    )
    app.state.store = store
    app.state.benchmarks = benchmarks
    app.state.runs_root = root
    app.state.verifier = verifier
    app.state.server_paths = paths
    app.state.jobs = runner
    install_problem_handlers(app, refused_unchecked)
    stock_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = document_parameters(document_errors(stock_openapi()))
            app.openapi_schema = type_evidence(spec)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_middleware(BodyGuard, limit=max_body)
    for router in ROUTERS:
        app.include_router(router)
    docs.install(app)
    install_views(app, store)  # the browser's pages: runs, a run, two runs, a trend
    return app


def app_from_env() -> FastAPI:
    """The app ``verial serve`` starts in each uvicorn worker (configured by environment)."""
    return create_app(
        os.environ["VERIAL_SERVE_STORE"],
        [p for p in os.environ.get("VERIAL_SERVE_BENCHMARKS", "").split(os.pathsep) if p],
        os.environ.get("VERIAL_SERVE_RUNS_ROOT", "."),
        judge=json.loads(os.environ.get("VERIAL_SERVE_JUDGE") or "{}"),
        limits=ServiceLimits.from_env(),
    )
