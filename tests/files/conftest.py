"""Fixtures for the files tests: a check runner, a realistic tree, a real GCS emulator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_verial import CheckContext, CheckOutcome, Task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CriterionError
from pytest_verial._models import Criterion
from pytest_verial.checks._files import SftpFilePresent
from pytest_verial.checks._registry import builtin_check

from .emulator import Emulator

CHECK = builtin_check("sftp-file-present")

BUCKET = "verial-sftp"
#: sandboxes of the shared tree; "sandbox-1" is a string-prefix of "sandbox-10"
SANDBOXES = ("sandbox-1", "sandbox-10", "sandbox-2", "sandbox-3")


def run_check(assertion: dict[str, Any], source: Any) -> CheckOutcome:
    """Validate ``assertion`` and run ``sftp-file-present`` on ``source``."""
    spec = SftpFilePresent.model_validate({"assert": "sftp-file-present", **assertion})
    task = Task(id="t", criteria=[Criterion(assertion={"assert": "sftp-file-present"})])
    ctx = CheckContext(
        sources={"files": source},
        task=task,
        task_key="t",
        criterion=task.criteria[0],
        criterion_id="c",
        entity=None,
        pass_threshold=1.0,
    )
    return CHECK.run(spec, ctx)


def result(assertion: dict[str, Any], source: Any) -> dict[str, Any]:
    """The outcome as plain data with the source's location replaced by ``<prefix>/``."""
    where = source.describe()
    try:
        out = run_check(assertion, source)
    except CriterionError as exc:
        return {"error": str(exc).replace(where, "<prefix>/")}
    text = json.dumps({"score": out.score, "details": out.details, "evidence": out.evidence})
    return json.loads(text.replace(where, "<prefix>/"))  # type: ignore[no-any-return]


def _claims_batch(sandbox: str, n: int) -> dict[str, Any]:
    return {
        "batch_id": f"{sandbox}-B{n:04d}",
        "payer": "Aetna" if n % 2 else "Blue Cross",
        "claims": [
            {"claim_id": f"CLM-{n:04d}-{k}", "cpt": "72148", "amount": 1250.0 + k} for k in range(3)
        ],
    }


def build_tree(root: Path, per_sandbox: int = 100) -> int:
    """Write the shared tree: every sandbox holds claims, referrals, a CSV and notes."""
    count = 0
    for index, sandbox in enumerate(SANDBOXES):
        base = root / sandbox
        claims = base / "outbound" / "claims"
        referrals = base / "outbound" / "referrals" / "2026" / "11"
        inbox = base / "inbox" / "eligibility"
        for folder in (claims, referrals, inbox):
            folder.mkdir(parents=True, exist_ok=True)
        for n in range(per_sandbox):
            (claims / f"batch-{n:04d}.json").write_text(json.dumps(_claims_batch(sandbox, n)))
            (referrals / f"referral-{n:04d}.txt").write_text(
                f"REFERRAL PACKET {sandbox}/{n}\nPatient: Maria Chen\nReason: lumbar MRI\n"
                f"Referring: Dr. Rivera\n"
            )
            (inbox / f"response-{n:04d}.ndjson").write_text(
                "\n".join(json.dumps({"member_id": f"M{n}{k}", "active": k != 1}) for k in range(3))
                + "\n"
            )
            count += 3
        (base / "outbound" / "claims.csv").write_text(
            "claim_id,patient,amount\n"
            + "".join(f"CLM-{index}-{k},Patient {k},{100 * (k + 1)}\n" for k in range(5))
        )
        (base / "outbound" / "README").write_text("no extension here\n")
        count += 2
    return count


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The shared tree on disk (>= 1,200 files under four sandbox prefixes)."""
    root = tmp_path_factory.mktemp("sftp-tree")
    return root, build_tree(root)


@pytest.fixture(scope="session")
def emulator(
    tmp_path_factory: pytest.TempPathFactory, tree: tuple[Path, int]
) -> Iterator[Emulator]:
    """A gcp-storage-emulator process for the session holding the shared tree in BUCKET."""
    pytest.importorskip("google.cloud.storage", reason="google-cloud-storage not installed")
    server = Emulator(tmp_path_factory.mktemp("emulator"))
    root, count = tree
    assert server.seed(BUCKET, root) == count
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def bucket(emulator: Emulator) -> str:
    """The bucket holding the shared tree (object names = paths below the tree's root)."""
    return BUCKET
