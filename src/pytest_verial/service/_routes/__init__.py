"""The service's routers, one per resource and flow, included by :func:`.._app.create_app`:

- :mod:`.health`: ``/healthz``, ``/readyz``;
- :mod:`.verify`: PRD-103's ``POST /verify-task`` (and ``/v1/verify-task``), cross-task
  consistency checks;
- :mod:`.jobs`: the async verify-task jobs;
- :mod:`.benchmark_runs`: the internal flow (an org key): create and cancel a benchmark run;
- :mod:`.v1_runs`: the v1 flow (a solver key or the run's bearer token): create a run, start
  and complete its task runs, read it, list runs, its report;
- :mod:`.task_runs`, :mod:`.criterion_runs`: the levels below a run (an org key);
- :mod:`.docs`: the API's documentation page, served from a local package.
"""

from __future__ import annotations

from fastapi import APIRouter

from . import benchmark_runs, criterion_runs, docs, health, jobs, task_runs, v1_runs, verify

#: every router of the API, in the order /openapi.json lists them
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    verify.router,
    jobs.router,
    benchmark_runs.router,
    v1_runs.router,
    task_runs.router,
    criterion_runs.router,
)

__all__ = ["ROUTERS", "docs"]
