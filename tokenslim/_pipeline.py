"""Pipeline: runs stages over one Result, timing and counting each; default_pipeline()."""

from __future__ import annotations

import logging
import math
import re
import time
from typing import Any, Iterable, Literal, Mapping, Sequence

from tokenslim._chunk import Chunk, Message
from tokenslim._internal.embeddings import EmbeddingRecorder, Embeddings
from tokenslim._result import Result, StageReport
from tokenslim.errors import BudgetExceeded, ConfigError, DeadlineExceeded, InputError, StageError, TokenSlimError
from tokenslim.tokenizers import Tokenizer, get_tokenizer

__all__ = ["Pipeline", "default_pipeline"]

logger = logging.getLogger("tokenslim")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
OnError = Literal["raise", "skip"]


class Pipeline:
    """An ordered list of stages applied to one request.

    Args:
        steps: Stages, or ``(name, stage)`` pairs. Unnamed stages take their
            ``name`` attribute. Names must be unique snake_case without ``__``.
        tokenizer: What every report figure is counted in (see
            :func:`tokenslim.tokenizers.get_tokenizer`; default cl100k_base).
        on_error: ``"raise"`` (fail-closed: an unexpected stage failure raises
            :class:`StageError`) or ``"skip"`` (fail-open: the failure is recorded in
            the stage's report and its input passes through unchanged).
            Errors in the input itself (:class:`InputError`) and
            :class:`BudgetExceeded` always raise.
        max_seconds: Per-request deadline in seconds (``None``: none), counted from the
            start of :meth:`run`; ``run(..., max_seconds=...)`` overrides it for one call.
            It is checked before each stage: once it has passed, the remaining stages are
            not run. Fail-closed (``on_error="raise"``) raises
            :class:`~tokenslim.errors.DeadlineExceeded`; fail-open (``"skip"``) returns what
            the finished stages made, the rest passed through unchanged, with each skipped
            stage in the report (``StageReport.error`` starts with ``"DeadlineExceeded"``).
            A stage that started in time runs to its end, so a request can overrun by one
            stage's time (every stage is near-linear in its input: docs/benchmarks/reliability.md).

    Examples:
        >>> import tokenslim
        >>> p = tokenslim.Pipeline([tokenslim.stages.Dedupe()])
        >>> r = p.run("q", ["same text", "same  text"])
        >>> len(r.chunks), r.drops[0].reason
        (1, 'exact_duplicate')
    """

    def __init__(
        self,
        steps: Sequence[Any],
        *,
        tokenizer: Any = None,
        on_error: OnError = "raise",
        max_seconds: float | None = None,
    ) -> None:
        self.steps = list(steps)
        self.tokenizer = tokenizer
        self.on_error = on_error
        self.max_seconds = max_seconds
        self._tok: Tokenizer | None = None

    # -- structure -----------------------------------------------------------------
    @property
    def named_steps(self) -> dict[str, Any]:
        """Step name -> stage."""
        return dict(self._named())

    def _named(self) -> list[tuple[str, Any]]:
        out = []
        for step in self.steps:
            if isinstance(step, tuple) and len(step) == 2 and isinstance(step[0], str):
                out.append((step[0], step[1]))
            else:
                out.append((getattr(step, "name", "") or type(step).__name__.lower(), step))
        return out

    def validate(self) -> None:
        """Check step names and each stage's parameters; raises :class:`ConfigError`."""
        if self.on_error not in ("raise", "skip"):
            raise ConfigError(f"on_error must be 'raise' or 'skip', got {self.on_error!r}")
        _check_seconds(self.max_seconds)
        seen: set[str] = set()
        for name, stage in self._named():
            if not _NAME_RE.match(name) or "__" in name:
                raise ConfigError(f"step name {name!r} must be snake_case without '__'")
            if name in seen:
                raise ConfigError(f"duplicate step name {name!r}; name steps with (name, stage) pairs")
            seen.add(name)
            if not callable(stage):
                raise ConfigError(f"step {name!r} is not callable: {stage!r}")
            validate = getattr(stage, "validate", None)
            if validate is not None:
                validate()

    def get_params(self) -> dict[str, Any]:
        """``{"<step>__<param>": value}`` for every stage parameter."""
        out: dict[str, Any] = {}
        for name, stage in self._named():
            if hasattr(stage, "get_params"):
                for k, v in stage.get_params().items():
                    out[f"{name}__{k}"] = v
        return out

    def set_params(self, **params: Any) -> "Pipeline":
        """Set stage parameters by ``<step>__<param>=value``; returns self."""
        steps = self.named_steps
        for key, value in params.items():
            step, sep, param = key.partition("__")
            if not sep or step not in steps:
                raise ConfigError(f"unknown parameter {key!r}; use <step>__<param> with steps {list(steps)}")
            steps[step].set_params(**{param: value})
        return self

    def __getitem__(self, index: int | slice | str) -> Any:
        if isinstance(index, slice):
            return Pipeline(self.steps[index], tokenizer=self.tokenizer, on_error=self.on_error, max_seconds=self.max_seconds)
        if isinstance(index, str):
            return self.named_steps[index]
        return self._named()[index][1]

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        inner = ",\n  ".join(f"({n!r}, {s!r})" for n, s in self._named())
        deadline = f", max_seconds={self.max_seconds!r}" if self.max_seconds is not None else ""
        return f"Pipeline([\n  {inner}\n], tokenizer={self.tokenizer!r}, on_error={self.on_error!r}{deadline})"

    def get_tokenizer(self) -> Tokenizer:
        """The tokenizer the reports count in (built once)."""
        if self._tok is None:
            self._tok = get_tokenizer(self.tokenizer)
        return self._tok

    # -- saving and loading ---------------------------------------------------------
    def to_config(self) -> dict[str, Any]:
        """The pipeline as plain data (JSON-safe; TOML-safe unless a parameter is set to
        ``None`` where its default is not): settings, then each step's registered stage
        name and every parameter. Custom stages must be registered
        (:func:`tokenslim.register_stage`).

        Raises:
            ConfigError: a stage is not registered, or a value (a callable, a tokenizer
                object) cannot be written as data.

        Examples:
            >>> import json, tokenslim
            >>> p = tokenslim.default_pipeline(token_budget=500)
            >>> q = tokenslim.Pipeline.from_config(json.loads(json.dumps(p.to_config())))
            >>> q.to_config() == p.to_config(), q["budget"].max_tokens
            (True, 500)
        """
        from tokenslim._config import pipeline_to_config

        return pipeline_to_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "Pipeline":
        """Rebuild a pipeline from :meth:`to_config`'s dict (stages looked up by name in the
        registry, then validated).

        Raises:
            ConfigError: unknown keys, stage names or parameters, or invalid values.
        """
        from tokenslim._config import pipeline_from_config

        return pipeline_from_config(config, cls)

    @classmethod
    def coerce(cls, value: "Pipeline | dict[str, Any]") -> "Pipeline":
        """``value`` if it is a Pipeline, else the pipeline its :meth:`to_config` dict describes.

        What framework adapters call when a saved component is loaded back.

        Raises:
            ConfigError: ``value`` is neither, or the dict is not a valid config.
        """
        if isinstance(value, Pipeline):
            return value
        if isinstance(value, dict):
            return cls.from_config(value)
        raise ConfigError(f"pipeline must be a tokenslim.Pipeline or its config dict, got {type(value).__name__}")

    def warm_up(self) -> float:
        """Run one small request so imports, tokenizer files and any model a stage loads
        are paid for now rather than by the first real request. Returns the seconds taken."""
        t0 = time.perf_counter()
        self.run(
            "Who wrote the play?",
            [Chunk("<p>The play was written by an author in 1600.</p>", score=1.0), "The play was written by an author."],
            history=[{"role": "user", "content": "Hello."}, {"role": "assistant", "content": "Hi, how can I help?"}],
        )
        seconds = time.perf_counter() - t0
        logger.info("warm-up took %.3f s", seconds)
        return seconds

    # -- running --------------------------------------------------------------------
    def run(
        self,
        query: str,
        chunks: Iterable[Chunk | str] | None = None,
        history: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        *,
        disable: Iterable[str] = (),
        max_seconds: float | None = None,
    ) -> Result:
        """Run every stage over one request.

        Args:
            query: The user question.
            chunks: Retrieved chunks (``Chunk``, ``str`` or ``{"text", "score", ...}``).
            history: Earlier chat turns as ``{"role", "content"}`` dicts, oldest first.
            system_prompt: The system prompt (never trimmed).
            disable: Step names to skip for this call (ablations).
            max_seconds: Deadline for this call, overriding the pipeline's (see :class:`Pipeline`).

        Returns:
            The :class:`Result`: surviving chunks and history, per-stage report, drops.

        Raises:
            InputError: malformed input. ConfigError: bad parameters.
            BudgetExceeded: system prompt + query alone exceed a Budget stage.
            StageError: a stage failed unexpectedly and ``on_error="raise"``.
            DeadlineExceeded: the deadline passed with stages left and ``on_error="raise"``.
        """
        t0 = time.perf_counter()
        self.validate()
        _check_seconds(max_seconds)
        limit = max_seconds if max_seconds is not None else self.max_seconds
        disabled = self._disabled(disable)
        result = self._request(query, chunks, history, system_prompt, self.get_tokenizer(), Embeddings())
        job = _Job(self, result, disabled, limit)
        job.spent = time.perf_counter() - t0
        self._execute([job])
        return job.result

    def _disabled(self, disable: Iterable[str]) -> set[str]:
        disabled = set(disable)
        unknown = disabled - set(self.named_steps)
        if unknown:
            raise ConfigError(f"disable names unknown steps {sorted(unknown)}; steps are {list(self.named_steps)}")
        return disabled

    @staticmethod
    def _request(query: str, chunks: Any, history: Any, system_prompt: Any, tokenizer: Tokenizer, embeddings: Embeddings) -> Result:
        try:
            return Result.create(query, chunks, history, system_prompt, tokenizer=tokenizer, embeddings=embeddings)
        except InputError as exc:
            logger.warning("refused input: %s: %s", type(exc).__name__, exc)
            raise

    def _execute(self, jobs: list["_Job"]) -> None:
        """Run the steps over every job, step by step across jobs: before a step that embeds,
        the texts it will ask for are gathered from all jobs and embedded in one call."""
        for s in range(len(self.steps)):
            todo: list[_Job] = []
            for job in jobs:
                name = job.steps[s][0]
                if name in job.disabled:
                    continue
                if job.limit is not None and job.spent >= job.limit:
                    job.result = job.pipe._past_deadline(name, job.result, job.spent, job.limit)
                    continue
                todo.append(job)
            _look_ahead(s, todo)
            for job in todo:
                name, stage = job.steps[s]
                t0 = time.perf_counter()
                job.result = job.pipe._run_step(name, stage, job.result)
                job.spent += time.perf_counter() - t0

    def _past_deadline(self, name: str, result: Result, elapsed: float, limit: float) -> Result:
        """Skip stage ``name`` because the deadline passed: raise (fail-closed) or record it (fail-open)."""
        exc = DeadlineExceeded(
            f"deadline of {limit:g} s passed after {elapsed:.3f} s, before stage {name!r}; "
            "raise max_seconds, or use on_error='skip' to pass the rest of the input through",
            stage=name,
            max_seconds=limit,
            elapsed_s=elapsed,
        )
        if self.on_error == "raise":
            logger.warning("%s", exc)
            raise exc
        logger.warning("stage %r skipped, its input passes through (on_error='skip'): %s", name, exc)
        tokens = result.prompt_tokens()
        result.report.append(
            StageReport(
                name=name,
                tokenizer=result.tokenizer.name,
                tokens_in=tokens,
                tokens_out=tokens,
                chunks_in=len(result.chunks),
                chunks_out=len(result.chunks),
                turns_in=len(result.history),
                turns_out=len(result.history),
                seconds=0.0,
                error=f"DeadlineExceeded: {exc}",
            )
        )
        return result

    def run_batch(self, requests: Iterable[str | Mapping[str, Any]]) -> list[Result]:
        """Run many requests, sharing work between them (like spaCy's ``nlp.pipe``).

        Each request is a query string or a mapping with ``"query"`` and optionally
        ``"chunks"``, ``"history"``, ``"system_prompt"``, ``"disable"`` and
        ``"params"``: ``{"<step>__<param>": value}`` settings for that request only
        (a budget, a k, a ratio). Those run on a copy of the stages; the shared
        pipeline is never changed, so one pipeline can serve threads meanwhile.

        Shared across the batch: token counts (a chunk retrieved for several queries is
        tokenised once) and embeddings. The batch goes through the pipeline step by step;
        before a step that embeds (``stage.uses_embeddings()``: embedding or hybrid
        relevance, semantic dedupe) a look-ahead run of it on a copy of each request
        records the texts it asks for, and all of them are embedded in one call, so the
        model gets full, length-sorted batches instead of one short call per request.
        Results are those ``run()`` gives, request by request, in order (embeddings may
        differ from ``run()``'s by float rounding, about 1e-7 in cosine).

        A deadline (``max_seconds``) counts, for each request, the time spent on it: its
        own steps and look-aheads and its share (by texts) of each batched embedding call.

        Raises:
            InputError: a request is not a str or a mapping with a str ``"query"``; or
                as :meth:`run` for its contents. ConfigError: unknown ``params`` or
                ``disable`` names. Other errors as :meth:`run`, for the first request
                that raises them.
        """
        self.validate()
        counts = _SharedCounts(self.get_tokenizer())
        embeddings = Embeddings()
        variants: dict[tuple[tuple[str, str], ...], Pipeline] = {}
        jobs: list[_Job] = []
        for n, req in enumerate(requests):
            t0 = time.perf_counter()
            if isinstance(req, str):
                req = {"query": req}
            if not isinstance(req, Mapping) or not isinstance(req.get("query"), str):
                raise InputError(f"request {n}: expected a query str or a mapping with a str 'query', got {req!r:.80}")
            unknown = set(req) - {"query", "chunks", "history", "system_prompt", "disable", "params"}
            if unknown:
                raise InputError(f"request {n}: unknown keys {sorted(unknown)}")
            params = dict(req.get("params") or {})
            key = tuple(sorted((k, repr(v)) for k, v in params.items()))
            pipe = variants.get(key)
            if pipe is None:
                pipe = self._variant(params) if params else self
                variants[key] = pipe
            result = self._request(req["query"], req.get("chunks"), req.get("history"), req.get("system_prompt"), counts, embeddings)
            job = _Job(pipe, result, self._disabled(req.get("disable", ())), self.max_seconds)
            job.spent = time.perf_counter() - t0
            jobs.append(job)
        self._execute(jobs)
        return [job.result for job in jobs]

    def _variant(self, params: Mapping[str, Any]) -> "Pipeline":
        """A copy of this pipeline with fresh stage objects and ``params`` set on them."""
        steps = []
        for name, stage in self._named():
            if hasattr(stage, "get_params") and hasattr(stage, "set_params"):
                stage = type(stage)(**stage.get_params())
            steps.append((name, stage))
        pipe = Pipeline(steps, tokenizer=self.tokenizer, on_error=self.on_error, max_seconds=self.max_seconds)
        pipe._tok = self._tok
        return pipe.set_params(**params)

    def __call__(self, result: Result, /) -> Result:
        """Run the stages over an existing Result (so a Pipeline can be a step)."""
        self.validate()
        for name, stage in self._named():
            result = self._run_step(name, stage, result)
        return result

    def _run_step(self, name: str, stage: Any, result: Result) -> Result:
        tokens_in, chunks_in, turns_in = result.prompt_tokens(), len(result.chunks), len(result.history)
        n_drops = len(result.drops)
        snapshot = result.copy() if self.on_error == "skip" else None
        outer = result.current_stage
        result.current_stage = name
        t0 = time.perf_counter()
        error: str | None = None
        try:
            out = stage(result)
            if not isinstance(out, Result):
                raise StageError(f"stage {name!r} returned {type(out).__name__} instead of a Result", stage=name)
        except (InputError, BudgetExceeded, ConfigError) as exc:
            # about the request or the configuration: failing open would hide it
            logger.warning("stage %r refused the request: %s: %s", name, type(exc).__name__, exc)
            raise
        except TokenSlimError as exc:
            if self.on_error == "raise":
                raise
            out, error = self._recover(snapshot, exc, name)
        except Exception as exc:
            wrapped = StageError(f"stage {name!r} failed: {type(exc).__name__}: {exc}", stage=name)
            if self.on_error == "raise":
                raise wrapped from exc
            wrapped.__cause__ = exc
            out, error = self._recover(snapshot, wrapped, name)
        seconds = time.perf_counter() - t0
        out.current_stage = outer
        out.report.append(
            StageReport(
                name=name,
                tokenizer=out.tokenizer.name,
                tokens_in=tokens_in,
                tokens_out=out.prompt_tokens(),
                chunks_in=chunks_in,
                chunks_out=len(out.chunks),
                turns_in=turns_in,
                turns_out=len(out.history),
                seconds=seconds,
                drops=out.drops[n_drops:],
                error=error,
            )
        )
        if logger.isEnabledFor(logging.DEBUG):
            rep = out.report[-1]
            logger.debug("stage %r: %d -> %d tokens, %d drops, %.2f ms", name, rep.tokens_in, rep.tokens_out,
                         len(rep.drops), seconds * 1000)
        return out

    @staticmethod
    def _recover(snapshot: Result | None, exc: Exception, name: str) -> tuple[Result, str]:
        assert snapshot is not None
        cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
        logger.warning("stage %r failed, its input passes through (on_error='skip'): %s: %s",
                       name, type(cause).__name__, cause, exc_info=cause)
        return snapshot, f"{type(exc).__name__}: {exc}"


