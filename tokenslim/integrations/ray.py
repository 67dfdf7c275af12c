"""Compress a corpus of requests on a Ray cluster: ``compress_dataset(ds, pipeline)``.

Each row of the Ray Dataset is one request: ``query`` (str), ``chunks`` (a list of
str or ``{"text", "score", "id", "metadata"}`` dicts) and, optionally, ``history``
(``{"role", "content"}`` dicts) and ``system_prompt``. Ray Data's ``map_batches``
sends batches of rows to a fixed pool of workers (a callable class, so each worker
builds its pipeline once and keeps its tokenizer and caches warm), and each batch
goes through :meth:`Pipeline.run_batch`; every worker runs the same pipeline, so
each row's output is identical to a single-process ``pipeline.run`` on that row.

Columns added to each row:

* ``messages``: the compressed prompt as chat messages (:meth:`Result.to_messages`),
  ready for an LLM API;
* ``chunks_out``: surviving chunks as ``{"id", "text", "score"}``, in prompt order;
* ``tokens_before`` / ``tokens_after``: prompt tokens before and after;
* ``record``: :meth:`Result.to_dict` as JSON (report and every drop), when ``record=True``;
* ``error``: ``None``, or the refused request's error when ``errors="record"``.

Example (``pip install 'tokenslim[ray]'``)::

    import ray, tokenslim
    from tokenslim.integrations.ray import compress_dataset

    ds = ray.data.read_json("requests.jsonl")
    out = compress_dataset(ds, tokenslim.default_pipeline(token_budget=2000), num_workers=8)
    out.write_parquet("compressed/")
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from tokenslim._pipeline import Pipeline
from tokenslim._result import Result
from tokenslim.errors import ConfigError, InputError, MissingDependency

if TYPE_CHECKING:
    import pyarrow
    import ray.data

__all__ = ["compress_dataset", "Compressor", "compress_rows"]

Errors = Literal["raise", "record"]


def _import_ray() -> Any:
    try:
        import ray.data
    except ImportError as exc:
        raise MissingDependency("ray", extra="ray", feature="tokenslim.integrations.ray") from exc
    return ray


def _row_output(result: Result, record: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "messages": [{"role": m["role"], "content": m["content"]} for m in result.to_messages()],
        "chunks_out": [{"id": c.id, "text": c.text, "score": c.score} for c in result.chunks],
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "error": None,
    }
    if record:
        out["record"] = json.dumps(result.to_dict())
    return out


def compress_rows(
    pipeline: Pipeline,
    rows: list[dict[str, Any]],
    *,
    query_column: str = "query",
    chunks_column: str = "chunks",
    history_column: str = "history",
    system_prompt_column: str = "system_prompt",
    record: bool = False,
    errors: Errors = "raise",
) -> list[dict[str, Any]]:
    """Run ``pipeline`` on the rows as one :meth:`Pipeline.run_batch` (token counts shared
    across the batch) and return the rows with the output columns added: what one Ray
    worker does with one batch, and the single-process reference."""
    requests = [
        {"query": row.get(query_column) or "", "chunks": row.get(chunks_column),
         "history": row.get(history_column), "system_prompt": row.get(system_prompt_column)}
        for row in rows
    ]
    results: list[Result | InputError]
    try:
        results = list(pipeline.run_batch(requests))
    except InputError:
        if errors == "raise":
            raise
        results = []  # find the refused rows one by one; the others go on
        for request in requests:
            try:
                results.extend(pipeline.run_batch([request]))
            except InputError as exc:
                results.append(exc)
    out: list[dict[str, Any]] = []
    for row, result in zip(rows, results):
        if isinstance(result, InputError):
            added: dict[str, Any] = {"messages": [], "chunks_out": [], "tokens_before": 0, "tokens_after": 0,
                                     "error": f"{type(result).__name__}: {result}"}
            if record:
                added["record"] = ""
        else:
            added = _row_output(result, record)
        out.append({**row, **added})
    return out


class Compressor:
    """The callable class Ray Data runs on each worker: one pipeline per worker, built
    once in the worker (from the pickled pipeline) and reused for every batch."""

    def __init__(self, pipeline: Pipeline, options: dict[str, Any]) -> None:
        self.pipeline = pipeline
        self.options = options
        self.pipeline.validate()
        self.pipeline.get_tokenizer()

    def __call__(self, batch: "pyarrow.Table") -> "pyarrow.Table":
        import pyarrow

        rows = compress_rows(self.pipeline, batch.to_pylist(), **self.options)
        return pyarrow.Table.from_pylist(rows)


def compress_dataset(
    dataset: "ray.data.Dataset",
    pipeline: Pipeline,
    *,
    num_workers: int = 1,
    batch_size: int = 64,
    num_cpus_per_worker: float = 1.0,
    query_column: str = "query",
    chunks_column: str = "chunks",
    history_column: str = "history",
    system_prompt_column: str = "system_prompt",
    record: bool = False,
    errors: Errors = "raise",
) -> "ray.data.Dataset":
    """Compress every request of a Ray Dataset with ``pipeline`` on ``num_workers`` workers.

    Lazy, like every Ray Data transform: nothing runs until the result is consumed
    (``take_all``, ``write_parquet``, ``iter_batches``...).

    Args:
        dataset: Rows with the request columns (see the module docstring).
        pipeline: The pipeline every worker runs (sent to each worker once).
        num_workers: Size of the worker pool (Ray actors).
        batch_size: Requests per batch sent to a worker.
        num_cpus_per_worker: CPUs Ray reserves for each worker.
        query_column: Input column holding the query.
        chunks_column: Input column holding the chunks.
        history_column: Input column holding the chat history (optional per row).
        system_prompt_column: Input column holding the system prompt (optional per row).
        record: Add a ``record`` column with each request's :meth:`Result.to_dict` as JSON.
        errors: ``"raise"`` (a refused request, :class:`InputError`, fails the job) or
            ``"record"`` (its ``error`` column says why, its outputs are empty).

    Returns:
        The dataset with the output columns added.

    Raises:
        MissingDependency: ray is not installed (``pip install 'tokenslim[ray]'``).
        ConfigError: bad arguments or pipeline parameters.
    """
    ray_module = _import_ray()
    if not isinstance(pipeline, Pipeline):
        raise ConfigError(f"pipeline must be a tokenslim.Pipeline, got {type(pipeline).__name__}")
    for name, value in (("num_workers", num_workers), ("batch_size", batch_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be an int >= 1, got {value!r}")
    if errors not in ("raise", "record"):
        raise ConfigError(f"errors must be 'raise' or 'record', got {errors!r}")
    pipeline.validate()
    options = {
        "query_column": query_column,
        "chunks_column": chunks_column,
        "history_column": history_column,
        "system_prompt_column": system_prompt_column,
        "record": record,
        "errors": errors,
    }
    dataset_out: "ray.data.Dataset" = dataset.map_batches(
        Compressor,
        fn_constructor_kwargs={"pipeline": pipeline, "options": options},
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray_module.data.ActorPoolStrategy(size=num_workers),
        num_cpus=num_cpus_per_worker,
    )
    return dataset_out
