"""``python tests/support/plain_python.py OUT.json RUNS.json``: for each ``[FILE, ARG, ...]``
of ``RUNS.json``, run ``pytest FILE ARG ...`` (one pytest session after another in this one
interpreter) and write each file's exit status, passed count and output tail to ``OUT.json``.
Run as a script, not as a module of :mod:`tests.support`: pytest must be imported before the
packages it rewrites (hypothesis).

Run by :func:`tests.support.run_without_jit` with ``NUMBA_DISABLE_JIT=1``: every kernel
module's plain-Python check in one process, so numpy, numba, the project and the hand
evaluator's tables (seconds to build without the JIT) are imported once, not once a file.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest


class _Count:
    """Counts the tests that passed in one session."""

    def __init__(self) -> None:
        self.passed = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.passed:
            self.passed += 1


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"expected OUT.json RUNS.json, got {argv!r}", file=sys.stderr)
        return 2
    out, runs = Path(argv[0]), json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    results: dict[str, dict[str, object]] = {}
    for file, *args in runs:
        count, text = _Count(), io.StringIO()
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            status = pytest.main([file, *args, "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
                                  "--no-header"], plugins=[count])
        results[file] = {"status": int(status), "passed": count.passed,
                         "output": text.getvalue()[-4000:]}
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
