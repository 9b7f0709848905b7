"""``verial view``: the browser's pages over the project's results store, read-only, on
127.0.0.1, without keys (as ``inspect view`` serves its logs).

The same pages as ``verial serve`` (:mod:`pytest_verial.service._views`: the index, a run,
two runs side by side, a benchmark's trend), installed ``keyless``: no sign-in or sign-out, no
API route, no key route, nothing but GET pages (any other method is a 405). Having no key, it
listens on 127.0.0.1 only: any other ``--host`` is refused in one line (exit 2). The store is
found as ``verial runs`` finds it (``--store``, ``$VERIAL_STORE``, else the project's
``.verial/results.db``) and never created.
"""

from __future__ import annotations

import argparse
import sys

from .._config.store_option import add_store_argument, open_cli_store
from .._display import escape

#: the only address ``verial view`` listens on (it has no sign-in)
HOST = "127.0.0.1"


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument(
        "--host",
        default=HOST,
        help=f"address to bind: {HOST} only (the pages need no key: use verial serve, with "
        "keys, to share them)",
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 with one line on a refused host, a bad port or no store."""
    if args.host != HOST:
        print(
            f"verial view: --host {escape(args.host)}: the pages have no sign-in, so they are "
            f"served on {HOST} only (to share them, use verial serve with keys)",
            file=sys.stderr,
        )
        return 2
    if not 0 < args.port < 65536:
        print(f"verial view: --port {args.port}: use 1-65535", file=sys.stderr)
        return 2
    try:
        import uvicorn
        from fastapi import FastAPI

        from ..service._views import install_views
        from .serve import port_problem
    except ImportError:
        print(
            "verial view: needs FastAPI and uvicorn: pip install 'pytest-verial[serve]'",
            file=sys.stderr,
        )
        return 2
    from ..store import StoreError

    try:
        store = open_cli_store(args.store)
    except StoreError as exc:
        print(f"verial view: {escape(str(exc))}", file=sys.stderr)
        return 2
    try:
        busy = port_problem(HOST, args.port)
        if busy is not None:
            print(
                f"verial view: cannot listen on {HOST}:{args.port}: {busy} (another server "
                "there? choose another --port)",
                file=sys.stderr,
            )
            return 2
        app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
        install_views(app, store, keyless=True)
        print(
            f"verial view: http://{HOST}:{args.port} over {store.url_masked} (read-only, no "
            "sign-in; Ctrl-C stops)",
            file=sys.stderr,
        )
        uvicorn.run(app, host=HOST, port=args.port, log_level="warning", server_header=False)
    finally:
        store.close()
    return 0
