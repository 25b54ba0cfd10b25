"""Worked examples of the one bet-size definition (agent/acpc/betsize.py)."""

from __future__ import annotations

import pytest

from agent.acpc.betsize import (
    chips_this_round,
    pot_after_call,
    pot_fraction,
    raise_by,
    raise_to_from_pot_fraction,
    raise_to_from_raise_by,
    raise_to_from_round_chips,
    round_raise_to,
)
from agent.acpc.betting import parse_betting
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game


def test_no_limit_preflop_open(nl2: Game) -> None:
    s = parse_betting(nl2, "")  # small blind (position 1) to act, 50 in, facing 100
    assert pot_after_call(s) == 200
    assert pot_fraction(s, 300) == 1.0  # pot-sized open
    assert pot_fraction(s, 200) == 0.5
    assert pot_fraction(s, 100) == 0.0  # the call
    assert raise_by(s, 300) == 200
    assert chips_this_round(s, 300) == 300  # the blinds count as first-round chips
    assert raise_to_from_pot_fraction(s, 1.0) == 300.0


def test_no_limit_facing_a_raise(nl2: Game) -> None:
    s = parse_betting(nl2, "r300")  # big blind: pot 400, 200 to call
    assert pot_after_call(s) == 600
    assert pot_fraction(s, 900) == 1.0
    assert raise_by(s, 900) == 600
    assert raise_to_from_raise_by(s, 600) == 900


def test_no_limit_postflop_bet_and_raise(nl2: Game) -> None:
    s = parse_betting(nl2, "r300c/")  # flop, pot 600, nobody has bet
    assert s.player == 0
    assert pot_fraction(s, 900) == 1.0  # a bet of 600 more = the pot
    assert pot_fraction(s, 600) == 0.5
    assert chips_this_round(s, 900) == 600
    assert raise_to_from_round_chips(s, 600) == 900
    s = parse_betting(nl2, "r300c/r450")
    # Facing a quarter-pot bet: pot 750, 150 to call; a pot raise puts 900 beyond the call.
    assert pot_after_call(s) == 900
    assert pot_fraction(s, 450 + 900) == 1.0
    assert chips_this_round(s, 1350) == 1050


def test_limit_preflop_and_postflop(leduc: Game) -> None:
    s = parse_betting(leduc, "")
    assert pot_fraction(s, 3) == 1.0  # blinds 1+1, raise of 2
    s = parse_betting(leduc, "rc/")  # pot 6, flop raise 4
    assert pot_fraction(s, 7) == pytest.approx(4 / 6)
    s = parse_betting(leduc, "rc/r")
    assert pot_after_call(s) == 14 and pot_fraction(s, 11) == pytest.approx(4 / 14)


def test_after_a_short_all_in() -> None:
    game = load_game("nl3p_uneven.game")  # stacks 500 1000 2000, blinds 50 100 0
    s = parse_betting(game, "r400r500")  # position 0 shoves 500 short of the 700 min
    assert s.player == 1 and s.pot == 1000 and s.to_call() == 400
    assert pot_after_call(s) == 1400
    assert pot_fraction(s, 1000) == pytest.approx(500 / 1400)
    assert raise_to_from_pot_fraction(s, 500 / 1400) == pytest.approx(1000)


def test_rounding() -> None:
    assert round_raise_to(299.5) == 300
    assert round_raise_to(299.49) == 299
    with pytest.raises(ValueError, match="finite"):
        round_raise_to(float("nan"))
