"""``verial serve`` (issue 20): the verification engine over HTTP, over the results store.

:func:`create_app` builds the FastAPI application (``app.py``); keys are in ``keys.py``, the
store reads and writes in ``runs.py``, problem+json and the body guard in ``http.py``, the
commands in ``cli.py``. FastAPI and uvicorn come with the ``[serve]`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI


def create_app(store_url: str, benchmark_paths: Any = (), runs_root: Any = ".") -> FastAPI:
    """See :func:`pytest_verial.service._app.create_app`."""
    from ._app import create_app as build

    return build(store_url, benchmark_paths, runs_root)


__all__ = ["create_app"]
