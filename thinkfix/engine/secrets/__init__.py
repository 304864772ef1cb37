"""Likely credentials in text: the vendored gitleaks rules and how much of a text an output may show."""
