"""A symlink in a checkout that leads out of the paths named (hostile10): `repair --in-place`
refused to rewrite its target, but `repair --out` copied the target's bytes into the output
folder (a CI job that uploads that folder published a file of the runner's, the user's
sessions for one). Now `--out` refuses it as `--in-place` does, unless `--follow-links`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.commands import invoke

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"

pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout holding one session of its own and a link to a session of the user's."""
    private = tmp_path / "home" / "private.jsonl"
    private.parent.mkdir()
    shutil.copy(LEAKY, private)
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(LEAKY, repo / "own.jsonl")
    (repo / "planted.jsonl").symlink_to(private)
    return repo


def test_hostile10_repair_out_does_not_copy_a_link_target_outside_the_paths_named(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = invoke("repair", "--out", str(out), str(checkout))
    assert result.exit_code == 2, result.output
    assert "planted.jsonl: a symlink to" in result.stderr
    assert "outside the paths named" in result.stderr
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["own.jsonl"]


def test_hostile10_repair_out_follows_a_link_when_asked_or_named(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = invoke("repair", "--out", str(out), "--follow-links", str(checkout))
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == [
        "own.jsonl",
        "planted.jsonl",
    ]
    named = tmp_path / "named"
    result = invoke("repair", "--out", str(named), str(checkout / "planted.jsonl"))
    assert result.exit_code == 1, result.output  # a link named on the command line is followed
    assert [p.name for p in named.rglob("*") if p.is_file()] == ["planted.jsonl"]


def test_hostile10_a_link_inside_the_paths_named_is_copied(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "a").mkdir(parents=True)
    shutil.copy(LEAKY, repo / "a" / "s.jsonl")
    (repo / "b.jsonl").symlink_to(repo / "a" / "s.jsonl")
    out = tmp_path / "out"
    result = invoke("repair", "--out", str(out), str(repo))
    assert result.exit_code == 1, result.output  # (the walk reads the one file once)
    assert "outside the paths named" not in result.stderr
    assert list(out.rglob("*.jsonl"))
