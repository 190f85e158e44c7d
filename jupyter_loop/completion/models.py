"""One completion call to a model: fill-in-the-middle where the provider offers it (Ollama's
``suffix``), a chat prompt otherwise; what the model says is tidied as it streams: a code
fence around it is dropped, and so is a repeat of the word the user was typing (chat models
tend to answer ``price_eur_2024`` to ``df["pr``, where the editor needs ``ice_eur_2024``).

Example:
    >>> trim = RepeatTrimmer('df["pr')
    >>> trim.feed("p") + trim.feed('rice_eur_2024"]')
    'ice_eur_2024"]'

    >>> fences = FenceFilter()
    >>> fences.feed("```py") + fences.feed("thon\\nprice_eur") + fences.feed('_2024"]\\n```')
    'price_eur_2024"]'
    >>> fences.flush()
    ''
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from ..providers import ChatMessage, ModelEvent, ModelProvider
from .context import CompletionPrompt

MAX_TOKENS = 256
"""Tokens a completion may generate at most: ghost text is a line or a short block."""
_OPTIONS_OLLAMA: dict[str, Any] = {"num_predict": MAX_TOKENS, "temperature": 0.1}
_OPTIONS_OPENAI: dict[str, Any] = {"max_tokens": MAX_TOKENS, "temperature": 0.1}


_NO_INSERT = re.compile(r"does not support insert", re.IGNORECASE)


def says_no_fill_in_middle(message: str) -> bool:
    """Whether a provider's error says the model cannot fill in the middle (Ollama's words
    for a model whose template has no suffix)."""
    return bool(_NO_INSERT.search(message))


def complete(
    provider: ModelProvider, model: str, prompt: CompletionPrompt, *, fill_in_middle: bool = True
) -> AsyncIterator[ModelEvent]:
    """Stream a completion; closing the iterator closes the model request.

    Fill-in-the-middle where the provider offers it and ``fill_in_middle`` allows it, a
    chat prompt otherwise.
    """
    fill = getattr(provider, "fill_in_middle", None) if fill_in_middle else None
    if fill is not None:
        stream: AsyncIterator[ModelEvent] = fill(
            model=model, prompt=prompt.prefix, suffix=prompt.suffix, options=_OPTIONS_OLLAMA
        )
        return stream
    messages = (ChatMessage("system", prompt.system), ChatMessage("user", prompt.user))
    return provider.stream(model=model, messages=messages, tools=(), options=_OPTIONS_OPENAI)


_PARTIAL_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class RepeatTrimmer:
    """Drops the start of an answer that repeats the word being typed before the cursor."""

    def __init__(self, before: str) -> None:
        found = _PARTIAL_WORD.search(before)
        self._word = found.group(0) if found else ""
        self._held: str | None = "" if self._word else None  # None: decided

    def feed(self, text: str) -> str:
        """The part of ``text`` that can be shown now."""
        if self._held is None:
            return text
        self._held += text
        word, held = self._word, self._held
        if len(held) < len(word) and word.startswith(held):
            return ""  # perhaps the repeat, not known yet
        self._held = None
        return held[len(word) :] if held.startswith(word) else held

    def flush(self) -> str:
        """What is held back when the answer ends."""
        held, self._held = self._held or "", None
        return held


class FenceFilter:
    """Drops a Markdown code fence around a streamed chat answer.

    The opening fence line is held back until its newline arrives; a closing fence is held
    back until the answer ends (it is dropped then).
    """

    def __init__(self) -> None:
        self._head: str | None = ""  # None once the start is known not to be a fence
        self._tail = ""

    def feed(self, text: str) -> str:
        """The part of ``text`` that can be shown now."""
        if self._head is not None:
            self._head += text
            if not "```".startswith(self._head[:3]):
                text, self._head = self._head, None
            elif "\n" in self._head:
                text, self._head = self._head.split("\n", 1)[1], None
            else:
                return ""
        text = self._tail + text
        newline = text.rfind("\n")
        if newline >= 0 and "```".startswith(text[newline + 1 :].strip()):
            self._tail = text[newline:]  # perhaps the closing fence, perhaps a blank line
            return text[:newline]
        self._tail = ""
        return text

    def flush(self) -> str:
        """What is left when the answer ends (a held-back closing fence is dropped)."""
        held = self._head or ""
        tail, self._tail = self._tail, ""
        return held if tail.strip() == "```" else held + tail
