"""``verial keys create|list|revoke``: the service's API keys, in the results store."""

from __future__ import annotations

import argparse
import json
import sys

from .._config.store_option import add_store_argument, open_cli_store


def configure(parser: argparse.ArgumentParser) -> None:
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


def run(args: argparse.Namespace) -> int:
    from ..service._keys import create_key, list_keys, revoke_key
    from ..store import StoreError

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
