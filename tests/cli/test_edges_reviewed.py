"""Defects a review of the scan's and repair's edges found in the sixteenth session ("review8,
finding N" in the code, the docs and the commits), each held by a test that failed before
its fix: a role word spelled with escapes, a relative run folder, a tag spelled with a
Unicode case fold, the record limit of an incremental scan, a session rewritten mid-read,
a checkout's config writing into its git folder, a store undo under a deleted message, a
zstd session cut short, a Codex model key spelled with an escape, a record past the limit
read as nothing, and (in the seventeenth session) a line without the marker whose bytes are
not UTF-8, which the fast path never read (`io.textcheck`)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.commands import invoke
from tests.engine.conftest import claude_line
from tests.engine.repair_helpers import run
from tests.formats import opencode_db
from thinkfix.engine.ledger import restore as restore_mod
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.scan import sparse
from thinkfix.formats import records
from thinkfix.formats.records import DEFAULT_RECORD_LIMIT

pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture(autouse=True)
def _record_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's record limit as a fresh process has it, and not left behind: a scan
    here with `--max-record-size 100` sets it for the whole process (`set_record_limit`)."""
    monkeypatch.setattr(records, "_limit", [DEFAULT_RECORD_LIMIT])


_USER = (
    '{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/srv",'
    '"sessionId":"s1","version":"2.1.41","type":"user","message":{"role":"user",'
    '"content":"hi"},"uuid":"u1","timestamp":"2026-03-05T16:02:11.004Z"}\n'
)


def _assistant(role: str, kind: str, text: str) -> str:
    """A Claude Code assistant line, its role and type spelled as given (JSON text)."""
    return (
        '{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/srv",'
        '"sessionId":"s1","version":"2.1.41","message":{"id":"msg_1","type":"message",'
        f'"role":"{role}","model":"glm-4.6","content":[{{"type":"text","text":"{text}"}}],'
        f'"stop_reason":"end_turn"}},"type":"{kind}","uuid":"u2",'
        '"timestamp":"2026-03-05T16:02:19.350Z"}\n'
    )


@pytest.mark.parametrize("parse_all", [False, True])
def test_an_escaped_role_word_still_names_an_assistant_turn(
    tmp_path: Path, parse_all: bool
) -> None:
    """`"role":"\\u0061ssistant"` is the string "assistant" to every JSON parser; the line's
    leak must be found (exit 1), as it is with the word spelled plainly. Today the marker
    test (`FormatBase._messages`, `SparseReader`'s jump) reads the bytes `"assistant"` only:
    exit 0, "No leaked reasoning" (and with --parse-all the message is counted, its leak
    not looked for)."""
    escaped = "\\u0061ssistant"
    session = tmp_path / "s.jsonl"
    session.write_text(_USER + _assistant(escaped, escaped, "<think>plan</think>Done."))
    args = ["scan", "--isolated", "--output-format", "json", str(session)]
    result = invoke(*args, *(["--parse-all"] if parse_all else []))
    report = json.loads(result.stdout)
    assert report["summary"]["findings"] == 1, report["summary"]
    assert result.exit_code == 1


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


@pytest.mark.parametrize("how", ["run-dir", "state-dir"])
def test_a_relative_run_folder_gives_a_manifest_undo_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """`repair --in-place --run-dir run` (a relative folder, as a user types it) prints
    `undo with: thinkfix undo run/manifest.json`; that command must restore every byte.
    Today the manifest keeps `"backup_dir": "run/backup"` as given and undo refuses it:
    `malformed manifest: backup_dir 'run/backup' is not a normalised absolute path`, exit 2,
    the file left repaired. The same with a relative THINKFIX_STATE_DIR."""
    (tmp_path / "s").mkdir()
    session = tmp_path / "s" / "a.jsonl"
    session.write_bytes(LEAKY.read_bytes())
    extra: list[str] = []
    if how == "run-dir":
        extra = ["--run-dir", "run"]
    else:
        monkeypatch.setenv("THINKFIX_STATE_DIR", "state")
    repaired = invoke("repair", "--isolated", "--in-place", "--include-active", *extra, "s")
    assert repaired.exit_code in (0, 1), repaired.output
    assert session.read_bytes() != LEAKY.read_bytes()
    command = next(line for line in repaired.output.splitlines() if line.startswith("undo with: "))
    manifest = command.removeprefix("undo with: thinkfix undo ")
    undone = invoke("undo", manifest)
    assert undone.exit_code == 0, undone.output
    assert session.read_bytes() == LEAKY.read_bytes()


