"""``verial serve`` and ``verial keys create|list|revoke``."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import socket
import sys
from typing import Any

from ..store._cli import add_store_argument, cli_rootdir, open_cli_store

LOOPBACK_NAMES = ("localhost",)
#: the HTTP protocol ``verial serve`` runs uvicorn with (an import path: workers import it)
GUARD = "pytest_verial.service._guard:GuardedProtocol"


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (``address already in use``), or None.

    Tried before uvicorn starts, with the socket options it binds with, so a busy port is one
    line and exit 2 instead of uvicorn's start-up and shutdown log lines."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return str(exc.strerror or exc)
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return str(exc.strerror or exc).lower()
    return None


# -- verial serve ------------------------------------------------------------------------------
def serve_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "benchmarks",
        nargs="*",
        metavar="BENCHMARK_PATHS",
        help="benchmark files or folders the server scores (POST /v1/verify-task names them "
        "by slug@version)",
    )
    add_store_argument(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--runs-root",
        metavar="DIR",
        default=".",
        help="folder that request run_dir values are relative to (default: the working "
        "directory); nothing outside it is ever read",
    )
    parser.add_argument(
        "--judge-model", metavar="ID", help="the judge's model for every judge criterion"
    )
    parser.add_argument(
        "--judge-base-url", metavar="URL", help="the judge's OpenAI-compatible endpoint"
    )
    parser.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="the environment variable holding the judge's key (the key is never logged)",
    )
    _limit_arguments(parser)


def _limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The service's limits, as the options table declares them (README, "Serving")."""
    from .._options import OPTIONS, SERVE_OPTIONS

    for opt in OPTIONS:
        if opt.serve:
            parser.add_argument(
                opt.serve,
                dest=opt.key,
                metavar="SIZE",
                help=f"{opt.help.split(' (default')[0]} (default {opt.serve_default})",
            )
    for name, spec in SERVE_OPTIONS.items():
        metavar = {"size": "SIZE", "seconds": "SECONDS", "whole": "N"}[spec.kind]
        parser.add_argument(
            spec.flag, dest=name, metavar=metavar, help=f"{spec.help} (default {spec.default})"
        )


def _limits(args: argparse.Namespace) -> Any:
    from .._options import SERVE_OPTIONS
    from ._limits import ServiceLimits

    names = ["max_file_size", "max_sandbox_size", *SERVE_OPTIONS]
    return ServiceLimits.from_mapping({name: getattr(args, name, None) for name in names})


