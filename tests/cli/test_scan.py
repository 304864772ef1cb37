"""`thinkfix scan`: exit codes, what goes to stdout and stderr, reporters, baselines, config."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from tests.formats.long_records import (
    CHAT_FILES,
    CHAT_LEAKING,
    CLAUDE_FIXTURE,
    CLAUDE_LEAKING,
    claude_code_long_prompt,
    write_chat_exports,
)
from tests.formats.support import fixture_totals, session_files
from thinkfix.cli import main
from thinkfix.reporters.base import OutputFormat

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ENV_KEYS = ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR")


def leaking_total() -> int:
    return fixture_totals().leaking


def line(text: str, uuid: str, *, role: str = "assistant", model: str = "qwen3-32b") -> bytes:
    """One Claude Code line."""
    message = (
        {
            "id": f"msg_{uuid}",
            "type": "message",
            "role": role,
            "model": model,
            "content": [{"type": "text", "text": text}],
        }
        if role == "assistant"
        else {"role": "user", "content": text}
    )
    return (
        orjson.dumps(
            {"parentUuid": None, "type": role, "uuid": uuid, "sessionId": "s-1", "message": message}
        )
        + b"\n"
    )


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No CI variables from the machine running the tests; no config file above tmp_path."""
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    for key in [k for k in __import__("os").environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", "--isolated", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def run_with_config(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(
        line("Use <think> tags?", "u1", role="user")
        + line("No. Models print `<think>` in prose.", "a1")
    )
    return path


@pytest.fixture
def broken_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    shutil.copytree(FIXTURES / "claude-code", folder)
    (folder / "broken.jsonl.gz").write_bytes(gzip.compress(b'{"type": "user"}\n' * 50)[:25])
    return folder


def test_scan_fixtures_text_shows_findings_and_summary_and_exits_1() -> None:
    code, out, err = run(str(FIXTURES))
    assert code == 1
    assert "orphan_close" in out and "Leaking messages" in out
    assert f"{leaking_total()} of {fixture_totals().messages} assistant messages" in out
    assert err == ""


def test_scan_json_matches_readme_and_jobs_do_not_change_it() -> None:
    code, out, err = run("--output-format", "json", "--jobs", "1", str(FIXTURES))
    assert code == 1 and err == ""
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    assert doc["summary"]["leaking_messages"] == leaking_total()
    assert run("--output-format", "json", "--jobs", "2", str(FIXTURES))[1] == out


@pytest.mark.parametrize("fmt", [f.value for f in OutputFormat])
def test_scan_every_reporter_exit_codes_and_streams(
    fmt: str, clean: Path, broken_folder: Path
) -> None:
    code, out, err = run("--output-format", fmt, str(FIXTURES))
    assert (code, err) == (1, "") and out.strip()
    code, out, err = run("--output-format", fmt, str(clean))
    assert (code, err) == (0, "") and out.strip()
    code, out, err = run("--output-format", fmt, str(broken_folder))
    assert (code, err) == (2, "") and out.strip()


def test_scan_clean_session_exits_0(clean: Path) -> None:
    code, out, _ = run("--output-format", "json", str(clean))
    doc = json.loads(out)
    assert code == 0
    assert doc["summary"]["assistant_messages"] == 1 and doc["findings"] == []


def test_scan_unreadable_file_exits_2_and_reports_the_others(broken_folder: Path) -> None:
    code, out, _ = run("--output-format", "json", str(broken_folder))
    doc = json.loads(out)
    assert code == 2
    assert [(Path(e["path"]).name, e["kind"]) for e in doc["errors"]] == [
        ("broken.jsonl.gz", "unreadable")
    ]
    assert doc["summary"]["files"] == 2 and doc["summary"]["leaking_messages"] == 6


def test_scan_exit_zero_keeps_errors(broken_folder: Path) -> None:
    assert run("--exit-zero", str(FIXTURES))[0] == 0
    assert run("--exit-zero", str(broken_folder))[0] == 2


def test_scan_output_file_and_extra_reports(tmp_path: Path) -> None:
    out_file, sarif, md = tmp_path / "r.json", tmp_path / "o" / "r.sarif", tmp_path / "r.md"
    code, out, err = run(
        "--output-format",
        "json",
        "-o",
        str(out_file),
        "--report",
        f"sarif={sarif}",
        "--report",
        f"markdown={md}",
        str(FIXTURES),
    )
    assert (code, out, err) == (1, "", "")
    # each leaking fixture message has one finding
    assert json.loads(out_file.read_text())["summary"]["findings"] == leaking_total()
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert "thinkfix" in md.read_text()


