"""``verial serve``: verification over HTTP (needs the ``[serve]`` extra)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import socket
import sys
from typing import Any

from .._config.store_option import add_store_argument, cli_rootdir

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
def configure(parser: argparse.ArgumentParser) -> None:
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
    from .._config.options import OPTIONS, SERVE_OPTIONS

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
    from .._config.options import SERVE_OPTIONS
    from ..service._limits import ServiceLimits

    names = ["max_file_size", "max_sandbox_size", *SERVE_OPTIONS]
    return ServiceLimits.from_mapping({name: getattr(args, name, None) for name in names})


class _Refused(Exception):
    """Why ``verial serve`` does not start (one line, exit 2)."""


def _checked(args: argparse.Namespace) -> tuple[Any, str]:
    """The limits and the store's URL the arguments give (_Refused when one is unusable)."""
    from ..store._core import store_url_from

    if not 0 < args.port < 65536:
        raise _Refused(f"--port {args.port}: use 1-65535")
    if args.workers < 1:
        raise _Refused(f"--workers {args.workers}: use 1 or more")
    try:
        limits = _limits(args)
    except ValueError as exc:
        raise _Refused(str(exc)) from None
    url = store_url_from(args.store, cli_rootdir())
    if url is None:
        raise _Refused("the service needs a results store (not --store none)")
    return limits, url


def _judge(args: argparse.Namespace) -> dict[str, str]:
    """The server's judge settings given (names only: a key stays in its variable)."""
    return {
        name: value
        for name, value in (
            ("judge_model", args.judge_model),
            ("judge_base_url", args.judge_base_url),
            ("judge_api_key_env", args.judge_api_key_env),
        )
        if value
    }


def _opened(
    args: argparse.Namespace, url: str, judge: dict[str, str], limits: Any
) -> tuple[Any, int]:
    """The app over the store and its active keys, once it may listen where asked (_Refused
    otherwise)."""
    from ..service._app import create_app
    from ..service._keys import active_keys
    from ..store import StoreError

    try:
        app = create_app(url, args.benchmarks, args.runs_root, judge=judge, limits=limits)
        keys = active_keys(app.state.store)
    except (StoreError, ValueError) as exc:
        raise _Refused(str(exc)) from None
    if keys == 0 and not is_loopback(args.host):
        app.state.store.close()
        raise _Refused(
            f"refusing to listen on {args.host} while no API key exists "
            "(create one: verial keys create --scope org)"
        )
    busy = port_problem(args.host, args.port)
    if busy is not None:
        app.state.store.close()
        raise _Refused(
            f"cannot listen on {args.host}:{args.port}: {busy} (another server "
            "there? choose another --port)"
        )
    return app, keys


def _serve(app: Any, args: argparse.Namespace, url: str, judge: dict[str, str]) -> None:
    """uvicorn over ``app`` (one worker), or over workers that each make it from the
    environment; its HTTP protocol with deadlines for slow headers and bodies (_guard.py)."""
    import uvicorn

    from ..service._logs import log_config

    # the access log prints the method, path and status: never a header (keys travel only in
    # Authorization; one in a URL is refused), every line masked of credentials (_logs.py)
    common: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": "info",
        "server_header": False,
        "http": GUARD,
        "log_config": log_config(),
    }
    if args.workers == 1:
        uvicorn.run(app, **common)
        return
    app.state.store.close()
    os.environ["VERIAL_SERVE_STORE"] = url
    os.environ["VERIAL_SERVE_BENCHMARKS"] = os.pathsep.join(args.benchmarks)
    os.environ["VERIAL_SERVE_RUNS_ROOT"] = args.runs_root
    os.environ["VERIAL_SERVE_JUDGE"] = json.dumps(judge)  # names only: the key stays in its var
    uvicorn.run(
        "pytest_verial.service._app:app_from_env", factory=True, workers=args.workers, **common
    )


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: F401

        from ..service import _app  # noqa: F401
    except ImportError:
        print(
            "verial serve: needs FastAPI and uvicorn: pip install 'pytest-verial[serve]'",
            file=sys.stderr,
        )
        return 2
    from ..service._limits import LIMITS_ENV

    try:
        limits, url = _checked(args)
        judge = _judge(args)
        app, keys = _opened(args, url, judge, limits)
    except _Refused as exc:
        print(f"verial serve: {exc}", file=sys.stderr)
        return 2
    # plans are found by slug@version and, for a benchmark of one version, by its slug too
    count = len({display for display, _, _ in app.state.benchmarks.plans.values()})
    print(
        f"verial serve: http://{args.host}:{args.port} over {app.state.store.url_masked} "
        f"({count} benchmark{'' if count == 1 else 's'}, "
        f"{keys} active key{'' if keys == 1 else 's'})",
        file=sys.stderr,
    )
    os.environ[LIMITS_ENV] = limits.to_env()  # every worker's limits (_guard.py reads them)
    _serve(app, args, url, judge)
    return 0