def serve_run(args: argparse.Namespace) -> int:
    from ..store._core import StoreError, store_url_from

    try:
        import uvicorn

        from ._app import create_app
    except ImportError:
        print(
            "verial serve: needs FastAPI and uvicorn: pip install 'pytest-verial[serve]'",
            file=sys.stderr,
        )
        return 2
    from ._keys import active_keys
    from ._limits import LIMITS_ENV
    from ._logs import log_config

    if not 0 < args.port < 65536:
        print(f"verial serve: --port {args.port}: use 1-65535", file=sys.stderr)
        return 2
    if args.workers < 1:
        print(f"verial serve: --workers {args.workers}: use 1 or more", file=sys.stderr)
        return 2
    try:
        limits = _limits(args)
    except ValueError as exc:
        print(f"verial serve: {exc}", file=sys.stderr)
        return 2
    url = store_url_from(args.store, cli_rootdir())
    if url is None:
        print("verial serve: the service needs a results store (not --store none)", file=sys.stderr)
        return 2
    judge = {
        name: value
        for name, value in (
            ("judge_model", args.judge_model),
            ("judge_base_url", args.judge_base_url),
            ("judge_api_key_env", args.judge_api_key_env),
        )
        if value
    }
    try:
        app = create_app(url, args.benchmarks, args.runs_root, judge=judge, limits=limits)
        keys = active_keys(app.state.store)
    except (StoreError, ValueError) as exc:
        print(f"verial serve: {exc}", file=sys.stderr)
        return 2
    if keys == 0 and not is_loopback(args.host):
        app.state.store.close()
        print(
            f"verial serve: refusing to listen on {args.host} while no API key exists "
            "(create one: verial keys create --scope org)",
            file=sys.stderr,
        )
        return 2
    busy = port_problem(args.host, args.port)
    if busy is not None:
        app.state.store.close()
        print(
            f"verial serve: cannot listen on {args.host}:{args.port}: {busy} (another server "
            "there? choose another --port)",
            file=sys.stderr,
        )
        return 2
    # plans are found by slug@version and, for a benchmark of one version, by its slug too
    count = len({display for display, _, _ in app.state.benchmarks.plans.values()})
    print(
        f"verial serve: http://{args.host}:{args.port} over {app.state.store.url_masked} "
        f"({count} benchmark{'' if count == 1 else 's'}, "
        f"{keys} active key{'' if keys == 1 else 's'})",
        file=sys.stderr,
    )
    # the access log prints the method, path and status: never a header (keys travel only in
    # Authorization; one in a URL is refused), every line masked of credentials (_logs.py)
    os.environ[LIMITS_ENV] = limits.to_env()  # every worker's limits (_guard.py reads them)
    # uvicorn's HTTP protocol with deadlines for slow headers and bodies (_guard.py)
    if args.workers == 1:
        uvicorn.run(
            app,
            host=args.host,
            port=args.port,
            log_level="info",
            server_header=False,
            http=GUARD,
            log_config=log_config(),
        )
        return 0
    app.state.store.close()
    os.environ["VERIAL_SERVE_STORE"] = url
    os.environ["VERIAL_SERVE_BENCHMARKS"] = os.pathsep.join(args.benchmarks)
    os.environ["VERIAL_SERVE_RUNS_ROOT"] = args.runs_root
    os.environ["VERIAL_SERVE_JUDGE"] = json.dumps(judge)  # names only: the key stays in its var
    uvicorn.run(
        "pytest_verial.service._app:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="info",
        server_header=False,
        http=GUARD,
        log_config=log_config(),
    )
    return 0


# -- verial keys -------------------------------------------------------------------------------
def keys_configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="keys_command", metavar="create|list|revoke", required=True)
    create = sub.add_parser("create", help="create a key; it is printed once, never again")
    create.add_argument("--scope", choices=("org", "solver"), required=True)
    create.add_argument("--name", help="a label for the key (who or what uses it)")
    create.add_argument("--json", action="store_true", help="print JSON")
    add_store_argument(create)
    listing = sub.add_parser("list", help="list keys (ids, scopes, names; never the keys)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_store_argument(listing)
    revoke = sub.add_parser("revoke", help="revoke a key by its id (key_...)")
    revoke.add_argument("id", metavar="ID")
    add_store_argument(revoke)


def keys_run(args: argparse.Namespace) -> int:
    from ..store._core import StoreError
    from ._keys import create_key, list_keys, revoke_key

    name = f"verial keys {args.keys_command}"
    try:
        with open_cli_store(args.store, create=args.keys_command == "create") as store:
            if args.keys_command == "create":
                record, key = create_key(store, args.scope, args.name)
                if args.json:
                    print(json.dumps({**record.to_json(), "key": key}))
                else:
                    print(key)
                    print(
                        f"{record.id} ({record.scope}): store this key now; it is not shown again",
                        file=sys.stderr,
                    )
                return 0
            if args.keys_command == "list":
                keys = list_keys(store)
                if args.json:
                    print(json.dumps([k.to_json() for k in keys]))
                    return 0
                if not keys:
                    print("no keys (verial keys create --scope org)", file=sys.stderr)
                    return 0
                rows = [("id", "scope", "state", "created (UTC)", "name")]
                for k in keys:
                    state = f"revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "active"
                    rows.append(
                        (k.id, k.scope, state, f"{k.created_at:%Y-%m-%d %H:%M}", k.name or "")
                    )
                widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
                for row in rows:
                    print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
                return 0
            record = revoke_key(store, args.id)
            print(f"{record.id}: revoked")
            return 0
    except StoreError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
