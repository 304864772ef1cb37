"""The public API is the facade, `thinkfix/__init__.py`, and this test pins it (#25 item 6).

The facade names each public name's defining module (`_DEFINED_IN`) and imports it on first
use, so `import thinkfix` loads nothing of the normalizer until a name is used; nothing
inside the package re-exports a name, so the facade is the one list a user reads."""

from __future__ import annotations

import inspect
import sys

import thinkfix
from tests.processes import run_python

PUBLIC = {
    "DEFAULT",
    "Delta",
    "Finding",
    "Label",
    "LeakKind",
    "NativeMode",
    "OrphanClose",
    "Policy",
    "Result",
    "Span",
    "StreamNormalizer",
    "__version__",
    "normalize",
}


def test_the_facade_names_exactly_the_public_api() -> None:
    assert set(thinkfix.__all__) == PUBLIC
    assert set(thinkfix._DEFINED_IN) == PUBLIC - {"__version__"}


def test_each_public_name_is_the_object_its_module_defines() -> None:
    for name, module in thinkfix._DEFINED_IN.items():
        value = getattr(thinkfix, name)
        assert value is getattr(sys.modules[module], name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == module, name


def test_importing_the_facade_loads_no_normalizer_module() -> None:
    code = "import sys, thinkfix; print(sorted(m for m in sys.modules if 'normalizer' in m))"
    assert run_python(code).stdout.strip() == "[]"
