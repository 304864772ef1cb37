"""Provider stream adapters: wire events -> `ReasoningChunk`s -> a normalized message.

`registry.resolve(provider, model)` picks an adapter, `adapter.parse(event)` turns each raw
event into chunks, and an `Accumulator` normalizes the visible text as it streams and
assembles the final message; `capture` reads saved SSE / NDJSON streams for replay.
"""
