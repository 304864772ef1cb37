"""Scan reporters: one module per output format, looked up through `registry.get_reporter`.

Reporter classes are imported on first use (`registry.REPORTERS` names them), so a run
imports neither rich nor any reporter it does not use.
"""
