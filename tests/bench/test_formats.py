"""Input formats of the benchmark: the same content in the shapes real loaders produce."""

from __future__ import annotations

import pytest

from tokenslim.bench import datasets as D
from tokenslim.errors import InputError
from tokenslim.html import extract


def test_every_format_keeps_the_paragraph_and_moves_the_title() -> None:
    ex = D.hotpotqa(1)
    chunk = ex[0].chunks[1]
    title, text = chunk.metadata["title"], chunk.text
    shaped = {f: D.as_format(ex, f)[0].chunks[1] for f in D.FORMATS}
    assert shaped["metadata_title"] is chunk
    assert shaped["title_in_text"].text == f"{title}: {text}" and "title" not in shaped["title_in_text"].metadata
    assert shaped["no_title"].text == text and not shaped["no_title"].metadata
    assert shaped["document_title"].metadata == {"document_title": title}
    page = extract(shaped["html"].text)
    assert page.title == title and page.text.split() == text.split()
    assert ex[0].chunks[1].metadata["title"] == title  # the input is not changed


def test_unknown_format_is_a_typed_error(data_dir) -> None:
    with pytest.raises(InputError, match="unknown input format"):
        D.as_format(D.hotpotqa(1), "pdf")