def _agree(session: Path) -> tuple[tuple[int, dict[str, object]], tuple[int, dict[str, object]]]:
    """(exit code, summary) of a default scan and of one that parses every line."""
    out = []
    for extra in ([], ["--parse-all"]):
        result = invoke("scan", "--isolated", "--output-format", "json", *extra, str(session))
        summary = json.loads(result.stdout)["summary"]
        out.append((result.exit_code, {k: summary[k] for k in ("findings", "by_kind")}))
    return out[0], out[1]


@pytest.mark.parametrize(
    "text",
    [
        "<thin\u212a>plan</thin\u212a>Done.",  # KELVIN SIGN, which str.lower() makes "k"
        "<thin\\u212a>plan</thin\\u212a>Done.",  # the same, as a JSON escape
        "plan</thin\u212a>Done.",  # a bare close
    ],
)
def test_the_prefilter_and_the_normalizer_agree_on_a_tags_case(tmp_path: Path, text: str) -> None:
    """The normalizer matches tag names with `(?i:...)` over str and lowers the name it found
    (`normalizer/grammar.py`), so `<thinK>` (U+212A) is a `<think>` tag: `--parse-all`
    reports a leak (exit 1). The raw-byte delimiter test (`engine/scan/prefilter.py`,
    `(?i:names)` over bytes: ASCII folding only, and no anchor for a `\\u212a` escape) proves
    the line has no delimiter, so the default scan counts it clean: exit 0. A False from the
    prefilter must be a proof; the two paths must give the same report."""
    session = tmp_path / "s.jsonl"
    session.write_text(_USER + _assistant("assistant", "assistant", text), encoding="utf-8")
    default, parsed = _agree(session)
    assert default == parsed


def test_an_incremental_scan_keeps_the_record_limit(tmp_path: Path) -> None:
    """`scan --max-record-size 100` reports every longer record as too large (exit 2, an input
    error each); `scan --incremental` must report what a full scan reports. Today its
    reader (`engine/telemetry/incremental.py` `_full`/`_resume` -> `_part`) never calls
    `set_record_limit`, so it parses them under the process's default (64 MB): the leaks,
    exit 1, no error. (`scan_file`, the full scan's entry, sets it first thing.)"""
    session = tmp_path / "a.jsonl"
    session.write_bytes(LEAKY.read_bytes())
    # the limit is the default here, as in a fresh process (`_record_limit`)
    runs = []
    for extra in (["--state", str(tmp_path / "state.json")], []):
        result = invoke(
            "scan", "--isolated", "--max-record-size", "100", "--output-format", "json",
            *extra, str(session),
        )  # fmt: skip
        report = json.loads(result.stdout)
        runs.append((result.exit_code, report["summary"]["findings"], len(report["errors"])))
    incremental, full = runs
    assert full[0] == 2 and full[2] > 0, full
    assert incremental == full


