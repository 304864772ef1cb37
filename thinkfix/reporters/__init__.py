"""Reporters: one module per output format behind `base.Reporter`, and the registry of them."""

from __future__ import annotations

from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat, RenderOptions, Reporter
from thinkfix.reporters.concise import ConciseReporter
from thinkfix.reporters.github import GithubReporter
from thinkfix.reporters.gitlab import GitlabReporter
from thinkfix.reporters.json import JsonReporter
from thinkfix.reporters.jsonl import JsonlReporter
from thinkfix.reporters.junit import JunitReporter
from thinkfix.reporters.markdown import MarkdownReporter
from thinkfix.reporters.openmetrics import OpenMetricsReporter
from thinkfix.reporters.registry import REPORTERS, get_reporter
from thinkfix.reporters.sarif import SarifReporter
from thinkfix.reporters.text import TextReporter

__all__ = [
    "DEFAULT_OPTIONS",
    "REPORTERS",
    "ConciseReporter",
    "GithubReporter",
    "GitlabReporter",
    "JsonReporter",
    "JsonlReporter",
    "JunitReporter",
    "MarkdownReporter",
    "OpenMetricsReporter",
    "OutputFormat",
    "RenderOptions",
    "Reporter",
    "SarifReporter",
    "TextReporter",
    "get_reporter",
]
