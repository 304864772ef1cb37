"""One JSON document, exactly `Report.to_dict()`: the schema other tools read."""

from __future__ import annotations

from thinkfix.engine.report import Report
from thinkfix.reporters.base import OutputFormat, RenderOptions, Reporter, pretty_json


class JsonReporter(Reporter):
    """Pretty-printed in `to_dict`'s key order (schema_version first), which is already fixed."""

    format = OutputFormat.JSON
    media_type = "application/json"
    suffix = ".json"

    def document(self, report: Report, options: RenderOptions) -> bytes:
        return pretty_json(report.to_dict())
