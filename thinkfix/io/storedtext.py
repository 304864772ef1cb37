"""A store's text values, decoded without quoting them when they are not UTF-8.

sqlite3's own decoding of a TEXT value that is not UTF-8 fails with "Could not decode to
UTF-8 column 'parts' with text '…'", the value's first bytes quoted: that message was the
store's error in every report, unmasked, with a session's reasoning or a token in it
(`--redact` masks the texts a report shows, not an error's). Apart from `io.textcheck` so a
scan of sessions that are not stores never imports sqlite3.
"""

from __future__ import annotations

import sqlite3


class NotText(sqlite3.DataError):
    """A stored text value that is not UTF-8: an error for its store, which names no byte of
    the value (the session's text, and whatever credential it quotes)."""


def stored_text(raw: bytes) -> str:
    """A store's TEXT value as `str` (`formats.sqlite_store.connect`'s `text_factory`),
    or `NotText` naming the byte, not the text."""
    try:
        return raw.decode()
    except UnicodeDecodeError as exc:
        raise NotText(
            f"a stored text value is not UTF-8 (byte {exc.start:,} of {len(raw):,}: {exc.reason})"
        ) from None
