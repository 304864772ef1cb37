"""`repair_run.Request`: the repair command's own flags, kept apart from the settings, decide
the write mode, the engine's option fields and the exit code."""

from __future__ import annotations

import pytest

from thinkfix.engine import repair_run
from thinkfix.engine.repair import WriteMode
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
    def __init__(self, changed: bool) -> None:
        self.changed = changed

    def exit_code(self, *, fail_on_change: bool = False) -> ExitCode:
        return ExitCode.FINDINGS if self.changed and fail_on_change else ExitCode.CLEAN


@pytest.mark.parametrize(
    ("request_", "ignore", "code"),
    [
        (repair_run.Request(check=True), None, ExitCode.FINDINGS),
        (repair_run.Request(exit_non_zero_on_fix=True), None, ExitCode.FINDINGS),
        (repair_run.Request(check=True), True, ExitCode.CLEAN),
        (repair_run.Request(dry_run=True), None, ExitCode.CLEAN),
    ],
)
def test_exit_code(request_: repair_run.Request, ignore: bool | None, code: ExitCode) -> None:
    assert request_.exit_code(_Result(changed=True), ignore) is code  # type: ignore[arg-type]
