"""tokenslim node postprocessor for LlamaIndex."""

from llama_index.postprocessor.tokenslim.base import TokenSlimPostprocessor

__all__ = ["TokenSlimPostprocessor"]
