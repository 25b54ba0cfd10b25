"""Local best response (Lisý and Bowling, 2017) in games small enough to value exactly.

LBR lower-bounds an agent's exploitability without solving anything: at each of its
decisions the responder knows the agent's exact *range* (the probability of every agent
hand given the public actions, by Bayes over the agent's own policy) and picks, among fold,
check/call and a few bet sizes, the action with the highest expected value under one
simplification: after this action nobody bets again (both players check or call to the
showdown). For a bet, the agent's probability of folding to it comes from its policy; if it
does not fold it is taken to call.

Here the game is the real game of :mod:`strategies.measure.translation.full_br` (every whole-chip
bet, lossless cards: perfect recall) and the agent is its *behaviour* there
(:func:`strategies.measure.translation.full_br.induced_table`: an abstract strategy played through
a mapping, a purification and a size convention, its translation draws private). LBR then
is a pure strategy of the real game; :func:`lbr_table` builds it top-down (the agent's
reach per deal carried along every path) and :func:`lbr_value` values it exactly against
the agent with :func:`strategies.measure.best_response.expected_values`. Being one strategy among
those the exact best response maximises over, LBR's value never exceeds it (tested), which
is the consistency check the method needs before it is trusted where no exact best response
exists.

Candidate bets (``fractions``): for each pot fraction, the legal raise whose real pot
fraction is nearest (ties to the smaller), and the all-in; fold only when facing a bet.

Chips per hand (the game's units). Imports numpy, :mod:`agent` and :mod:`strategies`;
never imported by :mod:`agent`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import ALL_IN
from agent.acpc.betting import ActionKind
from agent.acpc.errors import UsageError
from strategies.games.abstract import AbstractGame
from strategies.measure.best_response import best_response, expected_values

F64 = npt.NDArray[np.float64]

DEFAULT_FRACTIONS: tuple[float, ...] = (0.5, 1.0)
"""LBR's bet sizes besides the all-in (pot fractions), as in the published evaluations
of no-limit agents (fold, call, half pot, pot, all-in)."""


def parse_fractions(text: str) -> tuple[float, ...]:
    """``'0.5,1'`` -> ``(0.5, 1.0)``; ``''`` for none (fold, call and all-in only).

    Raises:
        UsageError: for a value that is not a positive number.
    """
    out: list[float] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            value = float("nan")
        if not value > 0 or value == float("inf"):
            raise UsageError(f"expected LBR bet sizes as positive pot fractions, e.g. "
                             f"'0.5,1', got {text!r}")
        out.append(value)
    return tuple(sorted(set(out)))


def _terminal_payoff(real: AbstractGame, node: int, seat: int) -> F64:
    """Chips won by ``seat`` at terminal ``node``, per deal."""
    t = int(real.terminal[node])
    s = int(real.term_set[t])
    if s < 0:
        return np.full(real.num_deals, real.term_payoff[t, 0, seat])
    return np.asarray(real.term_payoff[t, real.deal_pattern[:, s], seat], dtype=np.float64)


def _kinds(real: AbstractGame, node: int) -> list[ActionKind]:
    return [a.kind for a in real.tree.nodes[node].actions]


def _child(real: AbstractGame, node: int, i: int) -> int:
    return int(real.children[int(real.child_start[node]) + i])


def _checkdown(real: AbstractGame, node: int, seat: int) -> F64:
    """Per deal, what ``seat`` wins if from ``node`` on everybody checks or calls."""
    while real.terminal[node] < 0:
        node = _child(real, node, _kinds(real, node).index(ActionKind.CALL))
    return _terminal_payoff(real, node, seat)


def candidate_actions(real: AbstractGame, node: int, fractions: Sequence[float]) -> list[int]:
    """The action indices LBR considers at ``node``: fold (facing a bet), call, the raise
    nearest each pot fraction, the all-in."""
    actions = real.tree.nodes[node].actions
    kinds = [a.kind for a in actions]
    out = [i for i, k in enumerate(kinds) if k is not ActionKind.RAISE]
    raises = [i for i, k in enumerate(kinds) if k is ActionKind.RAISE]
    if raises:
        for f in fractions:
            best = min(raises, key=lambda i: (abs(actions[i].x - f), actions[i].x))
            if best not in out:
                out.append(best)
        all_in = next((i for i in raises if actions[i].fraction == ALL_IN), raises[-1])
        if all_in not in out:
            out.append(all_in)
    return sorted(out)


def _agent_probs(real: AbstractGame, table: F64, node: int) -> F64:
    """``[deal, action]``: the acting player's probabilities at ``node`` for each deal."""
    k = int(real.num_actions[node])
    p = int(real.player[node])
    buckets = real.deal_bucket[:, p, int(real.round[node])]
    start = int(real.offset[node])
    rows = table[start : start + int(real.rows[node]) * k].reshape(-1, k)
    return np.asarray(rows[buckets], dtype=np.float64)


