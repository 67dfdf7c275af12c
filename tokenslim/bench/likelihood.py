"""Gold-answer likelihood: does a prompt still let the model say the right answer?

A 135M model rarely *generates* a HotpotQA answer (EM ~0), so EM and F1 cannot
tell a prompt that keeps the evidence from one that lost it. The teacher-forced
log-likelihood of the gold answer can: the backend scores the gold answer's
tokens appended after the prompt's generation prompt, and the mean negative
log-probability per answer token (nats) rises when the evidence goes and falls
when only the evidence is left. Each report checks that this holds on its own
questions with two **controls** built from the same examples:

* ``evidence_removed``: the supporting paragraphs dropped (HotpotQA's
  ``is_supporting`` titles; elsewhere the chunks that contain a gold answer);
* ``gold_only``: only those paragraphs kept.

A stage's likelihood change is read against them: near 0 is no loss, toward
``evidence_removed`` is a loss. Only span answers are scored: ``yes``/``no``
answers are skipped, because their likelihood is dominated by the casing and
form of a first token (lower-case "yes" costs ~5 nats on SmolLM2 whatever the
context), not by the evidence.

Backends that score: vLLM (``prompt_logprobs``), transformers (a forward
pass), and OpenAI-compatible servers that return prompt log-probabilities
(vLLM's ``prompt_logprobs``, llama.cpp's ``echo`` + ``logprobs``).
"""

from __future__ import annotations

from typing import Any, Sequence

from tokenslim._chunk import Chunk, Message
from tokenslim.bench import metrics as M
from tokenslim.bench.datasets import Example

__all__ = ["CONTROLS", "control_chunks", "evidence_ids", "nll_per_token", "score_answers", "scored_answer", "can_score"]

#: Control name -> what it shows.
CONTROLS: dict[str, str] = {
    "evidence_removed": "supporting paragraphs dropped (the likelihood must get worse)",
    "gold_only": "only the supporting paragraphs kept (the likelihood should get better)",
}


def scored_answer(answers: Sequence[str]) -> str | None:
    """The gold answer to score: the first span answer (not yes/no), or None."""
    spans = M.span_answers(answers)
    return spans[0].strip() if spans else None


def evidence_ids(example: Example) -> list[int]:
    """Indexes of the example's evidence chunks.

    HotpotQA lists its supporting titles (``gold["supporting"]``), matched to
    ``chunk.metadata["title"]``; other sets fall back to the chunks that contain
    a gold span answer.
    """
    titles = set(example.gold.get("supporting") or [])
    if titles:
        found = [i for i, c in enumerate(example.chunks) if (c.metadata or {}).get("title") in titles]
        if found:
            return found
    golds = M.span_answers(example.answers)
    if not golds:
        return []
    return [i for i, c in enumerate(example.chunks) if M.contains_answer(c.text, golds)]


def control_chunks(example: Example) -> dict[str, list[Chunk] | None]:
    """The chunks of each control for this example (None where the control does not apply:
    no evidence found, or every chunk is evidence)."""
    ids = set(evidence_ids(example))
    if not ids or len(ids) == len(example.chunks):
        return {name: None for name in CONTROLS}
    return {
        "evidence_removed": [c for i, c in enumerate(example.chunks) if i not in ids],
        "gold_only": [c for i, c in enumerate(example.chunks) if i in ids],
    }


def can_score(backend: Any) -> bool:
    """Whether the backend can score continuations (has ``score_continuations``)."""
    return callable(getattr(backend, "score_continuations", None))


def nll_per_token(logprobs: Sequence[float]) -> float:
    """Mean negative log-probability per token, in nats (lower = the model finds it likelier)."""
    return -sum(logprobs) / len(logprobs)


def score_answers(
    backend: Any, prompts: Sequence[list[Message] | None], answers: Sequence[str | None], *, batch: int = 16
) -> list[float | None]:
    """Per prompt, the gold answer's mean NLL per token (None where prompt or answer is None).

    Args:
        backend: A backend with ``score_continuations(prompts, continuations)``.
        prompts: Chat prompts (None: skip).
        answers: The answer to score after each prompt (None: skip, e.g. yes/no).
        batch: Prompts per call (the engine batches them).
    """
    todo = [(i, p, a) for i, (p, a) in enumerate(zip(prompts, answers)) if p is not None and a]
    out: list[float | None] = [None] * len(prompts)
    for start in range(0, len(todo), batch):
        part = todo[start : start + batch]
        scores = backend.score_continuations([p for _, p, _ in part], [a for _, _, a in part])
        for (i, _, _), lps in zip(part, scores):
            out[i] = nll_per_token(lps)
    return out
