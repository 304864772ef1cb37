"""Many byte patterns found in one native pass: hyperscan, where the `fast` extra installed it.

Two jobs search the same bytes for many things at once and pay in Python per search: the
scan's byte passes (`engine.scan.native`: assistant lines, delimiters) and the secret screen
(`engine.secrets.rules`: which of ~260 rule keywords a text holds, one `in` each, ~150 µs a
snippet). Both get their databases here, compiled once per pattern set and thread (a
database's scratch space serves one scan at a time). Every caller keeps a pure path with the
same answer for where hyperscan is missing, refuses a pattern, or `THINKFIX_PURE` is set.

Compiling the scan's delimiter checks costs ~40 ms, paid again by every process (each CLI
run, each pool worker), so a compiled database is kept on disk (`_cache_path`): in
`$THINKFIX_CACHE_DIR`, else the user's cache folder (`cache_folder`: `~/.cache/thinkfix` on
Linux), named by a hash of hyperscan's version, the machine and the patterns, never by
anything a scanned file or a config says. hyperscan checks a loaded database's checksum and
platform; one it refuses, or a folder that cannot be read or written, costs a compile, as
before.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from thinkfix.io.digest import sha256

#: `THINKFIX_PURE` set (not "0"): every caller takes its pure path (the tests' and the bench's
#: switch; each caller reads it through its own module constant so a test can patch one).
PURE = os.environ.get("THINKFIX_PURE", "") not in ("", "0")
SINGLEMATCH = 8  # HS_FLAG_SINGLEMATCH: a pattern is reported once per scan
SOM_LEFTMOST = 256  # HS_FLAG_SOM_LEFTMOST: a match's start is reported too

Present = Callable[[bytes], set[int]]


def hyperscan_module() -> Any:
    """The hyperscan module, or None where it is not installed (imported on first use)."""
    try:
        import hyperscan  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    return hyperscan


@lru_cache(maxsize=64)
def literal(word: bytes) -> bytes:
    """A pattern matching exactly `word` (every byte but ASCII letters and digits as `\\xHH`)."""
    return b"".join(bytes([c]) if chr(c).isalnum() and c < 128 else b"\\x%02x" % c for c in word)


@lru_cache(maxsize=32)
def database(patterns: tuple[bytes, ...], flags: tuple[int, ...], thread: int) -> Any:
    """The block-mode database of `patterns` (ids their indices), or None where hyperscan is
    missing or refuses one of them. One per thread (its scratch serves one scan at a time)."""
    hs = hyperscan_module()
    if hs is None:
        return None
    path = _cache_path(hs, patterns, flags)
    db = _load(hs, path) if path is not None else None
    if db is not None:
        return db
    db = hs.Database(mode=hs.HS_MODE_BLOCK)
    try:
        db.compile(
            expressions=list(patterns),
            ids=list(range(len(patterns))),
            elements=len(patterns),
            flags=list(flags),
        )
    except Exception:  # noqa: BLE001 - hyperscan's compile error: the pure pass runs
        return None
    if path is not None:
        _store(hs, path, db)
    return db


def _cache_path(hs: Any, patterns: tuple[bytes, ...], flags: tuple[int, ...]) -> str | None:
    """Where the compiled database of these patterns is kept, or None (no cache folder).
    Its imports are here: only a process that builds a database pays for them."""
    import platform

    folder = cache_folder()
    if folder is None:
        return None
    key = sha256()
    for part in (getattr(hs, "__version__", ""), platform.machine(), *map(str, flags)):
        key.update(part.encode() + b"\0")
    for pattern in patterns:
        key.update(len(pattern).to_bytes(8, "little") + pattern)
    return os.path.join(folder, "hyperscan", f"{key.hexdigest()}.db")


def cache_folder() -> str | None:
    """`$THINKFIX_CACHE_DIR`, else the user's cache folder for thinkfix (None: none known).

    On Linux that is the XDG Base Directory rule, as platformdirs applies it:
    `$XDG_CACHE_HOME/thinkfix` where that is an absolute path (the spec ignores a relative
    one), else `$HOME/.cache/thinkfix`. Spelled here because importing platformdirs (with
    pathlib, tempfile and shutil) cost ~10 ms of every process that loads a database, a
    tenth of a 6 MB scan; elsewhere, or without an absolute home, platformdirs answers."""
    folder = os.environ.get("THINKFIX_CACHE_DIR", "").strip()
    if folder:
        return folder
    if sys.platform.startswith("linux"):
        xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", "")
        if os.path.isabs(xdg):
            return os.path.join(xdg, "thinkfix")
        if os.path.isabs(home):
            return os.path.join(home.rstrip("/") or "/", ".cache", "thinkfix")  # as `~` expands
    try:
        from platformdirs import user_cache_dir

        return user_cache_dir("thinkfix", appauthor=False)
    except Exception:  # noqa: BLE001 - no home to resolve (or no platformdirs): no cache
        return None


def _load(hs: Any, path: str) -> Any:
    """The database kept at `path`, with its scratch space, or None (missing, unreadable, or
    refused by hyperscan: corrupt, or built for another version or CPU, which a first scan
    finds, here rather than in the middle of a file)."""
    try:
        with open(path, "rb") as fp:
            db = hs.loadb(fp.read(), hs.HS_MODE_BLOCK)
        db.scratch = hs.Scratch(db)  # a loaded database comes without one
        db.scan(b"\n", match_event_handler=_ignore)
    except Exception:  # noqa: BLE001 - OSError or hyperscan's refusal: compile instead
        return None
    return db


def _ignore(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
    """A match of `_load`'s trial scan."""


def _store(hs: Any, path: str, db: Any) -> None:
    """Keep `db` at `path`, whole or not at all (written beside it, then renamed); a folder
    that cannot be written keeps nothing."""
    import tempfile

    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fp:
                fp.write(hs.dumpb(db))
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
        return


def present(words: tuple[bytes, ...]) -> Present | None:
    """`indices(text)`: the indices of the `words` that occur in `text`, from one pass (each
    word a literal, reported once). None where hyperscan is missing or refuses them."""
    return _present(words, threading.get_ident())


@lru_cache(maxsize=8)
def _present(words: tuple[bytes, ...], thread: int) -> Present | None:
    db = database(tuple(map(literal, words)), (SINGLEMATCH,) * len(words), thread)
    if db is None:
        return None

    def indices(text: bytes) -> set[int]:
        out: set[int] = set()
        if text:
            add = out.add

            def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
                add(pattern)

            db.scan(text, match_event_handler=on)
        return out

    return indices
