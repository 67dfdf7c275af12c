"""``mypy --strict`` passes on the package and on a user's program written against its public API
(explicit re-exports: ``from tokenslim.stages import Dedupe`` type-checks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_on_package_and_public_api_usage(tmp_path):
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
           "tokenslim", str(ROOT / "tests" / "typing" / "public_api_usage.py")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Success" in proc.stdout
