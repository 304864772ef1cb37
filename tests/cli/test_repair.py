"""`thinkfix repair`, `undo` and `diff`: exit codes, and what goes to stdout versus stderr."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.commands import invoke
from tests.formats.support import fixture_totals, leaking_fixtures, tree_content
from thinkfix.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PI = next((FIXTURES / "pi").iterdir())
SESSION_DIRS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "streams")


pytestmark = pytest.mark.usefixtures("isolated_cli")


def sessions(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    for name in SESSION_DIRS:
        shutil.copytree(FIXTURES / name, root / name)
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_cli_repair_out_then_scan_reports_only_the_refused(tmp_path: Path) -> None:
    src = sessions(tmp_path)
    before = tree(src)
    result = invoke("repair", "--out", "repaired", str(src))
    assert result.exit_code == 1, result.stderr  # the refused leaks remain (#27 item 6)
    assert result.stdout == ""
    # Three messages are all reasoning: an empty text would break the session, so they
    # are refused, each with its reason, and a scan of the repaired copy still reports them.
    totals = fixture_totals()
    assert (
        f"repaired {totals.leaking - 3} messages in {len(leaking_fixtures())} files "
        f"({totals.files} files read, 3 messages refused)."
    ) in result.stderr
    assert (
        result.stderr.count(
            "not repaired: refused: the text is all reasoning and nothing visible would remain"
        )
        == 3
    )
    assert "undo with: thinkfix undo " in result.stderr
    assert tree(src) == before
    scanned = invoke("scan", "repaired")
    assert scanned.exit_code == 1, scanned.stdout + scanned.stderr
    assert f"Reasoning leaked in 3 of {totals.messages} assistant messages" in scanned.stdout
    again = invoke("scan", str(src))
    assert again.exit_code == 1


def test_cli_repair_needs_a_destination_or_a_preview(tmp_path: Path) -> None:
    result = invoke("repair", str(PI))
    assert result.exit_code == 2
    assert "--out DIR or --in-place" in result.stderr and result.stdout == ""
    both = invoke("repair", "--out", "x", "--in-place", str(PI))
    assert both.exit_code == 2 and "exclude each other" in both.stderr


def test_cli_repair_check_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    src = sessions(tmp_path)
    before = tree(tmp_path)
    result = invoke("repair", "--check", str(src))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "would repair" in result.stderr
    assert tree(tmp_path) == before


def test_cli_repair_check_on_repaired_files_exits_1_while_refused_leaks_remain(
    tmp_path: Path,
) -> None:
    """#27 item 6: `repair` and `repair --check` of the repaired folder exited 0 while the
    three leaks repair refuses were still there (ruff exits 1 when problems remain)."""
    src = sessions(tmp_path)
    assert invoke("repair", "--in-place", "-q", str(src)).exit_code == 1
    result = invoke("repair", "--check", str(src))
    assert result.exit_code == 1
    assert "would repair 0 messages in 0 files" in result.stderr
    assert "3 messages refused" in result.stderr
    assert invoke("repair", "--check", "--exit-zero", str(src)).exit_code == 0


def test_cli_repair_exits_0_only_when_its_output_scans_clean(tmp_path: Path) -> None:
    work = tmp_path / PI.name
    work.write_bytes(PI.read_bytes())
    assert invoke("repair", "--dry-run", str(work)).exit_code == 1  # nothing written: all remain
    assert invoke("repair", "--in-place", str(work)).exit_code == 0
    assert invoke("scan", str(work)).exit_code == 0
    assert invoke("repair", "--check", str(work)).exit_code == 0


def test_cli_repair_diff_prints_unified_diff_on_stdout(tmp_path: Path) -> None:
    work = tmp_path / PI.name
    work.write_bytes(PI.read_bytes())
    result = invoke("repair", "--diff", str(work))
    assert result.exit_code == 1  # a diff writes nothing: the leaks remain
    name = str(work).lstrip("/")
    assert result.stdout.startswith(f"--- a/{name}\n+++ b/{name}\n@@ -5 +5 @@\n-")
    assert "would repair" in result.stderr and "---" not in result.stderr
    assert work.read_bytes() == PI.read_bytes()
    checked = invoke("repair", "--diff", "--check", str(work))
    assert checked.exit_code == 1 and checked.stdout == result.stdout


def test_cli_repair_in_place_then_undo_restores_every_file(tmp_path: Path) -> None:
    src = sessions(tmp_path)
    before = tree_content(src)
    result = invoke("repair", "--in-place", str(src))
    assert result.exit_code == 1 and result.stdout == ""  # 3 refused leaks remain
    assert tree_content(src) != before
    manifest = result.stderr.split("undo with: thinkfix undo ")[1].split("\n")[0]
    assert "backups in: " in result.stderr
    undone = invoke("undo", manifest)
    assert undone.exit_code == 0, undone.stderr
    assert undone.stdout == "" and "restored " in undone.stderr
    assert tree_content(src) == before


def test_cli_repair_no_backup_is_explicit_and_still_undoable(tmp_path: Path) -> None:
    work = tmp_path / "s" / PI.name
    work.parent.mkdir()
    work.write_bytes(PI.read_bytes())
    manifest = tmp_path / "m.json"
    result = invoke("repair", "--in-place", "--no-backup", "--manifest", str(manifest), str(work))
    assert result.exit_code == 0 and "backups in" not in result.stderr
    # No run folder, no backups: the state folder holds only the key undo checks seals with.
    assert [p.name for p in (tmp_path / "state").iterdir()] == ["undo.key"]
    assert invoke("undo", str(manifest)).exit_code == 0
    assert work.read_bytes() == PI.read_bytes()
    misuse = invoke("repair", "--out", "o", "--no-backup", str(work))
    assert misuse.exit_code == 2


def test_cli_undo_refuses_when_a_file_changed(tmp_path: Path) -> None:
    work = tmp_path / "s" / PI.name
    work.parent.mkdir()
    work.write_bytes(PI.read_bytes())
    manifest = tmp_path / "m.json"
    assert invoke("repair", "--in-place", "--manifest", str(manifest), str(work)).exit_code == 0
    # saved again since in the runtime's own spelling: the records the repair wrote changed
    repaired = work.read_bytes().replace(b'","', b'", "')
    work.write_bytes(repaired)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "refusing to undo: 1 file changed since the repair" in result.stderr
    assert str(work) in result.stderr
    assert work.read_bytes() == repaired


def test_cli_undo_of_a_missing_manifest_is_an_error(tmp_path: Path) -> None:
    result = invoke("undo", str(tmp_path / "nope.json"))
    assert result.exit_code == 2 and "cannot read" in result.stderr


def test_cli_repair_exit_non_zero_on_fix(tmp_path: Path) -> None:
    work = tmp_path / PI.name
    work.write_bytes(PI.read_bytes())
    first = invoke("repair", "--in-place", "--exit-non-zero-on-fix", str(work))
    assert first.exit_code == 1
    second = invoke("repair", "--in-place", "--exit-non-zero-on-fix", str(work))
    assert second.exit_code == 0


def test_cli_repair_report_writes_diff_report(tmp_path: Path) -> None:
    src = sessions(tmp_path)
    result = invoke("repair", "--out", "out", "--report", "audit.json", str(src))
    assert result.exit_code == 1 and result.stdout == ""  # 3 refused leaks remain
    doc = json.loads((tmp_path / "audit.json").read_text("utf-8"))
    assert doc["schema_version"] == 1 and doc["written"] is True
    assert doc["totals"]["messages"] == fixture_totals().leaking - 3 and doc["manifest"]
    assert doc["totals"]["refused"] == 3
    refused = [m for m in doc["messages"] if not m["applied"]]
    assert {m["placement"]["kind"] for m in refused} == {"refused"}
    assert all("nothing visible would remain" in m["reason"] for m in refused)


def test_cli_repair_unreadable_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": "world"}')
    result = invoke("repair", "--check", str(bad))
    assert result.exit_code == 2
    assert "not a known session format" in result.stderr


def test_cli_repair_unknown_kind_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("repair", "--check", "--select", "nope", str(PI))
    assert result.exit_code == 2 and "unknown leak kind" in result.stderr


def test_cli_diff_text_on_stdout_exits_1_when_something_would_change(tmp_path: Path) -> None:
    result = invoke("diff", str(PI))
    assert result.exit_code == 1
    assert "- before" in result.stdout and "+ after" in result.stdout
    assert "3 messages in 1 file would change" in result.stdout
    assert result.stderr == ""
    assert invoke("diff", "--exit-zero", str(PI)).exit_code == 0


def test_cli_diff_html_to_file(tmp_path: Path) -> None:
    src = sessions(tmp_path)
    result = invoke("diff", str(src), "--output-format", "html", "-o", "report.html")
    assert result.exit_code == 1
    assert result.stdout == "" and "wrote report.html" in result.stderr
    html = (tmp_path / "report.html").read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<details open>" in html  # #27 item 10
    assert tree(src) == tree(tmp_path / "fixtures")  # diff never writes a session


def test_cli_diff_max_cards_caps_the_html_page(tmp_path: Path) -> None:
    src = sessions(tmp_path)
    total = len(json.loads(invoke("diff", "--output-format", "json", str(src)).stdout)["messages"])
    html = invoke("diff", str(src), "--output-format", "html", "--max-cards", "1").stdout
    assert total > 1 and html.count("<article ") == 1
    assert f"{total - 1} more message" in html and "in the JSON report" in html
    assert invoke("diff", str(src), "--max-cards", "-1").exit_code == 2


def test_cli_diff_json_and_redaction(tmp_path: Path) -> None:
    plain = json.loads(invoke("diff", "--output-format", "json", str(PI)).stdout)
    text = plain["messages"][0]["before"]
    redacted = invoke("diff", "--output-format", "json", "--redact=all", str(PI))
    doc = json.loads(redacted.stdout)
    assert doc["redaction"] == "all" and doc["totals"] == plain["totals"]
    assert text not in redacted.stdout
    assert doc["messages"][0]["before"].startswith("[redacted: ")


def test_cli_redact_flag_never_swallows_a_path(tmp_path: Path) -> None:
    result = invoke("diff", "--output-format", "json", "--redact", str(PI))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["redaction"] == "secrets"


def test_cli_repair_reads_config_file(tmp_path: Path) -> None:
    (tmp_path / "thinkfix.toml").write_text('select = ["stray_close"]\n')
    result = invoke("diff", "--output-format", "json", str(PI))
    doc = json.loads(result.stdout)
    assert doc["totals"]["by_kind"] == {"stray_close": 1}


def test_diff_report_to_a_fifo_leaves_the_fifo_in_place(tmp_path: Path) -> None:
    """`-o` names a pipe or device: the report goes into it; a rename would replace it."""
    import threading

    fifo = tmp_path / "diff.pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = CliRunner().invoke(
        main, ["diff", str(FIXTURES), "--output-format", "json", "-o", str(fifo)]
    )
    reader.join(timeout=30)
    assert result.exit_code in (0, 1), result.output
    assert fifo.is_fifo()
    assert json.loads(got[0])["schema_version"]


@pytest.mark.parametrize(
    "output_format",
    ["text", "json", "jsonl", "sarif", "junit", "github", "markdown", "openmetrics"],
)
def test_cli_scan_after_repair_says_which_leaks_repair_refuses(
    tmp_path: Path, output_format: str
) -> None:
    # Issue 10: the three all-reasoning messages are left as they are by repair; the scan
    # that follows still counts them (exit 1) and every report says why they remain.
    src = sessions(tmp_path)
    assert invoke("repair", "--out", "repaired", "-q", str(src)).exit_code == 1
    scanned = invoke("scan", "repaired", "--output-format", output_format)
    assert scanned.exit_code == 1
    out = scanned.stdout
    if output_format == "openmetrics":
        assert "\nthinkfix_refused_messages 3\n" in out
    elif output_format in ("text", "markdown"):
        assert "3 leaking texts are all reasoning with nothing else in the message" in " ".join(
            out.split()
        )
    else:
        assert out.count("an empty text would break the session") >= 3
    if output_format == "json":
        refused = [f for f in json.loads(out)["findings"] if f.get("refused")]
        assert {(Path(f["path"]).name, f["line"]) for f in refused} == {
            ("2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl", 8),
            ("session-1775200000000-0.jsonl", 7),
            ("openrouter-chat.jsonl", 7),
        }
