"""The common leak shapes, settled without the scanner (#26 item 2).

Most texts a scan normalizes hold one leak and nothing else that looks like a delimiter
outside code: a leading block (`<think>plan</think>Answer`, rule 3), an orphan close
(`plan</think>Answer`, rule 4), or no leak at all, only a tag inside a code example (rule 2).
For those `settle` computes the `Result` directly: a token search per delimiter or code
marker and a few slices, where the scanner, its stages and the pipeline cost ~200 Python
calls a text. It answers only where the general path's decisions are known from the shape,
and returns None for anything else (a second delimiter, an unfinished one, a prose mention,
a code marker right after a removal, detokenised Harmony, native reasoning...), which the
general path then reads. A property test holds every `Result` equal to the general path's
(tests/normalizer/test_shapes.py): the rules stay in the scanner; this restates their
outcome for these shapes.
"""

from __future__ import annotations

from thinkfix.normalizer.grammar import (
    CLOSE,
    DETOK_OPEN,
    FENCE,
    OPEN,
    TEXT,
    Grammar,
    Token,
    grammar_for,
)
from thinkfix.normalizer.kinds import DELIMITER, THINKING, TRIMMED, VISIBLE, Label, LeakKind
from thinkfix.normalizer.policy import OrphanClose, Policy, harmony_model
from thinkfix.normalizer.scan_code import _TICKS, _fence_closer, _fence_run
from thinkfix.normalizer.scan_state import CODE_KINDS, NON_WS, PROSE_BEFORE
from thinkfix.normalizer.spans import Finding, Result, new_finding, new_result, spans_of
from thinkfix.normalizer.stages import WS_CHARS

_Row = tuple[int, int, Label, int | None]


def settle(
    text: str, policy: Policy, followed_by_tool_call: bool, model: str | None
) -> Result | None:
    """`normalize(text)`'s Result for a text (fed whole, no native reasoning, not started in
    reasoning) that is a leading block, an orphan (or stray) close, or neither, with only code
    markers in its visible text; None when it is not, or when telling needs the general
    path."""
    g = grammar_for(policy)
    lead = NON_WS.search(text)
    at = g.find_candidate(text)
    if lead is None or at is None or at.start() < lead.start():
        return None
    # The first character that may start a delimiter must start one: then nothing before it
    # can be an unfinished delimiter, and it is the token the scanner meets first.
    first = g.pattern.match(text, at.start())
    if first is None:
        return None
    j = lead.start()
    detok = policy.harmony and harmony_model(model)
    if detok and text.startswith(DETOK_OPEN, j):
        return None  # the scanner reads a detokenised Harmony analysis here
    tok = g.token(first, 0)
    if tok.kind in CODE_KINDS:
        if not _only_code(text, g, tok.start, -1):
            return None
        return _result(text, [(0, len(text), VISIBLE, None)], ())
    if first.start() == j:
        return _leading_block(text, g, policy.trim, tok, detok) if tok.kind is OPEN else None
    if tok.kind is not CLOSE:
        return None
    return _orphan(text, g, policy, tok, followed_by_tool_call, detok)


def _leading_block(text: str, g: Grammar, trim: bool, opener: Token, detok: bool) -> Result | None:
    """Rule 3: an opener first, its close, and text with no delimiter after it."""
    so, eo, tag = opener.start, opener.end, opener.tag
    m = g.pattern.search(text, eo)
    if m is None:
        return None
    close = g.token(m, 0)
    sc, ec = close.start, close.end
    if close.kind is not CLOSE or NON_WS.search(text, eo, sc) is None:
        return None  # another token in the block, or an empty block
    if not _only_code(text, g, ec, ec) or _detok_after(text, ec, detok):
        return None
    rows: list[_Row] = []
    if trim:
        if so:
            rows.append((0, so, TRIMMED, None))
        rows.append((so, eo, DELIMITER, None))
        _reasoning(text, eo, sc, rows)
        rows.append((sc, ec, DELIMITER, None))
        _after_removal(text, ec, rows, shown=False, at_line_start=True)
    else:
        if so:
            rows.append((0, so, VISIBLE, None))
        rows += [(so, eo, DELIMITER, None), (eo, sc, THINKING, 0), (sc, ec, DELIMITER, None)]
        if ec < len(text):
            rows.append((ec, len(text), VISIBLE, None))
    finding = new_finding(LeakKind.BLOCK, tag, so, ec)
    return _result(text, rows, (finding,))


