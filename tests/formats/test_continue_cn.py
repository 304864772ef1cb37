"""A repaired Continue session, resumed by Continue's own CLI (`cn`, npm @continuedev/cli).

`cn -p --fork <id>` loads `~/.continue/sessions/<id>.json` with Continue's own
`HistoryManager` and sends the history to the model. The model here is a fake
OpenAI-compatible server on loopback that records the request: the original session
replays its leaked reasoning to the model, the repaired one replays the same messages with
the reasoning gone (it sits in the items' `reasoning` objects, which Continue never sends).
Skipped where `cn` is not installed (`npm install -g @continuedev/cli`; CI installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.engine.repair_helpers import run
from tests.formats.support import FIXTURES
from thinkfix.engine.repair.model import WriteMode
from thinkfix.normalizer.batch import normalize

CN = os.environ.get("THINKFIX_CN") or shutil.which("cn")
pytestmark = pytest.mark.skipif(CN is None, reason="Continue's CLI (cn) is not installed")

SESSION = "3f6c1d2e-8a4b-4c7d-9e1f-5b2a6c8d0e41"
SOURCE = FIXTURES / "continue" / "sessions" / f"{SESSION}.json"
_CHUNKS = [{"role": "assistant", "content": "ok"}, {}]


class _Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers "ok" and keeps every request."""

    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        request = json.loads(body or b"{}")
        self.server.requests.append(request)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for delta in _CHUNKS:
            chunk = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "fake",
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": None if delta else "stop"}
                ],
            }
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"data": []}')

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def model() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _replayed(tmp_path: Path, session: Path, server: ThreadingHTTPServer) -> list[dict[str, Any]]:
    """The messages `cn` sends to the model when it resumes `session`."""
    home = tmp_path / "home"  # the same folder for both runs: cn puts it in the system prompt
    shutil.rmtree(home, ignore_errors=True)
    sessions = home / ".continue" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copyfile(session, sessions / session.name)
    config = tmp_path / "config.yaml"
    port = server.server_address[1]
    config.write_text(
        "name: local\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: fake\n"
        f"    provider: openai\n    model: gpt-4o\n    apiBase: http://127.0.0.1:{port}/v1\n"
        "    apiKey: x\n    roles:\n      - chat\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CONTINUE_GLOBAL_DIR": str(home / ".continue"),
    }
    assert CN is not None
    done = subprocess.run(
        [CN, "-p", "--config", str(config), "--fork", SESSION, "go on"],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    requests = server.requests  # type: ignore[attr-defined]
    assert requests, "cn sent nothing to the model"
    messages: list[dict[str, Any]] = requests[-1]["messages"]
    server.requests = []  # type: ignore[attr-defined]
    return messages


def test_continue_cn_resumes_the_repaired_session_without_the_leaked_reasoning(
    tmp_path: Path, model: ThreadingHTTPServer
) -> None:
    result = run([SOURCE], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"), jobs=1)
    assert not result.all_errors, result.all_errors
    moved = [s for c in result.changes if c.applied for s in c.extracted]
    assert len(moved) == 3
    before = _replayed(tmp_path, SOURCE, model)
    after = _replayed(tmp_path, tmp_path / "out" / SOURCE.name, model)
    # the same conversation, message for message, from the repaired file
    assert [m["role"] for m in after] == [m["role"] for m in before]
    for old, new in zip(before, after):
        if old["role"] != "assistant" or old == new:
            assert new == old
            continue
        assert new["content"] == normalize(old["content"]).visible
        assert {k: v for k, v in new.items() if k != "content"} == {
            k: v for k, v in old.items() if k != "content"
        }
    # the original replays its leaks; the repaired file sends the model none of them
    replay_before = json.dumps([m for m in before if m["role"] == "assistant"])
    replay_after = json.dumps([m for m in after if m["role"] == "assistant"])
    assert all(text.split("\n")[0] in replay_before for text in moved)
    assert not any(text.split("\n")[0] in replay_after for text in moved)
    assert not [m for m in after if m["role"] == "assistant" and normalize(m["content"]).findings]
    assert [m for m in before if m["role"] == "assistant" and normalize(m["content"]).findings]
