"""``acpc-match --exact`` (issue 18, item 5): the exact result of each pair in a small
no-limit game equals what played duplicate matches estimate, within their interval; known
results come out exactly; what cannot be valued exactly is a one-line error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.acpc.gamefiles import load_game
from agent.data import strategy_path
from evaluation.estimators.exact import ExactArena, Player
from tests.support import ROOT

GAME = "leduc.nolimit.2p.game"
FILE = "leduc.nolimit.2p.fcpa.strat"


def _match(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evaluation.cli", "--game", GAME, *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_exact_equals_the_played_matches_within_their_interval(tmp_path: Path) -> None:
    variants = ["-v", f"pshar={FILE},mapping=rand-pshar", "-v", "rnd=builtin:random",
                "-v", "fold=builtin:fold", "-v", "mr=builtin:minraise",
                "--pair", "pshar:rnd", "--pair", "fold:mr"]
    played = _match(*variants, "--hands", "1000", "--matches", "4", "--transport", "inproc",
                    "--workers", "1", "--run-dir", str(tmp_path / "run"),
                    "--json", str(tmp_path / "p.json"), "--quiet")
    assert played.returncode == 0, played.stderr
    exact = _match(*variants, "--exact", "--json", str(tmp_path / "e.json"))
    assert exact.returncode == 0, exact.stderr
    sampled = {(r["variant"], r["opponents"][0]): r["raw"]
               for r in json.loads((tmp_path / "p.json").read_text())["results"]}
    rows = json.loads((tmp_path / "e.json").read_text())["exact"]
    assert len(rows) == 4
    for row in rows:
        other = next(n for n in row["group"] if n != row["variant"])
        raw = sampled[(row["variant"], other)]
        eps = 1e-9  # float summation of an exact -1000
        assert raw["ci_low"] - eps <= row["mbb_per_hand"] <= raw["ci_high"] + eps, (row, raw)
    by = {r["variant"]: r for r in rows}
    # the folder loses its ante every hand, whoever acts first
    assert by["fold"]["chips_per_hand"] == pytest.approx(-1.0)
    assert by["fold"]["per_rotation"] == pytest.approx([-1.0, -1.0])
    assert by["pshar"]["chips_per_hand"] == pytest.approx(-by["rnd"]["chips_per_hand"])


def test_known_values() -> None:
    arena = ExactArena(load_game(GAME))
    call, rnd = Player("call", "builtin:call"), Player("rnd", "builtin:random")
    pshar = Player("pshar", str(strategy_path(FILE)), mapping="rand-pshar")
    # the random player never faces a bet from the caller, so never folds: even
    assert arena.value(call, rnd)[0] == pytest.approx(0.0, abs=1e-12)
    # the same strategy in both seats: the two seat values cancel, each is the game's
    # value of the file's abstract equilibrium played without translation
    mean, v0, v1 = arena.value(pshar, pshar)
    assert mean == pytest.approx(0.0, abs=1e-12) and v0 == pytest.approx(-v1)
    assert v0 == pytest.approx(-0.06556, abs=1e-4)  # the manifest's value p0 of the file


def test_random_behaviour_is_the_policys() -> None:
    arena = ExactArena(load_game(GAME))
    table = arena.behaviour(Player("rnd", "builtin:random"), 0)
    real = arena.real
    k = int(real.num_actions[0])
    row = table[int(real.offset[0]) : int(real.offset[0]) + k]
    kinds = [a.kind.name for a in real.tree.nodes[0].actions]
    assert kinds[0] == "CALL" and row.sum() == pytest.approx(1.0)
    assert row[0] == pytest.approx(0.47 / 0.94)  # no fold at the root: call and raise
    assert np.allclose(row[1:], 0.5 / (k - 1))  # raise-to uniform over the legal bounds


@pytest.mark.parametrize(("args", "code", "message"), [
    (["-v", "a=builtin:call", "-v", "b=builtin:fold", "--exact", "--hands", "10"], 2,
     "--hands apply to played matches, not to --exact"),
    (["-v", "a=builtin:call", "-v", f"b=cmd={sys.executable} x.py", "--exact"], 1,
     "an external command or a bot cannot be valued exactly"),
    (["-v", "a=builtin:call", "-v", "b=builtin:equity", "--exact"], 1, "builtin:equity"),
])
def test_what_cannot_be_valued_is_one_line(args: list[str], code: int, message: str) -> None:
    done = _match(*args)
    assert done.returncode == code, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert message in last and last.startswith("acpc-match: error: ")
    if code == 1:
        assert done.stderr.count("\n") == 1, done.stderr


def test_big_games_are_refused() -> None:
    for game in ("holdem.nolimit.2p.reverse_blinds.game", "holdem.limit.2p.reverse_blinds.game"):
        done = subprocess.run([sys.executable, "-m", "evaluation.cli", "--game", game,
                               "-v", "a=builtin:call", "-v", "b=builtin:fold", "--exact"],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert "expected" in done.stderr


def test_limit_and_three_player_games(tmp_path: Path) -> None:
    """Limit Leduc: the bundled file against itself is worth its game value in each
    position; three-player Kuhn: every rotation of the group is valued and the three
    variants' results sum to 0 (zero sum), equal to the played matches within their
    interval."""
    leduc = load_game("leduc.limit.2p.game")
    arena = ExactArena(leduc)
    file = Player("f", str(strategy_path("leduc.limit.2p.strat")))
    v0, v1 = arena.group_values([file, file])[0]
    assert v0 == pytest.approx(-0.08561, abs=1e-4) and v1 == pytest.approx(-v0)
    kuhn = ["--game", "kuhn.limit.3p.game", "-v", "s=kuhn.limit.3p.strat",
            "-v", "c=builtin:call", "-v", "r=builtin:random"]
    exact = subprocess.run([sys.executable, "-m", "evaluation.cli", *kuhn, "--exact",
                            "--json", str(tmp_path / "e.json")],
                           capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert exact.returncode == 0, exact.stderr
    rows = json.loads((tmp_path / "e.json").read_text())["exact"]
    assert len(rows) == 3 and all(len(r["per_rotation"]) == 3 for r in rows)
    assert sum(r["chips_per_hand"] for r in rows) == pytest.approx(0.0, abs=1e-12)
    played = subprocess.run([sys.executable, "-m", "evaluation.cli", *kuhn, "--hands",
                             "1000", "--matches", "4", "--transport", "inproc",
                             "--workers", "1", "--run-dir",
                             str(tmp_path / "run"), "--json", str(tmp_path / "p.json"),
                             "--quiet"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert played.returncode == 0, played.stderr
    sampled = {r["variant"]: r["raw"]
               for r in json.loads((tmp_path / "p.json").read_text())["results"]}
    for row in rows:
        raw = sampled[row["variant"]]
        assert raw["ci_low"] <= row["mbb_per_hand"] <= raw["ci_high"], (row, raw)
