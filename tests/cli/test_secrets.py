"""Secrets planted in sessions appear in no report of any command (issue 11, item 7).

Reports are handed to auditors, so every command that shows session text (scan in
every output format, diff in every format, repair --diff and --report, show in every
view) masks likely credentials by default; `--redact none` is the opt-out. The
secrets sit where they used to survive: inside leaked reasoning (scan snippets), in
the visible answer (diffs), in tool output (show), right after a `\\n` (so JSON
escaping put a letter before them), and across the snippet's cut (so a prefix of a
token used to survive the truncation).

Not reports, and so not redacted: the repaired session files themselves (repair
--out / --in-place write the user's data back) and `normalize` (a text filter).
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from thinkfix.cli import main
from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.diff.base import DiffFormat
from thinkfix.reporters.transcript.view import ThinkingView

AWS = "AKIAQ3EGUW7QZXB4NR5T"
AWS_SECRET = "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"
GITHUB = "ghp_R8vY2mQ4tL6wN1pZ9kC3xB7dF5hJ0sA2eG4u"
OPENAI = "sk-proj-Zk2Lq9Wm4Xv7Tn1Rb8Yc3Hd6Fj0Gp5Ks2Mw9Qe4Ut7Iy1Oa"
URL_PASSWORD = "Tr0ub4dor-and-3xyzzy"
KEY_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2ExampleKeyBodyQ9u8y7t6r5e4w3"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + KEY_BODY
    + "\n"
    + KEY_BODY[::-1]
    + "\n-----END RSA PRIVATE KEY-----"
)
SLACK = "xoxb-2048613593-4096735812-Wq8Zr3Tk6Vm9Lp2Nx5Hb"
PASSWORD = "hunter2-correct-horse"
# Issue 22 item 11: shapes that passed unmasked (in 30 of 57 outputs) before gitleaks' rules.
STS_SECRET = "R3wM5F49sCh2iRmjW9wYCoef12FcOR+nq4ReyZ9I"
SECRET_KEY = "Zr8Qp2Lw9Xk4Tn7Bv1Mc6Hd"
BASIC = "ZGVwbG95LWJvdDpXcThacjNUazZWbTlMcDJO"  # deploy-bot:Wq8Zr3Tk6Vm9Lp2N
BARE_AWS_SECRET = "j4pe3RmvENaAkdHLXp2/ywyY3dotLuO2Mt3OHWR6"
#: Each new shape as it appears in the wild, keyed by the name CORES gives its secret.
NEW_SHAPES = {
    "sts-json": f'"SecretAccessKey": "{STS_SECRET}"',
    "secret_key": f"secret_key={SECRET_KEY}",
    "basic-auth": f"Authorization: Basic {BASIC}",
    "bare-aws-secret": BARE_AWS_SECRET,
}

#: The part of each secret that must never be shown (prefixes like `ghp_` may be).
CORES = {
    "aws": AWS[4:],
    "aws-secret": AWS_SECRET,
    "github": GITHUB[4:],
    "openai": OPENAI[8:],
    "url-password": URL_PASSWORD,
    "private-key": KEY_BODY,
    "slack": SLACK[5:],
    "password": PASSWORD,
    "sts-json": STS_SECRET,
    "secret_key": SECRET_KEY,
    "basic-auth": BASIC,
    "bare-aws-secret": BARE_AWS_SECRET,
}
WINDOW = 10  # no 10 characters in a row of a secret's core may appear anywhere


def _leaky_text() -> str:
    # The OpenAI key straddles the 200-character snippet cut: 20 characters of it survived.
    reasoning = (
        "x" * 170
        + " key "
        + OPENAI
        + " then\n"
        + AWS
        + " and "
        + GITHUB
        + " aws_secret_access_key="
        + AWS_SECRET
        + " postgres://admin:"
        + URL_PASSWORD
        + "@db.internal:5432/app "
        + PRIVATE_KEY
        + " "
        + SLACK
        + " password: "
        + PASSWORD
    )
    return f"<think>{reasoning}</think>The deploy is fixed; I used {GITHUB} and\n{AWS}."


def _new_shapes_text() -> str:
    """The four new shapes at the start of leaked reasoning (so in every scan snippet) and in
    the visible answer."""
    shapes = " ".join(NEW_SHAPES.values())
    return f"<think>{shapes}\nthen retry</think>Retried with {shapes}."


def _claude(tmp: Path) -> Path:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s1",
            "parentUuid": None,
            "isSidechain": False,
            "timestamp": "2026-03-01T10:00:00.000Z",
            "message": {"role": "user", "content": f"deploy with {OPENAI}"},
        },
        {
            "type": "user",
            "uuid": "u2",
            "sessionId": "s1",
            "parentUuid": "u1",
            "isSidechain": False,
            "timestamp": "2026-03-01T10:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": f"env:\nAWS_ACCESS_KEY_ID={AWS}\n{PRIVATE_KEY}",
                    }
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "sessionId": "s1",
            "parentUuid": "u2",
            "isSidechain": False,
            "timestamp": "2026-03-01T10:00:02.000Z",
            "message": {
                "id": "msg_a1",
                "type": "message",
                "role": "assistant",
                "model": "qwen3-32b",
                "content": [{"type": "text", "text": _leaky_text()}],
            },
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "sessionId": "s1",
            "parentUuid": "a1",
            "isSidechain": False,
            "timestamp": "2026-03-01T10:00:03.000Z",
            "message": {
                "id": "msg_a2",
                "type": "message",
                "role": "assistant",
                "model": "qwen3-32b",
                "content": [{"type": "text", "text": _new_shapes_text()}],
            },
        },
    ]
    path = tmp / "sessions" / "claude" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _chat(tmp: Path) -> Path:
    path = tmp / "sessions" / "chat" / "chat.jsonl.gz"
    path.parent.mkdir(parents=True)
    record = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": _leaky_text()},
            {"role": "user", "content": "again"},
            {"role": "assistant", "content": _new_shapes_text()},
        ]
    }
    path.write_bytes(gzip.compress(orjson.dumps(record) + b"\n"))
    return path


def _leaks(output: str) -> list[str]:
    found = []
    for name, core in CORES.items():
        for i in range(len(core) - WINDOW + 1):
            piece = core[i : i + WINDOW]
            if piece in output or piece.replace("/", "\\/") in output:
                found.append(f"{name}: {piece!r}")
                break
    return found


@pytest.fixture
def planted(tmp_path: Path, isolated_cli: None) -> Path:
    _claude(tmp_path)
    _chat(tmp_path)
    return tmp_path / "sessions"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _everything(result: Result, *files: Path) -> str:
    out = result.stdout + result.stderr
    for f in files:
        out += f.read_text(encoding="utf-8", errors="replace") if f.is_file() else ""
    return out


def _outputs(root: Path, tmp: Path, extra: tuple[str, ...]) -> dict[str, str]:
    """Every output of every command that shows session text, by a readable name."""
    claude = str(root / "claude" / "session.jsonl")
    out: dict[str, str] = {}
    for fmt in OutputFormat:
        r = _invoke("scan", "--select", "all", "--output-format", fmt.value, *extra, str(root))
        out[f"scan --output-format {fmt.value}"] = _everything(r)
        report = tmp / f"scan-report.{fmt.value}"
        r = _invoke(
            "scan",
            "--report",
            f"{fmt.value}={report}",
            "-o",
            str(tmp / "scan-o"),
            "--output-format",
            fmt.value,
            *extra,
            str(root),
        )
        out[f"scan --report {fmt.value} and -o"] = _everything(r, report, tmp / "scan-o")
    for dfmt in DiffFormat:
        r = _invoke("diff", "--output-format", dfmt.value, *extra, str(root))
        out[f"diff --output-format {dfmt.value}"] = _everything(r)
        target = tmp / f"diff-o.{dfmt.value}"
        r = _invoke("diff", "--output-format", dfmt.value, "-o", str(target), *extra, str(root))
        out[f"diff -o ({dfmt.value})"] = _everything(r, target)
    out["repair --diff"] = _everything(_invoke("repair", "--diff", *extra, str(root)))
    out["repair --check"] = _everything(_invoke("repair", "--check", *extra, str(root)))
    out["repair --dry-run"] = _everything(_invoke("repair", "--dry-run", *extra, str(root)))
    for ext in ("html", "md", "json", "txt"):
        report = tmp / f"repair-report.{ext}"
        r = _invoke(
            "repair", "--out", str(tmp / f"out-{ext}"), "--report", str(report), *extra, str(root)
        )
        out[f"repair --out --report .{ext}"] = _everything(r, report)
    for view in ThinkingView:
        for normalized in ((), ("--normalized",)):
            r = _invoke("show", "--no-pager", "--thinking", view.value, *normalized, *extra, claude)
            out[f"show --thinking {view.value} {' '.join(normalized)}"] = _everything(r)
    work = tmp / "inplace"
    shutil.copytree(root, work)
    # --include-active: the copy was just written, and a fresh file is left alone by default.
    r = _invoke(
        "repair",
        "--in-place",
        "--include-active",
        "--report",
        str(tmp / "inplace.html"),
        *extra,
        str(work),
    )
    out["repair --in-place --report"] = _everything(r, tmp / "inplace.html")
    manifest = next(
        line.split("undo ", 1)[1] for line in r.stderr.splitlines() if line.startswith("undo with")
    )
    out["undo"] = _everything(_invoke("undo", manifest))
    return out


def test_no_planted_secret_appears_in_any_output(planted: Path, tmp_path: Path) -> None:
    outputs = _outputs(planted, tmp_path, ())
    assert len(outputs) >= 45
    assert "[REDACTED:" in outputs["scan --output-format json"]
    assert "[REDACTED:" in outputs["diff --output-format html"]
    assert "[REDACTED:" in outputs["show --thinking expanded "]
    shown = {name: _leaks(text) for name, text in outputs.items()}
    assert {name: found for name, found in shown.items() if found} == {}


def test_redact_none_opts_out_and_shows_them(planted: Path, tmp_path: Path) -> None:
    root = str(planted)
    for args in (
        ("scan", "--output-format", "json", "--redact", "none", root),
        ("scan", "--output-format", "json", "--redact=none", root),
        ("diff", "--redact", "none", root),
        ("repair", "--diff", "--redact", "none", root),
        (
            "show",
            "--no-pager",
            "--thinking",
            "expanded",
            "--redact",
            "none",
            str(planted / "claude" / "session.jsonl"),
        ),
    ):
        text = _everything(_invoke(*args))
        assert _leaks(text), args


def test_bare_redact_before_a_path_still_means_secrets(planted: Path) -> None:
    result = _invoke("scan", "--output-format", "json", "--redact", str(planted))
    assert result.exit_code == 1 and not _leaks(result.stdout)


def test_replay_masks_secrets_in_a_captured_stream(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
    data = (source / "ollama_deepseek_r1_think_leak.ndjson").read_text(encoding="utf-8")
    capture = tmp_path / "c.ndjson"
    capture.write_text(
        data.replace('"content":"Okay"', f'"content":"Okay {GITHUB} {AWS} "', 1), encoding="utf-8"
    )
    for args in ((), ("--json",)):
        shown = _invoke("replay", *args, str(capture))
        assert shown.exit_code in (0, 1) and not _leaks(shown.output), shown.output
        assert "[REDACTED:" in shown.output
        assert _leaks(_invoke("replay", "--redact", "none", *args, str(capture)).output)


@pytest.mark.parametrize("fmt", list(OutputFormat))
@pytest.mark.parametrize("shape", sorted(NEW_SHAPES))
def test_each_new_shape_is_masked_in_every_scan_format(
    shape: str, fmt: OutputFormat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One shape alone in a leaked reasoning's snippet (no other rule near it to hide it)."""
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("THINKFIX_CONFIG", raising=False)
    session = tmp_path / "chat.jsonl"
    text = f"<think>so {NEW_SHAPES[shape]} works</think>Done."
    record = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": text}]
    }
    session.write_bytes(orjson.dumps(record) + b"\n")
    args = ("scan", "--select", "all", "--output-format", fmt.value, str(session))
    assert _leaks(_everything(_invoke(*args))) == []
    if fmt is OutputFormat.JSON:  # shows the snippet whole: the shape reached the report
        assert _leaks(_everything(_invoke(*args, "--redact", "none")))
