"""Fixtures for the HTML extraction tests: real pages from ../shared/data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

@pytest.fixture(scope="session")
def article_pages(data_dir: Path) -> list[tuple[str, bytes, str]]:
    """The first 8 article-benchmark pages by id: (id, raw bytes, gold article body)."""
    root = data_dir / "article_extraction_benchmark"
    gt = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    return [
        (pid, gzip.open(root / "html" / f"{pid}.html.gz").read(), v["articleBody"]) for pid, v in sorted(gt.items())[:8]
    ]


@pytest.fixture(scope="session")
def traf_annotations(data_dir: Path) -> dict:
    return json.loads((data_dir / "trafilatura_eval_subset" / "annotations.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def gold_paragraphs(article_pages: list[tuple[str, bytes, str]]) -> list[str]:
    """Real article paragraphs (gold texts of the benchmark pages), for building test pages."""
    paras = [
        p.strip()
        for _pid, _html, gold in article_pages
        for p in gold.split("\n")
        if len(p.strip()) > 120 and not set("<>&") & set(p)
    ]
    assert len(paras) >= 4
    return paras
