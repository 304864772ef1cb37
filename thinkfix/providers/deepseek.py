"""DeepSeek reasoning models: Chat Completions with `reasoning_content`.

The wire is OpenAI's, so the parsing is too. A separate adapter exists because the
registry finds DeepSeek-R1 by model name on any host (DeepSeek, OpenRouter, Together,
Fireworks), those hosts are where `<think>` leaks into `content` (inline blocks, or an
orphan `</think>` when the chat template opened the block), and a replay report should
say which family it saw.
"""

from __future__ import annotations

from thinkfix.providers.openai_chat import OpenAIChatAdapter


class DeepSeekAdapter(OpenAIChatAdapter):
    """DeepSeek-R1 / deepseek-reasoner streams on any Chat Completions host."""

    name = "deepseek"
