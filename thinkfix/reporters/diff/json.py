"""One JSON document, exactly `DiffReport.to_dict()` (schema_version first)."""

from __future__ import annotations

from thinkfix.engine.repair.audit import DiffReport
from thinkfix.reporters.base import RenderOptions, pretty_json
from thinkfix.reporters.diff.base import DiffFormat, DiffRenderer


class JsonDiffRenderer(DiffRenderer):
    format = DiffFormat.JSON
    media_type = "application/json"
    suffix = ".json"

    def document(self, report: DiffReport, options: RenderOptions) -> bytes:
        return pretty_json(report.to_dict())