def test_scan_statistics_adds_breakdowns() -> None:
    plain, stats = run(str(FIXTURES))[1], run("--statistics", str(FIXTURES))[1]
    assert "glm-4.6" in stats and len(stats) > len(plain)


def test_scan_baseline_round_trip(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(FIXTURES, sessions)
    base = tmp_path / "baseline.json"
    code, out, err = run("--write-baseline", str(base), str(sessions))
    assert code == 0 and f"wrote {leaking_total()} baseline entries" in err
    assert json.loads(base.read_text())["schema_version"] == 1
    code, out, err = run("--baseline", str(base), "--output-format", "json", str(sessions))
    doc = json.loads(out)
    assert code == 0 and all(f["baselined"] for f in doc["findings"])
    # One new leak: exit 1, and it is the only finding not covered.
    target = next((sessions / "claude-code").glob("7f3c*.jsonl"))
    target.write_bytes(
        target.read_bytes()
        + line("<think>new plan</think>Done.", "new-1", model="claude-opus-4-5-20251101")
    )
    code, out, _ = run("--baseline", str(base), "--output-format", "json", str(sessions))
    doc = json.loads(out)
    new = [f for f in doc["findings"] if not f["baselined"]]
    assert code == 1
    assert [(Path(f["path"]).name, f["line"], f["snippet"]) for f in new] == [
        (target.name, 13, "<think>new plan</think>")
    ]
    code, out, _ = run("--baseline", str(base), "--output-format", "github", str(sessions))
    # Baselined findings stay off the diff unless asked for (issue 14 #11).
    assert out.count("::error") == 1 and out.count("::notice") == 0
    code, out, _ = run(
        "--baseline", str(base), "--output-format", "github", "--show-baselined", str(sessions)
    )
    assert out.count("::error") == 1 and out.count("::notice") == leaking_total()


def test_scan_baseline_stale_entries_are_reported(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(line("<think>a</think>b", "a1"))
    base = tmp_path / "b.json"
    assert run("--write-baseline", str(base), str(session))[0] == 0
    session.write_bytes(line("b", "a1"))
    code, out, _ = run("--baseline", str(base), "--output-format", "json", str(session))
    assert code == 0 and len(json.loads(out)["stale_baseline"]) == 1


def test_scan_stdin(clean: Path) -> None:
    data = (FIXTURES / "openai-chat" / "openrouter-chat.jsonl").read_bytes()
    code, out, _ = run("--output-format", "json", "-", stdin=data)
    doc = json.loads(out)
    assert code == 1 and {f["path"] for f in doc["findings"]} == {"-"}
    assert run("--format", "claude-code", "-", stdin=clean.read_bytes())[0] == 0


def test_scan_select_ignore_redact_and_disable() -> None:
    doc = json.loads(run("--output-format", "json", "--select", "block,unclosed", str(FIXTURES))[1])
    assert set(doc["summary"]["by_kind"]) == {"block", "unclosed"}
    doc = json.loads(run("--output-format", "json", "--ignore", "block", str(FIXTURES))[1])
    assert "block" not in doc["summary"]["by_kind"]
    doc = json.loads(run("--output-format", "json", "--redact=all", str(FIXTURES))[1])
    assert not any("<think" in f["snippet"] for f in doc["findings"])
    doc = json.loads(
        run("--output-format", "json", "--disable-model", "glm-*", str(FIXTURES / "claude-code"))[1]
    )
    assert {f["model"] for f in doc["findings"]} == {"claude-opus-4-5-20251101"}


def test_scan_github_chosen_inside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, _ = run(str(FIXTURES))
    assert code == 1 and out.startswith("::")
    assert not run("--output-format", "text", str(FIXTURES))[1].startswith("::")


def test_scan_config_env_and_flag_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.thinkfix]\noutput-format = "json"\nselect = ["block"]\n'
    )
    code, out, _ = run_with_config(str(FIXTURES))
    doc = json.loads(out)
    assert code == 1 and set(doc["summary"]["by_kind"]) == {"block"}
    monkeypatch.setenv("THINKFIX_OUTPUT_FORMAT", "jsonl")
    monkeypatch.setenv("THINKFIX_SELECT", "orphan_close")
    out = run_with_config(str(FIXTURES))[1]
    rows = [json.loads(r) for r in out.splitlines()]
    assert {r["kind"] for r in rows if r.get("type") == "finding"} == {"orphan_close"}
    code, out, _ = run_with_config("--output-format", "json", "--select", "unclosed", str(FIXTURES))
    assert set(json.loads(out)["summary"]["by_kind"]) == {"unclosed"}
    # --isolated ignores the file; the environment still applies.
    monkeypatch.delenv("THINKFIX_OUTPUT_FORMAT")
    assert not run(str(FIXTURES))[1].startswith("{")


