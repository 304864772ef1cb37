"""Suite-wide test settings.

Under CI (the `CI` environment variable, which `.ci/run` and hosted runners set) the
hypothesis properties run derandomized and without the example database: a CI run
then checks the same examples every time, so a red build is reproducible and never
depends on examples a previous run happened to save.

Fakes that implement only the contracts, so tests can prove the engine needs nothing more:

`FakeFormat` is a `SessionFormat` that is not a `FormatBase`: one JSON object a line,
`{"who": "bot", "say": "..."}` for an assistant message. `FakeReporter` is a
`Reporter` with nothing but `document`. Register the format with the `fake_format`
fixture (it is added to the registry for the one test only).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, ClassVar

import pytest
from hypothesis import HealthCheck, settings

from thinkfix.engine.report import Report
from thinkfix.formats import registry
from thinkfix.formats.base import Message, SessionFormat
from thinkfix.formats.reader import iter_jsonl
from thinkfix.formats.records import Record, Site
from thinkfix.formats.repairs import DEFAULT_OPTIONS, ApplyOptions, Placement, Repair, TextSlot
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import fmt_path
from thinkfix.reporters.base import OutputFormat, RenderOptions, Reporter

# No timing assertions: a loaded machine must not fail the suite, so hypothesis' per-example
# deadline and its too-slow health check are off everywhere (speed is the bench's to show).
_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("untimed", **_UNTIMED)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_UNTIMED)
settings.load_profile("ci" if os.environ.get("CI") else "untimed")

# Runs keep their undo key, manifests and backups in the state folder: tests use a private
# one, never the user's ~/.local/state (subprocesses and CliRunner inherit it).
if "THINKFIX_STATE_DIR" not in os.environ:
    os.environ["THINKFIX_STATE_DIR"] = tempfile.mkdtemp(prefix="thinkfix-test-state-")

# Processes that compile a hyperscan database keep it in the cache folder (io.multimatch):
# tests use a private one, never the user's ~/.cache.
if "THINKFIX_CACHE_DIR" not in os.environ:
    os.environ["THINKFIX_CACHE_DIR"] = tempfile.mkdtemp(prefix="thinkfix-test-cache-")

# Tests write a session and repair it in place a moment later; by default `repair --in-place`
# leaves a file modified in the last few seconds alone (a live agent may be appending), so the
# suite turns that quiet time off. The live-writer tests set it themselves.
os.environ.setdefault("THINKFIX_ACTIVE_SECONDS", "0")


class FakeFormat(SessionFormat):
    """The smallest honest format: the contract's abstract methods and nothing else."""

    id = "fake-lines"
    description = "test-only: one {who, say} object a line"

    def detect(self, head: bytes, path: str = "") -> float:
        return 0.0  # never claims a real file; tests name it

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        return iter_jsonl(fp, shapes=self.shapes)

    def messages(self, record: Record) -> Iterator[Message]:
        data = record.data
        if isinstance(data, dict) and data.get("who") == "bot" and isinstance(data.get("say"), str):
            yield Message(
                (), record.index, [TextSlot(("say",), data["say"])], model=data.get("model")
            )

    def sites(self, record: Record) -> Iterator[Site]:
        for m in self.checked_messages(record, texts=True):
            for slot in m.texts:
                yield Site(
                    record_index=record.index,
                    line=record.line,
                    json_path=fmt_path(slot.path),
                    text=slot.text,
                    message_index=m.index,
                    model=m.model,
                    path=slot.path,
                )

    def assistant_messages(self, record: Record) -> int:
        return len(self.checked_messages(record))

    def apply(
        self,
        records: list[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[list[Record], list[Placement]]:
        raise NotImplementedError("the fake format is read-only")

    def turns(self, record: Record) -> Iterator[Turn]:
        for m in self.checked_messages(record, texts=True):
            yield Turn(
                Role.ASSISTANT, tuple(Part(PartKind.TEXT, s.text, path=s.path) for s in m.texts)
            )


class FakeReporter(Reporter):
    """A reporter with only `document`: one line of totals."""

    format: ClassVar[OutputFormat] = OutputFormat.TEXT

    def document(self, report: Report, options: RenderOptions) -> str:
        s = report.summary
        return f"files={s.files} messages={s.assistant_messages} leaking={s.leaking_messages}\n"


@pytest.fixture
def isolated_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command run as a user would, alone: manifests and backups under the test's folder,
    no config file named by the environment, the test's folder the working one."""
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("THINKFIX_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fake_format(monkeypatch: pytest.MonkeyPatch) -> FakeFormat:
    fmt = FakeFormat()
    monkeypatch.setitem(registry.FORMATS, fmt.id, fmt)
    return fmt