def _check_seconds(value: Any) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0
    ):
        raise ConfigError(f"max_seconds must be a positive number of seconds or None, got {value!r}")


def default_pipeline(token_budget: int | None = None, tokenizer: Any = None, *, on_error: OnError = "raise") -> Pipeline:
    """The recommended pipeline: StripHTML, Dedupe, TrimTopK, ReduceStructured, CompressDocuments,
    SummarizeConversation, Budget (when ``token_budget`` is set), Reorder.

    Construction is instant and offline: stages load nothing until they run.

    Args:
        token_budget: Max prompt tokens (system + history + chunks + query); ``None`` for no cap.
        tokenizer: What to count tokens in (default cl100k_base; pass the target model's
            tokenizer folder or ``"hf:<path>"`` so counts match what prefill pays for).
        on_error: ``"raise"`` (fail-closed) or ``"skip"`` (fail-open), see :class:`Pipeline`.
    """
    from tokenslim import stages as S

    steps: list[Any] = [
        S.StripHTML(),
        S.Dedupe(),
        # no fixed top-k (TrimTopK's default k=None): CompressDocuments' learned keep decision drops whole
        # chunks per request (a fixed k=10 lost half the passages of 20-passage MuSiQue inputs, and of BM25
        # top-20 retrieval); set trim_top_k__k to cap what reaches it
        S.TrimTopK(),
        S.ReduceStructured(),  # JSON, tables, code and logs, and tool results, before CompressDocuments
        S.CompressDocuments(),
        S.SummarizeConversation(),
    ]
    if token_budget is not None:
        steps.append(S.Budget(max_tokens=token_budget))
    steps.append(S.Reorder())
    return Pipeline(steps, tokenizer=tokenizer, on_error=on_error)


