"""The github reporter: workflow commands, escaped the way the Actions runner unescapes them."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.report import Report
from thinkfix.reporters.base import OutputFormat, RenderOptions
from thinkfix.reporters.github import command, escape_data, escape_property
from thinkfix.reporters.registry import REPORTERS

COMMAND = re.compile(r"^::(?P<level>error|warning|notice)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


def _unescape(value: str) -> str:
    # The runner's own order: every %XX back to its character, %25 last.
    for escaped, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(escaped, char)
    return value


def _commands(
    report: Report, *, show_baselined: bool = True
) -> tuple[list[dict[str, object]], list[str]]:
    parsed, plain = [], []
    options = RenderOptions(show_baselined=show_baselined)
    for line in REPORTERS[OutputFormat.GITHUB].render(report, options).splitlines():
        match = COMMAND.match(line)
        if match is None:
            plain.append(line)
            continue
        props = dict(p.split("=", 1) for p in match["props"].split(",")) if match["props"] else {}
        parsed.append(
            {
                "level": match["level"],
                "message": _unescape(match["message"]),
                **{k: _unescape(v) for k, v in props.items()},
            }
        )
    return parsed, plain


def test_github_errors_for_new_findings_and_input_errors_notices_for_the_rest(full: Report) -> None:
    commands, plain = _commands(full)
    levels = [c["level"] for c in commands]
    assert levels.count("error") == len(full.new_findings) + len(full.errors)
    assert levels.count("notice") == len(full.findings) - len(full.new_findings) + len(
        full.stale_baseline
    )
    assert len(plain) == 1 and plain[0].startswith("thinkfix: ")


def test_github_leaves_baselined_findings_off_the_diff_unless_asked(full: Report) -> None:
    # Issue 14 #11: an accepted leak is not news on every pull request.
    commands, _ = _commands(full, show_baselined=False)
    files = [c.get("file") for c in commands if c["level"] == "notice"]
    baselined = {f.path for f in full.findings if f.baselined}
    assert len(files) == len(full.stale_baseline)
    assert all(c["message"] != "" for c in commands)
    assert not any("covered by the baseline" in str(c["message"]) for c in commands)
    assert baselined


def test_github_annotations_point_at_file_and_line(full: Report) -> None:
    commands, _ = _commands(full)
    for finding, cmd in zip(full.findings, commands):
        assert cmd["file"] == finding.path
        assert cmd["line"] == str(finding.line)
        assert finding.kind in str(cmd["title"])


def test_github_escapes_commas_colons_and_percent_in_paths(full: Report) -> None:
    text = REPORTERS[OutputFormat.GITHUB].render(full)
    assert "file=sessions/pi/odd%2C name%3A 100%25.jsonl,line=5," in text


def test_github_a_message_with_newlines_stays_on_one_line(full: Report) -> None:
    finding = full.findings[0]._replace(json_path="a\r\nb\n::set-output name=x::1")
    text = REPORTERS[OutputFormat.GITHUB].render(
        replace(full, findings=(finding,), errors=(), stale_baseline=())
    )
    first = text.splitlines()[0]
    assert "a␍␊b␊::set-output" in first  # one shared spelling of controls
    assert len(text.splitlines()) == 2


def test_github_error_without_a_line_leaves_line_out(full: Report) -> None:
    commands, _ = _commands(replace(full, findings=(), stale_baseline=()))
    unreadable = next(c for c in commands if "unreadable" in str(c["message"]))
    assert "line" not in unreadable


def test_github_clean_report_is_the_summary_line_alone(clean: Report) -> None:
    assert REPORTERS[OutputFormat.GITHUB].render(clean) == (
        "thinkfix: No leaked reasoning in 6 assistant messages across 2 files.\n"
    )


def test_escape_examples() -> None:
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext%3A a%2C b"
    assert command("warning", "m", file="a,b", line=None) == "::warning file=a%2Cb::m"
    assert command("notice", "m") == "::notice::m"


@given(st.text())
def test_escape_property_round_trips_and_leaves_no_separator(value: str) -> None:
    escaped = escape_property(value)
    assert not set(escaped) & {"\r", "\n", ":", ","}
    assert _unescape(escaped) == value


@given(st.text())
def test_escape_data_round_trips_and_stays_on_one_line(value: str) -> None:
    escaped = escape_data(value)
    assert "\r" not in escaped and "\n" not in escaped
    assert _unescape(escaped) == value
