"""Issue 11 item 3: a lone surrogate (`"\\ud800"`, valid JSON) is carried losslessly by every
writer and reporter: repair's manifest, scan's JSON outputs, diff, show and undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result

from tests.commands import invoke
from thinkfix.io import jsontext

LONE = "plan \ud800 and \udfff"
LINE = (
    json.dumps(
        {
            "parentUuid": None,
            "isSidechain": False,
            "sessionId": "s1",
            "type": "assistant",
            "uuid": "u1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "glm",
                "content": [{"type": "text", "text": f"<think>{LONE}</think>\n\nAnswer \ud800"}],
            },
        }
    )
    + "\n"
)


pytestmark = pytest.mark.usefixtures("isolated_cli")


def session(tmp_path: Path) -> Path:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "a.jsonl").write_text(LINE, encoding="ascii")
    return folder


def ok(result: Result, *codes: int) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (codes or (0, 1)), result.output


@pytest.mark.parametrize(
    "fmt", ["text", "json", "jsonl", "sarif", "junit", "markdown", "github", "openmetrics"]
)
def test_scan_every_format_carries_lone_surrogate(tmp_path: Path, fmt: str) -> None:
    result = invoke("scan", "--isolated", "--output-format", fmt, str(session(tmp_path)))
    ok(result, 1)
    if fmt == "json":
        snippets = [f["snippet"] for f in json.loads(result.stdout)["findings"]]
        assert any("\ud800" in s for s in snippets)  # read back: the same string


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
def test_diff_every_format_carries_lone_surrogate(tmp_path: Path, fmt: str) -> None:
    result = invoke("diff", "--isolated", "--output-format", fmt, str(session(tmp_path)))
    ok(result, 1)
    assert "\\ud800" in result.stdout
    if fmt == "json":
        assert LONE in json.dumps(json.loads(result.stdout), ensure_ascii=False)


def test_show_and_repair_diff_carry_lone_surrogate(tmp_path: Path) -> None:
    folder = session(tmp_path)
    shown = invoke("show", str(folder / "a.jsonl"))
    ok(shown, 0)
    assert "\\ud800" in shown.stdout
    ok(invoke("repair", "--isolated", "--diff", str(folder)), 0, 1)


def test_repair_in_place_manifest_report_and_undo_keep_lone_surrogate(tmp_path: Path) -> None:
    folder = session(tmp_path)
    before = (folder / "a.jsonl").read_bytes()
    result = invoke("repair", "--isolated", "--in-place", "--report", "r.json", str(folder))
    ok(result, 0)
    after = json.loads((folder / "a.jsonl").read_bytes())
    assert after["message"]["content"][-1]["text"] == "Answer \ud800"
    manifest = next(x for x in result.stderr.splitlines() if x.startswith("undo with:")).split()[-1]
    doc = jsontext.loads(Path(manifest).read_bytes())
    assert doc["files"][0]["repairs"][0]["extracted"] == [LONE]
    assert LONE in json.dumps(json.loads(Path("r.json").read_bytes()), ensure_ascii=False)
    ok(invoke("undo", manifest), 0)
    assert (folder / "a.jsonl").read_bytes() == before


def test_jsontext_dumps_round_trips_lone_surrogates() -> None:
    value = {"a": [LONE, "\udc80", "fine é 😀"], LONE: 1}
    for indent in (False, True):
        data = jsontext.dumps(value, indent=indent, newline=True)
        data.decode("utf-8")  # valid UTF-8
        assert jsontext.loads(data) == value
    plain = {"a": ["fine é 😀", 1.5, None]}
    assert (
        jsontext.dumps(plain, indent=True)
        == json.dumps(plain, indent=2, ensure_ascii=False).encode()
    )
