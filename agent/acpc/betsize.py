"""Bet-size conversions, defined once: raise-to, chips this round, raise-by, pot fraction.

Every amount on the wire is a **raise-to**: the total a player has put in during the whole
hand after the action (blinds and earlier rounds included). The other quantities, all for the
player to act in ``state`` (the state *before* the action):

- **chips this round** = ``raise_to - spent at the start of the round``; in the first round
  the start is 0, so the blinds count as first-round chips;
- **raise-by** = ``raise_to - max_spent``: how far the bet is lifted above the current bet;
- **pot fraction** ``x`` (docs/background.md, "Pot fractions"): with ``p`` the pot
  before the action (everything everyone has put in) and ``c`` the chips the player must add
  to call, a raise that puts ``y = raise_to - max_spent`` chips beyond the call measures
  ``x = y / (p + c)``, the bet as a fraction of the pot after the call. A call is ``x = 0``;
  a pot-sized raise is ``x = 1``.

Examples (heads-up no-limit, blinds 50/100): the small blind's raise to 300 is ``x = 1``
(``p = 150``, ``c = 50``, ``y = 200``); the big blind's re-raise to 900 over it is ``x = 1``
(``p = 400``, ``c = 200``, ``y = 600``).

Pure and stdlib only.
"""

from __future__ import annotations

import math

from agent.acpc.betting import BettingState
from agent.acpc.errors import UsageError


def _pos(state: BettingState, position: int | None) -> int:
    p = state.player if position is None else position
    if p < 0:
        raise UsageError("expected a state with a player to act, got a finished hand")
    return p


def pot_after_call(state: BettingState, position: int | None = None) -> int:
    """``p + c``: the pot once the player has called (the unit of pot fractions)."""
    p = _pos(state, position)
    return state.pot + state.to_call(p)


def chips_this_round(state: BettingState, raise_to: int, position: int | None = None) -> int:
    """Chips the player has in this round after reaching ``raise_to``."""
    return raise_to - state.round_start_spent[_pos(state, position)]


def raise_to_from_round_chips(
    state: BettingState, chips: int, position: int | None = None
) -> int:
    """Inverse of :func:`chips_this_round`."""
    return chips + state.round_start_spent[_pos(state, position)]


def raise_by(state: BettingState, raise_to: int) -> int:
    """How far ``raise_to`` lifts the current bet (``raise_to - max_spent``)."""
    return raise_to - state.max_spent


def raise_to_from_raise_by(state: BettingState, by: int) -> int:
    """Inverse of :func:`raise_by`."""
    return state.max_spent + by


def pot_fraction(state: BettingState, raise_to: int, position: int | None = None) -> float:
    """``x = (raise_to - max_spent) / (pot + to_call)`` for the player to act.

    Raises:
        ValueError: if the pot after the call is empty (no blinds, no bets).
    """
    base = pot_after_call(state, position)
    if base <= 0:
        raise UsageError("expected a non-empty pot to measure a bet against, got 0 chips")
    return (raise_to - state.max_spent) / base


def raise_to_from_pot_fraction(
    state: BettingState, x: float, position: int | None = None
) -> float:
    """Exact inverse of :func:`pot_fraction` (a real number; see :func:`round_raise_to`)."""
    return state.max_spent + x * pot_after_call(state, position)


def round_raise_to(value: float) -> int:
    """Whole chips for a real raise-to: nearest, halves rounded up.

    Raises:
        ValueError: if ``value`` is not finite.
    """
    if not math.isfinite(value):
        raise UsageError(f"expected a finite raise-to amount, got {value!r}")
    return math.floor(value + 0.5)


def clamped_raise_to(state: BettingState, x: float) -> int | None:
    """The legal raise-to nearest a raise of pot fraction ``x`` at ``state``: rounded to
    whole chips (:func:`round_raise_to`) and clamped to the raise bounds; ``None`` when no
    raise is legal. The agent realises its abstract raises with it
    (:func:`agent.abstraction.convention.realise_raise_to`), and ``builtin:offtree`` steers
    clear of those sizes with it."""
    bounds = state.raise_bounds()
    if bounds is None:
        return None
    lo, hi = bounds
    return min(max(round_raise_to(raise_to_from_pot_fraction(state, x)), lo), hi)
