"""Safe fixes for what the health checks find, each opt-in by name (`repair --fix NAME,...`).

A fix is a pure function of a file's records and the checks' findings; it answers with
the records it replaces or inserts (`model.FixEdits`), which repair lays over the
original bytes with the reasoning repair's own edits, so one manifest undoes both.
"""