def test_scan_policy_flag_over_config(tmp_path: Path) -> None:
    (tmp_path / "thinkfix.toml").write_text('orphan-close = "strip"\n')
    by_kind = json.loads(run_with_config("--output-format", "json", str(FIXTURES))[1])["summary"][
        "by_kind"
    ]
    flagged = json.loads(
        run_with_config("--output-format", "json", "--orphan-close", "auto", str(FIXTURES))[1]
    )["summary"]["by_kind"]
    # (the OpenClaw close before a tool call is an orphan close: the tool call is evidence)
    assert flagged["orphan_close"] > 0 and flagged["stray_close"] > 0
    # config says strip: every orphan close only loses its delimiter, as a stray one does
    assert "orphan_close" not in by_kind
    assert by_kind["stray_close"] == flagged["orphan_close"] + flagged["stray_close"]


@pytest.mark.parametrize(
    "args",
    [
        ["--report", "nonsense", "x"],
        ["--report", "pdf=out.pdf", "x"],
        ["--baseline", "missing-baseline.json", "x"],
        ["--select", "blocks", "x"],
        ["--output-format", "pdf", "x"],
        [],
    ],
)
def test_scan_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(line("hi", "a1"))
    code, out, err = run(*args)
    assert code == 2 and out == "" and err


def test_scan_bad_config_exits_2(tmp_path: Path) -> None:
    (tmp_path / "thinkfix.toml").write_text("colour = true\n")
    code, out, err = run_with_config(str(FIXTURES))
    assert code == 2 and out == "" and "unknown key 'colour'" in err


