"""Scans that run every day: incremental state, watch, baselines, the metric families."""
