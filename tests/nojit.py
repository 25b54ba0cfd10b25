"""Run some tests of a file again in a fresh interpreter with ``NUMBA_DISABLE_JIT=1``.

Every numba kernel module's tests call :func:`run_without_jit` from one test, so the
kernels' plain-Python semantics (the oracle of what the compiled code must do) are checked
too, on the tests whose names contain ``small``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: True when this interpreter runs with the JIT disabled.
NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def run_without_jit(*files: str | Path, keyword: str = "small") -> None:
    """Run ``pytest -k keyword`` on ``files`` with the JIT disabled; assert it passed."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    command = [sys.executable, "-m", "pytest", *map(str, files), "-k", keyword, "-q", "-x",
               "-p", "no:cacheprovider", "--no-header"]  # fmt: skip
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " passed" in out.stdout and " failed" not in out.stdout
