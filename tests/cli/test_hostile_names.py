"""A file name cannot drive the terminal nor forge a line, in any output (issue 22 item 5).

`repair --diff` and `--dry-run` printed ESC, BEL and newlines from file names raw (a newline
split the `---`/`+++` headers); `--output-format concise` printed a raw newline, so a name could
forge a finding line; `github` passed ESC and BEL. Every output now spells a name with
`engine.controls.visible_name`.
"""

from __future__ import annotations

import re
import shutil
import string
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkfix.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKING = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
HOSTILE = "a\x1b[2J\x07b\nc.jsonl:2:1: block forged\r.jsonl"
#: Any raw C0 or C1 control but the newline that ends a line, and DEL.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
SCAN_FORMATS = (
    "text",
    "concise",
    "github",
    "markdown",
    "openmetrics",
    "jsonl",
    "json",
    "sarif",
    "gitlab",
    "junit",
    "html",
)
DIFF_FORMATS = ("text", "markdown", "html", "json")
#: One line per item: a name may add none.
LINE_FORMATS = ("text", "concise", "github", "markdown", "openmetrics", "jsonl")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "state"))
    for key in ("THINKFIX_CONFIG", "GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)


def _invoke(folder: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, [*args, "--isolated", str(folder)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result


def _session(folder: Path, name: str) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copy(LEAKING, folder / name)
    return folder


def _outputs(folder: Path) -> dict[str, str]:
    """Every output a person or a tool reads for the session in `folder`: scan's formats on
    stdout, repair's diff on stdout, what `--dry-run` says, and `diff` in each of its formats."""
    out = {fmt: _invoke(folder, "scan", "--output-format", fmt).stdout for fmt in SCAN_FORMATS}
    diff = _invoke(folder, "repair", "--diff")
    out["repair --diff"] = diff.stdout
    out["repair --diff stderr"] = diff.stderr
    out["repair --dry-run"] = _invoke(folder, "repair", "--dry-run").stderr
    for fmt in DIFF_FORMATS:
        out[f"diff {fmt}"] = _invoke(folder, "diff", "--output-format", fmt).stdout
    return out


def test_repair_diff_headers_are_one_line_each(tmp_path: Path) -> None:
    folder = _session(tmp_path / "s", HOSTILE)
    patch = _invoke(folder, "repair", "--diff").stdout
    assert not RAW_CONTROL.search(patch)
    headers = [line for line in patch.splitlines() if line.startswith(("---", "+++"))]
    assert len(headers) == 2
    assert headers[0].endswith("a␛[2J␇b␊c.jsonl:2:1: block forged␍.jsonl")
    assert all(line[:1] in "-+@\\" for line in patch.splitlines())


def test_dry_run_names_the_file_on_one_line(tmp_path: Path) -> None:
    folder = _session(tmp_path / "s", HOSTILE)
    said = _invoke(folder, "repair", "--dry-run").stderr
    assert not RAW_CONTROL.search(said)
    assert "would repair " in said and "a␛[2J␇b␊c.jsonl" in said
    assert all(line.startswith(("would repair", "warning:")) for line in said.splitlines())


@pytest.mark.parametrize("fmt", ["concise", "github"])
def test_a_name_forges_no_finding_line(tmp_path: Path, fmt: str) -> None:
    folder = _session(tmp_path / "s", HOSTILE)
    out = _invoke(folder, "scan", "--output-format", fmt).stdout
    plain = _invoke(_session(tmp_path / "p", "plain.jsonl"), "scan", "--output-format", fmt)
    assert not RAW_CONTROL.search(out)
    assert len(out.splitlines()) == len(plain.stdout.splitlines())


NAME_CHARS = st.one_of(
    st.sampled_from([chr(c) for c in [*range(1, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]]),
    st.sampled_from(string.ascii_letters + " :,%"),
)


@settings(
    max_examples=8,
    deadline=None,
    # each example replaces its folders (`_session`)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stem=st.text(NAME_CHARS, min_size=1, max_size=10))
def test_no_output_carries_a_raw_control_or_an_extra_line(tmp_path: Path, stem: str) -> None:
    from thinkfix.engine.controls import visible_name

    hostile = _outputs(_session(tmp_path / "h", stem + ".jsonl"))
    plain = _outputs(_session(tmp_path / "p", "x" * len(visible_name(stem)) + ".jsonl"))
    for what, text in hostile.items():
        assert not RAW_CONTROL.search(text), what
        if what in LINE_FORMATS or what.startswith(("repair", "diff")):
            assert len(text.splitlines()) == len(plain[what].splitlines()), what


def test_where_shows_a_folder_name_on_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["where", "--all"], env={"CODEX_HOME": str(tmp_path / "a\x1b]0;x\x07\nb")}
    )
    assert result.exit_code in (0, 1), result.output
    assert not RAW_CONTROL.search(result.stdout)
    assert any("a␛]0;x␇␊b/sessions" in line for line in result.stdout.splitlines())
