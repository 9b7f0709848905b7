"""Fixtures of the FHIR tests: a real FHIR server (Medplum's router, in memory) and a corpus.

The server is ``tests/servers/medplum/server.mjs``, installed by ``scripts/setup.d/30-medplum.sh``.
It is started once per session on 127.0.0.1 on a free port, with a bearer token required and an
OAuth2 client-credentials endpoint, and stopped by its PID at teardown.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from corpus import make_corpus  # noqa: E402
from medplum_support import MedplumServer, running_server  # noqa: E402


@pytest.fixture(scope="session")
def medplum() -> Iterator[MedplumServer]:
    """The running server, seeded with the corpus."""
    with running_server(make_corpus()) as server:
        yield server


#: the answer delay of ``medplum_slow``: long enough that concurrent searches overlap (a pool
#: sends its searches within a few milliseconds; the server's log, not a clock, shows the
#: overlap), short enough that the sequential runs, which wait it out request after request,
#: stay cheap: 300 ms made test_plugin_fhir_concurrent.py the suite's longest wait
SLOW_MS = 150


@pytest.fixture(scope="session")
def medplum_slow_server() -> Iterator[MedplumServer]:
    """A server holding the corpus that answers every FHIR request after ``SLOW_MS`` ms, one
    per test process: three modules use it, and under xdist each module's tests are spread
    over both workers, so a server per module was started up to six times (node, Medplum's
    router and the corpus: 10-15 s each on a loaded machine)."""
    with running_server(make_corpus(), "--latency", str(SLOW_MS)) as server:
        yield server


@pytest.fixture
def medplum_slow(medplum_slow_server: MedplumServer) -> MedplumServer:
    """The slow server with an empty request log and no injected faults: whatever a test of
    another module left (the tests only read the corpus; faults and the log are all a test
    changes), each test starts as on a fresh server."""
    medplum_slow_server.reset_log()
    return medplum_slow_server


@pytest.fixture(scope="module")
def medplum_synthea() -> Iterator[MedplumServer]:
    """A second server holding the Synthea export's MedicationRequests (real bulk data)."""
    from real_corpus import corpus_path

    path = corpus_path("fhir/synthea-10-patients/MedicationRequest.000.ndjson")
    lines = path.read_text(encoding="utf-8").splitlines()
    with running_server([json.loads(line) for line in lines if line.strip()]) as server:
        yield server


@pytest.fixture(scope="session")
def corpus() -> list[dict[str, Any]]:
    """The differential corpus."""
    return make_corpus()


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory, corpus: list[dict[str, Any]]) -> Path:
    """The corpus as a snapshot directory: a Bundle, an NDJSON file and single resources."""
    root = tmp_path_factory.mktemp("corpus") / "fhir"
    root.mkdir()
    third = len(corpus) // 3
    bundle = {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": [
            {"fullUrl": f"{r['resourceType']}/{r['id']}", "resource": r} for r in corpus[:third]
        ],
    }
    (root / "bundle.json").write_text(json.dumps(bundle), encoding="utf-8")
    with (root / "export.ndjson").open("w", encoding="utf-8") as handle:
        for r in corpus[third : 2 * third]:
            handle.write(json.dumps(r) + "\n")
    single = root / "resources"
    single.mkdir()
    for r in corpus[2 * third :]:
        (single / f"{r['resourceType']}-{r['id']}.json").write_text(json.dumps(r), encoding="utf-8")
    return root