def test_a_session_rewritten_in_place_while_scanned_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runtime that saves by truncating and rewriting the same file (Node's
    `writeFileSync`, a compaction) may do so while scan reads it. Here the session holds a
    leak past its first 4 MB block (`sparse.BLOCK`, whose end falls on a line's end), and is
    rewritten, shorter and with a leak of its own, right after that block was read: the
    next read is at the end of the file. Neither the old nor the new bytes are clean, and
    scan read only part of either, so the file must be an error (exit 2). Today: exit 0,
    "No leaked reasoning", no error (`engine/scan/one_file.py` and `sparse.SparseReader`
    never compare the file's state after the read with its state before)."""
    clean = b"".join(claude_line(f"All done {i}.", uuid=f"c{i}") for i in range(40))
    head = clean * (4_000_000 // len(clean))
    head += claude_line(
        "x" * ((1 << 22) - len(head) - len(claude_line("", uuid="pad"))), uuid="pad"
    )
    assert len(head) == sparse.BLOCK
    session = tmp_path / "s.jsonl"
    session.write_bytes(head + clean * 5 + claude_line("<think>old</think>Done.", uuid="o1"))
    rewritten = claude_line("Hi.", uuid="n0") + claude_line("<think>new</think>Done.", uuid="n1")
    read = sparse.SparseReader._read

    def _read(self: sparse.SparseReader, n: int) -> bytes:
        data = read(self, n)
        if self.read_total == sparse.BLOCK:  # the runtime saves, in place
            with open(session, "r+b") as fp:
                fp.truncate(0)
                fp.write(rewritten)
        return data

    monkeypatch.setattr(sparse.SparseReader, "_read", _read)
    result = invoke("scan", "--isolated", "-j", "1", "--output-format", "json", str(session))
    report = json.loads(result.stdout)
    assert session.read_bytes() == rewritten  # the rewrite happened mid-read
    assert result.exit_code == 2, report["summary"]
    assert report["errors"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("output", '".git/hooks/pre-commit"'),
        ("report", '["concise=.git/hooks/pre-commit"]'),
        ("write-baseline", '".git/hooks/pre-commit"'),
    ],
)
def test_a_checkouts_config_cannot_write_into_its_git_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str
) -> None:
    """A checkout's config may write only inside its own folder (`settings.config.
    _trusted_file_value`), but its `.git` folder is not the checkout's content: git never
    checks a `.git` path out, so a pull request cannot put a hook there, and a CI runner
    (or `pre-commit install`) owns it. Today `output = ".git/hooks/pre-commit"` overwrites
    an executable hook, its mode kept, with the report, and the report carries the
    session's own strings: a model named `glm$(touch${IFS}PWNED)` ran on the next
    `git commit` (review8, finding 6). The value must be refused (exit 2) and the
    hook left as it was."""
    repo = tmp_path / "repo"
    (repo / "sessions").mkdir(parents=True)
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(parents=True)
    hook = hooks / "pre-commit"
    hook.write_text("#!/bin/sh\nexec pre-commit run\n")
    hook.chmod(0o755)
    (repo / "sessions" / "s.jsonl").write_bytes(LEAKY.read_bytes())
    (repo / "pyproject.toml").write_text(f"[tool.thinkfix]\n{key} = {value}\n")
    monkeypatch.chdir(repo)
    result = invoke("scan", "sessions")
    assert hook.read_text() == "#!/bin/sh\nexec pre-commit run\n"
    assert result.exit_code == 2


def test_store_undo_does_not_bring_back_a_part_of_a_message_deleted_since(tmp_path: Path) -> None:
    """The repair of OpenCode's store deletes a lone `</think>` text part (its message still
    shows its other text). The user then deletes that message in OpenCode (its row and its
    parts). Undo keeps what the runtime wrote since (docs/formats.md, "Undo, SQLite"): the
    message stays deleted, so the part must not come back as an orphan row whose message
    is gone (or the store is refused, naming the row). Today undo re-inserts it: `restored`,
    exit 0, `part` holds a row of a message that no longer exists."""
    store = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY)
    message = "msg_95e0f3e20003cQ5tX9oZ2fMnUh"  # its parts: the lone `</think>`, a text
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    with closing(sqlite3.connect(store)) as db:  # the user deletes that message
        db.execute("DELETE FROM part WHERE message_id = ?", (message,))
        db.execute("DELETE FROM message WHERE id = ?", (message,))
        db.commit()
    restore_mod.undo(result.manifest_path)
    with closing(sqlite3.connect(store)) as db:
        orphans = db.execute(
            "SELECT id FROM part WHERE message_id NOT IN (SELECT id FROM message)"
        ).fetchall()
    assert orphans == []


