"""Built-in strategies that need no strategy file: ``random`` and ``call``.

``builtin:random`` plays a legal random action like the reference example player: it folds
only when facing a bet, and in no-limit picks a raise-to uniformly between the legal bounds.
``builtin:call`` always checks or calls. Both are deterministic for a given seed.

Imports only the stdlib and :mod:`agent.acpc`.
"""

from __future__ import annotations

import random
from typing import ClassVar, Protocol

from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind
from agent.acpc.matchstate import MatchState


class Policy(Protocol):
    """Anything that picks an action for a MatchState where we are to act."""

    def act(self, ms: MatchState) -> Action:
        """Return a legal action for ``ms`` (``ms.is_to_act`` is true)."""
        ...


class CallPolicy:
    """Always check or call."""

    def act(self, ms: MatchState) -> Action:
        return CALL


class RandomPolicy:
    """A legal random action: fold (only facing a bet), call, or raise (uniform size).

    Weights follow the reference example player's spirit: fold 6%, call 47%, raise 47%,
    renormalised over the legal kinds.
    """

    WEIGHTS: ClassVar[dict[ActionKind, float]] = {
        ActionKind.FOLD: 0.06,
        ActionKind.CALL: 0.47,
        ActionKind.RAISE: 0.47,
    }

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def act(self, ms: MatchState) -> Action:
        state = ms.state
        kinds = state.legal_actions()
        kind = self._rng.choices(kinds, weights=[self.WEIGHTS[k] for k in kinds])[0]
        if kind is ActionKind.FOLD:
            return FOLD
        if kind is ActionKind.CALL:
            return CALL
        if not state.game.is_nolimit:
            return LIMIT_RAISE
        bounds = state.raise_bounds()
        assert bounds is not None
        return Action(ActionKind.RAISE, self._rng.randint(bounds[0], bounds[1]))
