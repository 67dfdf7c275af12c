"""The tokenslim exception tree.

Every error tokenslim raises on purpose derives from :class:`TokenSlimError`, so
``except tokenslim.errors.TokenSlimError`` catches all of them::

    TokenSlimError
    ├── ConfigError (+ValueError)         bad parameters or step names
    ├── InputError (+ValueError)          malformed chunks, history, HTML
    │   └── InputTooLarge                 past a documented limit
    ├── BudgetExceeded                    system prompt + query alone exceed the budget
    ├── DeadlineExceeded                  a run's max_seconds passed with stages left (fail-closed)
    ├── StageError                        unexpected failure inside a stage; ``.stage``, ``__cause__``
    ├── TokenizerError                    a tokenizer could not be loaded or used
    ├── BackendError                      an LLM backend failed (dependency errors mapped here)
    │   ├── BackendUnavailable
    │   └── BackendTimeout
    └── MissingDependency (+ImportError)  an optional package is missing; names the pip extra

Messages say what was wrong, show the offending value and say what to do.
"""

from __future__ import annotations

__all__ = [
    "TokenSlimError",
    "ConfigError",
    "InputError",
    "InputTooLarge",
    "BudgetExceeded",
    "DeadlineExceeded",
    "StageError",
    "TokenizerError",
    "BackendError",
    "BackendUnavailable",
    "BackendTimeout",
    "MissingDependency",
]


class TokenSlimError(Exception):
    """Base class of every error tokenslim raises on purpose."""


class ConfigError(TokenSlimError, ValueError):
    """A stage or pipeline was given invalid parameters or step names."""


class InputError(TokenSlimError, ValueError):
    """Input (chunks, history, HTML, query) is malformed."""


class InputTooLarge(InputError):
    """Input exceeds a documented size limit and was refused up front."""


class BudgetExceeded(TokenSlimError):
    """The token budget cannot hold even the system prompt plus the query."""

    def __init__(self, message: str, *, required_tokens: int, max_tokens: int) -> None:
        super().__init__(message)
        self.required_tokens = required_tokens
        self.max_tokens = max_tokens


class DeadlineExceeded(TokenSlimError):
    """A run's ``max_seconds`` passed before its last stage (raised when fail-closed).

    ``stage`` names the first stage not run; ``max_seconds`` and ``elapsed_s`` give the
    deadline and the time spent when it was noticed.
    """

    def __init__(self, message: str, *, stage: str, max_seconds: float, elapsed_s: float) -> None:
        super().__init__(message)
        self.stage = stage
        self.max_seconds = max_seconds
        self.elapsed_s = elapsed_s


class StageError(TokenSlimError):
    """A stage failed unexpectedly; ``stage`` names it and ``__cause__`` holds the original."""

    def __init__(self, message: str, *, stage: str) -> None:
        super().__init__(message)
        self.stage = stage


class TokenizerError(TokenSlimError):
    """A tokenizer could not be loaded or failed to encode text."""


class BackendError(TokenSlimError):
    """An LLM backend failed."""


class BackendUnavailable(BackendError):
    """The backend (engine, server, model) could not be started or reached."""


class BackendTimeout(BackendError):
    """The backend did not answer within the configured time."""


class MissingDependency(TokenSlimError, ImportError):
    """An optional dependency is not installed; the message names the pip extra (or ``install``, how to get
    a dependency pip does not provide, such as the Chromium executable)."""

    def __init__(self, package: str, *, extra: str, feature: str, install: str | None = None) -> None:
        how = install or f"pip install 'tokenslim[{extra}]'"
        super().__init__(f"{feature} needs the package {package!r}, which is not installed. Install it with: {how}")
        self.package = package
        self.extra = extra
