"""Scan: what is looked for, one file read sparsely into a mergeable result, many files (in pieces or a pool) into one report."""