PI = FIXTURES / "pi" / "2026-01-15T08-30-12-417Z_4b1d6e2a-8c3f-4e5a-9d7b-1f0e2c3a4b5d.jsonl"


def test_a_byte_of_bad_utf8_in_the_role_word_is_an_error(tmp_path: Path) -> None:
    """One corrupt byte in the role word of a leaking pi line (`"role":"assist\\xc3ant"`:
    not UTF-8, so not JSON) hides the whole line from the default scan: the sparse reader
    jumps only to lines holding `"assistant"` and never validates the others
    (`engine/scan/sparse.py`: "never parsed and never validated", before), so the session was
    reported clean, exit 0. `--parse-all` says `not UTF-8`, exit 2. A file that is not
    UTF-8 is not one thinkfix has read: it must be an error on every path."""
    lines = PI.read_bytes().split(b"\n")[:5]  # the header, a user turn, the leaking answer
    assert b"<think>" in lines[4] and lines[4].count(b'"role":"assistant"') == 1
    lines[4] = lines[4].replace(b'"role":"assistant"', b'"role":"assist\xc3ant"')
    session = tmp_path / "s.jsonl"
    session.write_bytes(b"\n".join(lines) + b"\n")
    default, parsed = _agree(session)
    assert parsed[0] == 2
    assert default == parsed


