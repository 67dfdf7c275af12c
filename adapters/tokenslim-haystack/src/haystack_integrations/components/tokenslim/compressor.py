"""TokenSlimCompressor: a Haystack component that runs a tokenslim pipeline over documents."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.core.errors import DeserializationError, SerializationError
from haystack.utils import deserialize_callable, serialize_callable

import tokenslim
from tokenslim import Result
from tokenslim.integrations.documents import run_documents

__all__ = ["TokenSlimCompressor"]


@component
class TokenSlimCompressor:
    """Shrink retrieved documents with a tokenslim pipeline before the prompt builder.

    Each surviving document is the input document (same ``id``, ``score`` and
    ``meta``) with the shortened ``content`` and a ``meta["tokenslim"]`` entry
    ``{"original_tokens": ..., "kept_tokens": ...}``; dropped documents are left out.
    ``on_result`` receives the full :class:`tokenslim.Result` of each run. No
    per-run state is kept on the component.

    Serialisation (``to_dict``/``from_dict``, so Haystack pipelines save to YAML) writes
    the tokenslim pipeline as :meth:`tokenslim.Pipeline.to_config`; custom stages must
    be registered with :func:`tokenslim.register_stage`, and ``on_result`` must be an
    importable function (Haystack's ``serialize_callable``).

    Args:
        pipeline: A tokenslim pipeline; ``None`` builds ``tokenslim.default_pipeline(token_budget)``.
        token_budget: Max prompt tokens for the default pipeline (ignored with ``pipeline``).
        disable: Pipeline step names to skip on every run.
        on_result: Called with the :class:`tokenslim.Result` of every run.

    Usage:
        ``pipe.add_component("slim", TokenSlimCompressor())`` then connect
        ``retriever.documents -> slim.documents`` and ``slim.documents -> prompt_builder.documents``.
    """

    def __init__(
        self,
        pipeline: Optional[tokenslim.Pipeline] = None,
        token_budget: Optional[int] = None,
        disable: Optional[List[str]] = None,
        on_result: Optional[Callable[[Result], None]] = None,
    ) -> None:
        self.pipeline = pipeline if pipeline is not None else tokenslim.default_pipeline(token_budget)
        self.token_budget = token_budget
        self.disable = list(disable or [])
        self.on_result = on_result

    @component.output_types(documents=List[Document])
    def run(self, documents: List[Document], query: str) -> Dict[str, List[Document]]:
        """Run the pipeline over ``documents`` for ``query``.

        Args:
            documents: Retrieved documents, best first (``content`` must be text).
            query: The user question.

        Returns:
            ``{"documents": [...]}``: the surviving documents, shortened.

        Raises:
            tokenslim.errors.InputError: a document has no text content.
        """
        kept = run_documents(
            self.pipeline,
            query,
            documents,
            text=lambda d: d.content if d.content is not None else "",
            score=lambda d: d.score,
            metadata=lambda d: d.meta,
            doc_id=lambda d: d.id,
            disable=self.disable,
            on_result=self.on_result,
        )
        out = [replace(k.document, content=k.chunk.text, meta={**k.document.meta, "tokenslim": k.stats}) for k in kept]
        return {"documents": out}

    def to_dict(self) -> Dict[str, Any]:
        """Serialise the component, its tokenslim pipeline included (as plain data).

        Raises:
            SerializationError: a stage is not registered or holds a value that is not
                data (see :meth:`tokenslim.Pipeline.to_config`), or ``on_result`` is not
                an importable function.
        """
        try:
            config = self.pipeline.to_config()
            on_result = serialize_callable(self.on_result) if self.on_result is not None else None
        except (tokenslim.errors.ConfigError, SerializationError) as exc:
            raise SerializationError(f"TokenSlimCompressor cannot be serialised: {exc}") from exc
        return default_to_dict(
            self, pipeline=config, token_budget=self.token_budget, disable=self.disable, on_result=on_result
        )

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "TokenSlimCompressor":
        """Rebuild a component written by :meth:`to_dict`.

        Raises:
            DeserializationError: the saved pipeline is invalid or names an unregistered stage.
        """
        params = dict(data.get("init_parameters", {}))
        data = {**data, "init_parameters": params}  # the caller's dict is left as it was
        try:
            if isinstance(params.get("pipeline"), dict):
                params["pipeline"] = tokenslim.Pipeline.from_config(params["pipeline"])
            if isinstance(params.get("on_result"), str):
                params["on_result"] = deserialize_callable(params["on_result"])
        except tokenslim.errors.ConfigError as exc:
            raise DeserializationError(f"TokenSlimCompressor: {exc}") from exc
        return default_from_dict(cls, data)
