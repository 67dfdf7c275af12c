"""Stage registry: a stage name in a saved config -> the stage class that builds it.

A plain dict, nothing registered at import time beyond the built-in names (which
are resolved lazily, so ``import tokenslim`` imports no stage module). Custom
stages join with :func:`register_stage`, after which pipelines holding them
round-trip through :meth:`Pipeline.to_config` / :meth:`Pipeline.from_config`,
the framework adapters' save/load and ``tokenslim bench --pipeline``.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable, TypeVar, overload

from tokenslim.errors import ConfigError

__all__ = ["register_stage", "registered_stages", "stage_class", "stage_key"]

T = TypeVar("T", bound=type)

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")

# Built-in stages as "module:Class", imported on first lookup.
_BUILTIN: dict[str, str] = {
    "strip_html": "tokenslim.stages.strip_html:StripHTML",
    "dedupe": "tokenslim.stages.dedupe:Dedupe",
    "trim_top_k": "tokenslim.stages.trim_top_k:TrimTopK",
    "reduce_structured": "tokenslim.stages.reduce_structured:ReduceStructured",
    "compress_documents": "tokenslim.stages.compress_documents:CompressDocuments",
    "summarize_conversation": "tokenslim.stages.summarize_conversation:SummarizeConversation",
    "budget": "tokenslim.stages.budget:Budget",
    "reorder": "tokenslim.stages.reorder:Reorder",
    "flag_instructions": "tokenslim.stages.flag_instructions:FlagInstructions",
}
_custom: dict[str, type] = {}


@overload
def register_stage(cls: T, /, *, name: str | None = None) -> T: ...
@overload
def register_stage(cls: None = None, /, *, name: str | None = None) -> Callable[[T], T]: ...
def register_stage(cls: T | None = None, /, *, name: str | None = None) -> T | Callable[[T], T]:
    """Register a custom stage class so pipelines holding it can be saved and loaded.

    Use as a decorator (``@register_stage`` or ``@register_stage(name="my_stage")``)
    or call it (``register_stage(MyStage)``). The class is rebuilt from a config as
    ``cls(**params)``, with ``params`` from its ``get_params()`` (a
    :class:`~tokenslim.stages.BaseStage` subclass has one; a class without it is
    built with no arguments).

    Args:
        cls: The stage class.
        name: Its name in configs (snake_case); default the class's ``name``
            attribute, else the lower-cased class name.

    Returns:
        The class, unchanged.

    Raises:
        ConfigError: the name is not snake_case, or is taken by another class
            (built-in names cannot be re-registered).

    Examples:
        >>> import tokenslim
        >>> from tokenslim.stages import BaseStage
        >>> @tokenslim.register_stage
        ... class Shout(BaseStage):
        ...     def apply(self, result):
        ...         result.query = result.query.upper()
        ...         return result
        >>> tokenslim.Pipeline([Shout()]).to_config()["steps"]
        [{'name': 'shout', 'stage': 'shout', 'params': {}}]
    """

    def add(klass: T) -> T:
        if not isinstance(klass, type):
            raise ConfigError(f"register_stage takes a class, got {klass!r}")
        key = name or getattr(klass, "name", "") or klass.__name__.lower()
        if not isinstance(key, str) or not _NAME_RE.match(key) or "__" in key:
            raise ConfigError(f"stage name {key!r} must be snake_case without '__'; pass name=...")
        if key in _BUILTIN and not _is_builtin(key, klass):
            raise ConfigError(f"{key!r} is a built-in stage name; register {klass.__name__} under another name")
        other = _custom.get(key)
        if other is not None and _path(other) != _path(klass):
            raise ConfigError(f"stage name {key!r} is already registered to {_path(other)}")
        _custom[key] = klass
        return klass

    return add if cls is None else add(cls)


def _path(klass: type) -> str:
    return f"{klass.__module__}:{klass.__qualname__}"


def _is_builtin(key: str, klass: type) -> bool:
    """Whether ``klass`` is the built-in stage ``key`` (compared by identity, importing
    only a module that defines a class of that name)."""
    return _BUILTIN[key].endswith(f":{klass.__name__}") and stage_class(key) is klass


def registered_stages() -> dict[str, str]:
    """Every stage name a config may use -> ``"module:Class"`` (built-ins first)."""
    return {**_BUILTIN, **{k: _path(v) for k, v in _custom.items()}}


def stage_class(key: str) -> type:
    """The class registered under ``key``.

    Raises:
        ConfigError: no stage is registered under that name.
    """
    if key in _BUILTIN:
        module, _, attr = _BUILTIN[key].partition(":")
        klass: type = getattr(importlib.import_module(module), attr)
        return klass
    if key in _custom:
        return _custom[key]
    raise ConfigError(
        f"unknown stage {key!r} in config; known: {sorted(registered_stages())}. "
        "A custom stage must be registered (tokenslim.register_stage) before the config is loaded."
    )


def stage_key(stage: Any) -> str:
    """The registered name of ``stage``'s class.

    Raises:
        ConfigError: the class is not registered (so it could not be rebuilt).
    """
    klass = type(stage)
    for key in _BUILTIN:
        if _is_builtin(key, klass):
            return key
    for key, target in _custom.items():
        if target is klass:
            return key
    raise ConfigError(
        f"stage {klass.__name__} ({_path(klass)}) is not registered, so it cannot be saved; "
        "decorate its class with @tokenslim.register_stage"
    )
