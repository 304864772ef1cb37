"""Kilo CLI (an OpenCode fork): OpenCode's SQLite store under Kilo's names, found by `where`,
`--discover` and a folder scan, and reported as `kilo` (#24 runtime 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.formats import opencode_db
from thinkfix.cli import main
from thinkfix.engine.inputs.discover import discover
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.opencode_items import is_kilo_store_name


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "APPDATA", "KILO_DB", "HERMES_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PWD", str(home / "work"))
    monkeypatch.chdir(home)


def _kilo(home: Path, name: str = "kilo.db") -> Path:
    root = home / ".local/share/kilo"
    root.mkdir(parents=True)
    return opencode_db.build(root / name, opencode_db.LEAKY)


@pytest.mark.parametrize("name", ["kilo.db", "kilo-beta.db", "opencode-dev.db"])
def test_kilo_store_is_discovered_in_its_data_folder(tmp_path: Path, name: str) -> None:
    db = _kilo(tmp_path, name)
    assert discover(env={"PWD": str(tmp_path)}, home=tmp_path) == [str(db)]


def test_kilo_db_variable_relative_to_the_data_folder_or_absolute(tmp_path: Path) -> None:
    root = tmp_path / ".local/share/kilo"
    root.mkdir(parents=True)
    db = opencode_db.build(root / "mine.sqlite", opencode_db.LEAKY)
    env = {"PWD": str(tmp_path), "KILO_DB": "mine.sqlite"}
    assert discover(env=env, home=tmp_path) == [str(db)]
    assert discover(env={**env, "KILO_DB": str(db)}, home=tmp_path) == [str(db)]


def test_kilo_store_is_reported_as_kilo_not_opencode(tmp_path: Path) -> None:
    db = _kilo(tmp_path)
    assert registry.detect_or_raise(db.read_bytes()[:65536], str(db)).id == "kilo"
    same = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY)
    assert registry.detect_or_raise(same.read_bytes()[:65536], str(same)).id == "opencode"
    report = scan([str(db)], jobs=1)
    assert set(report.summary.by_format) == {"kilo"}
    assert (
        report.summary.by_format["kilo"] == scan([str(same)], jobs=1).summary.by_format["opencode"]
    )


def test_a_folder_scan_finds_kilo_and_opencode_stores_by_name(tmp_path: Path) -> None:
    _kilo(tmp_path)
    opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY)
    opencode_db.build(tmp_path / "other.db", opencode_db.LEAKY)  # not a store's name
    report = scan([str(tmp_path)], jobs=1)
    assert set(report.summary.by_format) == {"kilo", "opencode"}
    assert report.summary.files == 2


def test_where_and_discover_name_kilo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _isolate(monkeypatch, tmp_path)
    db = _kilo(tmp_path)
    rows = json.loads(CliRunner().invoke(main, ["where", "--json"]).output)["locations"]
    assert [(r["format"], r["path"]) for r in rows if r["exists"]] == [("kilo", str(db))]
    result = CliRunner().invoke(
        main, ["scan", "--discover", "--isolated", "--output-format", "json", "--exit-zero"]
    )
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)["summary"]["by_format"]) == {"kilo"}


def test_kilo_store_names() -> None:
    assert is_kilo_store_name("/x/kilo.db") and is_kilo_store_name("/x/kilo-prod.db")
    assert is_kilo_store_name("/d/kilo/opencode-beta.db")
    assert not is_kilo_store_name("/d/opencode/opencode.db")
    assert not is_kilo_store_name("/d/kilo/notes.db")
