"""Spies the tests share: what a call compiles, which folders a run lists, what a function was
called with."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

import pytest


@contextmanager
def compiled_sources() -> Iterator[list[str]]:
    """The source of every `re.compile` called inside the block, in order."""
    sources: list[str] = []
    real = re.compile

    def spy(source: str, flags: int = 0) -> re.Pattern[str]:
        sources.append(source)
        return real(source, flags)

    with patch.object(re, "compile", spy):
        yield sources


def listed_folders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The real path of every folder `os.listdir` lists from now on (the list fills as it
    runs)."""
    listed: list[str] = []
    real: Callable[[str], list[str]] = os.listdir

    def listing(path: str = ".") -> list[str]:
        listed.append(os.path.realpath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listing)
    return listed


def first_args(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Any]:
    """The first argument of every call of `owner.name` from now on (the real one still runs):
    how many lines were parsed, which descriptors synced."""
    seen: list[Any] = []
    real = getattr(owner, name)

    def counting(first: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return seen