def _zst_cut_on_a_line_end(tmp_path: Path) -> tuple[Path, Path]:
    """A zstd session with a leak on its last line, and two copies cut short (a copy or a
    rotation interrupted): one inside its first block, one where the blocks decoded so far
    end on a line's end (the compressor's blocks hold 128 KiB; the lines are made to fill
    the first exactly)."""
    import io
    import random

    import zstandard

    pick = random.Random(1)
    names = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]

    def words() -> str:
        return " ".join(pick.choice(names) + str(pick.randrange(1000)) for _ in range(60))

    head: list[bytes] = []
    while sum(map(len, head)) < (128 << 10) - 2000:
        head.append(claude_line(words(), uuid=f"c{len(head)}"))
    pad = (128 << 10) - sum(map(len, head)) - len(claude_line("", uuid="pad"))
    head.append(claude_line("y" * pad, uuid="pad"))
    block = b"".join(head)
    assert len(block) == 128 << 10
    rest = [claude_line(words(), uuid=f"d{i}") for i in range(200)]
    data = block + b"".join(rest) + claude_line("<think>plan</think>Done.", uuid="z")
    frame = zstandard.ZstdCompressor().compress(data)
    first = tmp_path / "first.jsonl.zst"
    first.write_bytes(frame[: len(frame) // 10])
    cut = next(
        n
        for n in range(len(frame) // 4, len(frame), len(frame) // 40)
        if zstandard.ZstdDecompressor()
        .stream_reader(io.BytesIO(frame[:n]), read_across_frames=True)
        .read(1 << 24)
        == block
    )
    lined = tmp_path / "lined.jsonl.zst"
    lined.write_bytes(frame[:cut])
    return first, lined


@pytest.mark.parametrize("which", ["first-block", "on-a-line-end"])
def test_a_zstd_session_cut_short_is_an_error(tmp_path: Path, which: str) -> None:
    """A gzip session cut short is `cannot read: Compressed file ended before the
    end-of-stream marker was reached` (exit 2). The same zstd session is not: python-
    zstandard's `stream_reader` (`io/compression.py` `wrap_reader`) returns what it decoded
    and then EOF, never an error for a frame left unfinished. Cut inside its first block it
    is "skipped (empty)", and in a folder with a clean session the run exits 0; cut where
    the decoded blocks end on a line's end, its prefix is scanned as the whole file: "No
    leaked reasoning in 176 assistant messages", exit 0. Either is a file not fully read."""
    first, lined = _zst_cut_on_a_line_end(tmp_path)
    folder = tmp_path / "sessions"
    folder.mkdir()
    (first if which == "first-block" else lined).rename(folder / "s.jsonl.zst")
    (folder / "clean.jsonl").write_bytes(claude_line("All done.", uuid="a1"))
    result = invoke("scan", "--isolated", "--output-format", "json", str(folder))
    report = json.loads(result.stdout)
    assert result.exit_code == 2, report["summary"]
    assert report["errors"]


CODEX = (
    FIXTURES / "codex" / "rollout-2026-03-02T10-21-07-0195a0c4-7d3e-7a21-9b5f-3c8e2d1f6a47.jsonl"
)


def test_a_turn_context_with_an_escaped_model_key_is_parsed(tmp_path: Path) -> None:
    """Codex's `keeps_context` skips the parse of a `turn_context` whose one `"model"` is the
    model in use. A line holding that and a second key `"m\\u006fdel":"gpt-5"` is JSON whose
    model is gpt-5 (the last of a repeated key), so the messages after it are gpt-5's. With
    `--disable-model 'qwen3*'` (a model whose prompts use <think> on purpose) the default
    scan keeps them qwen3's and checks none: 0 findings, exit 0; `--parse-all` finds both
    leaks (exit 1). A line with an escape that could spell a key must be parsed, as the
    block counter's `TAIL_TOKENS` already rule (`\\u006`, `\\u007`)."""
    lines = CODEX.read_bytes().split(b"\n")
    turn = lines[2]
    assert b'"type":"turn_context"' in turn and b'"model":"qwen3:32b"' in turn
    dup = turn.replace(b'"model":"qwen3:32b"', b'"model":"qwen3:32b","m\\u006fdel":"gpt-5"')
    session = tmp_path / "rollout.jsonl"
    session.write_bytes(b"\n".join([*lines[:5], dup, *lines[5:]]))
    runs = []
    for extra in ([], ["--parse-all"]):
        result = invoke(
            "scan", "--isolated", "--disable-model", "qwen3*", "--output-format", "json",
            *extra, str(session),
        )  # fmt: skip
        runs.append((result.exit_code, json.loads(result.stdout)["summary"]["findings"]))
    default, parsed = runs
    assert parsed == (1, 2)
    assert default == parsed


GEMINI = FIXTURES / "gemini-cli" / "session-2026-02-03T10-15-4f2a9c1e.json"


@pytest.mark.parametrize(
    ("session", "extra"),
    [(GEMINI, []), (LEAKY, ["--parse-all"])],
    ids=["json-document", "jsonl-parse-all"],
)
def test_a_record_past_the_size_limit_is_an_error_on_every_path(
    tmp_path: Path, session: Path, extra: list[str]
) -> None:
    """A record longer than `--max-record-size` is "too large" (exit 2): the default scan of
    a JSONL session says so for each line. But the reader's record for it keeps no bytes
    (`reader.read_document`'s, `iter_jsonl`'s `Oversized`: `raw=b""`), and the scan's
    `_FileScan._filtered` drops every record whose raw is empty before looking at its
    error. So a Gemini CLI `.json` chat over the limit (64 MB by default) reads as "No
    leaked reasoning in 0 assistant messages", exit 0, and so does every line over it with
    `--parse-all` (the line reader's path)."""
    target = tmp_path / session.name
    target.write_bytes(session.read_bytes())
    result = invoke(
        "scan", "--isolated", "--max-record-size", "100", "--output-format", "json",
        *extra, str(target),
    )  # fmt: skip
    report = json.loads(result.stdout)
    assert result.exit_code == 2, report["summary"]
    assert any("too large" in e["message"] for e in report["errors"])