def _heuristic_values(real: AbstractGame, table: F64, node: int, seat: int,
                      actions: Sequence[int]) -> F64:
    """``[action, deal]``: LBR's value of each candidate action, per deal (module
    docstring: a bet is folded to with the agent's probability, else called; then
    everybody checks or calls to the end)."""
    out = np.zeros((len(actions), real.num_deals))
    kinds = _kinds(real, node)
    for j, i in enumerate(actions):
        child = _child(real, node, i)
        if kinds[i] is not ActionKind.RAISE:
            out[j] = _terminal_payoff(real, child, seat) if real.terminal[child] >= 0 \
                else _checkdown(real, child, seat)
            continue
        reply = _kinds(real, child)
        if ActionKind.FOLD not in reply:  # nothing to fold to (e.g. an all-in nobody
            out[j] = _checkdown(real, child, seat)  # can raise): called
            continue
        fold = reply.index(ActionKind.FOLD)
        p_fold = _agent_probs(real, table, child)[:, fold]
        folded = _terminal_payoff(real, _child(real, child, fold), seat)
        called = _checkdown(real, _child(real, child, reply.index(ActionKind.CALL)), seat)
        out[j] = p_fold * folded + (1.0 - p_fold) * called
    return out


def lbr_table(real: AbstractGame, agent_table: npt.ArrayLike, seat: int,
              fractions: Sequence[float] = DEFAULT_FRACTIONS) -> F64:
    """``agent_table`` (a table of the real game) with ``seat``'s rows replaced by LBR's
    pure strategy against the other position's rows.

    Raises:
        UsageError: for a game that is not two-player, a bad seat or table.
    """
    if real.num_players != 2:
        raise UsageError(f"expected a two-player game for LBR, got {real.num_players}")
    if seat not in (0, 1):
        raise UsageError(f"expected an LBR seat 0 or 1, got {seat!r}")
    table = np.array(agent_table, dtype=np.float64).reshape(-1)
    if table.shape != (real.table_size,):
        raise UsageError(f"expected a table of {real.table_size} values for the real game, "
                         f"got {table.size}")
    for node in np.flatnonzero(real.player == seat):  # never reached: check/call (so the
        k = int(real.num_actions[node])               # table is one pure strategy)
        rows = np.zeros((int(real.rows[node]), k))
        rows[:, _kinds(real, int(node)).index(ActionKind.CALL)] = 1.0
        table[int(real.offset[node]) : int(real.offset[node]) + rows.size] = rows.ravel()
    stack: list[tuple[int, F64]] = [(0, np.array(real.deal_prob, dtype=np.float64))]
    while stack:
        node, reach = stack.pop()
        if real.terminal[node] >= 0:
            continue
        k = int(real.num_actions[node])
        if int(real.player[node]) != seat:
            probs = _agent_probs(real, table, node)
            for i in range(k):
                weight = reach * probs[:, i]
                if weight.any():
                    stack.append((_child(real, node, i), weight))
            continue
        actions = candidate_actions(real, node, fractions)
        values = _heuristic_values(real, table, node, seat, actions) * reach
        buckets = real.deal_bucket[:, seat, int(real.round[node])]
        n_buckets = int(real.rows[node])
        totals = np.zeros((n_buckets, len(actions)))
        for j in range(len(actions)):
            totals[:, j] = np.bincount(buckets, weights=values[j], minlength=n_buckets)
        choice = np.argmax(totals, axis=1)  # first best on ties: fold, call, then raises
        start = int(real.offset[node])
        rows = np.zeros((n_buckets, k))
        rows[np.arange(n_buckets), np.asarray(actions)[choice]] = 1.0
        table[start : start + n_buckets * k] = rows.ravel()
        chosen_by_deal = np.asarray(actions)[choice[buckets]]
        for i in sorted(set(int(a) for a in np.asarray(actions)[choice])):
            weight = np.where(chosen_by_deal == i, reach, 0.0)
            if weight.any():
                stack.append((_child(real, node, i), weight))
    return table


@dataclass(frozen=True)
class LbrResult:
    """LBR against an agent in the other seat, beside the exact best response."""

    seat: int
    """LBR's position."""
    value: float
    """What LBR wins per hand (chips)."""
    best_response: float
    """What the exact best response wins per hand (chips): an upper bound of :attr:`value`."""


def lbr_value(real: AbstractGame, agent_table: npt.ArrayLike, seat: int,
              fractions: Sequence[float] = DEFAULT_FRACTIONS) -> LbrResult:
    """LBR's exact value in ``seat`` against the other seat's rows of ``agent_table``, and
    the exact best response's (module docstring)."""
    table = lbr_table(real, agent_table, seat, fractions)
    value = expected_values(real, table)[seat]
    return LbrResult(seat, float(value), best_response(real, agent_table, seat).value)
