"""Hugging Face tokenizers (by local folder, hub id when online, or object)."""

from __future__ import annotations

import os
import threading
from typing import Any

from tokenslim.errors import MissingDependency, TokenizerError

__all__ = ["HFTokenizer"]


class HFTokenizer:
    """The target model's own tokenizer, so counts match what prefill pays for.

    Args:
        tokenizer: A local folder, a hub id (only when online), or a loaded
            ``transformers`` tokenizer object. Loaded lazily on first use.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._tok = None if isinstance(tokenizer, (str, os.PathLike)) else tokenizer
        self._lock = threading.Lock()
        if isinstance(tokenizer, (str, os.PathLike)):
            self.name = f"hf:{os.path.basename(os.fspath(tokenizer).rstrip('/')) or tokenizer}"
        else:
            self.name = f"hf:{getattr(tokenizer, 'name_or_path', type(tokenizer).__name__)}"

    def _get(self) -> Any:
        if self._tok is None:
            with self._lock:
                if self._tok is None:
                    try:
                        from transformers import AutoTokenizer
                    except ImportError as exc:
                        raise MissingDependency("transformers", extra="models", feature="Hugging Face tokenizers") from exc
                    path = os.fspath(self.tokenizer)
                    local = os.path.isdir(os.path.expanduser(path)) or os.environ.get("HF_HUB_OFFLINE") == "1"
                    try:
                        self._tok = AutoTokenizer.from_pretrained(os.path.expanduser(path), local_files_only=local)
                    except Exception as exc:
                        raise TokenizerError(
                            f"could not load Hugging Face tokenizer {path!r}: {type(exc).__name__}: {exc}. "
                            "Pass a local folder containing tokenizer.json (offline machines cannot reach the hub)."
                        ) from exc
        return self._tok

    def encode(self, text: str) -> list[int]:
        return list(self._get().encode(text, add_special_tokens=False))

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self.encode(text))

    def decode(self, ids: list[int]) -> str:
        return str(self._get().decode(ids))

    def __repr__(self) -> str:
        return f"HFTokenizer({self.name!r})"
