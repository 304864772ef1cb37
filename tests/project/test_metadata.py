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


def _floors(requirements: list[str]) -> dict[str, str]:
    out = {}
    for requirement in requirements:
        match = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", requirement)
        if match:
            out[match[1].lower()] = match[2]
    return out


def test_every_declared_floor_is_the_version_ci_tests() -> None:
    # .ci/run installs .ci/lowest.txt on the lowest Python and runs the suite: a floor that is
    # not pinned there is a claim nobody checks (issue 14 #4: click 8.1.0 failed 177 tests).
    pins = dict(
        line.split("==")
        for line in (ROOT / ".ci" / "lowest.txt").read_text("utf-8").split("\n")
        if line and not line.startswith("#")
    )
    floors = _floors(PROJECT["dependencies"]) | _floors(PROJECT["optional-dependencies"]["test"])
    assert floors

    def release(version: str | None) -> tuple[int, ...]:  # 8.2 == 8.2.0
        parts = [int(p) for p in (version or "-1").split(".")]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return tuple(parts)

    mismatched = {
        name: (floor, pins.get(name))
        for name, floor in floors.items()
        if release(pins.get(name)) != release(floor)
    }
    assert mismatched == {}
