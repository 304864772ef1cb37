"""The import graph of thinkfix/: rooms (top-level packages) import only downward, never in a circle.

Read with `ast` from the source, so lazy imports inside functions and `TYPE_CHECKING`
imports count too: a circle hidden behind a lazy import is still a circle to a reader.
docs/architecture.md says in words what `LAYERS` says here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "thinkfix"

#: Lowest first. A room may import rooms of lower layers only (and itself); rooms that share
#: a layer do not know each other. The facade (`thinkfix/__init__.py`) sits above them all
#: and nothing inside the package imports it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "_serialize"),
    ("io", "normalizer"),
    ("formats", "providers"),
    ("engine",),
    ("reporters",),
    ("cli",),
    ("__main__",),  # `python -m thinkfix`: runs the cli
)

Edge = tuple[str, str, int]  # importing module, imported module, line


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(name: str, root: Path) -> bool:
    base = root.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports(root: Path) -> Iterator[Edge]:
    """Every in-package import under `root`, resolved to the module it loads.

    `from pkg import sub` names the submodule `pkg.sub` when there is one, so a
    submodule reached through its package still counts as an edge to it.
    """
    top = root.name
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == top or alias.name.startswith(top + "."):
                        yield name, alias.name, node.lineno
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join([*anchor, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target != top and not target.startswith(top + "."):
                    continue
                subs = [
                    f"{target}.{a.name}" for a in node.names if _exists(f"{target}.{a.name}", root)
                ]
                if len(subs) < len(node.names):
                    yield name, target, node.lineno
                for sub in subs:
                    yield name, sub, node.lineno


def room(module: str) -> str:
    """`thinkfix.engine.scan.runner` -> `engine`; the facade `thinkfix` -> ``."""
    return module.split(".")[1] if "." in module else ""


def upward(edges: list[Edge], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Each import that goes up, sideways into a sibling room, or into the facade."""
    rank = {r: i for i, layer in enumerate(layers) for r in layer}
    bad = []
    for src, dst, line in edges:
        a, b = room(src), room(dst)
        if a == b or a == "":  # inside one room, or the facade re-exporting
            continue
        if b == "":
            bad.append(f"{src}:{line} imports the facade {dst} (import the module that owns it)")
        elif rank[b] >= rank[a]:
            bad.append(f"{src}:{line} imports {dst}: {a} may not import {b}")
    return bad


def circles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for src, dst, _ in edges:
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return list(imports(PACKAGE))


def test_every_room_has_a_layer() -> None:
    rooms = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    placed = {r for layer in LAYERS for r in layer}
    assert rooms - placed == set(), "a new room needs its place in LAYERS and docs/architecture.md"
    assert placed - rooms == set(), "LAYERS names a room that no longer exists"


def test_no_room_imports_upward_or_sideways(edges: list[Edge]) -> None:
    assert len(edges) > 100  # the reader sees the real graph, not an empty one
    assert upward(edges, LAYERS) == []


def test_no_circle_between_modules(edges: list[Edge]) -> None:
    assert circles(edges) == []


def test_no_circle_between_rooms(edges: list[Edge]) -> None:
    rooms = [
        (f"thinkfix.{room(a)}", f"thinkfix.{room(b)}", n)
        for a, b, n in edges
        if room(a) and room(b) and room(a) != room(b)
    ]
    assert circles(rooms) == []


# --- the checker itself, on a planted tree ----------------------------------------------------


def _tree(tmp_path: Path, files: Mapping[str, str]) -> Path:
    root = tmp_path / "thinkfix"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_checker_finds_lazy_upward_and_facade_imports(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "from thinkfix.low import x\n",
            "low/__init__.py": "",
            "low/x.py": "def f():\n    from thinkfix.high import y\n",
            "low/z.py": "from thinkfix import x\n",
            "high/__init__.py": "",
            "high/y.py": "from thinkfix.low import x\n",
        },
    )
    found = upward(list(imports(root)), (("low",), ("high",)))
    assert found == [
        "thinkfix.low.x:2 imports thinkfix.high.y: low may not import high",
        "thinkfix.low.z:1 imports the facade thinkfix (import the module that owns it)",
    ]


def test_checker_finds_a_circle_through_a_package_and_relative_imports(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "pkg/__init__.py": "from .base import B\nfrom thinkfix.pkg import impl\n",
            "pkg/base.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from thinkfix.pkg import REGISTRY\n",
            "pkg/impl.py": "from . import base\n",
        },
    )
    # pkg -> impl -> base -> pkg (the last one only under TYPE_CHECKING, still a circle)
    assert circles(list(imports(root))) == [
        ["thinkfix.pkg", "thinkfix.pkg.base", "thinkfix.pkg.impl"]
    ]
