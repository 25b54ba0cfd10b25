"""Words for people: cards, rounds, actions and the legal choices of a betting state.

Shared by the terminal player (:mod:`agent.human`), the agent's decision trace
(:mod:`agent.policy`) and its reader (:mod:`agent.explain`), so a hand reads the same
everywhere. Chips are hand totals, as on the wire (``raise to 600``).

Imports the stdlib and :mod:`agent.acpc` only.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.acpc.betting import Action, ActionKind, BettingState
from agent.acpc.cards import format_card
from agent.acpc.gamedef import Game

ROUND_NAMES = {4: ("preflop", "flop", "turn", "river")}
"""Names of the rounds by number of rounds (hold'em); other games say ``round N``."""


def cards_text(cards: Iterable[int]) -> str:
    """Cards separated by spaces (``As Kd``); ``--`` for none."""
    text = " ".join(format_card(c) for c in cards)
    return text or "--"


def round_name(game: Game, r: int) -> str:
    """``preflop``/``flop``/``turn``/``river`` in hold'em, else ``round N`` (1-based)."""
    names = ROUND_NAMES.get(game.num_rounds)
    return names[r] if names is not None and game.num_hole_cards == 2 else f"round {r + 1}"


def describe_action(before: BettingState, action: Action) -> str:
    """What ``action`` does in ``before``: ``fold``, ``check``, ``call 100``, ``bet 300``,
    ``raise to 600`` (chips are hand totals, as on the wire)."""
    if action.kind is ActionKind.FOLD:
        return "fold"
    if action.kind is ActionKind.CALL:
        owe = before.to_call()
        return f"call {owe}" if owe else "check"
    if before.game.is_nolimit:
        to = action.raise_to
    else:
        to = min(before.max_spent + before.game.raise_size[before.round],
                 before.game.stack[before.player])
    verb = "bet" if before.max_spent == max(before.round_start_spent) and before.round else (
        "raise")
    return f"{verb} to {to}"


def legal_labels(state: BettingState) -> list[str]:
    """The legal actions of the player to act: ``fold``, ``check`` or ``call N``, and
    ``raise to LO..HI`` (no-limit) or ``raise to N`` (limit) when a raise is allowed."""
    owe = state.to_call()
    labels = ["fold"] if state.can_fold() else []
    labels.append(f"call {owe}" if owe else "check")
    bounds = state.raise_bounds()
    if bounds is not None:
        lo, hi = bounds
        if not state.game.is_nolimit:
            labels.append(f"raise to {lo}")
        else:
            labels.append(f"raise to {lo}" if lo == hi else f"raise to {lo}..{hi}")
    return labels
