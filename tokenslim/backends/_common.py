"""Helpers the backends share: chat rendering to token ids, message checks."""

from __future__ import annotations

from typing import Any, Sequence

from tokenslim._chunk import Message
from tokenslim.errors import InputError

__all__ = ["check_prompts", "encode_chat", "render_plain"]


def check_prompts(prompts: Sequence[list[Message]]) -> list[list[Message]]:
    """Validate a batch of chat prompts (a list of message lists).

    Raises:
        InputError: A prompt is not a non-empty list of ``{"role", "content"}`` dicts.
    """
    if isinstance(prompts, (str, dict)):
        raise InputError("prompts must be a list of chats (each a list of messages), got a single value")
    out = []
    for i, chat in enumerate(prompts):
        if not isinstance(chat, list) or not chat:
            raise InputError(f"prompts[{i}] must be a non-empty list of messages, got {type(chat).__name__}")
        for msg in chat:
            if not isinstance(msg, dict) or "role" not in msg or not isinstance(msg.get("content"), str):
                raise InputError(f"prompts[{i}] holds {msg!r}; expected {{'role': ..., 'content': str}}")
        out.append(chat)
    return out


def render_plain(messages: list[Message]) -> str:
    """A plain-text prompt for base models that have no chat template."""
    lines = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
    return "\n\n".join(lines) + "\n\nAssistant:"


def encode_chat(tokenizer: Any, messages: list[Message]) -> list[int]:
    """Token ids of ``messages`` after the model's chat template (generation prompt added).

    Base models without a chat template get :func:`render_plain` with the
    tokenizer's special tokens (e.g. Gemma's ``<bos>``).
    """
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if hasattr(ids, "keys"):  # transformers 5 returns a BatchEncoding
            ids = ids["input_ids"]
        return [int(t) for t in ids]
    return [int(t) for t in tokenizer.encode(render_plain(messages), add_special_tokens=True)]
