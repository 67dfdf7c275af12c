"""The examples in the public docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tokenslim

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(tokenslim.__path__, "tokenslim.") if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", ["tokenslim", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_public_docstrings_have_examples() -> None:
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in ["tokenslim", *MODULES])
    assert attempted >= 4
