"""`repair_run.Request`: the repair command's own flags, kept apart from the settings, decide
the write mode, the engine's option fields and the exit code."""

from __future__ import annotations

import pytest

from thinkfix.engine.commands import repair as repair_run
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode


def test_take_removes_only_the_requests_flags() -> None:
    flags = {f: None for f in repair_run.Request.__dataclass_fields__} | {"select": "all"}
    flags |= {"in_place": True, "no_backup": False}
    request = repair_run.Request.take(flags)
    assert flags == {"select": "all"}  # what is left are the settings
    assert request.in_place and request.mode() is WriteMode.IN_PLACE


def test_option_fields_follow_the_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKFIX_ACTIVE_SECONDS", "7")
    request = repair_run.Request(show_diff=True, report_path="r.html", no_backup=False)
    fields = request.option_fields(request.mode())
    assert fields["unified_diff"] and fields["keep_texts"] and fields["backup"]
    assert fields["active_seconds"] == 7.0
    assert (
        repair_run.Request(include_active=True).option_fields(WriteMode.IN_PLACE)["active_seconds"]
        == 0.0
    )


def test_a_bad_combination_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="--no-backup"):
        repair_run.Request(out_dir="out", no_backup=True).mode()


class _Result:
    """A run's outcome as the exit code reads it: whether files changed, and the leaks left."""

    def __init__(self, changed: bool, remaining: int) -> None:
        self.changed = changed
        self.remaining = ("leak",) * remaining

    def exit_code(self, *, fail_on_change: bool = False) -> ExitCode:
        return ExitCode.FINDINGS if self.changed and fail_on_change else ExitCode.CLEAN


@pytest.mark.parametrize(
    ("request_", "ignore", "remaining", "code"),
    [
        (repair_run.Request(check=True), None, 0, ExitCode.FINDINGS),
        (repair_run.Request(exit_non_zero_on_fix=True), None, 0, ExitCode.FINDINGS),
        (repair_run.Request(check=True), True, 0, ExitCode.CLEAN),
        (repair_run.Request(out_dir="o"), None, 0, ExitCode.CLEAN),
        # a leak left in the sessions (refused, or a run that writes nothing) exits 1 (#27 item 6)
        (repair_run.Request(out_dir="o"), None, 1, ExitCode.FINDINGS),
        (repair_run.Request(in_place=True), None, 2, ExitCode.FINDINGS),
        (repair_run.Request(dry_run=True), None, 1, ExitCode.FINDINGS),
        (repair_run.Request(dry_run=True), True, 1, ExitCode.CLEAN),
    ],
)
def test_exit_code(
    request_: repair_run.Request, ignore: bool | None, remaining: int, code: ExitCode
) -> None:
    result = _Result(changed=True, remaining=remaining)
    assert request_.exit_code(result, ignore) is code  # type: ignore[arg-type]
