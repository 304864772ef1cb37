"""What formats, engine and reporters all stand on: byte-exact I/O helpers.

Compressed files in and out (`compression`) and lossless JSON text (`jsontext`); below
every other room, so formats and the engine need not know each other to read a session.
Imports nothing from thinkfix.
"""
