"""Helpers shared by the test packages (one place; test files never import each other).

* Paths: :data:`ROOT`, :data:`DATA`, :data:`LOGS` and :data:`REFERENCE_LOGS` (logs made by
  the real reference dealer, with the game each was played in).
* :func:`run_without_jit`: re-run some tests of a file with ``NUMBA_DISABLE_JIT=1``, so every
  kernel's plain-Python semantics are checked too; :data:`NO_JIT` tells a test it runs so.
* Rules-engine helpers: :func:`perft` (decision nodes and hand ends under a state),
  :func:`random_playout` (a random legal hand), :func:`games` (a hypothesis strategy
  drawing valid game definitions).
* :mod:`tests.support.dealer_harness` (the dealer over loopback, scripted clients) and
  :mod:`tests.support.cfr_oracle` (the game as the slow solver oracles see it).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import strategies as st

from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.gamedef import INT32_MAX, BettingType, Game

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""
DATA = ROOT / "tests" / "data"
LOGS = DATA / "logs"

# reference log -> the game it was played in (see tests/data/logs and docs/protocol.md)
REFERENCE_LOGS = {
    "nl1000.log": "holdem.nolimit.2p.reverse_blinds.game",
    "dupA.log": "holdem.nolimit.2p.reverse_blinds.game",
    "dupB.log": "holdem.nolimit.2p.reverse_blinds.game",
    "lim2p_1000.log": "holdem.limit.2p.reverse_blinds.game",
    "nl3p_1000.log": "holdem.nolimit.3p.game",
    "lim3p_1000.log": "holdem.limit.3p.game",
    "kuhn3p_1000.log": "kuhn.limit.3p.game",
    "leduc_1000.log": "leduc.limit.2p.game",
    "royal_1000.log": "royal.nolimit.2p.game",
    "limit_short_raise.log": "lim4p_stack.game",
}

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
"""True when this interpreter runs with the JIT disabled."""


def run_without_jit(*files: str | Path, keyword: str = "small") -> None:
    """Run ``pytest -k keyword`` on ``files`` with the JIT disabled, in one process (``-n 0``:
    not the configured ``-n auto``, whose extra workers would only import and collect);
    assert it passed."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    command = [sys.executable, "-m", "pytest", *map(str, files), "-k", keyword, "-q", "-x",
               "-n", "0", "-p", "no:cacheprovider", "--no-header"]  # fmt: skip
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " passed" in out.stdout and " failed" not in out.stdout


# --------------------------------------------------------------------------- project modules

PACKAGES = ("agent", "dealer", "jobs", "strategies", "evaluation")


def project_modules() -> list[str]:
    """Every module of the project's packages, by dotted name, sorted by path."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append(".".join(parts))
    return found


def module_source(module: str) -> Path:
    """The source file of a project module."""
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


# --------------------------------------------------------------------------- rules engine


def r(n: int) -> Action:
    """A raise to ``n``."""
    return Action(ActionKind.RAISE, n)


_ACTIONS = {ActionKind.FOLD: FOLD, ActionKind.CALL: CALL, ActionKind.RAISE: LIMIT_RAISE}


def perft(state: BettingState, only_round: int | None = None) -> tuple[int, int]:
    decisions = ends = 0
    todo = [state]
    while todo:
        s = todo.pop()
        if s.finished or (only_round is not None and s.round > only_round):
            ends += 1
            continue
        decisions += 1
        todo.extend(s.apply(_ACTIONS[k]) for k in s.legal_actions())
    return decisions, ends


def random_playout(game: Game, rng: random.Random) -> tuple[BettingState, int]:
    s = BettingState.initial(game)
    steps = 0
    limit = game.num_rounds * 64 + 1
    while not s.finished:
        assert steps < limit, "a hand must end within 64 actions per round"
        kinds = s.legal_actions()
        assert kinds and ActionKind.CALL in kinds
        kind = rng.choice(kinds)
        if kind is ActionKind.RAISE:
            bounds = s.raise_bounds()
            assert bounds is not None
            lo, hi = bounds
            if game.is_nolimit:
                to = rng.choice([lo, hi, rng.randint(lo, hi)])
                action = r(to)
            else:
                action = LIMIT_RAISE
        else:
            action = FOLD if kind is ActionKind.FOLD else CALL
        before = s
        s = s.apply(action)
        for p in range(game.num_players):
            assert before.spent[p] <= s.spent[p] <= game.stack[p]
        steps += 1
    return s, steps


@st.composite
def games(draw: st.DrawFn) -> Game:
    n = draw(st.integers(2, 10))
    rounds = draw(st.integers(1, 4))
    nolimit = draw(st.booleans())
    hole = draw(st.integers(1, 3))
    suits = draw(st.integers(1, 4))
    ranks = draw(st.integers(1, 13))
    room = suits * ranks - n * hole
    if room < 0:
        suits, ranks, hole = 4, 13, 1
        room = 52 - n
    board = []
    left = min(room, 7)
    for _ in range(rounds):
        b = draw(st.integers(0, left))
        board.append(b)
        left -= b
    stack = tuple(draw(st.lists(st.integers(1, INT32_MAX), min_size=n, max_size=n)))
    if draw(st.booleans()):
        stack = (INT32_MAX,) * n
    blind = tuple(draw(st.integers(0, s)) for s in stack)
    return Game(
        betting_type=BettingType.NOLIMIT if nolimit else BettingType.LIMIT,
        num_players=n,
        num_rounds=rounds,
        stack=stack,
        blind=blind,
        raise_size=() if nolimit else tuple(
            draw(st.lists(st.integers(1, 1000), min_size=rounds, max_size=rounds))),
        first_player=tuple(draw(st.lists(st.integers(0, n - 1), min_size=rounds,
                                         max_size=rounds))),
        max_raises=tuple(draw(st.lists(st.integers(0, 255), min_size=rounds,
                                       max_size=rounds))),
        num_suits=suits,
        num_ranks=ranks,
        num_hole_cards=hole,
        num_board_cards=tuple(board),
    )


# --------------------------------------------------------------------------- solver files


def rewrite_checkpoint_header(path: Path, target: Path, **changes: object) -> Path:
    """Copy a solver checkpoint to ``target`` with header keys changed (a value of None
    deletes the key): how older checkpoint formats are made for compatibility tests."""
    import json

    import numpy as np

    with np.load(path, allow_pickle=False) as data:
        arrays = {key: np.array(data[key]) for key in data.files}
    header = json.loads(arrays["header"].astype(np.uint8).tobytes().decode())
    for key, value in changes.items():
        if value is None:
            header.pop(key, None)
        else:
            header[key] = value
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with target.open("wb") as f:
        np.savez(f, **arrays)
    return target
