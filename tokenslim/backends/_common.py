"""Helpers the backends share: chat rendering to token ids, message checks."""

from __future__ import annotations

from typing import Any, Sequence

from tokenslim._chunk import Message
from tokenslim.errors import InputError

__all__ = ["check_prompts", "continuation_ids", "encode_chat", "render_plain"]


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


def continuation_ids(tokenizer: Any, chats: Sequence[list[Message]], continuations: Sequence[str]) -> tuple[list[list[int]], list[int]]:
    """Token ids of each chat prompt followed by its continuation, and the continuation's length in tokens.

    The continuation is tokenized on its own (no special tokens) and appended
    after the generation prompt, which is how the model would have produced it.

    Raises:
        InputError: Different numbers of chats and continuations, or an empty continuation.
    """
    if len(chats) != len(continuations):
        raise InputError(f"{len(chats)} prompts but {len(continuations)} continuations")
    ids, spans = [], []
    for i, (chat, text) in enumerate(zip(chats, continuations)):
        cont = [int(t) for t in tokenizer.encode(text, add_special_tokens=False)] if isinstance(text, str) else []
        if not cont:
            raise InputError(f"continuations[{i}] is empty or not a string: {text!r}")
        ids.append(encode_chat(tokenizer, chat) + cont)
        spans.append(len(cont))
    return ids, spans
