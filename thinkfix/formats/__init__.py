"""Session-file formats: detect, read, locate assistant text, apply repairs, write.

`registry.FORMATS` lists them; `base` holds the interface and its values. Import those
modules by name: the package itself re-exports nothing (no caller used its old re-exports,
and they loaded the registry for any import of a single format module).
"""
