"""``GET /healthz`` (the process is up) and ``GET /readyz`` (the store is reachable and its
schema is this version's)."""

from __future__ import annotations

from fastapi import APIRouter

from ...store import revisions
from ...store._repo_schema import schema_version
from ...store._tables import metadata
from .._deps import StoreDep
from .._http import Problem, problems
from .._schemas import Health, Ready

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up (answered on the event loop, no thread hop: quick while slow
    connections or large bodies keep the workers' threads busy)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Ready, responses=problems(503))
def readyz(store: StoreDep) -> Ready:
    """The store is reachable and its schema is this version's."""
    head = revisions()[-1]
    rev = store.read("check the schema", lambda conn: schema_version(conn)[0])
    if rev != head:
        raise Problem(503, f"store schema {rev} is not this version's {head}")
    return Ready.model_validate({"status": "ready", "schema": head, "tables": len(metadata.tables)})
