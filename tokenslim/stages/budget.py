"""Budget: enforce a maximum number of prompt tokens by trimming in a fixed priority order."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Callable

from tokenslim._chunk import Chunk, Message
from tokenslim._internal.sentences import split_spans
from tokenslim._internal.turns import group_spans, is_pinned, is_state_summary
from tokenslim._result import Result
from tokenslim.errors import BudgetExceeded
from tokenslim.stages._base import BaseStage, check

__all__ = ["Budget"]

REASON = "over_budget"
logger = logging.getLogger("tokenslim")


@dataclass
class _Plan:
    chunks: list[Chunk]
    history: list[Message]
    dropped: list[tuple[Chunk | Message, str, str]] = field(default_factory=list)  # (item, kind, detail)
    shortened: tuple[Chunk, str, str] | None = None  # (chunk, new text, detail)


def _turn_tokens(result: Result, msg: Message) -> int:
    """What one history turn adds to :meth:`Result.prompt_tokens` (its piece and one separator)."""
    return result.count(f"{msg['role']}: {msg['content']}") + 1


def _relevance_order(chunks: list[Chunk]) -> list[int]:
    """Chunk positions, least relevant first: unscored before scored, lower score first,
    and among equals the later position (lower retrieval rank) first."""
    return sorted(
        range(len(chunks)),
        key=lambda i: (chunks[i].score if chunks[i].score is not None else -math.inf, -i),
    )


class Budget(BaseStage):
    """Cap the whole prompt (system prompt + history + chunks + query) at ``max_tokens``.

    Tokens are counted as :meth:`Result.prompt_tokens` counts them. When the prompt
    is over ``max_tokens - reserve_output_tokens``, items are removed in this order,
    stopping as soon as it fits:

    1. **Chunks, least relevant first**, until one chunk is left: lowest ``score``
       first (chunks without a score before scored ones); among equal scores the
       later chunk (lower retrieval rank) first.
    2. **History turns, oldest first**, one group at a time: an assistant message
       with ``tool_calls`` goes together with its ``role="tool"`` results. The
       state message written by SummarizeConversation and system/developer
       messages in the history are kept in this step.
    3. **The last chunk is truncated** to the longest prefix of whole sentences
       that fits; if not even its first sentence fits, it is removed.
    4. **The state message and system/developer messages** in the history, oldest first.

    The system prompt and the query are never trimmed: if they alone (plus the
    reserve) exceed ``max_tokens``, :class:`~tokenslim.errors.BudgetExceeded` is raised.

    Drops: every removed chunk (``kind="chunk"``) and turn (``kind="turn"``), and the
    truncated chunk (via ``shorten``), all with reason ``"over_budget"``.

    Args:
        max_tokens: Maximum prompt tokens (required), a positive int.
        reserve_output_tokens: Tokens kept free for the answer when ``max_tokens``
            is the model's context window (``0`` when it caps the input only).

    Raises:
        BudgetExceeded: system prompt + query + reserve exceed ``max_tokens``.
    """

    def __init__(self, *, max_tokens: int, reserve_output_tokens: int = 0) -> None:
        self.max_tokens = max_tokens
        self.reserve_output_tokens = reserve_output_tokens

    def validate(self) -> None:
        """Raise ConfigError unless max_tokens is a positive int and the reserve leaves room."""
        mt, reserve = self.max_tokens, self.reserve_output_tokens
        check(isinstance(mt, int) and not isinstance(mt, bool) and mt > 0, self, f"max_tokens must be a positive int, got {mt!r}")
        check(
            isinstance(reserve, int) and not isinstance(reserve, bool) and 0 <= reserve < mt,
            self,
            f"reserve_output_tokens must be an int in [0, max_tokens={mt}), got {reserve!r}",
        )

    @property
    def limit(self) -> int:
        """Prompt tokens allowed: ``max_tokens - reserve_output_tokens``."""
        return self.max_tokens - self.reserve_output_tokens

    # -- deciding -------------------------------------------------------------------
    def plan(self, result: Result) -> _Plan:
        """Decide what to remove (pure: works on a copy, changes nothing in ``result``).

        Raises:
            BudgetExceeded: system prompt + query do not fit.
        """
        limit = self.limit
        trial = result.copy()
        trial.chunks, trial.history = [], []
        floor = trial.prompt_tokens()
        if floor > limit:
            reserve = f" + {self.reserve_output_tokens} reserved for the output" if self.reserve_output_tokens else ""
            raise BudgetExceeded(
                f"the system prompt and query alone need {floor} tokens{reserve}, over max_tokens={self.max_tokens}; "
                "shorten the system prompt or the query, or raise max_tokens",
                required_tokens=floor + self.reserve_output_tokens,
                max_tokens=self.max_tokens,
            )
        plan = _Plan(list(result.chunks), list(result.history))

        def tokens() -> int:
            trial.chunks, trial.history = plan.chunks, plan.history
            return trial.prompt_tokens()

        # 1. chunks, least relevant first, down to one. Removing a chunk renumbers the ones
        # after it, so the prompt is recounted, but only O(log n) times: gallop then bisect
        # for the fewest removals that fit (instead of one recount per removal).
        order = _relevance_order(result.chunks)[:-1]
        start = tokens()
        if start <= limit:
            return plan

        def without(m: int) -> list[Chunk]:
            gone = set(order[:m])
            return [c for i, c in enumerate(result.chunks) if i not in gone]

        def fits(m: int) -> bool:
            plan.chunks = without(m)
            return tokens() <= limit

        removed = len(order)
        if order and fits(len(order)):
            lo, hi = 0, 1  # fits(lo) is False, fits(len(order)) is True
            while not fits(hi):
                lo, hi = hi, min(2 * hi, len(order))
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if fits(mid):
                    hi = mid
                else:
                    lo = mid
            removed = hi
        for i in order[:removed]:
            chunk = result.chunks[i]
            score = "none" if chunk.score is None else f"{chunk.score:.4g}"
            plan.dropped.append((chunk, "chunk", f"prompt {start} > {limit} tokens; score {score}"))
        plan.chunks = without(removed)
        now = tokens()
        if now <= limit:
            return plan
        # 2. oldest history groups, keeping tool pairs together, state/system messages kept.
        # A turn's share of the prompt does not depend on the others: subtract as we go.
        gone_turns: set[int] = set()
        for first, end in group_spans(result.history):
            if now <= limit:
                break
            group = result.history[first:end]
            if any(is_state_summary(m) or is_pinned(m) for m in group):
                continue
            detail = f"prompt {now} > {limit} tokens"
            plan.dropped.extend((m, "turn", f"{detail}; turn {first + k}") for k, m in enumerate(group))
            gone_turns.update(range(first, end))
            now -= sum(_turn_tokens(result, m) for m in group)
        plan.history = [m for k, m in enumerate(result.history) if k not in gone_turns]
        if now <= limit:
            return plan
        # 3. truncate the last chunk at a sentence boundary (or drop it)
        if plan.chunks:
            self._truncate_last(plan, tokens, limit)
            now = tokens()
        # 4. the state summary and system messages in the history, oldest first
        kept: list[Message] = []
        for msg in plan.history:
            if now <= limit:
                kept.append(msg)
                continue
            plan.dropped.append((msg, "turn", f"prompt {now} > {limit} tokens"))
            now -= _turn_tokens(result, msg)
        plan.history = kept
        return plan

    @staticmethod
    def _truncate_last(plan: _Plan, tokens: Callable[[], int], limit: int) -> None:
        chunk = plan.chunks[-1]
        ends = [end for _, end in split_spans(chunk.text)]
        lo, hi, best = 0, len(ends) - 1, -1
        while lo <= hi:  # prompt tokens grow with the prefix: binary search the longest that fits
            mid = (lo + hi) // 2
            plan.chunks = [*plan.chunks[:-1], chunk.with_text(chunk.text[: ends[mid]])]
            if tokens() <= limit:
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        if best >= 0:
            new_text = chunk.text[: ends[best]]
            plan.chunks = [*plan.chunks[:-1], chunk.with_text(new_text)]
            plan.shortened = (chunk, new_text, f"kept {best + 1} of {len(ends)} sentences")
        else:
            plan.chunks = plan.chunks[:-1]
            plan.dropped.append((chunk, "chunk", "not even its first sentence fits"))

    # -- applying ---------------------------------------------------------------------
    def apply(self, result: Result) -> Result:
        """Trim ``result`` to the budget, recording every removal as ``over_budget``."""
        if result.prompt_tokens() <= self.limit:
            return result
        plan = self.plan(result)
        for item, kind, detail in plan.dropped:
            result.drop(item, kind=kind, reason=REASON, detail=detail)  # type: ignore[arg-type]
        chunks = plan.chunks
        if plan.shortened is not None:
            chunk, new_text, detail = plan.shortened
            new = result.shorten(chunk, new_text, reason=REASON, detail=detail, truncated=True)
            chunks = [*chunks[:-1], new]
        result.chunks = chunks
        result.history = plan.history
        logger.info(
            "budget cut: %d items removed%s to fit %d prompt tokens",
            len(plan.dropped), ", 1 chunk truncated" if plan.shortened else "", self.limit,
        )
        return result
