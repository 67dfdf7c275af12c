"""Pipeline stages. Each is a small class in its own module, usable alone or in a Pipeline.

Stage modules are imported on first attribute access, so ``import tokenslim``
stays light; no stage loads a model before it runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tokenslim.stages._base import BaseStage, Stage

if TYPE_CHECKING:
    from tokenslim.stages.budget import Budget
    from tokenslim.stages.compress_documents import CompressDocuments
    from tokenslim.stages.dedupe import Dedupe
    from tokenslim.stages.flag_instructions import FlagInstructions
    from tokenslim.stages.reduce_structured import ReduceStructured
    from tokenslim.stages.reorder import Reorder
    from tokenslim.stages.strip_html import StripHTML
    from tokenslim.stages.summarize_conversation import SummarizeConversation
    from tokenslim.stages.trim_top_k import TrimTopK

_MODULES = {
    "Budget": "budget",
    "CompressDocuments": "compress_documents",
    "Dedupe": "dedupe",
    "FlagInstructions": "flag_instructions",
    "ReduceStructured": "reduce_structured",
    "Reorder": "reorder",
    "StripHTML": "strip_html",
    "SummarizeConversation": "summarize_conversation",
    "TrimTopK": "trim_top_k",
}

# Written out (not built from _MODULES) so type checkers see the explicit re-exports.
__all__ = [
    "Stage",
    "BaseStage",
    "Budget",
    "CompressDocuments",
    "Dedupe",
    "FlagInstructions",
    "ReduceStructured",
    "Reorder",
    "StripHTML",
    "SummarizeConversation",
    "TrimTopK",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'tokenslim.stages' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tokenslim.stages.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
