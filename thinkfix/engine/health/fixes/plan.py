"""The fixes of one file, planned over its records and laid beside the reasoning repair's.

Fixes run in a fixed order (`ORDER`), each on what the earlier ones left, over the bytes
the reasoning repair already planned (so a line both change gets both). The result is
one `Edits` value (the repair machinery's own), whose new records carry their final
index and line; the repair writes, proves, journals and undoes it as any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from thinkfix.engine.health.fixes.lines import fix_lines
from thinkfix.engine.health.fixes.model import Finding, Fix, FixEdits
from thinkfix.engine.health.fixes.secrets import fix_secrets
from thinkfix.engine.health.fixes.signature import fix_signature
from thinkfix.engine.health.fixes.toolpairs import fix_tool_pairs
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Edits

#: Lines first: a salvaged record is then whole for the fixes that read records. Secrets
#: before signature: a removed block would move the paths the secrets' findings name.
ORDER = (Fix.LINES, Fix.TOOL_PAIRS, Fix.SECRETS, Fix.SIGNATURE)


def plan_fixes(
    fmt_id: str,
    records: Sequence[Record],
    findings: Iterable[Finding],
    fixes: Iterable[Fix],
    replaced: Mapping[int, Record] | None = None,
) -> FixEdits:
    """What the named `fixes` change in a file of `records` (`replaced`: the records the
    reasoning repair already rewrites, which the fixes build on)."""
    found = list(findings)
    chosen = frozenset(fixes)
    base = replaced or {}
    edits = FixEdits(
        [(base[i].raw, base[i].eol) if i in base else (r.raw, r.eol) for i, r in enumerate(records)]
    )
    for fix in ORDER:
        if fix not in chosen:
            continue
        if fix is Fix.LINES:
            fix_lines(edits, found)
        elif fix is Fix.TOOL_PAIRS:
            fix_tool_pairs(fmt_id, records, edits, found)
        elif fix is Fix.SECRETS:
            fix_secrets(edits, found)
        else:
            fix_signature(edits, found)
    return edits


def merged(leak: Edits, fixes: FixEdits) -> tuple[Edits, frozenset[int]]:
    """The reasoning repair's edits and the fixes' as one `Edits`, records renumbered, and
    the new indices of the records only the fixes made (no leak was looked for in them).

    Where both change a record, the fixes' bytes win (they were planned over the
    repair's); before a record, the fixes' inserts (results of the calls above) come
    before the repair's (reasoning placed before the message below).
    """
    count = fixes.count
    replaced: dict[int, tuple[bytes, bytes]] = {i: (r.raw, r.eol) for i, r in leak.replaced.items()}
    replaced.update(fixes.replaced)
    inserts: dict[int, list[bytes | Record]] = {}
    for i, raws in fixes.inserted.items():
        inserts.setdefault(i, []).extend(raws)
    for i, records in leak.inserted.items():
        inserts.setdefault(i, []).extend(records)
    eol = fixes.line_end
    out_replaced: dict[int, Record] = {}
    out_inserted: dict[int, list[Record]] = {}
    only: set[int] = set()
    shift = 0
    for i in sorted(set(replaced) | set(inserts)):
        new: list[Record] = []
        for item in inserts.get(i, ()):
            at = i + shift + len(new)
            if isinstance(item, Record):
                raw, end = item.raw, item.eol
            else:
                raw, end = item, eol
                only.add(at)
            new.append(Record(at, at + 1, raw, end, touched=True, inserted=True))
        if new:
            out_inserted[i] = new
        shift += len(new)
        if i in replaced and i < count:
            raw, end = replaced[i]
            out_replaced[i] = Record(i + shift, i + shift + 1, raw, end, touched=True)
            if i not in leak.replaced:
                only.add(i + shift)
    return Edits(count, out_replaced, out_inserted), frozenset(only)
