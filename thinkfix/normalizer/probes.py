"""The clean-text check: whether a text may hold a delimiter at all, decided by substring
tests at C speed, so clean text returns unchanged with no Python loop over its characters."""

from __future__ import annotations


class Probes:
    """The fewest substring tests that find every delimiter of a grammar in a text."""

    def __init__(self, tags: tuple[str, ...], literals: list[str]) -> None:
        # the fewest substring tests that find every name (`think` finds `thinking` too)
        self._names = tuple(n for n in tags if not any(o != n and o in n for o in tags))
        # first character -> (two-character prefix -> literals): a literal is looked for only
        # when its prefix is in the text, so code full of `<` pays for few searches. A `<`
        # literal holding a tag name (`<seed:think>`) needs no test of its own: the names
        # are looked for first.
        self._probes: dict[str, dict[str, tuple[str, ...]]] = {"<": {}} if tags else {}
        for text in literals:
            if text[0] == "<" and any(n in text.lower() for n in self._names):
                continue
            group = self._probes.setdefault(text[0], {})
            group[text[:2]] = group.get(text[:2], ()) + (text,)

    def maybe_delimited(self, text: str) -> bool:
        """False only when no delimiter can occur in `text`."""
        for first, groups in self._probes.items():
            if first not in text:
                continue
            if first == "<" and self._names and self._has_name(text):
                return True
            for prefix, probes in groups.items():
                if prefix in text:
                    for probe in probes:
                        if probe in text:
                            return True
        return False

    def _has_name(self, text: str) -> bool:
        """True when a tag name occurs in `text`, in any case. In a text that is not ASCII
        its usual spelling is looked for first: lowering one costs ~45 instructions a
        character, an ASCII one's lowering about one."""
        names = self._names
        if not text.isascii():
            for name in names:
                if name in text:
                    return True
        lower = text.lower()
        for name in names:
            if name in lower:
                return True
        return False
