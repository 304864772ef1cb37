"""The model a record names is evidence the formats pass to the normalizer (#21 item 4):
detokenised Harmony (`analysis...assistantfinal`) is read only from a gpt-oss model, by scan,
repair and show alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.repair_helpers import findings, run
from thinkfix.engine.repair.model import WriteMode

TEXT = "analysisWe need to answer 2+2.assistantfinalfour"


def _session(folder: Path, model: str) -> Path:
    doc = {
        "model": model,
        "messages": [
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": TEXT},
        ],
    }
    path = folder / f"{model.replace('/', '-')}.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("model", "found"), [("openai/gpt-oss-120b", 1), ("gpt-oss:20b", 1), ("qwen3-32b", 0)]
)
def test_scan_reads_detokenised_harmony_only_from_a_gpt_oss_model(
    tmp_path: Path, model: str, found: int
) -> None:
    assert findings([_session(tmp_path, model)]) == found


def test_repair_of_a_gpt_oss_record_moves_its_analysis_into_reasoning(tmp_path: Path) -> None:
    source = _session(tmp_path, "openai/gpt-oss-120b")
    other = _session(tmp_path, "qwen3-32b")
    out = tmp_path / "out"
    run([source, other], WriteMode.OUT, tmp_path, out_dir=str(out))
    repaired = json.loads((out / source.name).read_text(encoding="utf-8"))["messages"][1]
    assert repaired["content"] == "four"
    assert repaired["reasoning_content"] == "We need to answer 2+2."
    assert (out / other.name).read_bytes() == other.read_bytes()
    assert findings([out / source.name, out / other.name]) == 0
