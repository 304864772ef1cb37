"""A session as a transcript for `thinkfix show`, one module per output.

`engine.transcript.load` reads a session into a `Transcript` (each format's `turns`);
`terminal.renderables` and `delimited.render` turn it into rich output or plain text
under the front-end thinking contract (`contract`).
"""
