"""engine/parallel/pool.py's `run_or_here`: the pool's results, and what a dead worker left, done here."""

from __future__ import annotations

import os

from thinkfix.engine.parallel import pool as parallel


def _times_ten_but_die_on_three(parent: int, task: int) -> int:
    if task == 3 and os.getpid() != parent:
        os._exit(9)  # a worker killed mid-task
    return task * 10


def test_a_dead_worker_s_tasks_are_done_here_once() -> None:
    tasks = list(range(8))
    results = list(
        parallel.run_or_here(
            _times_ten_but_die_on_three,
            tasks,
            os.getpid(),
            2,
            chunk=1,
            key=lambda task: task,
            result_key=lambda result: result // 10,
        )
    )
    assert sorted(results) == [t * 10 for t in tasks]


def test_without_a_death_every_result_comes_from_the_pool() -> None:
    results = list(
        parallel.run_or_here(
            _times_ten_but_die_on_three,
            [1, 2, 4],
            os.getpid(),
            2,
            key=lambda task: task,
            result_key=lambda result: result // 10,
        )
    )
    assert sorted(results) == [10, 20, 40]
