"""The package facade re-exports the normalizer's public names, and only those (+ the version).

The facade keeps its own, static `__all__` so that `import thinkfix` loads nothing of the
normalizer until a name is used; this pins the two lists to each other instead."""

from __future__ import annotations

import thinkfix
import thinkfix.normalizer


def test_the_facade_names_exactly_the_normalizer_s_public_names() -> None:
    assert set(thinkfix.__all__) == {*thinkfix.normalizer.__all__, "__version__"}
    for name in thinkfix.normalizer.__all__:
        assert getattr(thinkfix, name) is getattr(thinkfix.normalizer, name)
