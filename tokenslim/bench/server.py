"""Start a local OpenAI-compatible server (vLLM, llama-cpp-python...) for a benchmark run.

``tokenslim bench --backend openai`` talks to any such server; this module starts one on
loopback, waits until it answers, and stops it (with its children) afterwards. Used by
``benchmarks/bench_llama_cpp.py`` and the real-server tests, so both start servers the same way.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tokenslim.errors import BackendUnavailable

__all__ = ["LocalServer", "free_port", "serve"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class LocalServer:
    """A running server: its process, ``/v1`` base URL and log file."""

    process: subprocess.Popen[bytes]
    base_url: str
    log: Path


@contextmanager
def serve(
    cmd: Sequence[str],
    port: int,
    log: str | os.PathLike[str],
    *,
    health: str = "/health",
    timeout_s: float = 300.0,
    env: Mapping[str, str] | None = None,
) -> Iterator[LocalServer]:
    """Run ``cmd`` (a server listening on ``port``), yield once ``health`` answers 200, then stop it.

    Args:
        cmd: The server command line, e.g. ``[sys.executable, "-m", "llama_cpp.server", ...]``.
        port: The port ``cmd`` listens on (see :func:`free_port`).
        log: File that receives the server's stdout and stderr.
        health: Path polled until it answers 200 ("/health" for vLLM, "/v1/models" for llama.cpp).
        timeout_s: How long the server may take to come up.
        env: Environment for the server (default: this process's).

    Raises:
        BackendUnavailable: The server exited or did not answer within ``timeout_s``; the
            message carries the end of its log.
    """
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, env=None if env is None else dict(env))
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise BackendUnavailable(f"{cmd[0]} exited with {proc.returncode}:\n{_tail(log)}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{health}", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BackendUnavailable(f"server not answering {health} within {timeout_s:.0f} s:\n{_tail(log)}")
            time.sleep(1)
        yield LocalServer(proc, f"http://127.0.0.1:{port}/v1", log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(log: Path, chars: int = 3000) -> str:
    return log.read_text(errors="replace")[-chars:]
