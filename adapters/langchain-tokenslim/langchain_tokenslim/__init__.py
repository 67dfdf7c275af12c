"""LangChain integration for tokenslim.

* :class:`TokenSlimCompressor`: a ``BaseDocumentCompressor`` for
  ``ContextualCompressionRetriever`` and ``DocumentCompressorPipeline``.
* :func:`slim_messages`: shrinks a list of chat messages (like ``trim_messages``),
  folding older turns into one state message and never splitting a tool call from
  its result.
"""

from langchain_tokenslim.compressor import TokenSlimCompressor
from langchain_tokenslim.history import slim_messages

__all__ = ["TokenSlimCompressor", "slim_messages"]
__version__ = "0.1.0"
