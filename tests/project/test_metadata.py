"""The package declares what it imports and the licence it claims (issue 14 #3, #12)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
#: Import names whose distribution is named otherwise.
DISTRIBUTIONS = {"yaml": "pyyaml"}


def _requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.-]+", requirement)
    assert match, requirement
    return match.group().lower().replace("_", "-")


def _declared() -> dict[str, str]:
    return {_requirement_name(r): r for r in PROJECT["dependencies"]}


def _imports_outside_guards() -> set[str]:
    """Top-level packages the library imports, except inside `try:` (optional extras)."""
    names: set[str] = set()
    for path in (ROOT / "thinkfix").rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        guarded = {
            id(n)
            for t in ast.walk(tree)
            if isinstance(t, ast.Try)
            for b in t.body
            for n in ast.walk(b)
        }
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"thinkfix", "tomllib", "__future__"}


def test_every_imported_package_is_a_declared_dependency() -> None:
    declared = _declared()
    missing = {
        name for name in _imports_outside_guards() if DISTRIBUTIONS.get(name, name) not in declared
    }
    assert not missing, f"imported but not in [project] dependencies: {sorted(missing)}"


def test_tomli_is_declared_where_tomllib_is_missing() -> None:
    # Python 3.10 has no tomllib: without the backport the CLI cannot start there.
    requirement = _declared().get("tomli", "")
    assert re.search(r";\s*python_version\s*<\s*['\"]3\.11['\"]", requirement), requirement
    assert PROJECT["requires-python"] == ">=3.10"


def test_license_file_matches_the_declared_licence() -> None:
    assert PROJECT["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert text.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in text
