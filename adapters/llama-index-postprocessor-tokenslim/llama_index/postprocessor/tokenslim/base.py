"""TokenSlimPostprocessor: run a tokenslim pipeline over retrieved nodes, node by node."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from llama_index.core.bridge.pydantic import Field, field_serializer, field_validator
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

import tokenslim
from tokenslim import Result
from tokenslim.errors import InputError
from tokenslim.integrations.documents import run_documents

__all__ = ["TokenSlimPostprocessor"]

_KEY = "tokenslim"


class TokenSlimPostprocessor(BaseNodePostprocessor):
    """Shrink retrieved nodes with a tokenslim pipeline (dedupe, top-k, sentence compression...).

    Unlike ``LongLLMLinguaPostprocessor``, which merges all nodes into one and copies
    metadata, each surviving node keeps its own ``node_id``, score and metadata: it is
    a copy of the input node with the shortened text and a ``metadata["tokenslim"]``
    entry ``{"original_tokens": ..., "kept_tokens": ...}`` (excluded from the LLM and
    embedding views, so it never reaches the prompt). Nodes the pipeline drops are
    left out; ``on_result`` receives the full :class:`tokenslim.Result` of each call.
    No per-call state is kept on the instance.

    Saving (``to_dict``/``to_json``, ``from_dict``/``from_json``) writes the pipeline as
    :meth:`tokenslim.Pipeline.to_config` and rebuilds it from that; custom stages must be
    registered with :func:`tokenslim.register_stage`. ``on_result`` is not saved.

    Args:
        pipeline: The tokenslim pipeline (default :func:`tokenslim.default_pipeline`), or
            its config dict.
        disable: Pipeline step names to skip on every call.
        on_result: Called with the :class:`tokenslim.Result` of every call.
    """

    pipeline: Any = Field(default_factory=tokenslim.default_pipeline, description="The tokenslim Pipeline to run.")
    disable: tuple[str, ...] = Field(default=(), description="Pipeline step names to skip.")
    on_result: Optional[Callable[[Result], None]] = Field(default=None, exclude=True)

    @field_validator("pipeline", mode="before")
    @classmethod
    def _load_pipeline(cls, value: Any) -> tokenslim.Pipeline:
        """Accept a Pipeline, or its config dict (what ``to_dict`` wrote)."""
        return tokenslim.Pipeline.coerce(value)  # ConfigError is a ValueError: pydantic reports it

    @field_serializer("pipeline")
    def _save_pipeline(self, pipeline: tokenslim.Pipeline) -> dict[str, Any]:
        """The pipeline as plain data (raises ConfigError for an unregistered stage)."""
        return pipeline.to_config()

    @classmethod
    def class_name(cls) -> str:
        """The class name LlamaIndex serialises this component under."""
        return "TokenSlimPostprocessor"

    def _postprocess_nodes(
        self,
        nodes: List[NodeWithScore],
        query_bundle: Optional[QueryBundle] = None,
    ) -> List[NodeWithScore]:
        """Run the pipeline over ``nodes`` for the query.

        Raises:
            tokenslim.errors.InputError: no query was given (compression is query-aware).
        """
        if query_bundle is None:
            raise InputError("TokenSlimPostprocessor needs the query: pass query_bundle or query_str")
        kept = run_documents(
            self.pipeline,
            query_bundle.query_str,
            nodes,
            text=lambda n: n.node.get_content(metadata_mode=MetadataMode.NONE),
            score=lambda n: n.score,
            metadata=lambda n: n.node.metadata,
            doc_id=lambda n: n.node.node_id,
            disable=self.disable,
            on_result=self.on_result,
        )
        out = []
        for k in kept:
            original = k.document
            node = original.node.model_copy()
            node.set_content(k.chunk.text)
            node.metadata = {**original.node.metadata, _KEY: k.stats}
            node.excluded_llm_metadata_keys = [*original.node.excluded_llm_metadata_keys, _KEY]
            node.excluded_embed_metadata_keys = [*original.node.excluded_embed_metadata_keys, _KEY]
            out.append(NodeWithScore(node=node, score=original.score))
        return out
