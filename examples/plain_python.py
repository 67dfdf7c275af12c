"""tokenslim with no framework: a tiny BM25 retriever, then the default pipeline.

Run from the repository root (needs ``../shared/data``)::

    python examples/plain_python.py
"""

from __future__ import annotations

from rank_bm25 import BM25Okapi

import tokenslim
from _shared import corpus, questions, show


def main() -> None:
    examples = questions()
    docs = corpus(examples)
    bm25 = BM25Okapi([text.lower().split() for _, _, text in docs])
    pipe = tokenslim.default_pipeline()  # offline, counts cl100k tokens
    tok = pipe.get_tokenizer()
    total_before = total_after = 0
    for ex in examples:
        scores = bm25.get_scores(ex.query.lower().split())
        top = sorted(range(len(docs)), key=lambda i: -scores[i])[:10]
        chunks = [tokenslim.Chunk(docs[i][2], score=float(scores[i]), id=docs[i][0], metadata={"title": docs[i][1]}) for i in top]
        r = pipe.run(ex.query, chunks, system_prompt="Answer with a short phrase.")
        before, after = show(ex, [c.text for c in chunks], [c.text for c in r.chunks], tok)
        total_before, total_after = total_before + before, total_after + after
    print(f"all questions: {total_before} -> {total_after} tokens ({total_before / total_after:.2f}x)")
    print("\nThe last run, stage by stage (every drop is in r.drops with its reason):")
    print(r.report_table())
    print("\nThe prompt as chat messages:", [m["role"] for m in r.to_messages()])


if __name__ == "__main__":
    main()
