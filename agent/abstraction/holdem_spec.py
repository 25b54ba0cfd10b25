"""Hold'em card abstraction, the light part: the spec, its checks and the preflop class.

Everything :class:`agent.abstraction.holdem_buckets.HoldemCards` needs that is plain
arithmetic, so that an agent can validate a hold'em strategy file's ``cards`` spec and
answer its first (preflop) decisions before the numba kernels of
:mod:`agent.abstraction.holdem_buckets` are loaded (:mod:`agent.abstraction.deferred`).
The formulas are documented in :mod:`agent.abstraction.holdem_buckets`, which re-exports
these names.

Imports numpy, the stdlib and :mod:`agent.acpc`; never numba.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from agent.acpc.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt

NUM_PREFLOP_CLASSES: Final = 169
#: Board cards visible in rounds 0..3.
BOARD_SIZES: Final = (0, 3, 4, 5)
#: Default river cards drawn per turn card by the flop estimator (47 x 4 = 188 run-outs).
FLOP_RIVERS_PER_TURN: Final = 4
_MAX_RIVERS_PER_TURN: Final = 46
SPEC_KEYS: Final = frozenset(
    {"kind", "buckets", "metric", "thresholds", "samples", "seed", "flop_rivers_per_turn"}
)


def preflop_class(hole: Sequence[int]) -> int:
    """Index 0..168 of the suit-isomorphism class of two hole cards (module docstring).

    Pairs are ``14 * rank``, suited hands ``13 * hi + lo``, offsuit hands ``13 * lo + hi``
    (ranks 0 = deuce .. 12 = ace); the order of the two cards does not matter.

    Raises:
        ValueError: unless ``hole`` is two distinct cards in 0..51.
    """
    check_cards(hole, [])
    a, b = int(hole[0]), int(hole[1])
    hi, lo = max(a // NUM_SUITS, b // NUM_SUITS), min(a // NUM_SUITS, b // NUM_SUITS)
    if a % NUM_SUITS == b % NUM_SUITS:
        return NUM_RANKS * hi + lo
    return NUM_RANKS * lo + hi


def preflop_class_name(index: int) -> str:
    """Text of a class index: ``'AA'``, ``'AKs'``, ``'72o'``.

    Raises:
        ValueError: for an index outside 0..168.
    """
    if not 0 <= index < NUM_PREFLOP_CLASSES:
        raise AbstractionError(f"expected a preflop class in 0..168, got {index!r}")
    row, col = divmod(index, NUM_RANKS)
    chars = "23456789TJQKA"
    if row == col:
        return chars[row] * 2
    if row > col:
        return chars[row] + chars[col] + "s"
    return chars[col] + chars[row] + "o"


def check_cards(hole: Sequence[int], board: Sequence[int]) -> None:
    """Raise ``ValueError`` unless ``hole`` is 2 cards and all cards are distinct, 0..51."""
    if len(hole) != 2:
        raise AbstractionError(f"expected 2 hole cards, got {list(hole)!r}")
    seen = 0
    for card in (*hole, *board):
        if isinstance(card, bool) or not isinstance(card, int | np.integer):
            raise AbstractionError(
                f"expected card indices in 0..51, got {card!r} in hole {list(hole)!r} "
                f"board {list(board)!r}"
            )
        if not 0 <= card < NUM_CARDS:
            raise AbstractionError(
                f"expected card indices in 0..51, got {card!r} in hole {list(hole)!r} "
                f"board {list(board)!r}"
            )
        if (seen >> int(card)) & 1:
            raise AbstractionError(
                f"expected distinct cards, got {card!r} twice in hole {list(hole)!r} "
                f"board {list(board)!r}"
            )
        seen |= 1 << int(card)


def check_rivers_per_turn(rivers_per_turn: int) -> None:
    if (
        isinstance(rivers_per_turn, bool)
        or not isinstance(rivers_per_turn, int)
        or not 1 <= rivers_per_turn <= _MAX_RIVERS_PER_TURN
    ):
        raise AbstractionError(
            f"expected flop_rivers_per_turn to be an int in 1..{_MAX_RIVERS_PER_TURN}, "
            f"got {excerpt(rivers_per_turn)}"
        )


def check_holdem_game(game: Game) -> None:
    """Raise ``ValueError`` unless ``game`` is hold'em: full deck, 2 hole cards, 0/3/1/1.

    Raises:
        ValueError: naming the first property that differs.
    """
    want = {
        "numRanks": (game.num_ranks, NUM_RANKS),
        "numSuits": (game.num_suits, NUM_SUITS),
        "numHoleCards": (game.num_hole_cards, 2),
        "numRounds": (game.num_rounds, 4),
        "numBoardCards": (tuple(game.num_board_cards), (0, 3, 1, 1)),
    }
    for name, (got, expected) in want.items():
        if got != expected:
            raise AbstractionError(
                f"expected a hold'em game ({name} = {expected}) for the holdem card "
                f"abstraction, got {name} = {got!r}"
            )


def check_board(round_: int, board: Sequence[int]) -> None:
    if not isinstance(round_, int) or not 0 <= round_ < len(BOARD_SIZES):
        raise AbstractionError(f"expected a hold'em round 0..3, got {round_!r}")
    if len(board) != BOARD_SIZES[round_]:
        raise AbstractionError(
            f"expected {BOARD_SIZES[round_]} board cards in round {round_}, got {list(board)!r}"
        )


def check_bucket_counts(buckets: Any) -> tuple[int, ...]:
    if (
        not isinstance(buckets, list | tuple)
        or len(buckets) != 4
        or any(isinstance(b, bool) or not isinstance(b, int) for b in buckets)
    ):
        raise AbstractionError(f"expected holdem buckets [169, n1, n2, n3] (ints), got "
                               f"{excerpt(buckets)}")
    if buckets[0] != NUM_PREFLOP_CLASSES:
        raise AbstractionError(
            f"expected 169 preflop buckets (the lossless classes), got {excerpt(buckets[0])} in "
            f"{excerpt(list(buckets))}"
        )
    if any(b < 1 for b in buckets):
        raise AbstractionError(f"expected positive bucket counts, got {excerpt(list(buckets))}")
    return tuple(int(b) for b in buckets)


def check_thresholds(thresholds: Any) -> tuple[tuple[float, ...], ...]:
    if not isinstance(thresholds, list | tuple) or len(thresholds) != 3:
        raise AbstractionError(
            f"expected thresholds to be 3 lists (flop, turn, river), got {excerpt(thresholds)}"
        )
    checked = []
    for r, values in enumerate(thresholds, start=1):
        if not isinstance(values, list | tuple):
            raise AbstractionError(f"expected a list of thresholds for round {r}, got "
                                   f"{excerpt(values)}")
        row: list[float] = []
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise AbstractionError(f"expected a number as threshold {i} of round {r}, got "
                                       f"{excerpt(value)}")
            if not (0 <= value <= 1 and math.isfinite(value)):
                raise AbstractionError(f"expected threshold {i} of round {r} in [0, 1], got "
                                       f"{value!r}")
            if row and value < row[-1]:
                raise AbstractionError(
                    f"expected sorted thresholds for round {r}, got {value!r} after "
                    f"{row[-1]!r} at index {i}"
                )
            row.append(float(value))
        checked.append(tuple(row))
    return tuple(checked)


def check_holdem_spec(game: Game, spec: Any) -> dict[str, Any]:
    """Validate a strategy file's hold'em ``cards`` spec for ``game``; return the keyword
    arguments of :class:`~agent.abstraction.holdem_buckets.HoldemCards` (``thresholds``,
    ``flop_rivers_per_turn``, ``samples``, ``seed``).

    Raises:
        ValueError: if ``game`` is not hold'em, or the spec is not a valid holdem spec
            (kind, metric, 4 bucket counts starting with 169, one sorted list of
            ``n - 1`` thresholds in [0, 1] per postflop round, int ``samples``/``seed``,
            ``flop_rivers_per_turn`` in 1..46), with a message naming the bad key.
    """
    check_holdem_game(game)
    if not isinstance(spec, dict):
        raise AbstractionError(f"expected a holdem card spec (a dict), got {excerpt(spec)}")
    if spec.get("kind") != "holdem":
        raise AbstractionError(f"expected card spec kind 'holdem', got {excerpt(spec.get('kind'))}")
    unknown = sorted(str(k) for k in set(spec) - SPEC_KEYS)
    if unknown:
        raise AbstractionError(
            f"expected holdem card spec keys among {sorted(SPEC_KEYS)}, got unknown "
            f"{excerpt(unknown)}"
        )
    for key in ("buckets", "metric", "thresholds"):
        if key not in spec:
            raise AbstractionError(f"expected holdem card spec key {key!r}, it is missing")
    if spec["metric"] != "ehs2":
        raise AbstractionError(f"expected holdem card spec metric 'ehs2', got "
                               f"{excerpt(spec['metric'])}")
    counts = check_bucket_counts(spec["buckets"])
    thresholds = check_thresholds(spec["thresholds"])
    for r in (1, 2, 3):
        if len(thresholds[r - 1]) != counts[r] - 1:
            raise AbstractionError(
                f"expected {counts[r] - 1} thresholds for round {r} ({counts[r]} buckets), "
                f"got {len(thresholds[r - 1])}"
            )
    for key in ("samples", "seed"):
        value = spec.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise AbstractionError(
                f"expected holdem card spec {key!r} to be a non-negative int, got {excerpt(value)}"
            )
    rivers = spec.get("flop_rivers_per_turn", FLOP_RIVERS_PER_TURN)
    check_rivers_per_turn(rivers)
    return {"thresholds": thresholds, "flop_rivers_per_turn": rivers,
            "samples": spec.get("samples"), "seed": spec.get("seed")}
