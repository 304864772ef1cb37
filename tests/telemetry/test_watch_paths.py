"""`watch_run.watched_paths`: a watch needs a path named, or discovery to find some."""

from __future__ import annotations

import pytest

from thinkfix.engine.commands import watch as watch_run


def test_watched_paths_need_one_path_or_discovery() -> None:
    assert watch_run.watched_paths(["a", "b"], discover=False) == ("a", "b")
    with pytest.raises(ValueError, match="name at least one PATH"):
        watch_run.watched_paths([], discover=False)
