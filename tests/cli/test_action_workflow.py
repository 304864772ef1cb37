"""The GitHub Action, run as a workflow runs it (#27 item 9): action.yml's expressions name only
declared inputs and earlier steps, and its steps' commands, run with bash and the Action's
inputs the way the runner passes them, scan, write the job summary, write SARIF and hand it
to the upload step, with pip's cache keyed on what is installed.

The runner is imitated, not called (no `act` here): `uses:` steps are recorded with their
evaluated `with:` (setup-python is this interpreter, `python -m pip` a recorder), `run:` steps
run as GitHub runs them (`bash --noprofile --norc -eo pipefail FILE`), and `if:` conditions
are evaluated with GitHub's rule that a step after a failed one runs only when its condition
holds a status function.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "action.yml").read_text("utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)
NAME = re.compile(r"\b(inputs|github|runner|steps)\.([A-Za-z0-9_.-]+)")
STATUS = re.compile(r"\b(always|cancelled|success|failure)\(\)")


def _texts(node: Any) -> list[str]:
    """Every string in a YAML tree."""
    if isinstance(node, dict):
        return [t for v in node.values() for t in _texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return [node] if isinstance(node, str) else []


def _expressions(node: Any) -> list[str]:
    return [m[1] for text in _texts(node) for m in EXPR.finditer(text)]


@dataclass
class Run:
    """One run of the Action's steps: its outputs, the steps' outputs, what `uses:` got."""

    inputs: dict[str, str]
    temp: Path
    steps: dict[str, dict[str, str]] = field(default_factory=dict)
    used: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    ok: bool = True
    stdout: str = ""

    def get(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        scope: dict[str, Any] = {
            "inputs": self.inputs,
            "github": {"action_path": str(ROOT), "action_ref": ""},
            "runner": {"os": "Linux", "temp": str(self.temp)},
            "steps": {k: {"outputs": v} for k, v in self.steps.items()},
        }[head]
        value: Any = scope
        for part in rest.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return str(value)

    def evaluate(self, expr: str) -> Any:
        """A GitHub expression of the few forms action.yml uses, as Python."""
        code = NAME.sub(lambda m: f"get({m[0]!r})", expr)
        code = code.replace("&&", " and ").replace("||", " or ")
        code = re.sub(r"!(?!=)", " not ", code)
        names = {
            "get": self.get,
            "always": lambda: True,
            "cancelled": lambda: False,
            "success": lambda: self.ok,
            "failure": lambda: not self.ok,
        }
        return eval(code, {"__builtins__": {}}, names)  # only action.yml's own expressions

    def substitute(self, text: object) -> str:
        return EXPR.sub(lambda m: str(self.evaluate(m[1]) or ""), str(text))

    def runs(self, step: dict[str, Any]) -> bool:
        condition = EXPR.sub(lambda m: m[1], str(step.get("if", "")))
        if STATUS.search(condition):
            return bool(self.evaluate(condition))
        return self.ok and (not condition or bool(self.evaluate(condition)))


def _python_shim(folder: Path, log: Path) -> Path:
    """`python` as setup-python leaves it: this interpreter, with `-m pip` recorded instead
    of installing (the checkout is what runs) and `pip cache dir` answered."""
    folder.mkdir()
    shim = folder / "python"
    shim.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -m ] && [ "$2" = pip ]; then\n'
        f'  echo "$*" >> "{log}"\n'
        f'  if [ "$3" = cache ]; then echo "{folder / "pip-cache"}"; fi\n'
        "  exit 0\n"
        "fi\n"
        f'exec "{sys.executable}" "$@"\n'
    )
    shim.chmod(0o755)
    return folder


def run_action(workspace: Path, given: dict[str, str], tmp: Path) -> tuple[Run, int]:
    """The Action's steps with `given` as its `with:`; returns the run and its exit code."""
    defaults = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    run = Run({**defaults, **given}, tmp)
    shims = _python_shim(tmp / "bin", tmp / "pip.log")
    summary = tmp / "step-summary.md"
    base = {
        "PATH": f"{shims}:/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp),
        "RUNNER_TEMP": str(tmp),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ACTIONS": "true",
    }
    for n, step in enumerate(ACTION["runs"]["steps"]):
        if not run.runs(step):
            continue
        if "uses" in step:
            run.used.append(
                (step["uses"], {k: run.substitute(v) for k, v in step.get("with", {}).items()})
            )
            continue
        assert step.get("shell") == "bash", step
        script = tmp / f"step-{n}.sh"
        script.write_text(run.substitute(step["run"]))
        output = tmp / f"output-{n}"
        output.write_text("")
        env = {k: run.substitute(v) for k, v in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env={**base, **env, "GITHUB_OUTPUT": str(output)},
            capture_output=True,
            text=True,
            check=False,
        )
        run.stdout += done.stdout
        if "id" in step:
            lines = output.read_text().splitlines()
            run.steps[step["id"]] = dict(line.split("=", 1) for line in lines if line)
        run.ok = run.ok and done.returncode == 0
    return run, int(run.get("steps.scan.outputs.exit-code") or -1)


