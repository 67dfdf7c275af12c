"""Real LLM backends that answer chat prompts and measure every request.

``get_backend("vllm" | "transformers" | "openai" | "fake", model=None, **kw)``
builds one; the heavy packages (vllm, torch, transformers) are imported only
when a backend is created.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tokenslim.backends._base import Backend, Measurement
from tokenslim.errors import ConfigError

if TYPE_CHECKING:  # explicit re-exports for type checkers; at run time they load on first use
    from tokenslim.backends.fake_backend import FakeBackend as FakeBackend
    from tokenslim.backends.hf_backend import HFBackend as HFBackend
    from tokenslim.backends.openai_backend import OpenAIBackend as OpenAIBackend
    from tokenslim.backends.vllm_backend import VLLMBackend as VLLMBackend

__all__ = ["Backend", "Measurement", "VLLMBackend", "HFBackend", "OpenAIBackend", "FakeBackend", "get_backend", "BACKENDS"]

#: backend name -> (module, class)
BACKENDS: dict[str, tuple[str, str]] = {
    "vllm": ("tokenslim.backends.vllm_backend", "VLLMBackend"),
    "transformers": ("tokenslim.backends.hf_backend", "HFBackend"),
    "openai": ("tokenslim.backends.openai_backend", "OpenAIBackend"),
    "fake": ("tokenslim.backends.fake_backend", "FakeBackend"),
}
_CLASSES = {cls: mod for mod, cls in BACKENDS.values()}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return getattr(importlib.import_module(_CLASSES[name]), name)
    raise AttributeError(f"module 'tokenslim.backends' has no attribute {name!r}")


def get_backend(name: str, model: str | None = None, **kw: Any) -> Backend:
    """Create a backend by name.

    Args:
        name: "vllm", "transformers", "openai" or "fake".
        model: The model (vllm/transformers: name or folder, see
            :func:`tokenslim.models.resolve_model`; openai: the served model name).
            Ignored by "fake".
        **kw: Keyword arguments of the backend class.

    Returns:
        The backend.

    Raises:
        ConfigError: Unknown backend name.
    """
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; expected one of {sorted(BACKENDS)}")
    module, cls_name = BACKENDS[name]
    cls = getattr(importlib.import_module(module), cls_name)
    backend: Backend
    if name == "fake":
        backend = cls(**kw)
    elif name == "openai":
        backend = cls(model=model, **kw)
    else:
        backend = cls(model, **kw)
    return backend
