"""`scan --dask ADDRESS` merges the same report as a local run (#13 item 6).

A real `distributed.LocalCluster` with two worker processes: the per-file work is pickled
to other processes and the results come back in completion order, so equality here shows
the merge does not depend on where or in what order files were scanned.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

distributed = pytest.importorskip("distributed")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every JSONL fixture under several names, some repeated many times over."""
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(6)
    for n, source in enumerate(sorted(FIXTURES.rglob("*.jsonl")) * 2):
        folder = root / source.parent.name
        folder.mkdir(exist_ok=True)
        (folder / f"{n:03d}-{source.name}").write_bytes(
            source.read_bytes() * rng.choice((1, 3, 20))
        )
    return root


def _scan_json(*args: str) -> str:
    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--no-progress", "--output-format", "json", *args]
    )
    assert result.exit_code == 1, result.output  # both inputs leak
    return result.stdout


@pytest.mark.parametrize("which", ["fixtures", "corpus"])
def test_dask_scan_report_is_identical_to_one_process(
    dask_address: str, corpus: Path, which: str
) -> None:
    root = str(FIXTURES if which == "fixtures" else corpus)
    local = _scan_json("--jobs", "1", root)
    assert json.loads(local)["summary"]["leaking_messages"] > 0
    assert _scan_json("--dask", dask_address, root) == local


def test_dask_without_a_scheduler_is_an_error_not_a_clean_run(tmp_path: Path) -> None:
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):  # not the 30 s default
        result = CliRunner().invoke(
            main, ["scan", "--isolated", "--dask", "tcp://127.0.0.1:9", str(FIXTURES)]
        )
    assert result.exit_code == 2
    assert "cannot reach the scheduler" in result.output


def test_dask_scan_of_a_url_reads_the_files_on_the_workers(dask_address: str, corpus: Path) -> None:
    """The workers open the fsspec URL themselves: same report, each file shown by its URL."""
    url = corpus.resolve().as_uri()
    local = _scan_json("--jobs", "1", str(corpus))
    assert _scan_json("--dask", dask_address, url).replace(url, str(corpus)) == local
