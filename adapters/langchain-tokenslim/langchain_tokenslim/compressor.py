"""TokenSlimCompressor: a LangChain document compressor that runs a tokenslim pipeline."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, field_serializer, field_validator

import tokenslim
from tokenslim import Result
from tokenslim.integrations.documents import run_documents

__all__ = ["TokenSlimCompressor"]


def _score(doc: Document, keys: Sequence[str]) -> float | None:
    for key in keys:
        value = doc.metadata.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


class TokenSlimCompressor(BaseDocumentCompressor):
    """Compress retrieved documents with a tokenslim pipeline (dedupe, top-k, sentence compression...).

    Each surviving document is the input document (same ``id``, same metadata)
    with the pipeline's text as ``page_content`` and a ``metadata["tokenslim"]``
    entry ``{"original_tokens": ..., "kept_tokens": ...}``. Documents the pipeline
    drops are left out; pass ``on_result`` to see the full :class:`tokenslim.Result`
    (every drop with its reason and the original text) for each call. The compressor
    keeps no per-call state, so one instance can serve many threads.

    Args:
        pipeline: The tokenslim pipeline to run (default :func:`tokenslim.default_pipeline`).
        score_keys: Metadata keys read, in order, as the retriever's relevance score.
        disable: Pipeline step names to skip on every call.
        on_result: Called with the :class:`tokenslim.Result` of every call (for
            logging or inspecting drops); must be thread-safe if the compressor is shared.

    Saving: ``model_dump()``/``model_dump_json()`` write the pipeline as
    :meth:`tokenslim.Pipeline.to_config` and ``model_validate()``/``model_validate_json()``
    rebuild it (custom stages must be registered with :func:`tokenslim.register_stage`);
    ``on_result`` is not saved.

    Example:
        >>> from langchain_classic.retrievers import ContextualCompressionRetriever  # doctest: +SKIP
        >>> retriever = ContextualCompressionRetriever(  # doctest: +SKIP
        ...     base_compressor=TokenSlimCompressor(), base_retriever=my_retriever)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pipeline: Any = Field(default_factory=tokenslim.default_pipeline)
    score_keys: tuple[str, ...] = ("relevance_score", "score")
    disable: tuple[str, ...] = ()
    on_result: Optional[Callable[[Result], None]] = Field(default=None, exclude=True)

    @field_validator("pipeline", mode="before")
    @classmethod
    def _load_pipeline(cls, value: Any) -> tokenslim.Pipeline:
        """Accept a Pipeline, or its config dict (what ``model_dump`` wrote)."""
        return tokenslim.Pipeline.coerce(value)  # ConfigError is a ValueError: pydantic reports it

    @field_serializer("pipeline")
    def _save_pipeline(self, pipeline: tokenslim.Pipeline) -> dict[str, Any]:
        """The pipeline as plain data (raises ConfigError for an unregistered stage)."""
        return pipeline.to_config()

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Run the pipeline over ``documents`` for ``query``.

        Args:
            documents: Retrieved documents, best first.
            query: The user question the documents were retrieved for.
            callbacks: Unused (accepted for the LangChain interface).

        Returns:
            The surviving documents, shortened, in the pipeline's output order.

        Raises:
            tokenslim.errors.InputError: a document's text is not a string.
            tokenslim.errors.StageError: a stage failed and the pipeline fails closed.
        """
        kept = run_documents(
            self.pipeline,
            query,
            documents,
            text=lambda d: d.page_content,
            score=lambda d: _score(d, self.score_keys),
            metadata=lambda d: d.metadata,
            doc_id=lambda d: d.id,
            disable=self.disable,
            on_result=self.on_result,
        )
        return [
            Document(page_content=k.chunk.text, metadata={**k.document.metadata, "tokenslim": k.stats}, id=k.document.id)
            for k in kept
        ]

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Async :meth:`compress_documents` (runs it in the default executor: the work is CPU-bound)."""
        return await run_in_executor(None, self.compress_documents, documents, query, callbacks)
