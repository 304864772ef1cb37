"""Kilo Code (the VS Code extension, a Roo Code fork): Roo's task folders under its own
extension id, read by the Cline module and repaired, like Roo's, without a thinking block."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.formats.support import FIXTURES, read, repair, scores, site_at, sites
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

KILO = get("kilo-code")
TASK = FIXTURES / "kilo-code" / "tasks" / "5c2e8f1a-7b3d-4e9c-a6f0-1d2b3c4e5f60"
HISTORY = (TASK / "api_conversation_history.json").read_bytes()
NAME = "api_conversation_history.json"


@pytest.mark.parametrize(
    "path",
    [
        f"/home/u/.config/Code/User/globalStorage/kilocode.kilo-code/tasks/1/{NAME}",
        f"C:\\Users\\u\\AppData\\Roaming\\Code\\User\\globalStorage\\kilocode.kilo-code\\tasks\\1\\{NAME}",
        f"/home/u/.kilocode/cli/global/tasks/1/{NAME}",
    ],
)
def test_kilo_code_is_told_by_its_storage_path(path: str) -> None:
    found = registry.detect(HISTORY, path)
    assert found is not None and found[0] is KILO
    others = [v for k, v in scores(HISTORY, path).items() if k != "kilo-code"]
    assert max(others) < found[1]


def test_kilo_code_extension_id_wins_over_a_cline_or_roo_name_elsewhere_in_the_path() -> None:
    path = f"/work/roo-code-notes/globalStorage/kilocode.kilo-code/tasks/1/{NAME}"
    assert registry.detect_or_raise(HISTORY, path) is KILO
    # and another runtime's id still decides for that runtime's own folder
    cline = (
        f"/home/kilocode-user/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1/{NAME}"
    )
    assert registry.detect_or_raise(HISTORY, cline).id == "cline"


def test_kilo_code_without_its_path_reads_as_the_fork_it_copies() -> None:
    # no Kilo-only key exists in the history: the content alone says Cline's format
    assert registry.detect_or_raise(HISTORY, NAME).id == "cline"


def test_kilo_code_sites_and_counts() -> None:
    records = read(KILO, HISTORY)
    assert sum(KILO.assistant_messages(r) for r in records) == 3
    assert [s.json_path for s in sites(KILO, records)] == [
        "[1].content[0].text",
        "[3].content[0].text",
        "[5].content[0].text",
    ]


def test_kilo_code_repair_keeps_reasoning_out_of_the_replayed_history() -> None:
    site = site_at(sites(KILO, read(KILO, HISTORY)), 1, "[1].content[0].text")
    visible = site.text.split("</think>\n\n", 1)[1]
    out = repair(KILO, HISTORY, [Repair(site, visible, ("Read the loader first.",))])
    assert out.after[0].data[1]["content"] == [{"type": "text", "text": visible}]
    assert out.placements[0].kind is PlacementKind.MANIFEST
    assert out.data.startswith(b'[{"role":"user"') and not out.data.endswith(b"\n")


def test_kilo_code_locations_cover_each_editor_and_the_old_cli(tmp_path: Path) -> None:
    found = KILO.default_locations({}, tmp_path)
    assert (
        tmp_path / ".config" / "Code" / "User" / "globalStorage" / "kilocode.kilo-code" / "tasks"
        in found
    )
    assert tmp_path / ".kilocode" / "cli" / "global" / "tasks" in found
    assert all("kilocode.kilo-code" in str(p) or ".kilocode" in str(p) for p in found)
