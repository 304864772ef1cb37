"""`thinkfix replay`'s library side: a captured provider stream read, its adapter found,
its events replayed through the adapter and the streaming normalizer, and the document a
`--json` report carries (redacted as asked)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from thinkfix.engine.report import SCHEMA_VERSION
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.secrets.rules import redact_text
from thinkfix.providers.accumulator import replay_events
from thinkfix.providers.capture import Capture, CaptureError, detect, read_capture
from thinkfix.providers.message import AssembledMessage
from thinkfix.providers.registry import Resolution


@dataclass(frozen=True)
class Replay:
    """One capture replayed: where it came from, the adapter that read it, the message."""

    path: str
    capture: Capture
    resolution: Resolution
    message: AssembledMessage

    def document(self, redaction: Redaction = Redaction.NONE) -> dict[str, Any]:
        """The `--json` document (schema_version 1), every string redacted as asked."""
        doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "capture": {
                "path": self.path,
                "encoding": self.capture.encoding.value,
                "events": len(self.capture.events),
                "done": self.capture.done,
            },
            "adapter": {"name": self.resolution.adapter, "rule": self.resolution.rule},
            "leaked": self.message.leaked,
            "message": self.message.to_dict(),
        }
        return doc if redaction is Redaction.NONE else redact_strings(doc, redaction)


def run(path: str, provider: str | None = None) -> Replay:
    """Replay the capture at `path` (through `provider`'s adapter, else the one its events
    name); `CaptureError` when it cannot be read, no adapter knows it, or the adapter finds
    nothing in it."""
    capture = read_capture(path)
    resolution = detect(capture, provider)
    message = replay_events(capture.payloads, resolution.create()).message
    if not message.blocks and message.error is None:
        raise CaptureError(
            f"{resolution.adapter} found no content in {len(capture.events)} events; try --provider"
        )
    return Replay(path, capture, resolution, message)


def redact_strings(value: Any, mode: Redaction) -> Any:
    """Every string of a JSON document redacted (values, so the document stays JSON)."""
    if isinstance(value, str):
        return redact_text(value, mode)
    if isinstance(value, list):
        return [redact_strings(v, mode) for v in value]
    if isinstance(value, dict):
        return {k: redact_strings(v, mode) for k, v in value.items()}
    return value
