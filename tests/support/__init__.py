"""Helpers shared by the test packages (one place; test files never import each other).

* Paths: :data:`ROOT`, :data:`DATA`, :data:`LOGS` and :data:`REFERENCE_LOGS` (logs made by
  the real reference dealer, with the game each was played in).
* :func:`run_without_jit`: re-run some tests of a file with ``NUMBA_DISABLE_JIT=1``, so every
  kernel's plain-Python semantics are checked too (:data:`PLAIN_PYTHON`, all files in one
  interpreter); :data:`NO_JIT` tells a test it runs so.
* Rules-engine helpers: :func:`perft` (decision nodes and hand ends under a state),
  :func:`random_playout` (a random legal hand), :func:`games` (a hypothesis strategy
  drawing valid game definitions).
* :mod:`tests.support.dealer_harness` (the dealer over loopback, scripted clients) and
  :mod:`tests.support.cfr_oracle` (the game as the slow solver oracles see it).
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile
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


PLAIN_PYTHON: dict[str, tuple[tuple[str, ...], ...]] = {
    owner: tuple((path, *args) for path in (owner, *also))
    for owner, args, also in [
        ("tests/agent/abstraction/test_holdem_buckets.py", ("-k", "small"), ()),
        ("tests/agent/abstraction/test_isomorphism.py", ("-k", "small"), ()),
        ("tests/agent/resolve/test_gadgets.py", ("-k", "small"), ()),
        ("tests/agent/strategy/test_fileformat.py",
         ("-k", "not plain_python", "-W", "error",
          "-W", "ignore::pytest.PytestAssertRewriteWarning"), ()),
        ("tests/agent/test_handeval.py", ("-k", "small"), ()),
        ("tests/evaluation/test_fastwalk.py", ("-k", "small"), ()),
        ("tests/strategies/test_cfr.py", ("-k", "small"),
         ("tests/strategies/test_best_response.py",)),
        ("tests/strategies/test_egt.py", ("-k", "small"), ()),
        ("tests/strategies/test_holdem_solver.py", ("-k", "small"), ()),
        ("tests/strategies/test_lbr_cards.py", ("-k", "small"), ()),
        ("tests/strategies/test_royal_egt.py", ("-k", "small"), ()),
        ("tests/strategies/test_sizing.py", ("-k", "small"), ()),
        ("tests/strategies/translation/test_lab.py", ("-k", "small"), ()),
    ]
}
"""The kernels' plain-Python checks: a test file whose ``test_kernels_as_plain_python``
calls :func:`run_without_jit` -> the files run again without the JIT, each with its pytest
arguments (the ``small`` tests; all of test_fileformat's, warnings as errors)."""

PLAIN_TEST = "test_kernels_as_plain_python"
"""The name of each of those tests."""

SHARED = "ACPC_ARENA_TEST_SHARED"
"""The environment variable naming a directory shared by one pytest run's processes (its
controller makes it, xdist's workers inherit it)."""

_plain_owners: list[str] = []


def select_plain_python(owners: list[str]) -> None:
    """The files (keys of :data:`PLAIN_PYTHON`) whose plain-Python test this session runs:
    one run without the JIT serves them all (``tests/conftest.py`` calls this once the
    session's tests are collected; every xdist worker collects the same)."""
    _plain_owners[:] = sorted(owners)


def run_without_jit(file: str | Path) -> None:
    """Assert that ``file``'s tests chosen in :data:`PLAIN_PYTHON` pass with
    ``NUMBA_DISABLE_JIT=1``.

    The first caller in a run (under a lock in the run's shared directory) runs those of
    every file selected by :func:`select_plain_python` in one fresh interpreter
    (``tests/support/plain_python.py``: one pytest session a file, so numpy, numba and the
    project are imported once, not once a file) and stores the outcome; the other callers,
    in any worker, read it."""
    owner = Path(file).resolve().relative_to(ROOT).as_posix()
    owners = sorted({owner, *_plain_owners})
    shared = Path(os.environ.get(SHARED) or tempfile.mkdtemp(prefix="acpc-arena-tests-"))
    report = shared / ("plain-python-" + "-".join(str(sorted(PLAIN_PYTHON).index(o))
                                                  for o in owners) + ".json")
    with open(shared / "plain-python.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not report.is_file():
            runs = shared / (report.stem + ".runs.json")
            runs.write_text(json.dumps([run for o in owners for run in PLAIN_PYTHON[o]]),
                            encoding="utf-8")
            env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
            out = subprocess.run([sys.executable, str(ROOT / "tests/support/plain_python.py"),
                                  str(report), str(runs)], env=env, cwd=ROOT,
                                 capture_output=True, text=True, check=False, timeout=1800)
            if out.returncode != 0 or not report.is_file():  # the run itself broke: every
                crash = {"status": out.returncode, "passed": 0,  # caller reads why, none reruns
                         "output": out.stdout[-3000:] + out.stderr[-3000:]}
                report.write_text(json.dumps({path: crash for o in owners
                                              for path, *_ in PLAIN_PYTHON[o]}),
                                  encoding="utf-8")
    results = json.loads(report.read_text(encoding="utf-8"))
    for path, *_ in PLAIN_PYTHON[owner]:
        got = results[path]
        assert got["status"] == 0 and got["passed"] > 0, f"{path}:\n{got['output']}"


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
