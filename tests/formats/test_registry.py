"""The registry lists every format module, and detection picks the right one."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import thinkfix.formats as formats_pkg
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat

FORMAT_IDS = [
    "claude-code",
    "codex",
    "pi",
    "claw-code",
    "openai-chat",
    "anthropic",
    "gemini-cli",
    "hermes",
    "cline",
    "roo-code",
    "kilo-code",
    "continue",
    "copilot-chat",
    "kilo",
    "opencode",
    "goose",
    "crush",
    "qwen-code",
    "kimi-cli",
    "kimi-wire",
    "copilot-cli",
    "factory-droid",
    "zed",
    "cursor",
    "aider",
]
SUPPORT_MODULES = {
    "base",
    "cline_ui",
    "codex_items",
    "copilot_rounds",
    "common",
    "detection",
    "goose_items",
    "jsonedit",
    "jsonspans",
    "linestructs",
    "locations",
    "opencode_items",
    "places",
    "planner",
    "quick",
    "reader",
    "records",
    "registry",
    "repairs",
    "strangers",
    "sqlite_format",
    "sqlite_keys",
    "sqlite_store",
    "sqlite_undo",
    "sqlite_triggers",
    "turn_shapes",
    "turns",
    "values",
}


def test_registry_ids_are_the_documented_ones() -> None:
    assert list(registry.FORMATS) == FORMAT_IDS


def test_registry_registers_every_format_module() -> None:
    registered = {type(f).__module__ for f in registry.FORMATS.values()}
    for info in pkgutil.iter_modules(formats_pkg.__path__):
        if info.name in SUPPORT_MODULES:
            continue
        module = importlib.import_module(f"thinkfix.formats.{info.name}")
        # A type alias such as `tuple[str | int, ...]` passes isinstance(v, type) on 3.10.
        classes = [
            v
            for v in vars(module).values()
            if isinstance(v, type)
            and not isinstance(v, types.GenericAlias)
            and issubclass(v, SessionFormat)
            and v.__module__ == module.__name__
        ]
        assert classes, f"{info.name} defines no SessionFormat"
        assert module.__name__ in registered, f"{info.name} is not registered"


@pytest.mark.parametrize("name", FORMAT_IDS)
def test_registry_formats_describe_themselves(name: str) -> None:
    fmt = registry.get(name)
    assert fmt.id == name
    assert fmt.description and fmt.detection and fmt.placement


def test_registry_get_unknown_names_the_choices() -> None:
    with pytest.raises(registry.UnknownFormatError, match="claude-code"):
        registry.get("nope")


def test_registry_detect_or_raise_names_the_file() -> None:
    with pytest.raises(registry.UnknownFormatError, match="notes.txt"):
        registry.detect_or_raise(b"just some text\n", "notes.txt")
