"""`--fix secrets`: likely credentials masked in the stored session itself.

The `secrets` check names each string that holds one, by the rules that mask reports
(`engine.secrets.mask_secrets`); the fix writes that string back masked the same way
(`[REDACTED:<rule>]`), every other byte of the record kept. The original bytes stay
where undo needs them: the run's backup and manifest, under thinkfix's state folder.
A credential in a record that does not parse, or in an object key, is reported, not
masked (there is no value to rewrite safely).
"""

from __future__ import annotations

from collections.abc import Iterable

from thinkfix.engine.health.fixes.model import Finding, Fix, Fixed, FixEdits, problem_of, resolve
from thinkfix.engine.secrets.rules import mask_secrets
from thinkfix.formats.jsonedit import Edit, SetValue

SECRET = "secret"


def fix_secrets(edits: FixEdits, findings: Iterable[Finding]) -> None:
    """Plan the masking of every string a `secrets` finding names."""
    by_record: dict[int, list[Finding]] = {}
    for finding in findings:
        if problem_of(finding) == SECRET and finding.json_path:
            by_record.setdefault(finding.record_index, []).append(finding)
    for index in sorted(by_record):
        if index in edits.held:
            continue
        data = edits.data(index)
        changes: list[Edit] = []
        notes: list[Fixed] = []
        done: set[str] = set()
        for finding in by_record[index]:
            found = resolve(data, finding.json_path)
            if finding.json_path in done or found is None or not isinstance(found[1], str):
                continue
            masked = mask_secrets(found[1])
            if masked == found[1]:
                continue
            done.add(finding.json_path)
            changes.append(SetValue(found[0], masked))
            notes.append(
                Fixed(
                    Fix.SECRETS,
                    SECRET,
                    finding.line,
                    f"a likely credential ({finding.detail}) masked at {finding.json_path}",
                )
            )
        if changes and edits.edit(index, changes):
            edits.fixed.extend(notes)
