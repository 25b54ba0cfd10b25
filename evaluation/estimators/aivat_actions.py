"""What AIVAT's brackets read of a hand, below :mod:`evaluation.estimators.aivat` and
:mod:`evaluation.estimators.aivat_imaginary` (both use them): a known agent's action
distribution and beliefs, and the check-down value's formula.

Imports the stdlib, :mod:`agent` and :mod:`evaluation.estimators.estimator`.
"""

from __future__ import annotations

import math
from typing import Any

from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.dealing import Deal
from evaluation.estimators.estimator import Model, RandomAgent

Belief = tuple[tuple[float, Any], ...]
"""A known agent's private states with their probabilities (summing to 1)."""


def checkdown_value(state: BettingState, eq0: Any) -> Any:
    """The check-down value at an unfinished ``state`` or a finished showdown, from
    position 0's equity ``eq0`` (win + tie / 2 over the completions of the board seen; a
    float or an array, one per holding): ``(2 eq0 - 1) x the larger contribution``, or at a
    showdown the payoffs of a win and a loss weighted by it (heads-up, a tie pays their
    mean)."""
    if state.finished:
        win, lose = state.payoffs((1, 0))[0], state.payoffs((0, 1))[0]
        return eq0 * win + (1.0 - eq0) * lose
    return (2.0 * eq0 - 1.0) * float(state.max_spent)


RAISE_RANGE = Action(ActionKind.RAISE, -1)
"""Stands for ``builtin:random``'s no-limit raise: a size uniform over the legal bounds."""


def random_distribution(state: BettingState) -> dict[Action, float]:
    """``builtin:random``'s action kinds at ``state`` with their probabilities
    (:class:`agent.builtin.RandomPolicy`): its no-limit raise as :data:`RAISE_RANGE`."""
    from agent.builtin import RandomPolicy

    kinds = state.legal_actions()
    weights = [RandomPolicy.WEIGHTS[k] for k in kinds]
    total = math.fsum(weights)
    out: dict[Action, float] = {}
    for kind, w in zip(kinds, weights, strict=True):
        if kind is ActionKind.FOLD:
            action = FOLD
        elif kind is ActionKind.CALL:
            action = CALL
        else:
            action = RAISE_RANGE if state.game.is_nolimit else LIMIT_RAISE
        out[action] = w / total
    return out


def action_distribution(model: Model, belief: Belief, state: BettingState, position: int,
                        deal: Deal) -> dict[Action, tuple[float, Belief]]:
    """A known agent's real actions at ``state`` with their probabilities (its private
    states weighted by ``belief``), each with the agent's belief after taking it
    (``builtin:random``: :func:`random_distribution`)."""
    if type(model) is RandomAgent:
        return {a: (p, belief) for a, p in random_distribution(state).items()}
    acc: dict[Action, dict[Any, float]] = {}
    for w, st in belief:
        outs, _ = model.act(st, state, position, deal, ())
        for q, action, new in outs:
            if q <= 0.0:
                continue
            states = acc.setdefault(action, {})
            states[new] = states.get(new, 0.0) + w * q
    # normalised: a stored row may sum to 1 only within float32 rounding
    total = math.fsum(v for states in acc.values() for v in states.values())
    out: dict[Action, tuple[float, Belief]] = {}
    for action, states in acc.items():
        p = math.fsum(states.values())
        out[action] = (p / total, tuple((v / p, s) for s, v in states.items()))
    return out


def observe_belief(model: Model, belief: Belief, state: BettingState, action: Action) -> Belief:
    """The belief of a known agent after another player's ``action`` at ``state``."""
    acc: dict[Any, float] = {}
    for w, st in belief:
        seen, _ = model.observe(st, state, action)
        for r, new in seen:
            if r > 0.0:
                acc[new] = acc.get(new, 0.0) + w * r
    total = math.fsum(acc.values())
    return tuple((w / total, st) for st, w in acc.items())
