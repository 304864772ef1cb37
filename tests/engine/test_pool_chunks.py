"""How the pool hands out its tasks (`pool.chunked`): large chunks first, single tasks last.

With one fixed chunk size (a sixteenth of the tasks for two workers), 99 files went out in 17
chunks of 6: one worker took the odd chunk and the other sat idle for its six files, the
run's tail. Chunks a quarter of each worker's share of what is left shrink to one task each
for at least the last `4 * workers` tasks, so the workers finish together.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.parallel import pool


@given(
    tasks=st.integers(min_value=0, max_value=2000),
    workers=st.integers(min_value=1, max_value=64),
    most=st.integers(min_value=1, max_value=64),
)
def test_chunks_cover_every_task_once_in_order_shrinking_to_single_tasks(
    tasks: int, workers: int, most: int
) -> None:
    chunks = pool.chunked(range(tasks), workers, most)
    assert [t for chunk in chunks for t in chunk] == list(range(tasks))
    sizes = [len(chunk) for chunk in chunks]
    assert all(1 <= size <= most for size in sizes)
    assert sizes == sorted(sizes, reverse=True)  # never a larger chunk after a smaller one
    tail = min(tasks, 4 * workers)
    assert sizes[len(sizes) - tail :] == [1] * tail


def test_ninety_nine_files_on_two_workers_end_with_single_files() -> None:
    sizes = [len(chunk) for chunk in pool.chunked(range(99), 2)]
    assert sizes[0] == 12 and sizes[-15:] == [1] * 15
    assert sum(sizes) == 99


def square(shared: int, task: int) -> tuple[int, int]:
    """A worker's unit for the test below (module level: sent by name)."""
    return task, task * task + shared


@pytest.mark.skipif(sys.platform == "win32", reason="no fork there; spawn is tested elsewhere")
@pytest.mark.parametrize(("tasks", "chunk"), [(1, None), (7, None), (99, None), (10, 3)])
def test_the_pool_returns_every_task_s_result_once(tasks: int, chunk: int | None) -> None:
    got = list(pool.run(square, list(range(tasks)), 5, 2, chunk=chunk))
    assert sorted(got) == [(t, t * t + 5) for t in range(tasks)]
