"""Every stream adapter by name, and which one a (provider, model) pair gets.

Resolution order (the first rule that answers wins):

1. `api-responses`: `api="responses"` -> `openai-responses`; that event stream is its own
   wire whatever the model.
2. `own-wire-provider`: a provider whose stream shape is its own (`anthropic`, `gemini`
   and its aliases, `ollama`, `openai-responses`, `fallback`) -> that adapter. A model
   name cannot override the shape: Ollama serves `deepseek-r1` as NDJSON.
3. `openai-reasoning-model`: o1 / o3 / o4 / gpt-5 / gpt-oss (any host prefix) -> `openai`.
4. `anthropic-model`: `claude-*` -> `anthropic`, unless the provider is a Chat
   Completions host (OpenRouter serves Claude as chat chunks).
5. `deepseek-reasoner-model`: a model name with a `reasoner` or `r1` token (`deepseek-reasoner`,
   `deepseek/deepseek-r1`, `deepseek-ai/DeepSeek-R1`, `accounts/fireworks/models/deepseek-r1`)
   -> `deepseek`, on any Chat Completions host.
6. `provider`: a known provider name -> its adapter (`openai`, `azure`, `openrouter`,
   `together`, `fireworks`, ... -> `openai`; `deepseek` -> `deepseek`).
7. `fallback`: -> `fallback` (text only, reasoning from inline tags).

With `wire` given (a capture whose event shapes are known), an answer of another wire is
skipped, and when no rule answers, the wire's own adapter is used rather than the
fallback, so native fields on an unknown host are never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from thinkfix.providers.anthropic import AnthropicAdapter
from thinkfix.providers.base import StreamAdapter, Wire
from thinkfix.providers.deepseek import DeepSeekAdapter
from thinkfix.providers.fallback import TagFallbackAdapter
from thinkfix.providers.gemini import GeminiAdapter
from thinkfix.providers.ollama import OllamaAdapter
from thinkfix.providers.openai_chat import OpenAIChatAdapter
from thinkfix.providers.openai_responses import OpenAIResponsesAdapter

# The first adapter of each wire is that wire's default.
ADAPTERS: dict[str, type[StreamAdapter]] = {
    OpenAIChatAdapter.name: OpenAIChatAdapter,
    DeepSeekAdapter.name: DeepSeekAdapter,
    OpenAIResponsesAdapter.name: OpenAIResponsesAdapter,
    AnthropicAdapter.name: AnthropicAdapter,
    OllamaAdapter.name: OllamaAdapter,
    GeminiAdapter.name: GeminiAdapter,
    TagFallbackAdapter.name: TagFallbackAdapter,
}

# Provider (host) names that are not adapter names, and the adapter their wire needs.
PROVIDER_ALIASES: dict[str, str] = {
    "azure": "openai",
    "azure-openai": "openai",
    "openrouter": "openai",
    "together": "openai",
    "togetherai": "openai",
    "fireworks": "openai",
    "groq": "openai",
    "deepinfra": "openai",
    "mistral": "openai",
    "xai": "openai",
    "vllm": "openai",
    "sglang": "openai",
    "lmstudio": "openai",
    "llamacpp": "openai",
    "llama.cpp": "openai",
    "openai-chat": "openai",
    "openai-compatible": "openai",
    "responses": "openai-responses",
    "google": "gemini",
    "google-genai": "gemini",
    "vertex": "gemini",
    "vertex-ai": "gemini",
    "vertexai": "gemini",
}

_OPENAI_REASONING = re.compile(r"^(o\d+(?:$|-)|gpt-5|gpt-oss|codex-mini)")
_CLAUDE = re.compile(r"(^|[/.:])claude-")
_REASONER = re.compile(r"(^|[-_/.:])(reasoner|r1)($|[-_/.:])")


@dataclass(frozen=True)
class Target:
    """What resolution looks at, normalised once: lower case, model base name split off."""

    provider: str
    model: str
    base: str  # the model name after the last `/` (`openai/o3-mini` -> `o3-mini`)
    api: str

    @classmethod
    def of(cls, provider: str | None, model: str | None, api: str | None) -> Target:
        model_l = (model or "").strip().lower()
        return cls(
            (provider or "").strip().lower(),
            model_l,
            model_l.rsplit("/", 1)[-1],
            (api or "").strip().lower(),
        )


def provider_adapter(provider: str) -> str | None:
    """The adapter a provider name stands for, or None for names we do not know."""
    name = provider.strip().lower()
    if name in ADAPTERS:
        return name
    return PROVIDER_ALIASES.get(name)


def _api(t: Target) -> str | None:
    return "openai-responses" if t.api == "responses" else None


def _own_wire(t: Target) -> str | None:
    name = provider_adapter(t.provider)
    if name is not None and ADAPTERS[name].wire is not Wire.CHAT:
        return name
    return None


def _openai_reasoning(t: Target) -> str | None:
    return "openai" if _OPENAI_REASONING.search(t.base) else None


def _anthropic(t: Target) -> str | None:
    if _CLAUDE.search(t.model) and provider_adapter(t.provider) is None:
        return "anthropic"
    return None


def _deepseek(t: Target) -> str | None:
    return "deepseek" if _REASONER.search(t.model) else None


def _provider(t: Target) -> str | None:
    return provider_adapter(t.provider)


RULES: tuple[tuple[str, Callable[[Target], str | None]], ...] = (
    ("api-responses", _api),
    ("own-wire-provider", _own_wire),
    ("openai-reasoning-model", _openai_reasoning),
    ("anthropic-model", _anthropic),
    ("deepseek-reasoner-model", _deepseek),
    ("provider", _provider),
    ("fallback", lambda t: "fallback"),
)


@dataclass(frozen=True)
class Resolution:
    """The adapter chosen and the rule that chose it (reported by `thinkfix replay`)."""

    adapter: str
    rule: str

    def create(self) -> StreamAdapter:
        return ADAPTERS[self.adapter]()


def wire_default(wire: Wire) -> str:
    """The adapter used for a wire when no rule names one of that wire."""
    return next(name for name, cls in ADAPTERS.items() if cls.wire is wire)


def resolve(
    provider: str | None = None,
    model: str | None = None,
    *,
    api: str | None = None,
    wire: Wire | None = None,
) -> Resolution:
    """The adapter for this provider and model, by the documented rule order."""
    target = Target.of(provider, model, api)
    for rule, match in RULES:
        name = match(target)
        if name is not None and (wire is None or ADAPTERS[name].wire is wire):
            return Resolution(name, rule)
    assert wire is not None
    return Resolution(wire_default(wire), "wire-default")


def create(name: str) -> StreamAdapter:
    """A fresh adapter by registry name or provider alias; KeyError for an unknown name."""
    adapter = provider_adapter(name)
    if adapter is None:
        raise KeyError(name)
    return ADAPTERS[adapter]()