class _SharedCounts:
    """The pipeline's tokenizer with one count cache for a whole :meth:`Pipeline.run_batch`."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tok = tokenizer
        self.name = tokenizer.name
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            n = self._counts[text] = self._tok.count(text)
        return n

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids)


class _Job:
    """One request inside :meth:`Pipeline._execute`: the pipeline (variant) it runs, its
    Result, the steps it skips, its deadline and the seconds of work charged to it so far."""

    def __init__(self, pipe: Pipeline, result: Result, disabled: set[str], limit: float | None) -> None:
        self.pipe = pipe
        self.steps = pipe._named()
        self.result = result
        self.disabled = disabled
        self.limit = limit
        self.spent = 0.0


def _look_ahead(s: int, jobs: list[_Job]) -> None:
    """Before step ``s``: when two or more jobs run it with a stage that embeds, run that
    stage on a copy of each job's Result with an :class:`EmbeddingRecorder`, then embed
    every recorded text in one call into the jobs' shared cache. A look-ahead that fails is
    ignored (the real run reports the failure); a text it missed is embedded when asked for."""
    wanting = [job for job in jobs if getattr(job.steps[s][1], "uses_embeddings", lambda: False)()]
    if len(wanting) < 2:
        return
    asked: list[list[str]] = []
    for job in wanting:
        t0 = time.perf_counter()
        recorder = EmbeddingRecorder()
        probe = job.result.copy()
        probe.embeddings = recorder
        probe.current_stage = job.steps[s][0]
        try:
            job.steps[s][1](probe)
        except Exception:  # noqa: BLE001 - the real run of the stage reports it
            pass
        asked.append(recorder.texts)
        job.spent += time.perf_counter() - t0
    total = sum(len(t) for t in asked)
    if not total:
        return
    cache = wanting[0].result.embeddings
    t0 = time.perf_counter()
    cache.add([t for texts in asked for t in texts])  # type: ignore[attr-defined]
    seconds = time.perf_counter() - t0
    for job, texts in zip(wanting, asked):
        job.spent += seconds * len(texts) / total
