"""MinHash signatures of many texts at once, and LSH band buckets, for near-duplicate search.

The signatures are datasketch's: ``MinHash(num_perm, seed=1, scheme="affine32",
hashfunc=zlib.crc32)`` fed each text's shingles gives the same row (a test checks it),
but here one numpy pass computes every row, where one ``MinHash`` object per text costs
about 20 us. The banding is datasketch's ``MinHashLSH`` (its ``b`` bands of ``r`` rows,
chosen for the threshold); the buckets are formed with one sort per band instead of
``insert``/``query`` per sketch (about 50 us each), so 100,000 chunks band in well under
a second. Two texts are candidates when any band of their signatures is equal.
"""

from __future__ import annotations

import functools
import threading
import zlib
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["signatures", "band_buckets", "lsh_params", "permutations"]

_LOCK = threading.Lock()
_PERMS: dict[int, Any] = {}
_BLOCK = 1 << 15  # shingles hashed per numpy block (block x num_perm uint32 = 16 MiB at 128)
# datasketch's (false positive, false negative) weights: candidates are checked exactly,
# so a missed pair costs more than an extra check (recall 0.95 at Jaccard 0.8 with 128 perms)
_WEIGHTS = (0.05, 0.95)


def permutations(num_perm: int) -> Any:
    """datasketch's MinHash permutations ``(a, b)`` for ``num_perm`` (seed 1), made once per process."""
    perms = _PERMS.get(num_perm)
    if perms is None:
        with _LOCK:
            perms = _PERMS.get(num_perm)
            if perms is None:
                from datasketch import MinHash

                perms = MinHash(num_perm=num_perm, seed=1).permutations
                _PERMS[num_perm] = perms
    return perms


def signatures(shingle_sets: Sequence[Sequence[bytes]], num_perm: int) -> "np.ndarray":
    """MinHash signature of each shingle set, as rows of a ``(len(shingle_sets), num_perm)`` uint32 array.

    An empty set gives a row of ``2**32 - 1`` (datasketch's empty MinHash); callers skip those.
    """
    import numpy as np
    from datasketch.minhash import _fmix

    a, b = permutations(num_perm)
    lengths = np.fromiter((len(s) for s in shingle_sets), dtype=np.int64, count=len(shingle_sets))
    total = int(lengths.sum())
    out = np.full((len(shingle_sets), num_perm), np.iinfo(np.uint32).max, dtype=np.uint32)
    if total == 0:
        return out
    hv = np.fromiter((zlib.crc32(x) for s in shingle_sets for x in s), dtype=np.uint32, count=total)
    hv = _fmix(hv, 32)
    owner = np.repeat(np.arange(len(shingle_sets)), lengths)
    for lo in range(0, total, _BLOCK):
        part, own = hv[lo : lo + _BLOCK], owner[lo : lo + _BLOCK]
        phv = a[:, None] * part + b[:, None]  # (num_perm, block); uint32 wraps, as in datasketch's affine32
        starts = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])
        rows = own[starts]
        # reducing along the contiguous axis is ~2.5x faster than along axis 0
        out[rows] = np.minimum(out[rows], np.minimum.reduceat(phv, starts, axis=1).T)
    return out


@functools.lru_cache(maxsize=32)
def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """``(bands, rows)`` that datasketch's MinHashLSH picks for this threshold (recall-weighted).

    Where it refuses (its optimum is a single band, e.g. threshold 1.0 or very few
    permutations), every hash value is its own band: the most candidates, none missed.
    """
    from datasketch import MinHashLSH

    try:
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=_WEIGHTS)
    except ValueError:
        return num_perm, 1
    return lsh.b, lsh.r


def band_buckets(sigs: "np.ndarray", threshold: float) -> "np.ndarray":
    """Bucket id of each row in each band, ``-1`` where the row is alone in its bucket.

    Returns:
        An int64 array ``(rows, bands)``; ids are unique across bands, so two rows are
        LSH candidates exactly when they share an id other than -1.
    """
    import numpy as np

    n, num_perm = sigs.shape
    bands, rows = lsh_params(float(threshold), num_perm)
    out = np.full((n, bands), -1, dtype=np.int64)
    # each band's rows folded into one 64-bit key (odd multipliers, wrapping): equal bands get
    # equal keys; a rare collision only adds a candidate, which is then checked exactly
    mix = (np.arange(1, 2 * rows, 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    base = 0
    for t in range(bands):
        keys = sigs[:, t * rows : (t + 1) * rows].astype(np.uint64) @ mix
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        shared = counts[inverse] > 1
        out[shared, t] = inverse[shared] + base
        base += len(counts)
    return out
