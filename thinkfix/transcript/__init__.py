"""A session file as a transcript of turns, for `thinkfix show`.

`load(path)` reads a session in any supported format into a `Transcript`;
`terminal.renderables` and `delimited.render` turn it into rich output or plain text
under the front-end thinking contract.
"""

from thinkfix.transcript.build import Transcript, TranscriptError, load
from thinkfix.transcript.model import Part, PartKind, Role, Turn
from thinkfix.transcript.view import ThinkingView

__all__ = [
    "Part",
    "PartKind",
    "Role",
    "ThinkingView",
    "Transcript",
    "TranscriptError",
    "Turn",
    "load",
]
