"""The import graph of thinkfix/: rooms (top-level packages) import only downward, never in a circle.

Read with `ast` from the source, so lazy imports inside functions and `TYPE_CHECKING`
imports count too: a circle hidden behind a lazy import is still a circle to a reader.
docs/architecture.md says in words what `LAYERS` says here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
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

#: The engine's rooms (its sub-packages and its few top modules), lowest first, by the same
#: rule: what scan, repair, undo, telemetry, settings and the command entry points may import.
ENGINE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("report", "progress", "controls", "secrets"),
    ("inputs", "parallel", "ledger", "health"),
    ("scan",),
    ("repair", "telemetry"),
    ("settings",),
    ("commands",),
)

#: No module grows past this many lines: past it, a module holds more than one job.
MAX_LINES = 500

Edge = tuple[str, str, int]  # importing module, imported module, line


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(name: str, root: Path) -> bool:
    base = root.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _import_module_literal(node: ast.AST) -> str | None:
    """`importlib.import_module("thinkfix.x")` with a literal name: an import in all but syntax
    (a circle hidden behind it is still a circle)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


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
            loaded = _import_module_literal(node)
            if loaded is not None and (loaded == top or loaded.startswith(top + ".")):
                yield name, loaded, node.lineno
            elif isinstance(node, ast.Import):
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


def definitions(root: Path) -> dict[str, set[str]]:
    """Each module under `root` -> the names it defines at its top level (functions, classes,
    assignments), not those it imports."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        names: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        found[module_name(path, root)] = names
    return found


def borrowed_names(root: Path, readers: list[Path]) -> list[str]:
    """Each `from thinkfix.m import name` (in `readers`) where `m` does not define `name` but
    only imports it: the reader should import it from where it is defined. The facade
    (`from thinkfix import ...`), the public API, is the one place that may be read from."""
    defined = definitions(root)
    top = root.name
    bad = []
    for path in readers:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if node.module == top or not node.module.startswith(top + "."):
                continue
            for alias in node.names:
                if f"{node.module}.{alias.name}" in defined:  # a submodule
                    continue
                if alias.name not in defined.get(node.module, set()):
                    bad.append(f"{path.name}:{node.lineno} {node.module}.{alias.name}")
    return bad


def room(module: str) -> str:
    """`thinkfix.engine.scan.runner` -> `engine`; the facade `thinkfix` -> ``."""
    return module.split(".")[1] if "." in module else ""


def engine_room(module: str) -> str:
    """`thinkfix.engine.scan.runner` -> `scan`; `thinkfix.engine.report` -> `report`."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "engine" else ""


def upward(
    edges: list[Edge],
    layers: tuple[tuple[str, ...], ...],
    room_of: Callable[[str], str] = room,
) -> list[str]:
    """Each import that goes up, sideways into a sibling room, or into the facade."""
    rank = {r: i for i, layer in enumerate(layers) for r in layer}
    bad = []
    for src, dst, line in edges:
        a, b = room_of(src), room_of(dst)
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


def test_every_engine_room_has_a_layer() -> None:
    engine = PACKAGE / "engine"
    rooms = {
        p.stem if p.is_file() else p.name
        for p in engine.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    placed = {r for layer in ENGINE_LAYERS for r in layer}
    assert rooms - placed == set(), "a new engine room needs its place in ENGINE_LAYERS"
    assert placed - rooms == set(), "ENGINE_LAYERS names a room that no longer exists"


def test_no_engine_room_imports_upward_or_sideways(edges: list[Edge]) -> None:
    inside = [e for e in edges if engine_room(e[0]) and engine_room(e[1])]
    assert len(inside) > 50
    assert upward(inside, ENGINE_LAYERS, engine_room) == []


def test_no_circle_between_engine_rooms(edges: list[Edge]) -> None:
    rooms = [
        (f"engine.{engine_room(a)}", f"engine.{engine_room(b)}", n)
        for a, b, n in edges
        if engine_room(a) and engine_room(b) and engine_room(a) != engine_room(b)
    ]
    assert circles(rooms) == []


def test_no_module_is_longer_than_its_job() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_every_name_is_imported_from_where_it_is_defined() -> None:
    tests = PACKAGE.parent / "tests"
    readers = sorted(PACKAGE.rglob("*.py")) + sorted(tests.rglob("*.py"))
    assert borrowed_names(PACKAGE, readers) == []


def test_only_the_facade_keeps_a_reexport_list() -> None:
    listed = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
            for n in ast.parse(p.read_text(encoding="utf-8")).body
        )
    ]
    assert listed == ["__init__.py"]


DOC = PACKAGE.parent / "docs" / "architecture.md"


def doc_table(heading: str) -> dict[str, tuple[int, str]]:
    """The room table under `heading` in docs/architecture.md: room -> (layer, what it owns)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    rows: dict[str, tuple[int, str]] = {}
    for line in section.splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            rows[cells[1].strip("`")] = (int(cells[0]), cells[2])
    return rows


def test_the_docs_room_table_is_the_layers() -> None:
    rows = doc_table("# Architecture")
    assert {r: layer for r, (layer, _) in rows.items()} == {
        r: i for i, layer in enumerate(LAYERS) for r in layer
    }


def test_the_docs_engine_table_is_the_engine_layers_and_names_every_module() -> None:
    rows = doc_table("## The engine, by job")
    assert {r: layer for r, (layer, _) in rows.items()} == {
        r: i for i, layer in enumerate(ENGINE_LAYERS) for r in layer
    }
    for name, (_, owns) in rows.items():
        folder = PACKAGE / "engine" / name
        if not folder.is_dir():
            assert f"`{name}.py`" in owns
            continue
        for child in folder.iterdir():
            if child.suffix == ".py" and child.stem != "__init__":
                assert f"`{child.name}`" in owns, (
                    f"docs/architecture.md: {name} misses {child.name}"
                )
            elif (child / "__init__.py").is_file():
                assert f"`{child.name}/`" in owns, (
                    f"docs/architecture.md: {name} misses {child.name}/"
                )


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


def test_checker_finds_an_upward_import_between_engine_rooms(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "engine/__init__.py": "",
            "engine/scan/__init__.py": "",
            "engine/scan/runner.py": "from thinkfix.engine.repair import driver\n",
            "engine/repair/__init__.py": "",
            "engine/repair/driver.py": "from thinkfix.engine.scan import runner\n",
        },
    )
    edges = [e for e in imports(root) if engine_room(e[0]) and engine_room(e[1])]
    expected = "thinkfix.engine.scan.runner:1 imports thinkfix.engine.repair.driver"
    assert upward(edges, ENGINE_LAYERS, engine_room) == [f"{expected}: scan may not import repair"]


def test_checker_finds_a_circle_between_two_files_behind_import_module(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "pkg/__init__.py": "",
            "pkg/a.py": "from thinkfix.pkg import b\n",
            "pkg/b.py": "def f():\n    import importlib\n"
            "    return importlib.import_module('thinkfix.pkg.a')\n",
        },
    )
    assert circles(list(imports(root))) == [["thinkfix.pkg.a", "thinkfix.pkg.b"]]


def test_checker_finds_a_name_borrowed_from_a_module_that_only_imports_it(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "X = 1\n",
            "mid.py": "from thinkfix.low import X\n",
            "top.py": "from thinkfix.mid import X\nfrom thinkfix.low import X as Y\n",
        },
    )
    readers = sorted(root.rglob("*.py"))
    assert borrowed_names(root, readers) == ["top.py:1 thinkfix.mid.X"]
