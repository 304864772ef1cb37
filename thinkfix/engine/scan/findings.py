"""A finding's identity and a text's findings, capped: `fingerprint` (the baseline key) and
`capped_findings` (at most `--max-findings` per message, stopping early on a hostile text).

Shared by the per-file scan, a byte range scanned apart (engine/scan/split.py) and the baseline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from thinkfix.io.digest import sha256
from thinkfix.normalizer.grammar import grammar_for
from thinkfix.normalizer.policy import Policy

if TYPE_CHECKING:  # annotations only: a scan that normalizes no text loads no spans
    from typing import NamedTuple

    from thinkfix.normalizer.spans import Finding, Result
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple


def fingerprint(fmt: str, session: str, message: str, leaked: str) -> str:
    """Baseline identity: format + session + message + hash of the leaked text, nothing else."""
    return fingerprint_of(fmt, session, message, text_hash(leaked))


def text_hash(leaked: str) -> str:
    return sha256(leaked.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint_of(fmt: str, session: str, message: str, leaked_hash: str) -> str:
    """`fingerprint` from the leaked text's hash (a byte range of a file, scanned apart, knows
    a message's place only once the ranges before it are counted: engine/scan/split.py)."""
    key = f"{fmt}\0{session}\0{message}\0{leaked_hash}"
    return sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


#: How the error of a message over the cap begins (scan reports it; repair leaves the record).
TOO_MANY = "too many findings"

#: Characters fed to the streaming normalizer at a time on the capped path: small enough
#: that stopping at the cap costs little, large enough that feeding costs nothing.
_CAP_CHUNK = 1 << 14


class CappedFindings(NamedTuple):
    """The findings of one text, at most `cap` of them, and what was left out (a NamedTuple:
    a frozen dataclass costs ~1 ms of every start-up to define)."""

    findings: tuple[Finding, ...]
    more: int = 0  # further findings in the part examined, not reported
    unexamined: int = 0  # characters at the end of the text not examined at all
    # Whether the text shows nothing once normalized, and whether reasoning came out of it
    # (None when the text was not examined to its end), so no caller normalizes it twice.
    visible_empty: bool | None = None
    extracted: bool = False

    @property
    def capped(self) -> bool:
        return bool(self.more or self.unexamined)


def normalize(text: str, **kwargs: Any) -> Result:
    """`normalizer.normalize`, whose scanner loads with the first text that may hold a
    delimiter: a scan of clean sessions never compiles it (#13 start-up). Imported as
    `import ... as`: `from <module> import` looks up the module's `__path__`, an
    AttributeError formatted and dropped at every call (~3 K instructions a suspect)."""
    import thinkfix.normalizer.batch as batch  # noqa: PLR0402

    return batch.normalize(text, **kwargs)


def may_pass(text: str, policy: Policy, cap: int) -> bool:
    """False when `text` cannot hold more than `cap` findings (fewer candidate characters
    than two per finding), or there is no cap: substring counts at C speed, and none for a
    text shorter than that (the start characters are distinct: their counts sum to at most
    its length), as nearly every suspected text is."""
    limit = 2 * cap
    return (
        cap > 0
        and len(text) > limit
        and sum(text.count(c) for c in grammar_for(policy).start_chars) > limit
    )


def capped_findings(
    text: str,
    native: str | None,
    policy: Policy,
    cap: int,
    *,
    followed_by_tool_call: bool = False,
    model: str | None = None,
) -> CappedFindings:
    """The findings of `normalize(text)`: all of them, or (past `cap`) the first `cap` and how
    many more there were, stopping early when a long text passes the cap.

    A text that cannot hold more than `cap` findings (fewer candidate characters than two per
    finding) is normalized whole, as always. Otherwise it streams through the same pipeline,
    which gives exactly `normalize`'s findings when it finishes (`StreamNormalizer`'s
    contract), and stops once the cap is passed with text still to read.
    """
    evidence = followed_by_tool_call
    if not may_pass(text, policy, cap):
        result = normalize(
            text,
            native_reasoning=native,
            policy=policy,
            followed_by_tool_call=evidence,
            model=model,
        )
        found = result.findings if cap <= 0 else result.findings[:cap]
        return CappedFindings(
            found,
            len(result.findings) - len(found),
            visible_empty=not result.visible.strip(),
            extracted=bool(result.extracted),
        )
    from thinkfix.normalizer.stream import StreamNormalizer  # only for a text past the cap

    stream = StreamNormalizer(
        policy, native_reasoning=native, followed_by_tool_call=evidence, model=model
    )
    shown = False
    for at in range(0, len(text), _CAP_CHUNK):
        shown = bool(stream.feed(text[at : at + _CAP_CHUNK]).visible.strip()) or shown
        rest = len(text) - at - _CAP_CHUNK
        if rest > 0 and len(stream.findings) > cap:
            found = stream.findings
            return CappedFindings(found[:cap], len(found) - cap, rest)
    shown = bool(stream.finish().visible.strip()) or shown
    found = stream.findings
    return CappedFindings(
        found[:cap],
        max(0, len(found) - cap),
        visible_empty=not shown,
        extracted=bool(stream.segments),
    )
