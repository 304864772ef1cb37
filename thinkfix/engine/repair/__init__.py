"""Repair: plan a file, prove the plan, write it safely and journal it; database stores row by row; the auditor's view."""
