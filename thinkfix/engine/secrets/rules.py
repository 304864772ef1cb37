"""Likely credentials in session text, and how much of that text an output may show
(`snippet`, `redact_text`; the modes themselves are `redaction.Redaction`).

The pattern side of `--redact` (`engine.redact` applies it to whole reports): no
imports from the rest of the engine but its rule data (`engine.gitleaks`), so the
scanner can mask a finding's snippet before cutting it. Two rule sets run side by
side: gitleaks' maintained rules, and the hand rules below for the shapes gitleaks
misses; where their finds overlap, one mask covers both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.io.multimatch import PURE, present

#: Where a secret may start: after a non-word character, or right after a JSON escape
#: (`\\n`, `\\u0020`...), since diffs and some reports show records as stored, escaped:
#: in `"see\\nAKIA..."` no word boundary precedes the key.
_B = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrtbf/])|(?<=\\u[0-9a-fA-F]{4}))"
#: A quote as it appears in text or in escaped JSON (`\\"`).
_Q = r"(?:\\?[\"'])?"


def _random_key(text: str) -> bool:
    """Upper and lower case and a digit, and over 4.25 bits of entropy a character."""
    from thinkfix.engine.secrets.gitleaks import entropy

    return (
        any(c.isupper() for c in text)
        and any(c.islower() for c in text)
        and any(c.isdigit() for c in text)
        and entropy(text) > 4.25
    )


# The hand rules, run beside gitleaks' maintained rules (`engine.gitleaks`), each for a shape
# gitleaks misses: a key right after a JSON escape (`\\nAKIA...`: gitleaks' `\b` sees a word
# before it), a quoted JSON key (`\\"password\\": ...`), shorter or longer variants
# (`ghp_` under 36 characters, `sk-proj-`, AWS's own `...EXAMPLE` keys, which gitleaks
# allowlists), `Authorization: Basic`, a URL's password, and a bare 40-character AWS secret.
# They also name the kinds reports have always shown. (name, pattern, flags, group to mask:
# 0 is the whole match, check on the masked text or None). Kept specific: a false positive
# only hides a few characters, but a broad pattern would make an auditor's report unreadable.
# Each compiled the first time its keyword occurs (`_hand_pattern`): a scan that finds
# nothing masks nothing, and compiling them all costs a few ms of a process's first mask.
_SECRET_SOURCES: tuple[tuple[str, str, int, int, Callable[[str], bool] | None], ...] = (
    (
        "private-key",
        (
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)"
        ),
        re.DOTALL,
        0,
        None,
    ),
    # Prefixes distinctive enough to need no boundary (a key glued to a word is still a key).
    ("api-key", r"sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{16,}", 0, 0, None),
    ("api-key", _B + r"(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}", 0, 0, None),
    ("stripe-key", _B + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", 0, 0, None),
    ("github-token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", 0, 0, None),
    ("gitlab-token", _B + r"glpat-[A-Za-z0-9_\-]{20,}", 0, 0, None),
    ("huggingface-token", _B + r"hf_[A-Za-z0-9]{30,}", 0, 0, None),
    ("npm-token", _B + r"npm_[A-Za-z0-9]{36}", 0, 0, None),
    (
        "aws-access-key",
        _B + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}(?![0-9A-Za-z])",
        0,
        0,
        None,
    ),
    (
        "aws-secret",
        r"(?i)(aws_?secret_?access_?key" + _Q + r"\s*[:=]\s*" + _Q + r")([A-Za-z0-9/+=]{40})",
        0,
        2,
        None,
    ),
    # A bare secret access key: 40 characters of base64 standing alone, with upper and lower
    # case and a digit, as random as a key (gitleaks' floor for AWS keys is 3; 200,000 random
    # keys had at least 4.15 bits a character; a git hash has no upper case).
    (
        "aws-secret",
        (
            r"(?:(?<![A-Za-z0-9/+=_\-])|(?<=\\[nrtbf/])|(?<=\\u[0-9a-fA-F]{4}))"
            r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])"
        ),
        0,
        0,
        _random_key,
    ),
    ("google-api-key", _B + r"AIza[0-9A-Za-z_\-]{35}", 0, 0, None),
    ("slack-token", _B + r"xox[abposr]-[A-Za-z0-9\-]{10,}", 0, 0, None),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}", 0, 0, None),
    ("jwt", _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0, 0, None),
    ("bearer-token", r"(?i)(" + _B + r"Bearer\s+)([A-Za-z0-9._~+/\-]{12,}=*)", 0, 2, None),
    (
        "url-password",
        r"(" + _B + r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>\\]+:)([^\s@/\"'<>\\]+)(@)",
        0,
        2,
        None,
    ),
    (
        "basic-auth",
        r"(?i)(" + _B + r"Authorization" + _Q + r"\s*[:=]\s*" + _Q + r"\s*Basic\s+)"
        r"([A-Za-z0-9+/]{8,}={0,2})",
        0,
        2,
        None,
    ),
    (
        "password",
        r"(?i)(" + _B + r"(?:password|passwd|pwd|secret|api[_-]?key"
        r"|access[_-]?token|auth[_-]?token|client[_-]?secret)"
        + _Q
        + r"\s*[:=]\s*"
        + _Q
        + r")([^\s\"',;\\]{6,})",
        0,
        2,
        None,
    ),
)

#: Words (lower case) one of which a text must hold for that kind's hand rules to run, as
#: gitleaks' keywords prefilter its rules: most rules start with a lookbehind, which `re`
#: tries at every position, so running them all cost ~0.15 ms a snippet. `aws-secret` (the
#: bare key has no word) always runs.
_HAND_KEYWORDS: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",),
    "api-key": ("sk-", "rk-", "pk-"),
    "stripe-key": ("_live_", "_test_"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-",),
    "huggingface-token": ("hf_",),
    "npm-token": ("npm_",),
    "aws-access-key": ("akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva"),
    "google-api-key": ("aiza",),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com",),
    "jwt": ("eyj",),
    "bearer-token": ("bearer",),
    "url-password": ("://",),
    "basic-auth": ("basic",),
    "password": ("passw", "pwd", "secret", "api", "token"),
}

#: Characters past a snippet's end still masked with it: a secret cut by the snippet's end
#: is recognised whole (a private key block is masked from its BEGIN line even when cut).
SNIPPET_MARGIN = 256


def snippet(text: str, chars: int, mode: Redaction) -> str:
    """The first `chars` characters of `text` as a report may show them: masked, then cut,
    so no prefix of a secret survives the cut."""
    if mode is Redaction.NONE:
        return text[:chars]
    if mode is Redaction.ALL:
        return length_and_hash(text)
    return mask_secrets(text[: chars + SNIPPET_MARGIN])[:chars]


def mask_secrets(text: str) -> str:
    """`text` with every likely credential replaced by `[REDACTED:<kind>]`: what the hand
    rules and gitleaks' rules find, overlapping finds masked as one (the first one's kind)."""
    lowered = text.lower()
    present = _present(lowered)
    if not _might_hold_secret(lowered, present):
        return text  # no rule's keyword and no bare key: nothing to mask (most snippets)
    from thinkfix.engine.secrets import gitleaks  # a package: each import runs a Python call

    found: list[tuple[int, int, str]] = []
    for i, (name, _source, _flags, group, check) in enumerate(_SECRET_SOURCES):
        words = _HAND_KEYWORDS.get(name)
        if words and (
            present.isdisjoint(words)
            if present is not None
            else not any(w in lowered for w in words)
        ):
            continue
        for m in _hand_pattern(i).finditer(text):
            start, end = m.span(group)
            if start < end and (check is None or check(m.group(group))):
                found.append((start, end, name))
    found.extend(gitleaks.find(text, present))
    return _mask(text, found) if found else text


#: A mask already in the text (reports are masked again when shown): never masked inside.
_MASKED = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def _mask(text: str, found: list[tuple[int, int, str]]) -> str:
    """`text` with each span replaced by its kind's mask; overlapping spans merge, the one
    starting first (the first rule on a tie) naming the mask."""
    kept = [m.span() for m in _MASKED.finditer(text)] if "[REDACTED:" in text else []
    order = sorted(
        (s for s in found if not any(a < s[1] and s[0] < b for a, b in kept)),
        key=lambda s: s[0],
    )
    out, done, i = [], 0, 0
    while i < len(order):
        start, end, name = order[i]
        i += 1
        while i < len(order) and order[i][0] < end:
            end = max(end, order[i][1])
            i += 1
        out += [text[done:start], f"[REDACTED:{name}]"]
        done = end
    return "".join(out) + text[done:]


def _might_hold_secret(lowered: str, present: frozenset[str] | None = None) -> bool:
    """The screen every text with something to mask passes (on its lower case): a keyword
    of a hand rule or of a gitleaks rule (gitleaks runs a rule only where its keyword
    occurs), `aws` (the quoted AWS secret's rule) or a run of 40 base64 characters (the bare
    AWS secret's). Then the rules run as before; a text that fails it is left as it is
    without running ~20 patterns and gitleaks' own screen (#26 item 2). Plain `in` tests,
    not one regex of every keyword: compiling that cost ~80 ms of a process's first mask
    (#26 item 3), paid again by every `--jobs` worker; or the keywords `present`, found in
    one native pass (`_present`)."""
    if present is not None:
        return bool(present) or _has_run(lowered)
    return any(w in lowered for w in _screen()) or _has_run(lowered)


#: `lowered`'s UTF-8 with each byte of the run's class (`[a-z0-9/+]`) made `a`, any other a
#: space: a character outside ASCII is bytes outside the class, so it breaks a run as it did.
_RUN_BYTES = bytes(
    0x61 if chr(b) in "abcdefghijklmnopqrstuvwxyz0123456789/+" else 0x20 for b in range(256)
)
_RUN = b"a" * 40


def _has_run(lowered: str) -> bool:
    """True when `lowered` holds 40 base64 characters in a row (`[a-z0-9/+]{40}`), found by a
    byte translation and a substring search: a regex tried a match at every letter of a
    snippet's prose (~25-34 k instructions a snippet; this, ~3 k), and compiles nothing."""
    return _RUN in lowered.encode("utf-8", "surrogatepass").translate(_RUN_BYTES)


#: Texts a process screens the pure way before the native screen starts: its database
#: (~260 literals) compiles in ~20 ms, what ~150 texts' `in` tests cost.
NATIVE_AFTER = 128
USE_NATIVE = not PURE  # the switch the tests patch (`THINKFIX_PURE`)
_screened = 0


def _present(lowered: str) -> frozenset[str] | None:
    """Every rule keyword (`_keywords`) that occurs in `lowered`, from one hyperscan pass
    (`io.multimatch.present`): ~8 µs a snippet where ~260 `in` tests cost ~150 µs. None
    (each rule tests its own keywords with `in`, the same answer) for a process's first
    `NATIVE_AFTER` texts, with `THINKFIX_PURE`, or without hyperscan."""
    global _screened
    if not USE_NATIVE:
        return None
    _screened += 1
    if _screened <= NATIVE_AFTER:
        return None
    words, encoded = _keywords(), _encoded_keywords()
    indices = present(encoded)
    if indices is None:
        return None
    # Keywords are ASCII: one occurs in the text exactly where its bytes occur in the UTF-8.
    return frozenset(words[i] for i in indices(lowered.encode("utf-8", "surrogatepass")))


@cache
def _keywords() -> tuple[str, ...]:
    """Every keyword a rule is screened by: the hand rules', gitleaks' and `aws`."""
    from thinkfix.engine.secrets import gitleaks

    words = {w for r in gitleaks.rules() for w in r.keywords}
    words.update(w for ws in _HAND_KEYWORDS.values() for w in ws)
    words.add("aws")
    return tuple(sorted(words))


@cache
def _encoded_keywords() -> tuple[bytes, ...]:
    """`_keywords` as the bytes the native pass looks for."""
    return tuple(w.encode() for w in _keywords())


@cache
def _screen() -> tuple[str, ...]:
    """The keywords no other keyword lies inside (a text holding `sk-ant-api03` holds
    `api`: testing `api` alone answers for both)."""
    from thinkfix.engine.secrets import gitleaks

    return tuple(sorted(gitleaks.innermost(set(_keywords()))))


@cache
def _hand_pattern(i: int) -> re.Pattern[str]:
    """The `i`th hand rule, compiled the first time its keyword occurs."""
    _name, source, flags, _group, _check = _SECRET_SOURCES[i]
    return re.compile(source, flags)


def length_and_hash(text: str) -> str:
    """What `ALL` leaves of a text: its length and a short hash, the same for equal texts."""
    import hashlib

    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"[redacted: {len(text)} chars, sha256 {digest}]"


def redact_text(text: str, mode: Redaction) -> str:
    if mode is Redaction.NONE or not text:
        return text
    if mode is Redaction.SECRETS:
        return mask_secrets(text)
    return length_and_hash(text)
