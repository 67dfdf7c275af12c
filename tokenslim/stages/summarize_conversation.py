"""SummarizeConversation: keep the last turns verbatim, fold older ones into one state message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from tokenslim._chunk import Message
from tokenslim._internal.sentences import split_spans
from tokenslim._internal.state import HEADER, extract_state
from tokenslim._internal.turns import STATE_SUMMARY, cut_index, group_spans, is_pinned
from tokenslim._result import Result
from tokenslim.errors import StageError
from tokenslim.stages._base import BaseStage, check

__all__ = ["SummarizeConversation", "Summarizer"]

Summarizer = Callable[[list[Message]], str]
"""A custom summarizer: takes the turns to fold (copies, oldest first) and returns the state text."""


_MIN_BUDGET = 48
"""Smallest state budget: below it the header and one line barely fit. Folding is still
skipped whenever the state would not be smaller than the turns it replaces."""


@dataclass(frozen=True)
class _Plan:
    cut: int
    pinned: list[Message]
    folded: list[tuple[Message, str, str]]  # (message, reason, detail)
    summary: Message | None


def _message_tokens(result: Result, msg: Message) -> int:
    return result.count(f"{msg['role']}: {msg['content']}") + 1


def _blocks(history: Sequence[Message], cut: int, fold_every: int) -> tuple[list[list[int]], int]:
    """The whole blocks before ``cut`` (indices of their conversation messages) and the index
    where the last one ends (0 when none fits): the cut moved back to a block boundary.

    Block boundaries depend only on the history before them: starting from the first
    message, each block ends at the first group boundary (a tool call stays with its
    results) once it holds ``fold_every`` conversation messages (pinned system and
    developer messages do not count). A history that only grows at its end therefore
    keeps its earlier boundaries, and the cut moves once per block instead of once per
    turn.
    """
    blocks: list[list[int]] = []
    current: list[int] = []
    boundary = 0
    for start, end in group_spans(history):
        if end > cut:
            break
        current.extend(i for i in range(start, end) if not is_pinned(history[i]))
        if len(current) >= fold_every:
            blocks.append(current)
            current, boundary = [], end
    return blocks, boundary


def _fit(text: str, count: Callable[[str], int], max_tokens: int) -> str:
    """Longest prefix of ``text`` ending at a sentence boundary within ``max_tokens`` ("" if none)."""
    if count(text) <= max_tokens:
        return text
    best = ""
    for _, end in split_spans(text):
        prefix = text[:end]
        if count(prefix) > max_tokens:
            break
        best = prefix
    return best


class SummarizeConversation(BaseStage):
    """Keep the last ``keep_last`` turns verbatim and fold the older ones into one state message.

    The state message is ``{"role": "system", "content": ..., "tokenslim": "state_summary"}``,
    placed where the folded turns were (after any system/developer messages among them,
    which are instructions and stay verbatim). By default it is *extractive* and
    deterministic: one line per folded turn that still says something,
    ``"- user: <verbatim sentences>"``, holding the user's requests, constraints,
    preferences, numbers, dates, times and names, short answers together with the
    question they answer, assistant confirmations/decisions and tool calls; greetings,
    thanks, acknowledgements and closers are dropped. Since every line is copied from
    a turn, no fact is invented. An earlier state message among the folded turns is
    carried over, so running the stage on every request keeps one summary.

    **Folding in blocks keeps a prefix cache warm** (``fold_every``, on by default).
    Serving engines (vLLM, SGLang, provider prompt caches) reuse the KV of a request's
    longest prefix that an earlier request sent byte for byte. Folding one more turn on
    every request rewrites the history right after the system prompt, so every request
    misses the cache from there on. With ``fold_every=N`` the cut moves once per ``N``
    messages, and each new block's lines are *appended* to the state (earlier lines stay
    byte-identical); between folds the history only grows at its end. Only when the
    appended state would pass ``max_summary_tokens`` is it rewritten: all folded turns
    are extracted again into half that budget (one cache miss), and appending resumes.
    The kept tail then holds between ``keep_last`` and ``keep_last + N - 1`` messages.
    ``fold_every=None`` folds on every request and re-extracts the whole state each
    time (the smallest prompt, for APIs without prefix caching).

    The cut never separates an assistant message with ``tool_calls`` from the
    ``role="tool"`` results answering it: the kept tail grows to include the call.
    Nothing changes when fewer than ``min_turns_to_fold`` turns would be folded or
    when folding would not save tokens.

    Args:
        keep_last: Messages at the end of the history kept verbatim (more when a
            tool-call group straddles the cut). ``0`` folds everything.
        max_summary_tokens: Upper bound on the tokens of the state message content.
        max_summary_ratio: Upper bound on the state's tokens as a share of the folded
            turns' tokens (the tighter of the two bounds applies), so folding always saves.
        min_turns_to_fold: Do nothing unless at least this many turns would be folded.
        fold_every: Fold in blocks of this many messages, appending to the state
            (see above); ``None`` re-folds and re-extracts on every request.
        summarizer: ``None`` for the deterministic extractive state, or any callable
            ``(turns: list[dict]) -> str`` (for example one that prompts an LLM
            through a tokenslim backend). It receives copies of the turns to fold,
            oldest first (including an earlier state message), and returns the state
            text; a text over ``max_summary_tokens`` is cut at the last sentence
            boundary that fits. It must be thread-safe if the stage is shared.

    An LLM summarizer over a tokenslim backend (anything with ``Backend.generate``) looks like this
    (the instruction asks for facts only; the stage still bounds its length)::

        def llm_summarizer(turns):
            transcript = "\n".join(f"{t['role']}: {t['content']}" for t in turns)
            prompt = [{"role": "user", "content": "List the user's goals, preferences, constraints, "
                       "decisions and open questions from this conversation, one per line:\n" + transcript}]
            return backend.generate([prompt], max_tokens=200)[0].text

        SummarizeConversation(summarizer=llm_summarizer)

    Drops: every folded turn, ``kind="turn"``, reason ``"folded_into_summary"`` (some
    of it is in the state) or ``"chit_chat"`` (nothing of it was worth keeping).

    Examples:
        >>> from tokenslim import Pipeline
        >>> history = [
        ...     {"role": "user", "content": "Hi there!"},
        ...     {"role": "assistant", "content": "Hello! How can I help you?"},
        ...     {"role": "user", "content": "I need a table for 4 in San Jose at 7 pm."},
        ...     {"role": "assistant", "content": "Sino has a table at 7 pm. Shall I book it?"},
        ... ]
        >>> stage = SummarizeConversation(keep_last=1, fold_every=None)  # fold on every request
        >>> r = Pipeline([stage]).run("Yes please.", history=history)
        >>> print(r.history[0]["content"])
        Earlier conversation (verbatim excerpts):
        - user: I need a table for 4 in San Jose at 7 pm.
        >>> [d.reason for d in r.drops]
        ['chit_chat', 'chit_chat', 'folded_into_summary']
    """

    def __init__(
        self,
        *,
        keep_last: int = 4,
        max_summary_tokens: int = 256,
        max_summary_ratio: float = 0.4,
        min_turns_to_fold: int = 2,
        fold_every: int | None = 8,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.keep_last = keep_last
        self.max_summary_tokens = max_summary_tokens
        self.max_summary_ratio = max_summary_ratio
        self.min_turns_to_fold = min_turns_to_fold
        self.fold_every = fold_every
        self.summarizer = summarizer

    def validate(self) -> None:
        """Raise ConfigError for non-integer or out-of-range parameters or a non-callable summarizer."""
        for name, low in (("keep_last", 0), ("max_summary_tokens", 16), ("min_turns_to_fold", 1)):
            value = getattr(self, name)
            check(
                isinstance(value, int) and not isinstance(value, bool) and value >= low,
                self,
                f"{name} must be an int >= {low}, got {value!r}",
            )
        every = self.fold_every
        check(
            every is None or (isinstance(every, int) and not isinstance(every, bool) and every >= 1),
            self,
            f"fold_every must be None or an int >= 1, got {every!r}",
        )
        ratio = self.max_summary_ratio
        check(
            isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and 0 < ratio <= 1,
            self,
            f"max_summary_ratio must be a number in (0, 1], got {ratio!r}",
        )
        check(
            self.summarizer is None or callable(self.summarizer),
            self,
            f"summarizer must be None or a callable (turns) -> str, got {type(self.summarizer).__name__}",
        )

    # -- deciding -------------------------------------------------------------------
    def _budget(self, result: Result, turns: Sequence[Message]) -> int:
        folded_tokens = sum(_message_tokens(result, t) for t in turns)
        return min(self.max_summary_tokens, max(_MIN_BUDGET, int(self.max_summary_ratio * folded_tokens)))

    def _state_text(
        self, result: Result, turns: Sequence[Message], budget: int
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """The state's lines (no header) for ``turns`` within ``budget`` tokens and, per turn,
        the drop reason and detail."""
        if self.summarizer is None:
            ext = extract_state(turns, result.count, budget)
            reasons = [
                ("chit_chat", "") if chit else ("folded_into_summary", f"{kept} fragment(s) in the state")
                for chit, kept in zip(ext.chit_chat, ext.kept_sentences)
            ]
            return ext.text.split("\n")[1:], reasons
        text = self.summarizer([dict(t) for t in turns])
        if not isinstance(text, str):
            raise StageError(
                f"summarizer returned {type(text).__name__}; it must return the state text as a str",
                stage=self.name,
            )
        text = _fit(text.strip(), result.count, budget)
        return ([text] if text else []), [("folded_into_summary", "summarizer")] * len(turns)

    def _render(self, lines: list[str]) -> str:
        if not lines:
            return ""
        return "\n".join([HEADER, *lines] if self.summarizer is None else lines)

    def _appended_state(
        self, result: Result, blocks: list[list[Message]]
    ) -> tuple[str, list[tuple[str, str]]]:
        """Block by block: append each block's lines; rewrite everything once the cap is passed."""
        lines: list[str] = []
        reasons: list[tuple[str, str]] = []
        seen: list[Message] = []
        for block in blocks:
            seen.extend(block)
            new, why = self._state_text(result, block, self._budget(result, block))
            if lines and result.count(self._render(lines + new)) > self.max_summary_tokens:
                lines, reasons = self._state_text(result, seen, self.max_summary_tokens // 2)
                reasons = [(r, f"{d}; state rewritten" if d else "state rewritten") for r, d in reasons]
                continue
            lines += new
            reasons += why
        return self._render(lines), reasons

    def plan(self, result: Result) -> _Plan:
        """Decide what to fold (pure: reads ``result``, changes nothing)."""
        history = result.history
        cut = cut_index(history, self.keep_last)
        blocks: list[list[int]] = []
        if self.fold_every is not None:
            blocks, cut = _blocks(history, cut, self.fold_every)
        head = history[:cut]
        pinned = [m for m in head if is_pinned(m)]
        turns = [m for m in head if not is_pinned(m)]
        if len(turns) < self.min_turns_to_fold:
            return _Plan(0, [], [], None)
        if self.fold_every is None:
            lines, reasons = self._state_text(result, turns, self._budget(result, turns))
            text = self._render(lines)
        else:
            text, reasons = self._appended_state(result, [[history[i] for i in b] for b in blocks])
        summary: Message | None = None
        if text:
            summary = {"role": "system", "content": text, "tokenslim": STATE_SUMMARY}
        saved = sum(_message_tokens(result, t) for t in turns) - (_message_tokens(result, summary) if summary else 0)
        if saved <= 0:
            return _Plan(0, [], [], None)
        positions = [i for i, m in enumerate(head) if not is_pinned(m)]
        folded = [
            (msg, reason, f"turn {pos}" + (f"; {detail}" if detail else ""))
            for msg, (reason, detail), pos in zip(turns, reasons, positions)
        ]
        return _Plan(cut, pinned, folded, summary)

    # -- applying ---------------------------------------------------------------------
    def apply(self, result: Result) -> Result:
        """Replace the folded turns with the state message; record each folded turn."""
        plan = self.plan(result)
        if not plan.folded:
            return result
        for msg, reason, detail in plan.folded:
            result.drop(msg, kind="turn", reason=reason, detail=detail)
        tail = result.history[plan.cut :]
        result.history = [*plan.pinned, *([plan.summary] if plan.summary else []), *tail]
        return result
