"""Same input, same output: across runs, and across processes with different PYTHONHASHSEED."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import tokenslim
from tokenslim.bench import datasets

_SCRIPT = """
import json, sys
import tokenslim
from tokenslim.bench import datasets

def requests():
    out = [(ex.query, ex.chunks) for ex in datasets.hotpotqa(limit=15)]
    out += [(ex.query, ex.chunks) for ex in datasets.multihop_rag()]
    out += [(ex.query, ex.chunks + ex.chunks[:2]) for ex in datasets.nq(limit=5, passage="oracle")]
    return out

def fingerprint(r):
    return {
        "chunks": [[c.id, c.text, c.metadata.get("rank"), c.metadata.get("merged_ids")] for c in r.chunks],
        "drops": [[d.stage, d.kind, d.reason, d.chunk_id, d.detail, d.tokens] for d in r.drops],
        "tokens": [r.tokens_before, r.tokens_after],
    }

def run():
    out = []
    for budget in (None, 500):
        pipe = tokenslim.default_pipeline(token_budget=budget)
        out += [fingerprint(pipe.run(q, c)) for q, c in requests()]
    return out

if __name__ == "__main__":
    print(json.dumps(run()))
"""


def _in_subprocess(seed: str, tmp_path: Path) -> list:
    script = tmp_path / "fingerprint.py"
    script.write_text(_SCRIPT)
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300, check=True)
    return json.loads(out.stdout)


def test_same_output_across_processes_and_hash_seeds(tmp_path, data_dir):
    namespace: dict = {}
    exec(compile(_SCRIPT, "fingerprint", "exec"), namespace)
    here = json.loads(json.dumps(namespace["run"]()))
    assert here == json.loads(json.dumps(namespace["run"]())), "two runs in one process differ"
    for seed in ("0", "4242"):
        assert _in_subprocess(seed, tmp_path) == here, f"PYTHONHASHSEED={seed} changes the output"
    assert any(fp["drops"] for fp in here)


def test_stage_order_of_sets_does_not_leak_into_output():
    # Dedupe and TrimTopK build sets and dicts internally; ties must still break by position
    ex = datasets.hotpotqa(limit=1)[0]
    chunks = ex.chunks + ex.chunks[::-1]
    a = tokenslim.default_pipeline().run(ex.query, chunks)
    b = tokenslim.default_pipeline().run(ex.query, list(chunks))
    assert [(c.id, c.text) for c in a.chunks] == [(c.id, c.text) for c in b.chunks]
    assert [(d.chunk_id, d.reason, d.detail) for d in a.drops] == [(d.chunk_id, d.reason, d.detail) for d in b.drops]
    assert a.drops, "the duplicated chunks must be dropped"
