"""SHA-256 without OpenSSL's start-up, for the few short texts a scan hashes.

`import hashlib` loads OpenSSL and asks it for every digest it provides (~21 M
instructions, ~5% of `thinkfix scan` of one small session), though a scan hashes only a
leaked text for its fingerprint and the patterns of a compiled database for its cache
name. CPython's own SHA-256 (`_sha256`, `_sha2` from 3.12) gives the same digest at no
start-up cost; where neither exists (another interpreter), hashlib's. Whole files are
still hashed with hashlib (`engine.telemetry`), where OpenSSL's speed pays.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash


def _sha256() -> Callable[..., _Hash]:
    for name in ("_sha2", "_sha256"):  # CPython 3.12+, then 3.10 and 3.11
        try:
            return cast("Callable[..., _Hash]", importlib.import_module(name).sha256)
        except (ImportError, AttributeError):
            continue
    import hashlib  # another interpreter: OpenSSL's

    return hashlib.sha256


#: `hashlib.sha256`'s digest, from CPython's own implementation where there is one.
sha256 = _sha256()
