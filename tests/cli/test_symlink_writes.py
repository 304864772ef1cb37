"""`-o`, `--report`, `--write-baseline`, `--state` and `--textfile` never write through a final
symlink (issue 22 item 6): a link planted where thinkfix writes (a group-writable
textfile-collector folder, a checkout) is replaced by the new file; its target keeps its bytes.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.io import safewrite

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKING = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
SECRET = b"precious bytes the link points at\n"


@pytest.fixture
def planted(tmp_path: Path, isolated_cli: None) -> tuple[Path, Path]:
    """A session folder, and a file outside it that links will point at."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(LEAKING, sessions / "s.jsonl")
    target = tmp_path / "outside" / "victim"
    target.parent.mkdir()
    target.write_bytes(SECRET)
    target.chmod(0o600)
    return sessions, target


def _link(at: Path, target: Path) -> Path:
    at.symlink_to(target)
    return at


def _assert_replaced_not_followed(link: Path, target: Path) -> None:
    assert target.read_bytes() == SECRET
    assert not link.is_symlink()
    assert link.is_file() and link.stat().st_size > 0


@pytest.mark.parametrize(
    "option",
    [
        ("-o", "{link}"),
        ("--report", "json={link}"),
        ("--write-baseline", "{link}"),
        ("--state", "{link}"),
    ],
    ids=lambda o: o[0],
)
def test_scan_writes_replace_a_link_instead_of_its_target(
    planted: tuple[Path, Path], tmp_path: Path, option: tuple[str, str]
) -> None:
    sessions, target = planted
    link = _link(tmp_path / "out.file", target)
    flag, value = option
    result = CliRunner().invoke(
        main, ["scan", "--isolated", flag, value.format(link=link), str(sessions)]
    )
    assert result.exit_code in (0, 1), result.output
    _assert_replaced_not_followed(link, target)


def test_watch_textfile_and_state_replace_links_instead_of_their_targets(
    planted: tuple[Path, Path], tmp_path: Path
) -> None:
    from thinkfix.engine.commands import watch as watch_run
    from thinkfix.engine.settings import config, values

    sessions, target = planted
    textfile = _link(tmp_path / "thinkfix.prom", target)
    state = _link(tmp_path / "watch-state.json", target)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        serve = watch_run.Serve.watching(
            [str(sessions)],
            config.scan_options(values.Settings()),
            str(state),
            watch_run.Serving(textfile=str(textfile), poll=True),
            on_finding=lambda f: None,
        )
        serve.start()
        serve.stop()
        serve.loop()
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    _assert_replaced_not_followed(textfile, target)
    _assert_replaced_not_followed(state, target)


def test_atomic_write_takes_no_mode_from_the_link_target(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_bytes(SECRET)
    target.chmod(0o755)
    link = _link(tmp_path / "link", target)
    safewrite.atomic_write(str(link), b"new")
    assert link.read_bytes() == b"new" and not link.is_symlink()
    assert os.stat(link).st_mode & 0o111 == 0
    assert target.read_bytes() == SECRET


def test_atomic_write_follows_a_link_only_when_asked(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.write_bytes(SECRET)
    link = _link(tmp_path / "named.jsonl", target)
    safewrite.atomic_write(str(link), b"repaired\n", follow_links=True)
    assert link.is_symlink() and target.read_bytes() == b"repaired\n"


def test_a_link_to_a_device_is_still_written_into(tmp_path: Path) -> None:
    link = _link(tmp_path / "null", Path(os.devnull))
    safewrite.write_output(str(link), b"report")
    assert link.is_symlink()
