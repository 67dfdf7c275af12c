"""tokenslim.bench.server: start a local server, wait for it, stop it; a dead server is a typed error."""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

import pytest

from tokenslim.bench.server import free_port, serve
from tokenslim.errors import BackendUnavailable


def test_serve_waits_for_health_and_stops_the_process(tmp_path: Path) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    with serve(cmd, port, tmp_path / "log" / "server.log", health="/", timeout_s=60) as server:
        assert server.base_url == f"http://127.0.0.1:{port}/v1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
            assert resp.status == 200
        assert server.process.poll() is None
    assert server.process.poll() is not None  # stopped on exit
    assert (tmp_path / "log" / "server.log").is_file()


def test_a_server_that_exits_raises_with_its_log(tmp_path: Path) -> None:
    cmd = [sys.executable, "-c", "import sys; print('port already taken'); sys.exit(3)"]
    with pytest.raises(BackendUnavailable, match="exited with 3(.|\n)*port already taken"):
        with serve(cmd, free_port(), tmp_path / "server.log", timeout_s=60):
            pass


def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    cmd = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(BackendUnavailable, match="within 2 s"):
        with serve(cmd, free_port(), tmp_path / "server.log", timeout_s=2):
            pass
