"""Shared helpers for engine tests: the fixtures folder and small session builders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.formats.support import fixture_totals

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixtures_leaking_total() -> int:
    """The total of leaking messages fixtures/README.md states."""
    return fixture_totals().leaking


def claude_line(
    text: str,
    *,
    uuid: str,
    model: str = "qwen3-32b",
    role: str = "assistant",
    session: str = "sess-1",
) -> bytes:
    """One Claude Code transcript line holding `text`."""
    entry = {
        "parentUuid": None,
        "isSidechain": False,
        "type": role,
        "uuid": uuid,
        "sessionId": session,
        "timestamp": "2026-03-01T10:00:00.000Z",
        "message": {
            "id": f"msg_{uuid}",
            "type": "message",
            "role": role,
            "model": model,
            "content": [{"type": "text", "text": text}],
        },
    }
    if role == "user":
        entry["message"] = {"role": "user", "content": text}
    return orjson.dumps(entry) + b"\n"


@pytest.fixture
def clean_session(tmp_path: Path) -> Path:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(
        claude_line("What is 2+2? Use <think> tags.", uuid="u1", role="user")
        + claude_line("It is 4. Models emit <think> and </think> in prose.", uuid="a1")
    )
    return path


def chained_claude_line(n: int, kind: str, content: object) -> bytes:
    """Line `n` of a Claude Code transcript whose entries chain by uuid (`u-<n>`): an
    assistant entry, or a user one for any other `kind`."""
    role = "assistant" if kind == "assistant" else "user"
    return orjson.dumps(
        {
            "parentUuid": f"u-{n - 1}",
            "isSidechain": False,
            "type": kind,
            "message": {"role": role, "content": content},
            "uuid": f"u-{n}",
            "timestamp": "2026-02-11T09:14:02.118Z",
            "sessionId": "s",
        }
    )


@pytest.fixture(scope="session")
def dask_address() -> Iterator[str]:
    """A real `distributed.LocalCluster` with three worker processes, one for the session:
    work pickled to other processes comes back in completion order."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def memory() -> Iterator[Any]:
    """fsspec's memory filesystem (this process's), emptied of `/thinkfix-in` and
    `/thinkfix-out` after the test; skipped without fsspec."""
    fs = pytest.importorskip("fsspec").filesystem("memory")
    _clear(fs)  # before too: one test's leftovers must not be the next one's inputs
    yield fs
    _clear(fs)


def _clear(fs: Any) -> None:
    """Drop everything under the two test folders straight from the memory filesystem's
    store: `fs.rm` expands `*`, `?` and `[x]` in the names the hostile-name tests write, and
    an old fsspec (the lowest pin) left such files behind for the next test on the worker."""
    for top in ("/thinkfix-in", "/thinkfix-out"):
        for key in [k for k in fs.store if k == top or k.startswith(top + "/")]:
            del fs.store[key]
        for folder in [d for d in fs.pseudo_dirs if d == top or d.startswith(top + "/")]:
            fs.pseudo_dirs.remove(folder)


def memory_tree(fs: Any, root: str) -> dict[str, bytes]:
    """Every file under `root` on `fs`, by its path below `root`."""
    return {p[len(root) + 1 :]: fs.cat_file(p) for p in fs.find(root)}
