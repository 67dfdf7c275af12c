"""What every example shares: a few real HotpotQA questions and their Wikipedia paragraphs.

The paragraphs come from ``../shared/data/hotpotqa_distractor`` (or ``$TOKENSLIM_DATA``):
10 paragraphs per question, two of them holding the answer. Pooled over all questions,
they make a small corpus for an in-memory retriever, like a real RAG app's index.
"""

from __future__ import annotations

from tokenslim import Tokenizer
from tokenslim.bench import datasets

N_QUESTIONS = 5


def questions(n: int = N_QUESTIONS) -> list[datasets.Example]:
    """The first ``n`` HotpotQA distractor questions (query, gold answers, 10 chunks each)."""
    return datasets.hotpotqa(limit=n)


def corpus(examples: list[datasets.Example]) -> list[tuple[str, str, str]]:
    """(id, title, text) of every paragraph of ``examples``: the index the retrievers search."""
    return [(f"{ex.id}-{c.id}", c.metadata["title"], c.text) for ex in examples for c in ex.chunks]


def show(ex: datasets.Example, before: list[str], after: list[str], tokenizer: Tokenizer) -> tuple[int, int]:
    """Print one line for a question: tokens (cl100k) and documents before -> after, and
    whether the gold answer is still in the context. Returns the two token counts."""
    n_before = sum(tokenizer.count(t) for t in before)
    n_after = sum(tokenizer.count(t) for t in after)
    kept = "kept" if has_answer(" ".join(after), ex.answers) else ("LOST" if has_answer(" ".join(before), ex.answers) else "not retrieved")
    print(
        f"{ex.query[:50]:<50}  tokens {n_before:>5} -> {n_after:>4} ({n_before / max(n_after, 1):.1f}x)"
        f"  docs {len(before):>2} -> {len(after):>2}  answer {kept}"
    )
    return n_before, n_after


def has_answer(text: str, answers: list[str]) -> bool:
    """True when a gold answer string occurs in ``text`` (case-insensitive)."""
    low = text.lower()
    return any(a.lower() in low for a in answers)
