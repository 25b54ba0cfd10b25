"""AIVAT's batched imaginary observations (issue 31, item 1): in a game whose holdings
enumerate, the batch equals the enumerated imaginary average; on hold'em, every holding's
batched value and weight equal the per-holding trajectory's."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from agent.acpc.betting import parse_betting
from agent.acpc.dealing import deal_hands
from agent.acpc.gamefiles import load_game
from agent.builtin import RandomPolicy
from agent.data import strategy_path
from evaluation.estimators.aivat import (
    CheckdownValue,
    Valuer,
    feature_names,
    hand_aivat,
    models_of,
    trajectory,
)
from evaluation.estimators.aivat_imaginary import Imaginary, SharedBoardsValue
from evaluation.estimators.allin import parse_state_line
from evaluation.estimators.estimator import make_model, play_hand
from evaluation.match.variants import parse_variant


def _hands(game: Any, specs: list[str], seed: int, hands: int) -> list[tuple[Any, ...]]:
    """Hands played by the models with seeded draws, in both seatings: ``(seated models,
    deal, board seen, actions)``."""
    models = [make_model(parse_variant(f"v{i}={s}"), game, expand_random=True)
              for i, s in enumerate(specs)]
    rng = random.Random(seed)
    deals = deal_hands(game, seed)
    out = []
    for h in range(hands):
        deal = next(deals)
        for seating in ((0, 1), (1, 0)):
            seated = [models[i] for i in seating]
            policies = [RandomPolicy(rng.randrange(1 << 30))
                        if specs[i] == "builtin:random" else None for i in seating]
            betting, _ = play_hand(seated, deal, [rng.random, rng.random], policies, game, h)
            state = parse_betting(game, betting)
            actions = [a for rnd in state.actions for a in rnd]
            out.append((seated, deal, deal.board[: game.board_cards_through(state.round)],
                        actions))
    return out


def test_batch_equals_the_enumerated_imaginary_average_in_limit_leduc() -> None:
    """One seat known (the file), the check-down value: ``X + mean Y - Y_real`` of the
    batch is the enumerated path's imaginary average, hand by hand."""
    game = load_game("leduc.limit.2p.game")
    batch = Imaginary(game)
    checkdown = CheckdownValue(game)
    compared = 0
    for seated, deal, board, actions in _hands(
            game, [str(strategy_path("leduc.limit.2p.strat")), "builtin:random"], 7, 12):
        for p in (0, 1):
            if type(seated[p]).__name__ != "FileAgent":
                continue
            known = [m if q == p else None for q, m in enumerate(seated)]
            slow = hand_aivat(game, known, deal.hole, board, actions, checkdown)
            fast = hand_aivat(game, known, deal.hole, board, actions, checkdown,
                              batch=batch, enumerate_max=0)
            assert slow.imaginary == fast.imaginary > 1
            assert fast.aivat == pytest.approx(slow.aivat, abs=1e-9)
            compared += 1
    assert compared == 24


@pytest.mark.parametrize("other", ["builtin:random", "holdem.nolimit.2p.pa.overbet.strat"])
def test_holdem_batch_equals_the_per_holding_trajectory(other: str) -> None:
    """Hold'em, the file against random or another file (one batch object for both: each
    file its own buckets): for a sample of the file's holdings, the batched ``Y`` and
    weight equal :func:`trajectory`'s value (the same check-down value, holding by
    holding) and likelihood; blocked holdings weigh 0."""
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    spec = f"{strategy_path('holdem.nolimit.2p.strat')},mapping=det-arith"
    if not other.startswith("builtin:"):
        other = str(strategy_path(other))
    batch = Imaginary(game)
    checked = 0
    for seated, deal, board, actions in _hands(game, [spec, other], 3, 2):
        # against random the file's seat; file against file both seats on the same boards
        seats = [0 if type(seated[0]).__name__ == "FileAgent" else 1] \
            if other.startswith("builtin:") else [0, 1]
        for p in seats:
            y, w, real = batch.seat(seated, deal.hole, board, actions, p, (3,))
            dead = set(deal.hole[1 - p]) | set(board)
            blocked = np.array([bool(dead & set(h)) for h in batch.holes.tolist()])
            assert not w[blocked].any() and w[real] > 0.0
            rng = np.random.default_rng(len(actions))
            picks = [real, *rng.choice(np.flatnonzero(~blocked), 3 - len(seats),
                                       replace=False).tolist()]
            for i in picks:
                holes = list(deal.hole)
                holes[p] = tuple(int(c) for c in batch.holes[i])
                x, _, lik, _ = trajectory(game, seated, tuple(holes), board, actions,
                                          SharedBoardsValue(game, p, (3,)))
                assert w[i] == pytest.approx(lik[p], rel=1e-9, abs=1e-15)
                if lik[p] > 0.0:
                    assert y[i] == pytest.approx(x, rel=1e-9, abs=1e-9)
                checked += 1
    assert checked == 4 * len(seats) * (4 - len(seats))  # hands x seats x picks


def test_valuer_batches_the_check_down_seatings_by_default() -> None:
    """A hold'em hand of a log (overbet against the first file): with only the first file
    known (the check-down value) the batched term is there; with both known (the sampled
    walk) only on request; never with ``imaginary=False``."""
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    hand = parse_state_line("STATE:4:cc/cr200c/cc/cc:5h2s|3c2c/9h5cQh/Kd/8d:200|-200:"
                            "new|old", game, "test")
    old = parse_variant(f"old={strategy_path('holdem.nolimit.2p.strat')}")
    new = parse_variant(f"new={strategy_path('holdem.nolimit.2p.pa.overbet.strat')}")
    imag = feature_names(game).index("imaginary cards")

    def term(variants: list[Any], **options: Any) -> float:
        valuer = Valuer(game, models_of(game, variants), walk_samples=2, **options)
        got = valuer.hand(hand, 2028, "test")
        assert got.raw == (200.0, -200.0)
        return got.terms[imag]

    assert term([old]) != 0.0
    assert term([old], imaginary=False) == 0.0
    assert term([old, new]) == 0.0
    assert term([old, new], batch_walk=True) != 0.0
