"""tokenslim: make RAG prompts cheaper and faster without making answers worse.

    >>> import tokenslim
    >>> pipe = tokenslim.default_pipeline()
    >>> r = pipe.run("Who wrote Hamlet?", ["Hamlet is a tragedy by William Shakespeare.", "Cats purr."])
    >>> r.tokens_after <= r.tokens_before
    True

``import tokenslim`` is light: no torch, no model, no network until a stage needs them.
"""

from __future__ import annotations

from typing import Any

from tokenslim import errors
from tokenslim._chunk import Chunk, Message
from tokenslim._conversation import Conversation
from tokenslim._pipeline import Pipeline, default_pipeline
from tokenslim._internal.titles import TITLE_KEYS, chunk_title
from tokenslim._registry import register_stage, registered_stages
from tokenslim._result import Drop, Result, StageReport
from tokenslim.tokenizers import Tokenizer, get_tokenizer

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "Message",
    "Pipeline",
    "default_pipeline",
    "Conversation",
    "register_stage",
    "registered_stages",
    "Result",
    "Drop",
    "StageReport",
    "Tokenizer",
    "get_tokenizer",
    "extract_main_text",
    "chunk_title",
    "TITLE_KEYS",
    "errors",
    "stages",
    "__version__",
]

for _obj in (Chunk, Pipeline, default_pipeline, Conversation, register_stage, registered_stages, Result, Drop, StageReport, get_tokenizer, chunk_title):
    _obj.__module__ = "tokenslim"


def extract_main_text(html: str | bytes, *, url: str | None = None) -> str:
    """The main content of an HTML page as clean text (see :mod:`tokenslim.html`)."""
    from tokenslim.html import extract_main_text as _extract

    return _extract(html, url=url)


def __getattr__(name: str) -> Any:
    if name == "stages":
        import importlib

        return importlib.import_module("tokenslim.stages")
    raise AttributeError(f"module 'tokenslim' has no attribute {name!r}")
