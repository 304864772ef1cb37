"""Aider's chat-history writer, ported line for line, to build `.aider.chat.history.md` files.

Aider-AI/aider 0.86 `aider/io.py` `InputOutput`: `__init__` (the run header),
`append_chat_history`, `user_input`, `ai_output`, `tool_output`, `_tool_message`;
`aider/coders/base_coder.py` `show_send_output_stream` (a streamed reply's native reasoning
between `<REASONING_TAG>` and `</reasoning_tag_name>`, written by `send` through `ai_output`
before `remove_reasoning_content` runs) and `get_announcements` (the `Model:` line).
`python -m tests.formats.aider_history` rewrites fixtures/aider/.
"""

from __future__ import annotations

from pathlib import Path

from thinkfix.formats.aider import REASONING_TAG


class History:
    """An `InputOutput` whose chat history is kept in memory."""

    def __init__(self, text: str = "") -> None:
        self.text = text

    # aider/io.py
    def append_chat_history(
        self, text: str, linebreak: bool = False, blockquote: bool = False, strip: bool = True
    ) -> None:
        if blockquote:
            if strip:
                text = text.strip()
            text = "> " + text
        if linebreak:
            if strip:
                text = text.rstrip()
            text = text + "  \n"
        if not text.endswith("\n"):
            text += "\n"
        self.text += text

    def start(self, current_time: str) -> None:
        self.append_chat_history(f"\n# aider chat started at {current_time}\n\n")

    def user_input(self, inp: str) -> None:
        prefix = "####"
        hist_lines = inp.splitlines() if inp else ["<blank>"]
        hist = f"  \n{prefix} ".join(hist_lines)
        hist = f"""
{prefix} {hist}"""
        self.append_chat_history(hist, linebreak=True)

    def ai_output(self, content: str) -> None:
        hist = "\n" + content.strip() + "\n\n"
        self.append_chat_history(hist)

    def tool_output(self, *messages: str) -> None:
        if messages:
            hist = " ".join(messages)
            hist = f"{hist.strip()}"
            self.append_chat_history(hist, linebreak=True, blockquote=True)

    def tool_message(self, message: str) -> None:
        """`_tool_message` (tool_error, tool_warning): one `> ` line per line."""
        if message.strip():
            if "\n" in message:
                for line in message.splitlines():
                    self.append_chat_history(line, linebreak=True, blockquote=True)
            else:
                self.append_chat_history(message.strip(), linebreak=True, blockquote=True)

    # aider/coders/base_coder.py
    def announce(self, model: str, edit_format: str = "diff", weak: str | None = None) -> None:
        self.tool_output("Aider v0.86.2")
        prefix = "Main model" if weak else "Model"
        self.tool_output(f"{prefix}: {model} with {edit_format} edit format")
        if weak:
            self.tool_output(f"Weak model: {weak}")
        self.tool_output("Git repo: .git with 12 files")
        self.tool_output("Repo-map: using 4096 tokens, auto refresh")

    def streamed(self, reasoning: str, content: str, close_tag: str = REASONING_TAG) -> None:
        """A streamed reply with native reasoning, as `send` hands it to `ai_output`."""
        text = f"<{REASONING_TAG}>\n\n" + reasoning
        text += f"\n\n</{close_tag}>\n\n" + content
        self.ai_output(text)


def leaking() -> str:
    h = History()
    h.start("2026-03-02 10:21:07")
    h.announce("ollama_chat/qwen3:32b", weak="ollama_chat/qwen3:8b")
    h.user_input("add a --verbose flag to cli.py")
    h.ai_output(
        "<think>\nThe user wants a flag. I should edit cli.py with a SEARCH/REPLACE block.\n"
        "</think>\n\nHere is the change:\n\ncli.py\n```python\n<<<<<<< SEARCH\n"
        "parser = argparse.ArgumentParser()\n=======\nparser = argparse.ArgumentParser()\n"
        'parser.add_argument("--verbose", action="store_true")\n>>>>>>> REPLACE\n```'
    )
    h.tool_output("Applied edit to cli.py")
    h.tool_output("Commit 3f2a9c1 feat: add --verbose flag")
    h.user_input("why does it print twice?")
    h.ai_output(
        "Looking at the logger setup, handlers are added on every call.\n</think>\n\n"
        "The logger gets a second handler each time `setup()` runs. Guard it:\n\n"
        "```python\nif not logger.handlers:\n    logger.addHandler(handler)\n```"
    )
    h.start("2026-03-03 09:02:44")
    h.announce("deepseek/deepseek-reasoner", edit_format="diff")
    h.user_input("explain the retry loop")
    h.streamed(
        "The loop retries three times with backoff.",
        "<think>The loop retries three times with backoff.</think>\n\n"
        "It retries three times, doubling the wait each time.",
    )
    h.user_input("and the timeout?")
    h.ai_output(
        "The timeout is 30 seconds.<thinking>I should check config.py</thinking> "
        "It is set in `config.py` as `TIMEOUT`."
    )
    return h.text


def clean() -> str:
    h = History()
    h.start("2026-03-04 14:30:00")
    h.announce("deepseek/deepseek-reasoner")
    h.user_input("rename fetch_all to fetch_every")
    h.streamed(
        "Rename in utils.py and its two callers. The user may grep for <think> later.",
        "utils.py\n```python\n<<<<<<< SEARCH\ndef fetch_all():\n=======\n"
        "def fetch_every():\n>>>>>>> REPLACE\n```",
    )
    h.tool_output("Applied edit to utils.py")
    h.user_input("thanks")
    h.streamed("Nothing to do.", "You're welcome.", close_tag="think")
    return h.text


def decoys() -> str:
    h = History()
    h.start("2026-03-05 08:00:00")
    h.announce("anthropic/claude-sonnet-4-5", edit_format="diff")
    h.user_input("what does <think> do in qwen3?\n</think> too")
    h.ai_output(
        "Qwen3 wraps its reasoning in `<think>` tags. For example:\n\n"
        "```\n<think>\nplan\n</think>\nanswer\n```\n\n"
        "Models emit <think> and </think> around the plan."
    )
    h.tool_message("$ grep -rn think src/\nsrc/a.py:3: # <think> is stripped here\n</think>")
    h.user_input("/run pytest")
    h.tool_output("<think> in a test name: test_think_tag PASSED")
    h.ai_output("# Summary\n\nAll tests pass; `</think>` is handled in `strip_tags()`.")
    return h.text


FIXTURES = {"leaking": leaking, "clean": clean, "decoys": decoys}


def main() -> None:
    root = Path(__file__).resolve().parents[2] / "fixtures" / "aider"
    for name, build in FIXTURES.items():
        path = root / name / ".aider.chat.history.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(build().encode("utf-8"))


if __name__ == "__main__":
    main()
