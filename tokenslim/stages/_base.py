"""The Stage protocol and BaseStage (parameters, repr, validation)."""

from __future__ import annotations

import abc
import functools
import inspect
import re
from typing import Any, Protocol, runtime_checkable

from tokenslim._result import Result
from tokenslim.errors import ConfigError

__all__ = ["Stage", "BaseStage"]


@runtime_checkable
class Stage(Protocol):
    """Anything with a ``name`` that takes a :class:`Result` and returns one."""

    name: str

    def __call__(self, result: Result, /) -> Result: ...


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


class BaseStage(abc.ABC):
    """Base class for tokenslim stages, in the manner of scikit-learn estimators.

    * ``__init__`` takes keyword-only parameters and stores them unchanged
      (no I/O, no model loads). Its signature is the one declaration of the
      parameters: names, types and defaults; ``get_params``/``set_params``,
      ``repr`` and :meth:`tokenslim.Pipeline.to_config` all read it.
    * :meth:`validate` checks the parameters (raises :class:`ConfigError`). It runs
      when the stage is built (``CompressDocuments(ratio=3)`` raises at once), after
      every :meth:`set_params`, and before every call (attributes can be assigned
      directly).
    * ``__call__(result)`` runs :meth:`apply`, which records every removal on the
      result and never mutates ``self``, so one instance can serve many threads.
    """

    #: Default step name (snake_case of the class name).
    name: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = _snake(cls.__name__)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_tokenslim_validates", False):
            cls.__init__ = _validating(init)  # type: ignore[method-assign]

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind is p.KEYWORD_ONLY]

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters and their current values."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params: Any) -> "BaseStage":
        """Change parameters and validate them; returns self.

        Raises:
            ConfigError: an unknown name or an invalid value (the stage keeps its old values).
        """
        valid = set(self._param_names())
        for k in params:
            if k not in valid:
                raise ConfigError(f"{type(self).__name__} has no parameter {k!r}; valid: {sorted(valid)}")
        old = {k: getattr(self, k) for k in params}
        for k, v in params.items():
            setattr(self, k, v)
        try:
            self.validate()
        except ConfigError:
            for k, v in old.items():
                setattr(self, k, v)
            raise
        return self

    def validate(self) -> None:
        """Raise :class:`ConfigError` if the parameters cannot work. Override to add checks."""

    def __call__(self, result: Result, /) -> Result:
        self.validate()  # also when called alone, outside a Pipeline: bad parameters never run
        outer = result.current_stage
        if outer is None:
            result.current_stage = self.name
        try:
            out = self.apply(result)
        finally:
            if outer is None:
                result.current_stage = None
        return out

    def uses_embeddings(self) -> bool:
        """Whether :meth:`apply` asks ``result.embeddings`` for rows with these parameters.

        :meth:`tokenslim.Pipeline.run_batch` looks ahead at such a stage for every request
        and embeds all their texts in one call before running it. Default False; a custom
        stage that embeds through ``result.embeddings`` returns True to be batched too.
        """
        return False

    @abc.abstractmethod
    def apply(self, result: Result) -> Result:
        """Transform ``result`` (record every removal with ``result.drop``/``result.shorten``)."""

    def __repr__(self) -> str:
        params = self.get_params()
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values() if p.name in params
        }
        shown = [f"{k}={v!r}" for k, v in params.items() if defaults.get(k, inspect.Parameter.empty) is not v and defaults.get(k) != v]
        return f"{type(self).__name__}({', '.join(shown)})"


def _validating(init: Any) -> Any:
    """Wrap a stage's ``__init__`` so the finished object validates its parameters
    (only the most derived ``__init__`` does, once every parameter is stored)."""

    @functools.wraps(init)
    def __init__(self: BaseStage, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self).__init__ is __init__:
            self.validate()

    __init__._tokenslim_validates = True  # type: ignore[attr-defined]
    return __init__


def check(condition: bool, stage: BaseStage, message: str) -> None:
    """Raise ConfigError naming the stage when ``condition`` is false."""
    if not condition:
        raise ConfigError(f"{type(stage).__name__}: {message}")


def check_str_list(value: object, stage: BaseStage, name: str) -> None:
    """Raise ConfigError unless ``value`` is a list or tuple of str (a lone str is refused:
    it would silently be read as a sequence of characters)."""
    check(
        isinstance(value, (list, tuple)) and all(isinstance(k, str) for k in value),
        stage,
        f"{name} must be a list or tuple of str, got {value!r}",
    )
