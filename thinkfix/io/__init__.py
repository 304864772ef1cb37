"""What formats, engine and reporters all stand on: byte-exact I/O helpers."""
