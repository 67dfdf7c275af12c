"""Every script in examples/ runs, offline, and shows a real saving without losing answers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))
LINE = re.compile(r"tokens\s+(\d+) ->\s+(\d+) .* docs\s+(\d+) ->\s+(\d+)\s+answer (kept|LOST|not retrieved)")


def test_there_is_one_example_per_framework_and_a_plain_one():
    assert set(SCRIPTS) >= {"plain_python.py", "langchain_example.py", "llama_index_example.py", "haystack_example.py"}


# what each example imports beyond the core (skipped with the reason where absent; CI has them all)
NEEDS = {"langchain_example.py": "langchain_classic", "llama_index_example.py": "llama_index.core",
         "haystack_example.py": "haystack"}


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_and_saves_tokens(script, data_dir):  # the examples retrieve from real HotpotQA paragraphs
    if script in NEEDS:
        pytest.importorskip(NEEDS[script], reason=f"{script} needs {NEEDS[script]} (bash scripts/setup.sh)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, env=env, timeout=300, cwd=EXAMPLES.parent
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = LINE.findall(proc.stdout)
    assert len(rows) >= 5, proc.stdout
    for before, after, n_in, n_out, _ in rows:
        assert 0 < int(after) < int(before) and 0 < int(n_out) <= int(n_in)
    assert sum(int(b) for b, *_ in rows) >= 3 * sum(int(a) for _, a, *_ in rows)  # at least 3x fewer tokens
    assert "LOST" not in [r[4] for r in rows], proc.stdout  # a retrieved answer is never compressed away here
