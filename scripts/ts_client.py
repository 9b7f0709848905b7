"""Regenerate the TypeScript client example's types from the service's OpenAPI (issue 30):
``examples/ts-client/api.d.ts``, openapi-typescript's types of the schema ``verial serve``
answers at /openapi.json (the generator is in the example's node_modules:
``bash scripts/setup.d/70-ts-client.sh`` installs it).

    python scripts/ts_client.py          # write api.d.ts
    python scripts/ts_client.py --check  # exit 1 when it is out of date

tests/service/test_service_openapi.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ts-client"
TYPES = EXAMPLE / "api.d.ts"
GENERATOR = EXAMPLE / "node_modules" / ".bin" / "openapi-typescript"


def spec() -> dict[str, object]:
    """The service's OpenAPI as ``verial serve`` answers it (any store, no benchmark)."""
    from pytest_verial.service import create_app

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(f"sqlite:///{Path(tmp) / 'store.db'}")
        try:
            return app.openapi()
        finally:
            app.state.store.close()


def types() -> str:
    """openapi-typescript's types of the service's OpenAPI."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "openapi.json"
        source.write_text(json.dumps(spec(), indent=2), encoding="utf-8")
        out = Path(tmp) / "api.d.ts"
        subprocess.run(
            [str(GENERATOR), str(source), "--output", str(out)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        return out.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when api.d.ts is out of date")
    args = parser.parse_args(argv)
    if not GENERATOR.exists():
        print(f"{GENERATOR.relative_to(ROOT)}: missing (bash scripts/setup.d/70-ts-client.sh)")
        return 2
    text = types()
    current = TYPES.exists() and TYPES.read_text(encoding="utf-8") == text
    if args.check:
        if not current:
            print(f"{TYPES.relative_to(ROOT)}: out of date (python scripts/ts_client.py)")
        return 0 if current else 1
    TYPES.write_text(text, encoding="utf-8")
    print(f"{TYPES.relative_to(ROOT)}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