def test_every_expression_names_a_declared_input_or_an_earlier_step() -> None:
    declared = set(ACTION["inputs"])
    seen: set[str] = set()
    for step in ACTION["runs"]["steps"]:
        for expr in _expressions(step):
            for scope, name in NAME.findall(expr):
                if scope == "inputs":
                    assert name in declared, f"undeclared input {name!r} in {expr!r}"
                if scope == "steps":
                    assert name.split(".")[0] in seen, f"{expr!r} names a later or no step"
        seen.add(step.get("id", ""))
    for output in ACTION["outputs"].values():
        for expr in _expressions(output):
            assert {n.split(".")[0] for s, n in NAME.findall(expr) if s == "steps"} <= seen


def test_every_input_is_used_and_described() -> None:
    used = {n for e in _expressions(ACTION["runs"]) for s, n in NAME.findall(e) if s == "inputs"}
    assert used == set(ACTION["inputs"])
    assert all(spec.get("description") for spec in ACTION["inputs"].values())


def test_every_action_used_is_pinned_to_a_major_version() -> None:
    uses = [step["uses"] for step in ACTION["runs"]["steps"] if "uses" in step]
    assert "github/codeql-action/upload-sarif@v3" in uses and "actions/cache@v4" in uses
    assert all(re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", u) for u in uses), uses


def test_the_example_workflow_uses_this_action_with_declared_inputs_only() -> None:
    steps = WORKFLOW["jobs"]["fixtures"]["steps"]
    ours = [s for s in steps if s.get("uses") == "./"]
    assert len(ours) == 1
    assert set(ours[0]["with"]) <= set(ACTION["inputs"])
    assert WORKFLOW["permissions"]["security-events"] == "write"  # upload-sarif needs it


@pytest.fixture
def fixtures_checkout(tmp_path: Path) -> Path:
    workspace = tmp_path / "checkout"
    shutil.copytree(ROOT / "fixtures", workspace / "fixtures")
    return workspace


def test_the_example_workflow_runs_the_action_on_the_fixtures(
    fixtures_checkout: Path, tmp_path: Path
) -> None:
    steps = WORKFLOW["jobs"]["fixtures"]["steps"]
    given = next(s for s in steps if s.get("uses") == "./")["with"]
    run, code = run_action(fixtures_checkout, given, tmp_path)
    assert code == 1 and not run.ok  # the fixtures leak: the step, and the job, fail
    assert "::error " in run.stdout  # annotations on the diff
    assert (tmp_path / "step-summary.md").read_text().strip()  # the job summary
    sarif = json.loads((fixtures_checkout / "thinkfix.sarif").read_text("utf-8"))
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]
    # pip's cache is located, restored and keyed; the Action's checkout is what pip installs
    pip = (tmp_path / "pip.log").read_text().splitlines()
    assert pip[0] == "-m pip cache dir" and pip[1].endswith(str(ROOT))
    uses = dict(run.used)
    assert uses["actions/cache@v4"]["path"] == str(tmp_path / "bin" / "pip-cache")
    assert uses["actions/cache@v4"]["key"] == "thinkfix-pip-Linux-py3.11-checkout"
    # after the failed scan, the SARIF still goes to code scanning
    assert uses["github/codeql-action/upload-sarif@v3"] == {
        "sarif_file": "thinkfix.sarif",
        "category": "thinkfix-fixtures",
    }
    # and the workflow's own check of the outputs passes
    check = next(s for s in steps if "run" in s)
    env = {"CODE": str(code), "SARIF": run.get("steps.scan.outputs.sarif")}
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", check["run"]],
        cwd=fixtures_checkout,
        env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", **env},
        check=False,
    )
    assert done.returncode == 0


def test_no_sarif_and_no_cache_asked_for_uploads_and_caches_nothing(
    fixtures_checkout: Path, tmp_path: Path
) -> None:
    clean = fixtures_checkout / "clean"
    shutil.copytree(ROOT / "fixtures" / "hermes", clean)
    for leaking in clean.iterdir():
        leaking.unlink()
    (clean / "a.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    run, code = run_action(
        fixtures_checkout,
        {"paths": "clean", "cache": "false", "args": "--allow-no-sessions"},
        tmp_path,
    )
    assert code == 0 and run.ok
    assert run.used == [("actions/setup-python@v5", {"python-version": "3.11"})]
    assert run.get("steps.scan.outputs.sarif") == ""


def test_an_input_error_writes_no_sarif_and_uploads_nothing(
    fixtures_checkout: Path, tmp_path: Path
) -> None:
    stale = fixtures_checkout / "out.sarif"
    stale.write_text("{}")  # a SARIF of an earlier run is never uploaded as this one's
    run, code = run_action(
        fixtures_checkout,
        {"paths": "fixtures", "args": "--exclude 'x", "sarif": "out.sarif"},
        tmp_path,
    )
    assert code == 2 and not stale.exists()
    assert [u for u, _ in run.used if "upload-sarif" in u] == []
