"""The Tokenizer protocol and ``get_tokenizer``."""

from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

from tokenslim.errors import ConfigError

__all__ = ["Tokenizer", "get_tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts, encodes and decodes text. ``name`` is printed beside every figure it counts."""

    name: str

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (no special tokens added)."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens added)."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Text of token ids."""
        ...


def get_tokenizer(spec: Any = None) -> Tokenizer:
    """Build a :class:`Tokenizer` from a name, path, tokenizer object or ``None`` (cl100k_base).

    Raises:
        ConfigError: the spec is of no known kind.
        TokenizerError: the tokenizer exists but could not be loaded.
    """
    from tokenslim.tokenizers.hf_tokenizer import HFTokenizer
    from tokenslim.tokenizers.tiktoken_tokenizer import TiktokenTokenizer

    if spec is None:
        return TiktokenTokenizer("cl100k_base")
    if isinstance(spec, Tokenizer) and not hasattr(spec, "encode_ordinary") and hasattr(spec, "count"):
        return spec
    if isinstance(spec, str):
        if spec.startswith("hf:"):
            return HFTokenizer(spec[3:])
        if os.path.isdir(os.path.expanduser(spec)):
            return HFTokenizer(spec)
        return TiktokenTokenizer(spec)
    if hasattr(spec, "encode_ordinary"):  # tiktoken.Encoding
        return TiktokenTokenizer(spec)
    if hasattr(spec, "encode") and hasattr(spec, "decode"):  # transformers tokenizer
        return HFTokenizer(spec)
    raise ConfigError(
        f"tokenizer must be None, an encoding name, 'hf:<path>', a folder path or a tokenizer object; got {spec!r}"
    )
