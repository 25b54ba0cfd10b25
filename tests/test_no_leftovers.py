"""No tracebacks, no leftovers, no silent stretches (issue 32); each test failed on main.

* Ctrl-C on a playing ``acpc-agent``: one line, status 130 (main: 35 lines of
  CancelledError/KeyboardInterrupt).
* A network error names the host and port (main: ``[Errno 111] Connection refused``).
* A successful ``solve`` leaves no ``NAME.ckpt.npz`` (main: always), and its progress ends on
  the exploitability its final line reports (main: a note seconds old, or none).
* A failed ``acpc-match`` removes the run directory it made when no match finished (main:
  left it, unsaid).
* ``acpc-log phh --out`` makes a missing directory as every ``--out`` and ``--json`` does
  (main: refused).
* ``translation best-size`` reports within a stack (main: silent for the last 39 s).
* The deprecated ``jobs`` key of a ``--variants`` file is read as ``workers``, with a warning.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent import cli as agent_cli
from evaluation import cli as match_cli
from evaluation import logtool
from evaluation.match.variants import load_toml
from strategies import cli as strategy_cli
from strategies.measure.translation import lab
from tests.support import LOGS, ROOT


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ctrl_c_on_a_playing_agent_is_one_line_and_130() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # as from a terminal: SIGINT handled even if this run was started in the background
        # by a shell, whose children inherit SIGINT ignored (the agent honours that)
        terminal = ("import runpy, signal; signal.signal(signal.SIGINT, "
                    "signal.default_int_handler); runpy.run_module('agent.cli', "
                    "run_name='__main__', alter_sys=True)")
        with subprocess.Popen(
                [sys.executable, "-c", terminal, "leduc.limit.2p.game", "127.0.0.1",
                 str(port), "--strategy", "builtin:call"], cwd=ROOT, env=env,
                stderr=subprocess.PIPE, text=True) as agent:
            server.settimeout(60)
            conn, _ = server.accept()
            with conn:
                assert conn.recv(64).startswith(b"VERSION:")  # connected, waiting to play
                time.sleep(0.5)  # past the connection's set-up: the agent waits for a state
                agent.send_signal(signal.SIGINT)
                _, err = agent.communicate(timeout=60)
    assert (agent.returncode, err) == (130, "acpc-agent: interrupted (Ctrl-C)\n")


def test_network_errors_name_host_and_port(capfd: pytest.CaptureFixture[str]) -> None:
    port = _closed_port()
    assert agent_cli.main(["leduc.limit.2p.game", "127.0.0.1", str(port), "--strategy",
                           "builtin:call", "--event-loop", "asyncio"]) == 1
    err = capfd.readouterr().err
    assert err.startswith(f"acpc-agent: error: could not connect to the dealer at "
                          f"127.0.0.1:{port}: ") and err.count("\n") == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        dealer = subprocess.run([sys.executable, "-m", "dealer.cli", "m",
                                 "leduc.limit.2p.game", "1", "1", "a", "b", "-l", "-p",
                                 f"{busy},0"], cwd=ROOT, capture_output=True, text=True,
                                timeout=60)
    assert dealer.returncode == 1
    assert dealer.stderr.startswith(f"ERROR: could not create listen socket on "
                                    f"127.0.0.1:{busy}: ")


def test_a_finished_solve_leaves_only_its_file_and_its_bar_ends_on_the_final_figure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert strategy_cli.main(["solve", "--recipe", "kuhn.limit.3p", "--iterations", "300",
                              "--out", "k.strat"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.strat"]
    out, err = capsys.readouterr()
    final = float(re.search(r"nash_conv (\S+) chips/hand", out).group(1))  # type: ignore[union-attr]
    last = [line for line in err.splitlines() if "iteration " in line][-1]
    assert last.startswith("acpc-strategy: iteration 300/300 it")
    assert last.endswith(f", nash_conv {final:.3g}"), (last, final)


def test_a_failed_match_removes_the_run_directory_it_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "runs" / "r"
    assert match_cli.main(["-v", "a=cmd=false", "-v", "b=builtin:call", "--game",
                           "leduc.limit.2p.game", "--hands", "4", "--matches", "1",
                           "--workers", "1", "--run-dir", str(run_dir), "--quiet"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert not run_dir.exists()
    assert err[-1].startswith("acpc-match: error: "), err  # the error ends it: nothing left
    assert not any("run directory" in line for line in err), err


def test_phh_out_makes_a_missing_directory(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    lines = (LOGS / "nl1000.log").read_text().splitlines(keepends=True)
    log = tmp_path / "short.log"
    log.write_text("".join(lines[:7]))
    out = tmp_path / "new" / "dir" / "short.phhs"
    assert logtool.main(["phh", "holdem.nolimit.2p.reverse_blinds.game", str(log),
                         "--out", str(out)]) == 0
    assert out.read_text().count("[") >= 1
    assert "acpc-log: 3 hands of the log" in capsys.readouterr().err


def test_best_size_reports_within_a_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab, "PROGRESS_SECONDS", 0.0)
    lines: list[str] = []
    rows = lab.best_sizes([1.0], ["det-arith"], iterations=20, progress=lines.append)
    assert len(rows) == 1
    inner = [line for line in lines if re.search(r"stack 1: \d+/\d+ sizes", line)]
    assert inner and inner[0].startswith("best-size: stack 1: 1/")
    assert lines[-1].startswith("best-size: stack 1: ") and "sizes in" in lines[-1]


def test_the_jobs_key_is_read_as_workers_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.toml"
    path.write_text('jobs = 3\n[variants]\na = "builtin:call"\nb = "builtin:fold"\n')
    _, settings = load_toml(path)
    assert settings["workers"] == 3 and "jobs" not in settings
    assert capsys.readouterr().err == (f"acpc-match: warning: {path}: jobs is deprecated "
                                       f"(kept for one release), use workers\n")
