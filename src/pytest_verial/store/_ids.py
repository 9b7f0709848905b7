"""Store ids: a type prefix and 26 Crockford base32 characters (48-bit ms time, 80 random bits).

They sort by creation, are URL-safe and opaque, and serve later as the HTTP API's ids.
"""

from __future__ import annotations

import os
import threading
import time

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PREFIXES = ("ses", "br", "tr", "cr", "jc")


_lock = threading.Lock()
_last = [0]


def new_id(prefix: str) -> str:
    """A fresh id such as ``br_01JX3Z...``; ids made by one process within one millisecond
    still sort in the order they were made."""
    with _lock:
        value = (int(time.time() * 1000) & (2**48 - 1)) << 80 | int.from_bytes(
            os.urandom(10), "big"
        )
        if value >> 80 == _last[0] >> 80 and value <= _last[0]:
            value = _last[0] + 1
        _last[0] = value
    chars = []
    for _ in range(26):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"
