"""Properties of repair over generated sessions: undo is exact, and a second repair is a no-op."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode

FRAGMENTS = [
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<thought>",
    "</ think >",
    "plan",
    "Answer.",
    " ",
    "\n",
    "\n\n",
    "`",
    "```\n",
    "a < b",
    "<think",
    "ü",
    "[THINK]",
    "[/THINK]",
    "<|begin_of_thought|>",
    "<|end_of_thought|>",
]
TEXTS = st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join)


def _claude(texts: list[str], user: str) -> bytes:
    lines = [
        {
            "type": "user",
            "uuid": "u0",
            "parentUuid": None,
            "sessionId": "s",
            "message": {"role": "user", "content": user},
        }
    ]
    for i, text in enumerate(texts):
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "parentUuid": f"a{i - 1}" if i else "u0",
                "sessionId": "s",
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "glm-4.6",
                    "content": [
                        {"type": "text", "text": text},
                        {
                            "type": "tool_use",
                            "id": f"toolu_{i}",
                            "name": "Bash",
                            "input": {"cmd": text},
                        },
                    ],
                },
            }
        )
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(TEXTS, min_size=1, max_size=4), user=TEXTS)
def test_repair_then_undo_is_exact_and_second_repair_is_a_no_op(
    texts: list[str], user: str
) -> None:
    original = _claude(texts, user)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "s" / "session.jsonl"
        work.parent.mkdir()
        work.write_bytes(original)
        first = run([work], WriteMode.IN_PLACE, root / "one")
        (file,) = first.files
        if file.status is not FileStatus.REPAIRED:
            # Nothing to do, or the proof refused the result: the file is exactly as it was.
            assert work.read_bytes() == original
            return
        repaired = work.read_bytes()
        second = run([work], WriteMode.IN_PLACE, root / "two")
        assert second.files[0].status is FileStatus.CLEAN, second.files[0]
        assert work.read_bytes() == repaired
        # The user line and every tool input are untouched by construction of the repair.
        assert repaired.split(b"\n", 1)[0] == original.split(b"\n", 1)[0]
        assert first.manifest_path is not None
        assert restore.undo(first.manifest_path).exit_code() is ExitCode.CLEAN
        assert work.read_bytes() == original
