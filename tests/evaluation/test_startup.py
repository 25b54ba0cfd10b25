"""A finished run re-run prints its stored table without loading any strategy: no numba,
no numpy, no agent started (the variants are checked deeply only when a match is left)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent.data import strategy_path
from tests.support import ROOT

STRAT = strategy_path("leduc.nolimit.2p.fcpa.strat")


def _argv(run_dir: Path) -> list[str]:
    return ["--no-exploitability", "--game", "leduc.nolimit.2p.game",
            "-v", f"a={STRAT},mapping=rand-pshar",
            "-v", f"b={STRAT},mapping=det-arith", "-v", "r=builtin:random", "--hands", "20",
            "--matches", "1", "--transport", "inproc", "--workers", "1", "--run-dir", str(run_dir)]


_PROBE = (
    "import contextlib, io, json, sys\n"
    "from evaluation.cli import main\n"
    "out, err = io.StringIO(), io.StringIO()\n"
    "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
    "    status = main(json.loads(sys.argv[1]))\n"
    "heavy = sorted(m for m in ('numpy', 'numba', 'msgpack', 'agent.policy') if m in sys.modules)\n"
    "print(json.dumps({'status': status, 'heavy': heavy, 'out': out.getvalue(),\n"
    "                  'err': err.getvalue()}))\n"
)


def _run(argv: list[str]) -> dict[str, object]:
    import json

    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_a_finished_run_reprints_its_table_without_loading_strategies(tmp_path: Path) -> None:
    first = _run(_argv(tmp_path / "run"))
    assert first["status"] == 0 and "numba" in first["heavy"]  # it played: strategies loaded
    again = _run(_argv(tmp_path / "run"))
    assert again["status"] == 0 and again["heavy"] == []
    assert again["out"] == first["out"]  # the same tables, from the store
    assert "which variant to ship" in str(again["out"])  # the default table's, kept too
    assert "hands/s" not in str(again["err"])  # nothing played
    # a-r, b-r and each file against builtin:offtree (a-b, exactly 0, is not played)
    assert "resumed: 8 of 8 matches were already stored" in str(again["err"])
    assert "0 played now" in str(again["err"])
    assert "resumed" not in str(first["err"])


def test_a_bad_variant_still_fails_before_playing(tmp_path: Path) -> None:
    argv = _argv(tmp_path / "run")
    argv[argv.index(f"b={STRAT},mapping=det-arith")] = "b=builtin:nope"
    result = _run(argv)
    assert result["status"] == 1
    assert "variant 'b': expected --strategy to be a file or one of" in str(result["err"])
