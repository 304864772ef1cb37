"""Report-only session health checks (#28): what a runtime will refuse to load or replay.

Each check reads a file's records as its format streams them and answers with
`HealthFinding`s; nothing here writes. `run.check_file` runs the checks a scan asks for.
"""
