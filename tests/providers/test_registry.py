"""Registry: every adapter registered, and resolution in the documented order."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from thinkfix import providers
from thinkfix.providers.base import StreamAdapter, Wire
from thinkfix.providers.registry import (
    ADAPTERS,
    PROVIDER_ALIASES,
    RULES,
    create,
    resolve,
    wire_default,
)


def _adapter_classes() -> set[type[StreamAdapter]]:
    found: set[type[StreamAdapter]] = set()
    for info in pkgutil.iter_modules(providers.__path__):
        module = importlib.import_module(f"thinkfix.providers.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, StreamAdapter)
                and obj is not StreamAdapter
                and not inspect.isabstract(obj)
            ):
                found.add(obj)
    return found


def test_registry_every_adapter_is_registered_under_its_name() -> None:
    assert set(ADAPTERS.values()) == _adapter_classes()
    for name, cls in ADAPTERS.items():
        assert cls.name == name


def test_registry_every_wire_has_an_adapter() -> None:
    assert {cls.wire for cls in ADAPTERS.values()} == set(Wire)


def test_registry_aliases_point_at_registered_adapters() -> None:
    assert set(PROVIDER_ALIASES.values()) <= set(ADAPTERS)
    assert not set(PROVIDER_ALIASES) & set(ADAPTERS)


def test_registry_rules_are_in_the_documented_order() -> None:
    assert [name for name, _ in RULES] == [
        "api-responses",
        "own-wire-provider",
        "openai-reasoning-model",
        "anthropic-model",
        "deepseek-reasoner-model",
        "provider",
        "fallback",
    ]


@pytest.mark.parametrize(
    ("provider", "model", "adapter", "rule"),
    [
        # exact matches by model name
        ("openai", "o3-mini", "openai", "openai-reasoning-model"),
        (None, "o1", "openai", "openai-reasoning-model"),
        (None, "o4-mini-2025-04-16", "openai", "openai-reasoning-model"),
        (None, "gpt-5", "openai", "openai-reasoning-model"),
        ("azure", "gpt-5-mini", "openai", "openai-reasoning-model"),
        ("openrouter", "openai/o3", "openai", "openai-reasoning-model"),
        (None, "openai/gpt-oss-120b", "openai", "openai-reasoning-model"),
        (None, "claude-sonnet-4-20250514", "anthropic", "anthropic-model"),
        (None, "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic", "anthropic-model"),
        ("anthropic", "claude-opus-4-1", "anthropic", "own-wire-provider"),
        (None, "deepseek-reasoner", "deepseek", "deepseek-reasoner-model"),
        ("openrouter", "deepseek/deepseek-r1", "deepseek", "deepseek-reasoner-model"),
        ("together", "deepseek-ai/DeepSeek-R1", "deepseek", "deepseek-reasoner-model"),
        (
            "fireworks",
            "accounts/fireworks/models/deepseek-r1",
            "deepseek",
            "deepseek-reasoner-model",
        ),
        ("groq", "deepseek-r1-distill-llama-70b", "deepseek", "deepseek-reasoner-model"),
        ("perplexity", "r1-1776", "deepseek", "deepseek-reasoner-model"),
        # the host fixes the wire whatever the model
        ("ollama", "deepseek-r1:8b", "ollama", "own-wire-provider"),
        ("ollama", "gpt-oss:20b", "ollama", "own-wire-provider"),
        ("google", "gemini-2.5-pro", "gemini", "own-wire-provider"),
        ("vertex", "gemini-2.5-flash", "gemini", "own-wire-provider"),
        ("openai", "o3", "openai-responses", "api-responses"),
        # a chat host serving Claude streams chat chunks
        ("openrouter", "anthropic/claude-sonnet-4", "openai", "provider"),
        # provider names
        ("openai", "gpt-4o-mini", "openai", "provider"),
        ("deepseek", "deepseek-chat", "deepseek", "provider"),
        ("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", "openai", "provider"),
        ("OpenRouter", "qwen/qwq-32b", "openai", "provider"),
        # fallbacks and unknown models
        (None, None, "fallback", "fallback"),
        ("", "", "fallback", "fallback"),
        (None, "my-local-model", "fallback", "fallback"),
        ("acme-llm-cloud", "acme-7b", "fallback", "fallback"),
        (None, "qwen3-32b", "fallback", "fallback"),
    ],
)
def test_registry_resolve(provider: str | None, model: str | None, adapter: str, rule: str) -> None:
    api = "responses" if rule == "api-responses" else None
    resolution = resolve(provider, model, api=api)
    assert (resolution.adapter, resolution.rule) == (adapter, rule)


@pytest.mark.parametrize(
    "model", ["gpt-4o", "omni-moderation-latest", "o", "carr1er", "prior1ty", "gpt-4.1"]
)
def test_registry_lookalike_model_names_do_not_match(model: str) -> None:
    assert resolve(None, model).adapter == "fallback"


def test_registry_wire_constraint_skips_other_wires_and_defaults_to_the_wire() -> None:
    assert resolve(None, "claude-sonnet-4", wire=Wire.CHAT).adapter == "openai"
    assert resolve(None, "claude-sonnet-4", wire=Wire.CHAT).rule == "wire-default"
    assert resolve(None, "deepseek-r1", wire=Wire.CHAT).adapter == "deepseek"
    assert resolve(None, "glm-4.5", wire=Wire.ANTHROPIC).adapter == "anthropic"
    assert resolve(None, None, wire=Wire.TEXT).adapter == "fallback"
    assert wire_default(Wire.CHAT) == "openai"


def test_registry_create_by_name_or_alias() -> None:
    assert type(create("anthropic")).name == "anthropic"
    assert type(create("openrouter")).name == "openai"
    assert type(create("Google")).name == "gemini"
    with pytest.raises(KeyError):
        create("nope")
