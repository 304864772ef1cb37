"""The openmetrics reporter: parseable exposition text that ends with # EOF."""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.report import Report
from thinkfix.io.errors import ErrorKind
from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.openmetrics import escape_label_value
from thinkfix.reporters.registry import REPORTERS

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\[\\n"])*"'
PAIRS = rf"{NAME}={LABEL_VALUE}(?:,{NAME}={LABEL_VALUE})*"
SAMPLE = re.compile(rf"^(?P<name>{NAME})(?:\{{(?P<labels>{PAIRS})\}})? (?P<value>-?\d+)$")
LABEL = re.compile(rf"({NAME})=({LABEL_VALUE})")
META = re.compile(rf"^# (?:TYPE (?P<family>{NAME}) (?P<type>counter|gauge|info)|HELP {NAME} .+)$")


def _unquote(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value[1:-1])


def _samples(report: Report) -> list[tuple[str, dict[str, str], int]]:
    text = REPORTERS[OutputFormat.OPENMETRICS].render(report)
    lines = text.splitlines()
    assert text.endswith("# EOF\n") and lines.count("# EOF") == 1
    samples, families = [], []
    for line in lines[:-1]:
        meta = META.match(line)
        if meta:
            if meta["family"]:
                families.append((meta["family"], meta["type"]))
            continue
        match = SAMPLE.match(line)
        assert match, line
        name = match["name"]
        family, kind = families[-1]  # a sample belongs to the family declared just before it
        assert name == family + {"counter": "_total", "info": "_info"}.get(kind, "")
        labels = {k: _unquote(v) for k, v in LABEL.findall(match["labels"] or "")}
        samples.append((name, labels, int(match["value"])))
    assert len({f for f, _ in families}) == len(families)
    keys = [(name, tuple(sorted(labels.items()))) for name, labels, _ in samples]
    assert len(keys) == len(set(keys))
    return samples


def _values(
    samples: list[tuple[str, dict[str, str], int]], name: str
) -> dict[tuple[tuple[str, str], ...], int]:
    return {tuple(labels.items()): value for n, labels, value in samples if n == name}


def test_openmetrics_every_line_parses(any_report: Report) -> None:
    assert _samples(any_report)


def test_openmetrics_findings_by_kind_format_and_model_add_up_to_the_findings(
    full: Report,
) -> None:
    samples = _samples(full)
    found = _values(samples, "thinkfix_findings_total")
    assert sum(found.values()) == len(full.findings)
    assert found[(("kind", "block"), ("format", "codex"), ("model", "kimi-k2"))] == 1
    chars = _values(samples, "thinkfix_leaked_chars_total")
    assert sum(chars.values()) == full.summary.leaked_chars


def test_openmetrics_messages_by_format_and_model_sum_to_each_breakdown(full: Report) -> None:
    samples = _samples(full)
    for family, field in (
        ("thinkfix_assistant_messages_total", "assistant_messages"),
        ("thinkfix_leaking_messages_total", "leaking_messages"),
    ):
        pairs = _values(samples, family)
        assert sum(pairs.values()) == getattr(full.summary, field)
        for fmt, counts in full.summary.by_format.items():
            in_format = [v for k, v in pairs.items() if dict(k)["format"] == fmt]
            assert sum(in_format) == getattr(counts, field)
        for model, counts in full.summary.by_model.items():
            of_model = [v for k, v in pairs.items() if dict(k)["model"] == model]
            assert sum(of_model) == getattr(counts, field)
    by_model = _values(samples, "thinkfix_leaking_messages_by_model")
    assert {dict(k)["model"] for k in by_model} == set(full.summary.by_model)
    assert sum(by_model.values()) == full.summary.leaking_messages


def test_openmetrics_errors_by_kind_always_present(full: Report, clean: Report) -> None:
    errors = _values(_samples(full), "thinkfix_errors")
    assert Counter({dict(k)["kind"]: v for k, v in errors.items() if v}) == Counter(
        e.kind for e in full.errors
    )
    clean_errors = _values(_samples(clean), "thinkfix_errors")
    assert {dict(k)["kind"] for k in clean_errors} == {k.value for k in ErrorKind}
    assert set(clean_errors.values()) == {0}


def test_openmetrics_totals(full: Report) -> None:
    samples = _samples(full)
    assert _values(samples, "thinkfix_files") == {(): full.summary.files}
    assert _values(samples, "thinkfix_baselined_leaks") == {(): full.summary.baselined}
    assert _values(samples, "thinkfix_stale_baseline_entries") == {(): len(full.stale_baseline)}
    (info,) = _values(samples, "thinkfix_build_info")
    assert dict(info) == {"schema_version": "1", "version": full.tool_version}


@given(st.text())
def test_label_value_escaping_round_trips(value: str) -> None:
    quoted = f'"{escape_label_value(value)}"'
    assert re.fullmatch(LABEL_VALUE, quoted, flags=re.DOTALL)
    assert _unquote(quoted) == value
