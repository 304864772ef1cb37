"""`show --redact`: a transcript with its session text masked, as every report is.

A transcript is shown to whoever looks over the user's shoulder or reads the pasted
output; it carries the same credentials as the session (tool output, headers,
connection strings), so it is redacted by the same rules before any rendering.
"""

from __future__ import annotations

from dataclasses import replace

from thinkfix.engine.scan.transcript import Transcript
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.secrets.rules import redact_text


def redact_transcript(transcript: Transcript, mode: Redaction) -> Transcript:
    """Every part's text redacted as asked; `problems` (which may quote a line) masked."""
    if mode is Redaction.NONE:
        return transcript
    turns = tuple(
        replace(turn, parts=tuple(replace(p, text=redact_text(p.text, mode)) for p in turn.parts))
        for turn in transcript.turns
    )
    problems = tuple(redact_text(p, Redaction.SECRETS) for p in transcript.problems)
    return replace(transcript, turns=turns, problems=problems)
