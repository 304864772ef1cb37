"""Settings: the config file read and checked, flags and environment resolved, redaction chosen."""
