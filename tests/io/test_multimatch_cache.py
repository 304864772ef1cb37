"""Compiled hyperscan databases kept on disk (`io.multimatch`): a second process loads what
the first compiled, with the same answers; a corrupt, foreign or unwritable cache costs a
compile and nothing else; the folder comes from the environment, never from an input."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.processes import run_python
from thinkfix.io import multimatch
from thinkfix.io.multimatch import SINGLEMATCH, database, literal

hs = pytest.importorskip("hyperscan")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private cache folder, and no database left in this process's memory."""
    monkeypatch.setenv("THINKFIX_CACHE_DIR", str(tmp_path / "cache"))
    database.cache_clear()
    yield tmp_path / "cache" / "hyperscan"
    database.cache_clear()


def _matches(db: object, text: bytes) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []

    def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
        out.append((pattern, stop))

    db.scan(text, match_event_handler=on)  # type: ignore[attr-defined]
    return out


def _build(patterns: tuple[bytes, ...]) -> tuple[object, int]:
    """`database(patterns)` as a new process would (nothing in memory), and how many
    compiles it took (a database `_load` did not give)."""
    database.cache_clear()
    load, loaded = multimatch._load, []

    def spy(hs_module: object, path: str) -> object:
        loaded.append(load(hs_module, path))
        return loaded[-1]

    with patch.object(multimatch, "_load", spy):
        db = database(patterns, (0,) * len(patterns), 1)
    assert db is not None
    return db, sum(found is None for found in loaded) or int(not loaded)


PATTERNS = (rb"(?i)<think", literal(b'"model"'), rb"foo[^\n]*\n")


def test_a_second_process_loads_the_database_the_first_compiled(cache: Path) -> None:
    first, compiles = _build(PATTERNS)
    assert compiles == 1
    assert len(list(cache.glob("*.db"))) == 1
    second, compiles = _build(PATTERNS)
    assert compiles == 0  # loaded from the cache
    text = b'x<THINK "model" foo bar\nfoo\n'
    assert _matches(second, text) == _matches(first, text) != []


def test_other_patterns_or_flags_are_another_entry(cache: Path) -> None:
    database(PATTERNS, (0, 0, 0), 1)
    database(PATTERNS[:2], (0, 0), 1)
    database(PATTERNS, (SINGLEMATCH, 0, 0), 1)
    assert len(list(cache.glob("*.db"))) == 3


def test_a_corrupt_or_cut_entry_is_compiled_again_and_replaced(cache: Path) -> None:
    _build(PATTERNS)
    (entry,) = cache.glob("*.db")
    good = entry.read_bytes()
    flipped = bytes(b ^ 0xFF if i == 200 else b for i, b in enumerate(good))
    for damaged in (good[: len(good) // 2], flipped, b""):
        entry.write_bytes(damaged)
        db, compiles = _build(PATTERNS)
        assert compiles == 1
        assert _matches(db, b"<think foo\n") == [(0, 6), (2, 11)]
        assert entry.read_bytes() == good


def test_a_cache_that_cannot_be_written_only_costs_a_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("THINKFIX_CACHE_DIR", str(blocker))
    for _ in range(2):
        db, compiles = _build(PATTERNS)
        assert compiles == 1
        assert _matches(db, b"<think") == [(0, 6)]
    database.cache_clear()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_CACHE_HOME is Linux's")
def test_the_folder_is_the_environment_s_else_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the entries go is decided by THINKFIX_CACHE_DIR, else the user's cache folder
    (which honours XDG_CACHE_HOME): never by a scanned file or a checkout's config."""
    monkeypatch.delenv("THINKFIX_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = multimatch._cache_path(hs, PATTERNS, (0, 0, 0))
    assert path is not None
    assert Path(path).parent == tmp_path / "xdg" / "thinkfix" / "hyperscan"
    monkeypatch.setenv("THINKFIX_CACHE_DIR", str(tmp_path / "mine"))
    path = multimatch._cache_path(hs, PATTERNS, (0, 0, 0))
    assert path is not None and Path(path).parent == tmp_path / "mine" / "hyperscan"
    assert os.path.basename(path).removesuffix(".db").isalnum()  # a hash, not a pattern


#: Values of XDG_CACHE_HOME and HOME: unset, empty, relative, absolute, padded.
_PLACES = st.one_of(
    st.none(),
    st.sampled_from(["", "cache", "./c", "~/c", " /x", "/x/", "/home/u", "/var/tmp/c d"]),
    st.text(st.sampled_from("/ab. "), max_size=6),
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is Linux's")
@given(xdg=_PLACES, home=_PLACES)
def test_the_user_cache_folder_is_platformdirs_on_linux(xdg: str | None, home: str | None) -> None:
    """`cache_folder` spells the XDG rule itself (importing platformdirs cost ~10 ms of each
    process that loads a database): the same folder as platformdirs' for any absolute
    XDG_CACHE_HOME, or none and an absolute HOME; a relative XDG_CACHE_HOME is ignored, as the
    XDG spec says (platformdirs from 4.x; 3.x took it as it was)."""
    from platformdirs import user_cache_dir

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("THINKFIX_CACHE_DIR", "XDG_CACHE_HOME", "HOME")
    }
    env.update({k: v for k, v in (("XDG_CACHE_HOME", xdg), ("HOME", home)) if v is not None})
    with patch.dict(os.environ, env, clear=True):
        folder = multimatch.cache_folder()
        if os.path.isabs(xdg or ""):
            assert (
                folder
                == os.path.join(xdg or "", "thinkfix")
                == user_cache_dir("thinkfix", appauthor=False)
            )
        elif os.path.isabs(home or ""):
            assert folder == os.path.join(os.path.expanduser("~"), ".cache", "thinkfix")
            if not xdg:
                assert folder == user_cache_dir("thinkfix", appauthor=False)
        else:
            assert folder == user_cache_dir("thinkfix", appauthor=False)


def test_loading_a_database_imports_no_platformdirs_or_pathlib(tmp_path: Path) -> None:
    """A process that loads a cached database (every scan past `native.WARM_UP`) pays for
    hyperscan and the entry, not for platformdirs, pathlib, tempfile or shutil."""
    script = (
        "import sys\n"
        "from thinkfix.io.multimatch import database, literal\n"
        "db = database((literal(b'<think'),), (0,), 1)\n"
        "print(db is not None, sorted(m for m in ('platformdirs', 'pathlib', 'tempfile', 'shutil')"
        " if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("THINKFIX_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    first = run_python(script, env=env)  # compiles, and stores the entry (tempfile)
    again = run_python(script, env=env)
    assert first.stdout.split(None, 1)[0] == "True"
    assert again.stdout == "True []\n"
    assert list((tmp_path / ".cache" / "thinkfix" / "hyperscan").glob("*.db"))


WORDS = st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=8, unique=True)


@settings(max_examples=40, deadline=None)
@given(words=WORDS, text=st.binary(max_size=200))
def test_a_loaded_database_finds_what_a_compiled_one_finds(
    words: list[bytes], text: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("cache")
    patterns = tuple(map(literal, words))
    with patch.dict(os.environ, {"THINKFIX_CACHE_DIR": str(folder)}):
        compiled, compiles = _build(patterns)
        loaded, again = _build(patterns)
    database.cache_clear()
    assert (compiles, again) == (1, 0)
    assert _matches(loaded, text) == _matches(compiled, text)