def test_scan_named_unknown_file_is_an_error_walked_one_a_note(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    (tmp_path / "s.jsonl").write_bytes(line("hi", "a1"))
    code, _, err = run(str(tmp_path))
    # The note names the file, not only the count (#14 item 11).
    assert code == 0 and "skipped 1 file (not a known session format: package.json)" in err
    assert run(str(tmp_path / "package.json"))[0] == 2


def test_scan_pre_commit_hook_and_action_definitions() -> None:
    yaml = pytest.importorskip("yaml")
    root = FIXTURES.parent
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "thinkfix-scan" and hook["entry"].startswith("thinkfix scan")
    files = re.compile(hook["files"])
    sessions = session_files(FIXTURES)  # a database store's name included
    assert sessions and all(files.search(p.as_posix()) for p in sessions)
    assert not files.search("fixtures/README.md") and not files.search("a.sse")
    assert files.search("project/.crush/crush.db")  # a store kept in the project
    action = yaml.safe_load((root / "action.yml").read_text())
    script = " ".join(step.get("run", "") for step in action["runs"]["steps"])
    assert action["runs"]["using"] == "composite"
    # The scan itself runs from a Python entry that splits PATHS/ARGS with shlex (issue 14 #5).
    assert "python -m thinkfix.cli.action" in script and "SUMMARY=" in script
    assert "GITHUB_STEP_SUMMARY" in script and "exit $code" in script
    # The hook's own arguments are accepted by the command.
    code, _, err = run(*hook["entry"].split()[2:], str(FIXTURES / "openai-chat"))
    assert code == 1 and err == ""


def _json_run(*args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = run("--output-format", "json", *args)
    return code, json.loads(out), err


def test_scan_counts_a_claude_code_session_opening_with_a_400kb_prompt(tmp_path: Path) -> None:
    """Issue 10 repro: named it was `unknown_format` (exit 2); in a folder, skipped with exit 0."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / CLAUDE_FIXTURE.name
    path.write_bytes(claude_code_long_prompt(400_000))
    for target in (path, folder):
        code, doc, err = _json_run(str(target))
        summary = doc["summary"]
        assert isinstance(summary, dict)
        assert (code, summary["files"], summary["leaking_messages"]) == (1, 1, CLAUDE_LEAKING)
        assert doc["skipped"] == [] and doc["errors"] == [] and err == ""


def test_scan_counts_chat_exports_with_one_100kb_conversation_per_line(tmp_path: Path) -> None:
    """Issue 10 repro: "skipped 4 files (not a known session format)", exit 0; 12 leaks with
    --format openai-chat. Detection must now find what the forced format finds."""
    folder = tmp_path / "chats"
    write_chat_exports(folder, 100_000)
    detected = _json_run(str(folder))
    forced = _json_run("--format", "openai-chat", str(folder))
    for code, doc, err in (detected, forced):
        summary = doc["summary"]
        assert isinstance(summary, dict)
        assert (code, summary["files"], summary["leaking_messages"]) == (
            1,
            CHAT_FILES,
            CHAT_LEAKING,
        )
        assert doc["skipped"] == [] and err == ""


def _hook_args() -> list[str]:
    """The pre-commit hook's `entry`, without `thinkfix scan` (read without a YAML library)."""
    text = (FIXTURES.parent / ".pre-commit-hooks.yaml").read_text("utf-8")
    (entry,) = re.findall(r"^\s*entry:\s*(.+)$", text, re.MULTILINE)
    words = entry.split()
    assert words[:2] == ["thinkfix", "scan"]
    return words[2:]


def test_scan_pre_commit_hook_passes_a_commit_that_touches_no_session(tmp_path: Path) -> None:
    """A commit of package.json alone must pass the hook, while a plain scan of the same file
    is exit 2 (#10): the hook passes --allow-no-sessions, README says so."""
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    code, _, _ = run(*_hook_args(), str(tmp_path / "package.json"))
    assert code == 0
    assert run("--unknown-format", "skip", str(tmp_path / "package.json"))[0] == 2
    (tmp_path / "s.jsonl").write_bytes(line("<think>plan</think>answer", "a1"))
    assert run(*_hook_args(), str(tmp_path / "package.json"), str(tmp_path / "s.jsonl"))[0] == 1
    assert "--allow-no-sessions" in (FIXTURES.parent / "README.md").read_text("utf-8")


def test_scan_of_a_folder_with_no_session_file_exits_2_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    (tmp_path / "tsconfig.json").write_text("{}\n")
    code, out, err = run(str(tmp_path))
    assert code == 2
    flat = " ".join(out.split())
    assert "no_sessions" in flat and "2 files found, none in a known session format" in flat
    assert "--format NAME" in flat and "--exclude GLOB" in flat and "--allow-no-sessions" in flat
    assert "No session file found: nothing was checked." in flat
    assert "package.json" in err and "tsconfig.json" in err
    assert run("--allow-no-sessions", str(tmp_path))[0] == 0
    assert run("--exit-zero", str(tmp_path))[0] == 2


def test_scan_names_each_new_runtime_in_by_format(tmp_path: Path) -> None:
    """#16: one folder, a fixture of each runtime; by_format names them with their leaks."""
    for name in ("hermes", "cline", "roo-code", "opencode"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    code, out, _ = run("--output-format", "json", str(tmp_path))
    by_format = json.loads(out)["summary"]["by_format"]
    assert code == 1
    assert {k: v["leaking_messages"] for k, v in by_format.items()} == {
        "hermes": 3,
        "cline": 3,  # the API history's two and the task view's one (ui_messages.json)
        "roo-code": 1,
        "opencode": 1,
    }


def test_scan_html_carries_the_days_the_json_report_counts() -> None:
    # The page is for handing to an auditor: its trend must be the JSON report's by_day.
    code, out, err = run("--output-format", "html", str(FIXTURES))
    days = json.loads(run("--output-format", "json", str(FIXTURES))[1])["summary"]["by_day"]
    assert (code, err) == (1, "") and days
    assert "<figcaption>Leaking messages by day (UTC)" in out
    for day, counts in days.items():
        assert (
            f'<tr><td>{day}</td><td class="num">{counts["assistant_messages"]}</td>'
            f'<td class="num">{counts["leaking_messages"]}</td>'
        ) in out
