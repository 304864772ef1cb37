"""`signature`: thinking blocks the runtime replays and its API will refuse.

Only formats whose runtime sends stored thinking blocks back to an API that checks their
signature are read (`shapes.THINKING_SHAPES`): a block there with no signature, an empty
one, or the same signed block a second time is a finding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from thinkfix.engine.health.shapes import THINKING_SHAPES
from thinkfix.engine.health.where import Where
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.formats.records import Record


def _short(signature: str) -> str:
    return hashlib.sha256(signature.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class SignatureCheck:
    """The `signature` visitor; it holds a short hash of each signature seen."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.shape = THINKING_SHAPES.get(where.format)
        self.seen: dict[str, int] = {}
        self.found: list[HealthFinding] = []

    def feed(self, record: Record, offset: int) -> None:
        shape = self.shape
        obj = record.obj if shape is not None else None
        if obj is None or shape is None:
            return
        if shape.per_record:
            self.seen = {}
        model = record.ctx.model or (
            obj.get("model") if isinstance(obj.get("model"), str) else None
        )
        for block in shape.blocks(obj, model):
            what = "redacted_thinking block" if block.redacted else "thinking block"
            sig, detail = block.signature, ""
            content = block.text.encode("utf-8", "surrogatepass") + block.path.encode()
            if sig is None:
                problem, message = Problem.MISSING_SIGNATURE, f"a {what} without a signature"
            elif not sig.strip():
                problem, message = Problem.EMPTY_SIGNATURE, f"a {what} with an empty signature"
            else:
                detail = _short(sig)
                first = self.seen.get(detail)
                if first is None:  # the first sighting
                    self.seen[detail] = record.line
                    continue
                problem = Problem.DUPLICATE_THINKING
                message = f"the {what} signed as on line {first}, again"
                content = sig.encode("utf-8", "surrogatepass")
            self.found.append(
                self.where.finding(
                    record, problem, message, json_path=block.path, detail=detail, content=content
                )
            )

    def finish(self) -> Iterator[HealthFinding]:
        return iter(self.found)