def _orphan(
    text: str, g: Grammar, policy: Policy, close: Token, followed: bool, detok: bool
) -> Result | None:
    """Rule 4: text with no delimiter (nor the start of one), a close, and text with no
    delimiter."""
    sc, ec, tag = close.start, close.end, close.tag
    n = len(text)
    if not _only_code(text, g, ec, ec):
        return None
    if close.xml and text[sc - 1] in PROSE_BEFORE and ec < n and text[ec] in PROSE_BEFORE:
        return None  # `Use the </think> tag`: prose
    mode = policy.orphan_close
    after = NON_WS.search(text, ec)
    if mode is OrphanClose.STRIP:
        splits = False
    elif mode is OrphanClose.SPLIT:
        splits = True
    else:
        splits = after is not None or followed
    rows: list[_Row] = []
    trim = policy.trim
    if splits:
        if after is not None and _detok_after(text, ec, detok):
            return None
        if trim:
            _reasoning(text, 0, sc, rows)
        else:
            rows.append((0, sc, THINKING, 0))
        rows.append((sc, ec, DELIMITER, None))
        finding = new_finding(LeakKind.ORPHAN_CLOSE, tag, 0, ec)
    else:
        rows += [(0, sc, VISIBLE, None), (sc, ec, DELIMITER, None)]
        finding = new_finding(LeakKind.STRAY_CLOSE, tag, sc, ec)
    if trim:
        _after_removal(
            text, ec, rows, shown=not splits, at_line_start=splits or text.endswith("\n", 0, sc)
        )
    elif ec < n:
        rows.append((ec, n, VISIBLE, None))
    return _result(text, rows, (finding,))


def _result(text: str, rows: list[_Row], findings: tuple[Finding, ...]) -> Result:
    """The Result of `rows` (block 0's reasoning in one row at most), with its visible text
    and extracted reasoning read off the rows."""
    visible, extracted = [], []
    for start, end, label, _ in rows:
        if label is VISIBLE:
            visible.append(text[start:end])
        elif label is THINKING:
            extracted.append(text[start:end])
    known = ("".join(visible), tuple(extracted))
    return new_result(text, spans_of(rows), findings, "", known)


def _only_code(text: str, g: Grammar, at: int, removed: int) -> bool:
    """True when the scanner, reading visible text from `at` to the end, meets no delimiter
    outside code: each token is a code marker, skipped with the code it opens (rule 2, as
    `scan_code.CodeRules` reads it at the end of the text), or text. `removed`: where a
    removed delimiter ends just before `at` (-1: none); a marker with only blanks between it
    and that removal is judged on the visible text around it, which this leaves to the
    general path."""
    n = len(text)
    search = g.pattern.search
    pos = at
    while True:
        m = search(text, pos)
        if m is None:
            return True
        tok = g.token(m, 0)
        kind = tok.kind
        if kind not in CODE_KINDS or (removed >= 0 and not text[removed : tok.start].strip()):
            return False
        if kind is TEXT:
            pos = tok.end
        elif kind is FENCE:
            pos = n
            eol = text.find("\n", tok.end)
            for run in _fence_run(tok.tag).finditer(text, eol) if eol >= 0 else ():
                line = _fence_closer(tok.tag).match(text, run.start())
                if line is not None:
                    pos = line.end()
                    break
        else:  # an inline span: on to the next run as long on its line, if any
            size = tok.end - tok.start
            eol = text.find("\n", tok.end)
            pos = tok.end
            for run in _TICKS.finditer(text, tok.end, eol if eol >= 0 else n):
                if run.end() - run.start() == size:
                    pos = run.end()
                    break


def _detok_after(text: str, at: int, detok: bool) -> bool:
    """True when, after a removal with nothing visible before it, a detokenised Harmony
    analysis starts the text again (the scanner's lead reads it)."""
    if not detok:
        return False
    m = NON_WS.search(text, at)
    return m is not None and text.startswith(DETOK_OPEN, m.start())


def _reasoning(text: str, lo: int, hi: int, rows: list[_Row]) -> None:
    """Rule 7 on block 0's reasoning text[lo:hi] (not blank): its edges are trimmed."""
    m = NON_WS.search(text, lo, hi)
    assert m is not None
    a = m.start()
    b = lo + len(text[lo:hi].rstrip(WS_CHARS))
    if a > lo:
        rows.append((lo, a, TRIMMED, 0))
    rows.append((a, b, THINKING, 0))
    if b < hi:
        rows.append((b, hi, TRIMMED, 0))


def _after_removal(
    text: str, at: int, rows: list[_Row], *, shown: bool, at_line_start: bool
) -> None:
    """Rule 7 on the visible text after a removed delimiter: blank, it is trimmed; else its
    leading blank lines are dropped (through the last newline; all of its blanks when nothing
    was shown before and none is a newline), keeping the first line's indentation."""
    n = len(text)
    if at == n:
        return
    m = NON_WS.search(text, at)
    if m is None:
        rows.append((at, n, TRIMMED, None))
        return
    k = m.start()
    cut = at
    if k > at and at_line_start:
        newline = text.rfind("\n", at, k)
        cut = newline + 1 if newline >= 0 else (at if shown else k)
    if cut > at:
        rows.append((at, cut, TRIMMED, None))
    rows.append((cut, n, VISIBLE, None))
