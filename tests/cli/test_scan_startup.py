"""What a scan of one small session imports (#26 item 3: start-up at most 1.5x importing click,
orjson and rich).

A pre-commit hook scans one session at a time, so most of its run is start-up, and most of
start-up is importing modules (each dataclass costs ~1 ms to define). A scan of one clean
Claude Code session loads what reads, counts and reports it, and nothing of the repair side,
the health checks, the ignore files of a walk, the other formats or the other reporters. The
import set is pinned here, in a fresh interpreter; the timing is bench/run.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.processes import run_python
from thinkfix.formats.registry import _WHERE

_ROOT = Path(__file__).resolve().parents[2]

#: One clean Claude Code session: a prompt and two answers, no delimiter anywhere.
_SESSION = b"".join(
    json.dumps(line, separators=(",", ":")).encode() + b"\n"
    for line in (
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s",
            "timestamp": "2026-02-11T09:14:02.118Z",
            "message": {"role": "user", "content": "Rename the helper."},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s",
            "timestamp": "2026-02-11T09:14:05.001Z",
            "message": {
                "model": "claude-opus-4-5-20251101",
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "Renamed it in three files."}],
            },
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "parentUuid": "a1",
            "sessionId": "s",
            "timestamp": "2026-02-11T09:14:09.420Z",
            "message": {
                "model": "claude-opus-4-5-20251101",
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "The tests pass."}],
            },
        },
    )
)

#: Modules (and their submodules) a scan of one clean session never needs: repairing and
#: writing, the ledger, incremental state and baselines, the text scanner (no text holds a
#: delimiter), the ignore-file machinery (a named file is walked by no folder rules), the
#: discovery of session folders, rich, hashlib (only a finding has a fingerprint to hash) and
#: what a health check found.
_NEVER = (
    "rich",
    "thinkfix.engine.repair",
    "thinkfix.engine.ledger",
    "thinkfix.engine.telemetry",
    "thinkfix.engine.report.health",  # what a check found: no check ran
    "thinkfix.engine.commands.repair",
    "thinkfix.engine.inputs.ignore",
    "thinkfix.engine.inputs.discover",
    "thinkfix.engine.scan.split",
    "thinkfix.engine.scan.transcript",
    "thinkfix.io.safewrite",
    "thinkfix.io.filestate",
    "thinkfix.io.livewriters",
    "thinkfix.io.urlwrite",
    "thinkfix.io.lifeline",
    "thinkfix.normalizer.scanner",
    "thinkfix.normalizer.spans",  # a normalized text's spans: no text is normalized
    "thinkfix.engine.secrets.rules",  # the credential rules mask a finding's snippet: none
    "thinkfix.normalizer.batch",
    "thinkfix.normalizer.stream",
    "thinkfix.cli.repair",
    "thinkfix.cli.repairing",
    "pathspec",
    "thinkfix.formats.jsonedit",
    "thinkfix.formats.jsonspans",
    "thinkfix.formats.planner",
    "thinkfix.formats.turns",
    "thinkfix.formats.turn_shapes",
    "multiprocessing",
    "thinkfix.engine.parallel.dask",  # only `--dask` imports it
    "fnmatch",  # only a `disable.models` glob needs it
    "gzip",
    "zstandard",
    "hashlib",
)

#: Reporters: only the one asked for, and the plain writer the text report draws with.
_REPORTERS = {
    "json": {"thinkfix.reporters.json"},
    "text": {
        "thinkfix.reporters.text",
        "thinkfix.reporters.plainwriter",
        "thinkfix.reporters.layout",
        "thinkfix.reporters.controls",
    },
}
_REPORTER_INFRASTRUCTURE = {
    "thinkfix.reporters",
    "thinkfix.reporters.base",
    "thinkfix.reporters.registry",
}


#: The frozen dataclasses a scan of one clean session defines: the report and its summary
#: (replaced field by field across the repair side, telemetry, settings and reporters) and
#: the normalizer's policy (the public `Policy`, validated where it is made). Defining one
#: compiles its methods, ~1 ms of every start-up each; the values a run only builds and reads
#: (settings, scan and input options, candidates, a record's context, a text's site and
#: slot, repairs, placements, the repair options a format's contract defaults to, a file's
#: result, leak findings, input errors, message counts, skipped files, stale baseline
#: entries) are NamedTuples, and what a health check found is loaded only where a check ran
#: (#26 item 3). A new dataclass here is start-up every scan pays.
_DATACLASSES = {
    "thinkfix.engine.report": {"Report", "Summary"},
    "thinkfix.normalizer.policy": {"Policy"},
}

#: The NamedTuples a scan of one clean session defines that typing makes (#26 item 3): typing
#: builds each through `collections.namedtuple`, which compiles the class's `__new__` from
#: source (~0.3 M instructions), and checks each field's annotation (a string one becomes a
#: ForwardRef: one `compile` each); `_serialize.NamedTuple` makes the same class from
#: `__new__` templates in its bytecode cache. No class on a scan's path is typing's.
_TYPING_NAMED_TUPLES: dict[str, set[str]] = {}

#: Printed by the probe after the run: the modules loaded, and the dataclasses they define.
_PROBE_OUTPUT = """
import dataclasses, gc, json, sys
defined = {
    name: sorted(
        v.__name__
        for v in vars(module).values()
        if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == name
    )
    for name, module in list(sys.modules.items())
    if name.startswith("thinkfix")
}
compiled = {
    name: sorted(
        v.__name__
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, tuple) and v.__module__ == name
        and getattr(v.__new__, "__code__", None) is not None
        and v.__new__.__code__.co_filename == "<string>"
    )
    for name, module in list(sys.modules.items())
    if name.startswith("thinkfix")
}
doc = {
    "modules": sorted(sys.modules),
    "dataclasses": {k: v for k, v in defined.items() if v},
    "typing_named_tuples": {k: v for k, v in compiled.items() if v},
    "collector": {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()},
}
sys.stderr.write("\\n" + json.dumps(doc))
"""


def _probe(args: list[str], cwd: Path, call: str = "main") -> dict[str, Any]:
    """What a fresh interpreter holds after `thinkfix *args` (run from `cwd`): its modules,
    the dataclasses each thinkfix module defines, and the garbage collector's state. `call`
    starts it as the program does (`main(args)`) or as a library caller (`main.main`)."""
    probe = (
        "from thinkfix.cli import main\n"
        f"try:\n    {call}({args!r})\nexcept SystemExit:\n    pass\n" + _PROBE_OUTPUT
    )
    done = run_python(probe, cwd=cwd, env={**_env(), "PYTHONPATH": str(_ROOT)})
    found: dict[str, Any] = json.loads(done.stderr.splitlines()[-1])
    return found


def _loaded(args: list[str], cwd: Path) -> set[str]:
    """The modules a fresh interpreter holds after `thinkfix *args` (run from `cwd`)."""
    return set(_probe(args, cwd)["modules"])


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("THINKFIX_")}


def _under(modules: set[str], prefixes: tuple[str, ...] | set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.fixture(scope="module", params=["json", "text"])
def scan_modules(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, set[str], set[str]]:
    """(output, modules from a folder without config, modules from the repository root)."""
    output: str = request.param
    folder = tmp_path_factory.mktemp("one-session")
    session = folder / "6a1f0c2e-session.jsonl"
    session.write_bytes(_SESSION)
    args = ["scan", "-q", "--no-progress", "--output-format", output, str(session)]
    return (
        output,
        _loaded([*args, "--isolated"], folder),  # no config file is read
        _loaded(args, _ROOT),  # the repository's own pyproject.toml is read
    )


def test_a_scan_of_one_session_loads_none_of_the_repair_side(
    scan_modules: tuple[str, set[str], set[str]],
) -> None:
    _, isolated, at_root = scan_modules
    assert "thinkfix.engine.commands.scan" in isolated
    assert _under(isolated, _NEVER) == []
    assert _under(at_root, _NEVER) == []


def test_a_scan_of_one_session_defines_only_the_report_values_as_dataclasses(
    tmp_path: Path,
) -> None:
    session = tmp_path / "6a1f0c2e-session.jsonl"
    session.write_bytes(_SESSION)
    found = _probe(["scan", "-q", "--no-progress", "--isolated", str(session)], tmp_path)
    assert "thinkfix.engine.commands.scan" in found["modules"]
    defined = {module: set(names) for module, names in found["dataclasses"].items()}
    assert defined == _DATACLASSES


def test_a_scan_of_one_session_compiles_no_named_tuple_of_its_own(tmp_path: Path) -> None:
    session = tmp_path / "6a1f0c2e-session.jsonl"
    session.write_bytes(_SESSION)
    found = _probe(["scan", "-q", "--no-progress", "--isolated", str(session)], tmp_path)
    made = {module: set(names) for module, names in found["typing_named_tuples"].items()}
    assert made == _TYPING_NAMED_TUPLES


def test_a_program_imports_its_command_uncollected_and_a_library_call_does_not(
    tmp_path: Path,
) -> None:
    """Importing the engine makes thousands of objects that live as long as the process: the
    program imports its command's module with the cyclic collector off and freezes what it
    made (never walked again), then collects as usual. `gc.freeze` is process-wide, so a
    library caller (click's test runner calls `main.main`) keeps its collector as it was."""
    session = tmp_path / "6a1f0c2e-session.jsonl"
    session.write_bytes(_SESSION)
    args = ["scan", "-q", "--no-progress", "--isolated", str(session)]
    program = _probe(args, tmp_path)["collector"]
    assert program["enabled"] is True
    assert program["frozen"] > 10_000  # the engine's modules, their classes and functions
    library = _probe(args, tmp_path, call="main.main")["collector"]
    assert library == {"enabled": True, "frozen": 0}


#: Records each collection the cyclic collector starts while click's modules run (a module's
#: `__spec__._initializing` is set while it executes), then imports the command layer.
_COLLECTIONS = """
import gc, json, sys
%s
before = gc.get_threshold()
during = []
def watch(phase, info):
    if phase == "start":
        running = [m for m, mod in list(sys.modules.items()) if m.split(".")[0] == "click"
                   and getattr(getattr(mod, "__spec__", None), "_initializing", False)]
        during.extend(running)
gc.callbacks.append(watch)
import thinkfix.cli
gc.callbacks.remove(watch)
old = any(o is thinkfix.cli.click.Command.__init__ for o in gc.get_objects(generation=2))
print(json.dumps([during, gc.isenabled(), gc.get_threshold() == before, gc.get_freeze_count(), old]))
"""


@pytest.mark.parametrize("collecting", [True, False])
def test_click_is_imported_uncollected_and_the_collector_left_as_it_was(collecting: bool) -> None:
    """click's import makes thousands of objects that live as long as the process, walked
    again each time they aged a generation (~9 M instructions, #26 item 3): it runs with the
    collector off, and its objects go to the oldest generation unwalked. The importer gets
    the collector back as it was, on or off, with its thresholds, and nothing frozen (a
    library's import, not the program's)."""
    probe = _COLLECTIONS % ("" if collecting else "gc.disable()")
    done = run_python(probe, env={**_env(), "PYTHONPATH": str(_ROOT)})
    assert json.loads(done.stdout.splitlines()[-1]) == [[], collecting, True, 0, collecting]


def test_the_facade_imports_no_typing() -> None:
    """Every run imports the facade first; typing (thousands of lasting objects) is left to
    click's import, which runs uncollected (#26 item 3: ~1.6 M instructions)."""
    probe = "import sys, thinkfix\nprint('typing' in sys.modules)"
    done = run_python(probe, env={**_env(), "PYTHONPATH": str(_ROOT)})
    assert done.stdout.split() == ["False"]


def test_a_scan_without_checks_loads_no_health_check(
    scan_modules: tuple[str, set[str], set[str]],
) -> None:
    """The checks' options are part of `ScanOptions` (`health.model`); no check runs."""
    _, isolated, at_root = scan_modules
    for modules in (isolated, at_root):
        health = _under(modules, ("thinkfix.engine.health",))
        assert set(health) <= {"thinkfix.engine.health", "thinkfix.engine.health.model"}


def test_a_scan_loads_one_format_module_and_one_reporter(
    scan_modules: tuple[str, set[str], set[str]],
) -> None:
    output, isolated, at_root = scan_modules
    per_format = {f"thinkfix.formats.{module}" for module, _ in _WHERE.values()}
    for modules in (isolated, at_root):
        assert sorted(per_format & modules) == ["thinkfix.formats.claude_code"]
        reporters = set(_under(modules, ("thinkfix.reporters",)))
        assert reporters - _REPORTER_INFRASTRUCTURE == _REPORTERS[output]


@pytest.mark.parametrize("reached", [False, True])
@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("by_day", [False, True])
def test_an_untimed_scan_builds_no_block_counter_until_hyperscan_runs(
    by_day: bool, warm: bool, reached: bool, tmp_path: Path
) -> None:
    """The block counter dates clean lines from their bytes (it pays ~3 ms a MB on the dense
    corpus); an untimed scan (the text report, a pre-commit hook's) only counts, where it gains
    nothing in pure Python, so until the process runs hyperscan's passes (`native.warm`) it
    never compiles the format's line pattern (~5-10 ms of start-up). Nor does any scan before
    its process reads, or expects to read, `survey.FROM_BYTES` (a small JSON report paid
    ~17 M instructions for Claude Code's pattern)."""
    from types import SimpleNamespace
    from unittest.mock import patch

    from thinkfix.engine.scan import one_file, survey
    from thinkfix.engine.scan.options import ScanOptions
    from thinkfix.engine.scan.runner import scan

    session = tmp_path / "s.jsonl"
    session.write_bytes(_SESSION)
    with (
        patch.object(one_file, "native", SimpleNamespace(warm=lambda size: warm)),
        patch.object(survey, "Surveyor", wraps=survey.Surveyor) as built,
        patch.object(survey, "FROM_BYTES", 0 if reached else 1 << 50),
    ):
        report = scan([str(session)], ScanOptions(by_day=by_day), jobs=1)
    assert report.summary.assistant_messages == 2
    assert built.called is (reached and (by_day or warm))


#: Regexes a scan of one clean session never compiles (#26 item 3: 1-10 M instructions each,
#: ~14 M together): the prefilter's checks of the `<` literals (their anchors `<|`, `<s`, ...
#: occur in no clean session, while code's `<` does), the normalizer's start characters (no
#: text is normalized), the classes beyond Latin-1 of a name's controls and of the plain
#: writer's one-cell characters (an ASCII report), and the place in a TOML error.
_NEVER_COMPILED = (
    "channel",
    "begin_of",
    "\u25c1",
    "\u2028",
    "\u2500",
    "(at line",
    "\ud800",
    '\\{"parentUuid":',  # Claude Code's canonical line: the block counter's (survey.FROM_BYTES)
    "\x0b-\x1f",  # a control character in a report's text: every text is printable here
    "\\s*\\S+\\s*",  # the plain writer's word: every line of the report fits its width
)

_COMPILES = """
import sys
try:
    import re._compiler as compiler
except ImportError:  # Python 3.10: re compiles through sre_compile
    import sre_compile as compiler
compiled = []
_compile = compiler.compile
def _recording(p, flags=0):
    compiled.append(p.decode("latin-1") if isinstance(p, bytes) else p)
    return _compile(p, flags)
compiler.compile = _recording
from thinkfix.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
import json
sys.stderr.write("\\n" + json.dumps(compiled))
"""


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_clean_scan_compiles_no_regex_it_does_not_use(output: str, tmp_path: Path) -> None:
    session = tmp_path / "6a1f0c2e-session.jsonl"
    # code in the answer: the prefilter's `<` anchor occurs, and its tag names' check runs
    code = {"type": "text", "text": "fn f() -> Vec<u8> { x < y }; <div>ok</div> \u2014 done"}
    lines = _SESSION.splitlines()
    assistant = json.loads(lines[1])
    assistant["message"]["content"] = [code]
    session.write_bytes(b"\n".join([lines[0], json.dumps(assistant).encode(), lines[2]]) + b"\n")
    args = ["scan", "-q", "--no-progress", "--isolated", "--output-format", output, str(session)]
    done = run_python(_COMPILES, *args, cwd=tmp_path, env={**_env(), "PYTHONPATH": str(_ROOT)})
    compiled: list[str] = json.loads(done.stderr.splitlines()[-1])
    assert any("think" in source for source in compiled)  # the tag names' check ran
    assert [s for s in compiled if any(marker in s for marker in _NEVER_COMPILED)] == []


def test_the_report_values_compile_no_methods() -> None:
    """#26 item 3: `dataclass(frozen=True)` compiled six generated methods per class at every
    start-up (~7 M instructions for `Summary`'s 13 fields); the report values that stay
    dataclasses share them (`_serialize.frozen`)."""
    from thinkfix.engine.report import Report, Summary
    from thinkfix.normalizer.policy import Policy

    for cls in (Report, Summary, Policy):
        for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
            assert getattr(cls, name).__code__.co_filename != "<string>", (cls, name)


def test_a_scan_that_finds_a_leak_loads_no_openssl(tmp_path: Path) -> None:
    """A finding's fingerprint and a compiled database's cache name are SHA-256 of a few
    bytes: CPython's own (`io.digest`), not hashlib's, whose import loads OpenSSL and asks it
    for every digest (~21 M instructions, ~5% of a small scan)."""
    session = next((_ROOT / "fixtures" / "pi").glob("*.jsonl"))
    args = ["scan", "-q", "--no-progress", "--isolated", "--output-format", "json"]
    loaded = _loaded([*args, str(session)], tmp_path)
    # not vacuous: a finding's snippet was masked, so its leak was fingerprinted
    assert "thinkfix.engine.secrets.rules" in loaded
    assert {"hashlib", "_hashlib"} & loaded == set()
