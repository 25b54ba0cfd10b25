"""A resumed match (``-T``, killed, then the same command with ``-a``) verifies, as the
reference writes it: the reference's own resumed log (with a hand it completed just before
the kill and never logged), and a match of the project's dealer killed and resumed for real.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.acpc.gamefiles import bundled_game_path, load_game
from evaluation.logtool import main, read_transactions, verify_log
from tests.support import LOGS, ROOT

GAME = "holdem.nolimit.3p.game"
CLIENT = ROOT / "scripts" / "call_client.py"


def test_the_reference_resumed_log_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    # Made by the reference dealer: 400 hands, killed after hand 386's last action reached
    # the transaction file but before its STATE line reached the log; resumed with -a,
    # which wrote the header again and went on with hand 387.
    lines = (LOGS / "resumed3.log").read_text().splitlines()
    assert lines[390] == lines[0] and lines[390:394] == lines[:4]
    assert lines[389].startswith("STATE:385:") and lines[394].startswith("STATE:387:")
    assert main(["verify", GAME, str(LOGS / "resumed3.log")]) == 0  # its .tlog is beside it
    out = capsys.readouterr().out
    assert "OK (400 hands, byte-identical; hand(s) 386 completed before a restart" in out
    assert "not re-derived" not in out
    result = verify_log(load_game(GAME), LOGS / "resumed3.log")
    assert result.ok and result.unlogged == (386,) and result.score_checked


def test_the_unlogged_hand_is_checked_against_the_transaction_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "resumed3.log"
    log.write_bytes((LOGS / "resumed3.log").read_bytes())
    tlog = (LOGS / "resumed3.tlog").read_text().splitlines()
    hand386 = [i for i, line in enumerate(tlog) if line.split()[1] == "386"]
    # the hand was checked down by callers; a fold first would end it 11 actions early
    tlog[hand386[0]] = "f" + tlog[hand386[0]][1:]
    (tmp_path / "resumed3.tlog").write_text("\n".join(tlog) + "\n")
    assert main(["verify", GAME, str(log)]) == 1
    assert "resumed3.log:395: the transaction file's hand 386 is illegal" in \
        capsys.readouterr().err
    # the hand as played but one action short: it does not end
    tlog[hand386[0]] = "c" + tlog[hand386[0]][1:]
    del tlog[hand386[-1]]
    (tmp_path / "resumed3.tlog").write_text("\n".join(tlog) + "\n")
    assert main(["verify", GAME, str(log)]) == 1
    assert "hand 386 does not end" in capsys.readouterr().err
    (tmp_path / "resumed3.tlog").unlink()  # without it: the STATE lines only
    assert main(["verify", GAME, str(log)]) == 0
    assert "give --tlog MATCH.tlog" in capsys.readouterr().out


def test_read_transactions_rejects_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "x.tlog"
    path.write_text("c 0 1.0 2.0\nnot a line\n")
    with pytest.raises(ValueError, match=r"x.tlog:2: expected '<action> <hand>"):
        read_transactions(path, load_game(GAME))


def _start(args: list[str], cwd: Path
           ) -> tuple[subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]:
    dealer = subprocess.Popen([sys.executable, "-m", "dealer.cli", *args], cwd=cwd,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert dealer.stdout is not None
    ports = dealer.stdout.readline().split()
    clients = [subprocess.Popen([sys.executable, str(CLIENT), GAME, "127.0.0.1", p.decode()],
                                cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for p in ports]
    return dealer, clients


def _states(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.startswith("STATE:"))


def test_our_dealer_killed_and_resumed_writes_a_log_that_verifies(tmp_path: Path) -> None:
    args = ["m3", str(bundled_game_path(GAME)), "3000", "7", "A", "B", "C", "-T", "-q"]
    dealer, clients = _start(args, tmp_path)
    log = tmp_path / "m3.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or _states(log) < 200):
        time.sleep(0.05)
    dealer.send_signal(signal.SIGKILL)
    dealer.wait(timeout=10)
    for c in clients:
        c.wait(timeout=10)
    killed_at = _states(log)
    assert 200 <= killed_at < 3000, killed_at
    dealer, clients = _start([*args, "-a"], tmp_path)
    assert dealer.wait(timeout=120) == 0
    for c in clients:
        c.wait(timeout=10)
    lines = log.read_text().splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("# name/game/hands/seed")]
    assert len(headers) == 2, headers  # written again by the restart, like the reference
    result = verify_log(load_game(GAME), log)
    assert result.ok, result.mismatch
    assert result.score_checked


@pytest.mark.parametrize("fixed", [True, False])
def test_seats_are_inferred_past_a_restart_right_after_hand_0(tmp_path: Path,
                                                              fixed: bool) -> None:
    """A match resumed right after hand 0 has the restart's header where hand 1 would be:
    verify infers fixed (``-f``) or rotating seats from the next STATE lines, not line 6."""
    args = ["m", str(bundled_game_path(GAME)), "12", "5", "A", "B", "C", "-q"]
    dealer, clients = _start([*args, "-f"] if fixed else args, tmp_path)
    assert dealer.wait(timeout=120) == 0
    for c in clients:
        c.wait(timeout=10)
    lines = (tmp_path / "m.log").read_text().splitlines()
    assert lines[5].startswith("STATE:1:") and lines[4].startswith("STATE:0:")
    resumed = [*lines[:5], *lines[:4], *lines[5:]]  # the restart's header after hand 0
    (tmp_path / "r.log").write_text("\n".join(resumed) + "\n")
    result = verify_log(load_game(GAME), tmp_path / "r.log")
    assert result.ok, result.mismatch
    # told the other way, it does not verify: the inference matters
    assert not verify_log(load_game(GAME), tmp_path / "r.log", fixed_seats=not fixed).ok
