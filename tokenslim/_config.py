"""A pipeline as data: ``Pipeline.to_config()`` / ``Pipeline.from_config()`` and config files.

A config is a plain dict that JSON writes as is (and TOML too, as long as no
parameter is set to ``None`` where its default is something else: a ``None``
equal to the default is left out, since loading restores it)::

    {"tokenslim": "0.1.0",
     "on_error": "raise",
     "steps": [{"name": "dedupe", "stage": "dedupe", "params": {"threshold": 0.8, ...}}, ...]}

``stage`` is a name in the stage registry (:mod:`tokenslim._registry`): the
built-ins, plus custom classes registered with :func:`tokenslim.register_stage`.
Every parameter is written, not just changed ones, so a saved pipeline keeps its
behaviour when a later release changes a default.
"""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from tokenslim._registry import stage_class, stage_key
from tokenslim.errors import ConfigError

if TYPE_CHECKING:
    from tokenslim._pipeline import Pipeline

__all__ = ["pipeline_to_config", "pipeline_from_config", "read_config"]

_STEP_KEYS = {"name", "stage", "params"}


def _plain(value: Any, where: str) -> Any:
    """``value`` as JSON-safe data (tuples become lists), or ConfigError naming ``where``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{where} = {value!r} cannot be saved (not a finite number)")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {k: _plain(v, f"{where}.{k}") for k, v in value.items()}
    raise ConfigError(
        f"{where} = {value!r} ({type(value).__name__}) cannot be saved in a config: "
        "only str, int, float, bool, None, lists and str-keyed dicts can"
    )


def _keyword_defaults(func: Any) -> dict[str, Any]:
    """Keyword-only parameter -> default (``inspect.Parameter.empty`` when required)."""
    return {
        p.name: p.default for p in inspect.signature(func).parameters.values() if p.kind is p.KEYWORD_ONLY
    }


def _settings(values: Mapping[str, Any], defaults: Mapping[str, Any], where: str) -> dict[str, Any]:
    """JSON-safe values, leaving out a ``None`` that is also the default."""
    return {
        k: _plain(v, f"{where}{k}")
        for k, v in values.items()
        if not (v is None and defaults.get(k, inspect.Parameter.empty) is None)
    }


def pipeline_to_config(pipeline: "Pipeline") -> dict[str, Any]:
    """The config of ``pipeline`` (see :meth:`Pipeline.to_config`)."""
    from tokenslim import __version__

    pipeline.validate()
    defaults = _keyword_defaults(type(pipeline).__init__)
    settings = {k: getattr(pipeline, k) for k in defaults}
    if settings.get("tokenizer") is not None and not isinstance(settings["tokenizer"], str):
        raise ConfigError(
            f"tokenizer {settings['tokenizer']!r} cannot be saved in a config; "
            "give the pipeline a tokenizer name (\"cl100k_base\", \"hf:<folder>\") instead of an object"
        )
    steps = []
    for name, stage in pipeline.named_steps.items():
        key = stage_key(stage)
        params = stage.get_params() if hasattr(stage, "get_params") else {}
        stage_defaults = _keyword_defaults(type(stage).__init__)
        steps.append({"name": name, "stage": key, "params": _settings(params, stage_defaults, f"{name}.")})
    return {"tokenslim": __version__, **_settings(settings, defaults, ""), "steps": steps}


def pipeline_from_config(config: Mapping[str, Any], cls: "type[Pipeline]") -> "Pipeline":
    """Build a pipeline of class ``cls`` from ``config`` (see :meth:`Pipeline.from_config`)."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"a pipeline config is a dict, got {type(config).__name__}")
    allowed = {"tokenslim", "steps", *_keyword_defaults(cls.__init__)}
    unknown = set(config) - allowed
    if unknown:
        raise ConfigError(f"unknown pipeline config keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    raw_steps = config.get("steps")
    if not isinstance(raw_steps, list):
        raise ConfigError(f"config 'steps' must be a list of {{'stage', 'name', 'params'}} dicts, got {raw_steps!r:.80}")
    steps: list[Any] = []
    for i, step in enumerate(raw_steps):
        if not isinstance(step, Mapping) or "stage" not in step or set(step) - _STEP_KEYS:
            raise ConfigError(f"config steps[{i}] must be a dict with 'stage' and optional 'name', 'params'; got {step!r:.120}")
        klass = stage_class(step["stage"])
        params = step.get("params") or {}
        if not isinstance(params, Mapping):
            raise ConfigError(f"config steps[{i}].params must be a dict, got {params!r:.80}")
        try:
            stage = klass(**params)
        except TypeError as exc:
            raise ConfigError(f"config steps[{i}] ({step['stage']}): {exc}") from None
        name = step.get("name")
        steps.append(stage if name in (None, getattr(stage, "name", None)) else (name, stage))
    settings = {k: v for k, v in config.items() if k not in ("tokenslim", "steps")}
    pipeline = cls(steps, **settings)
    pipeline.validate()
    return pipeline


def read_config(path: str | Path) -> dict[str, Any]:
    """Read a pipeline config from a ``.json`` or ``.toml`` file.

    Raises:
        ConfigError: the file is missing, unreadable, or not a JSON/TOML object.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read pipeline config {str(p)!r}: {exc.strerror or exc}") from None
    try:
        if p.suffix.lower() == ".toml":
            try:
                import tomllib
            except ImportError:  # Python 3.10
                raise ConfigError("TOML pipeline configs need Python 3.11+ (tomllib); use JSON") from None
            data: Any = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        raise ConfigError(f"pipeline config {str(p)!r} is not valid {p.suffix.lstrip('.').upper() or 'JSON'}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"pipeline config {str(p)!r} must hold an object, got {type(data).__name__}")
    return data
