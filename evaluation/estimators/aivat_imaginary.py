"""AIVAT's imaginary observations where the known agent's holdings do not enumerate
(hold'em: 1,225 holdings a seat once the other seat's cards are out), in one batch.

For a known strategy-file seat ``k`` and the other seat's cards fixed, every holding ``h``
of seat ``k`` gets

* its weight ``w_h``: 0 for a holding that touches the other seat's cards or the board,
  else the probability that ``k``'s agent takes the hand's actions with ``h``: the
  decision model expanded for every hole at once
  (:class:`strategies.measure.sampled_lbr.StrategyModel`, the model sampled LBR keeps its
  range with: its hypotheses are the agent's private states, its rows the purified rows of
  each hole's bucket);
* its AIVAT value ``Y_h``: :func:`~evaluation.estimators.aivat.trajectory`'s ``X`` of the
  hand with ``h`` in seat ``k``, under the check-down value
  (:func:`~evaluation.estimators.aivat.checkdown_value`) with the equities of sampled LBR
  (:func:`strategies.measure.lbr_cards.equities`: the other seat's cards against every
  holding at once, over every completion of the board where there are at most
  :data:`~strategies.measure.lbr_cards.MAX_EXACT_COMPLETIONS`, else over
  :data:`~strategies.measure.lbr_cards.PREFLOP_SAMPLES` boards drawn from a hash of the
  deal, the other seat's cards and the board: hold'em's preflop). The same value, holding
  by holding, is :class:`SharedBoardsValue` run through ``trajectory`` (the slow path the
  tests compare with).

The hand's value is then ``X + sum over the batched seats of (mean_w Y - Y_real)``: given
the other seat's cards, the board and the actions, the holdings of ``k`` have the posterior
``w`` (the board and the other agent's actions do not depend on them), so ``mean_w Y`` has
the expectation of ``Y_real`` and each added term has mean 0, whatever ``Y`` is: unbiased
with any value function of the hand's ``X``. Where ``X`` itself uses the check-down value
with the same boards, ``Y_real = X`` and the value is the plain imaginary average
``mean_w X_h`` (as :func:`~evaluation.estimators.aivat.hand_aivat` enumerates it in the
small games; tested equal to 1e-9); with the sampled walk (both agents known) it is a
control variate: the walk's ``X`` plus how much better than average the real holding did by
the check-down value.

Imports numpy, :mod:`agent`, :mod:`strategies.measure` and :mod:`evaluation.estimators`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.acpc.betting import Action, ActionKind, BettingState
from agent.acpc.dealing import Deal
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.decision import fallback_action
from evaluation.estimators.aivat_actions import (
    RAISE_RANGE,
    Belief,
    action_distribution,
    checkdown_value,
    observe_belief,
)
from evaluation.estimators.estimator import FileAgent, Model
from strategies.measure.lbr_cards import all_holes, completions, equities, is_holdem
from strategies.measure.sampled_lbr import BucketCache, HandView, Hyps, StrategyModel

F64 = npt.NDArray[np.float64]


def _boards(game: Game, other: tuple[int, ...], board: tuple[int, ...],
            salt: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """The completions of ``board`` the equities average (module docstring): every one, or
    samples from a generator seeded by a hash of ``salt``, the other seat's cards and the
    board (independent of the cards still to come)."""
    seed = int.from_bytes(hashlib.blake2b(repr((salt, other, board)).encode(),
                                          digest_size=8).digest(), "little")
    return completions(game, other, board, np.random.default_rng(seed), is_holdem(game))


class SharedBoardsValue:
    """The check-down value with the equities of :func:`_boards` for the cards of seat
    ``position`` against the other seat's: the value :class:`Imaginary` batches, one
    holding at a time (a :class:`~evaluation.estimators.aivat.ValueFunction`)."""

    name = "checkdown-shared"
    needs_beliefs = False

    def __init__(self, game: Game, position: int, salt: tuple[int, ...] = ()) -> None:
        self.game = game
        self.position = position
        self.salt = salt

    def root_mean(self) -> float | None:
        return 0.0  # as the check-down value's: symmetric in the two holes

    def equity(self, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...]) -> float:
        """Position 0's equity (win + tie / 2) over :func:`_boards`."""
        other = tuple(holes[1 - self.position])
        mine = np.array([holes[self.position]], dtype=np.int64)
        e = float(equities(self.game, other, board, mine, _boards(self.game, other, board,
                                                                    self.salt),
                           is_holdem(self.game))[0])
        return e if self.position == 1 else 1.0 - e  # e: the other seat's

    def __call__(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                 board: tuple[int, ...], beliefs: Sequence[Belief | None] | None) -> float:
        if state.finished and not state.is_showdown:
            return float(state.payoffs()[0])
        return float(checkdown_value(state, self.equity(holes, board)))

    def raise_mean(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                   board: tuple[int, ...], beliefs: Sequence[Belief | None] | None,
                   ) -> float:
        return float(_raise_mean(state, self.equity(holes, board)))

    def edge(self, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...]) -> float:
        return 0.0


def _raise_mean(state: BettingState, eq0: Any) -> Any:
    """The check-down value after a raise uniform over the legal sizes (linear in the
    size: its value at the mean size)."""
    bounds = state.raise_bounds()
    assert bounds is not None
    return (2.0 * eq0 - 1.0) * 0.5 * (bounds[0] + bounds[1])


def batch_applies(models: Sequence[Model | None], position: int) -> bool:
    """True when seat ``position``'s holdings can be batched: its agent is a strategy
    file (the other seat's agent known or not)."""
    return type(models[position]) is FileAgent


class Imaginary:
    """Batched imaginary observations for one game (module docstring): keeps a
    :class:`~strategies.measure.sampled_lbr.StrategyModel` per strategy file and, in
    hold'em, its buckets of every hole per board (shared by the hands)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.holes = all_holes(game)
        self.index = {tuple(h): i for i, h in enumerate(self.holes.tolist())}
        self._models: dict[int, tuple[Any, StrategyModel, BucketCache | None]] = {}

    def strategy_model(self, model: FileAgent) -> tuple[StrategyModel, BucketCache | None]:
        """The model of a strategy file, and its hold'em buckets per board (one cache per
        file: its key is the board, not the abstraction)."""
        got = self._models.get(id(model))
        if got is None or got[0] is not model:
            cache = BucketCache(self.holes, fast=True) if is_holdem(self.game) else None
            got = self._models[id(model)] = (model, StrategyModel(
                model.loaded, model.mapping, model.purification, model.sizes_in), cache)
        return got[1], got[2]

    def _distribution(self, sm: StrategyModel, view: HandView, hyps: Hyps,
                      state: BettingState) -> dict[Action, F64]:
        """Per real action, its probability for every holding (0 where the range is)."""
        n = self.holes.shape[0]
        acc: dict[Action, F64] = {}
        for node_id, w in hyps.items():
            why = sm.standing(node_id, state)
            if why is not None:  # waiting or off the tree: the fallback, for sure
                a = fallback_action(state, why)
                acc[a] = acc.get(a, np.zeros(n)) + w
                continue
            which = np.flatnonzero(w)
            probs = sm.probs(view, node_id, state.round, which)
            for i, (real, _child) in enumerate(sm.own_moves(node_id, state)):
                col = np.zeros(n)
                col[which] = w[which] * probs[:, i]
                acc[real] = acc.get(real, np.zeros(n)) + col
        total = np.zeros(n)
        for col in acc.values():
            total += col
        safe = np.where(total > 0.0, total, 1.0)
        return {a: col / safe for a, col in acc.items()}

    def seat(self, models: Sequence[Model | None], holes: tuple[tuple[int, ...], ...],
             board: tuple[int, ...], actions: Sequence[Action], position: int,
             salt: tuple[int, ...] = ()) -> tuple[F64, F64, int]:
        """``(Y, w, real)`` over every hole of the deck in seat ``position`` (module
        docstring; ``w`` 0 where impossible) and the index of the real one."""
        game = self.game
        k, o = position, 1 - position
        model = models[k]
        assert type(model) is FileAgent
        sm, cache = self.strategy_model(model)
        mo = models[o]
        other = tuple(holes[o])
        n = self.holes.shape[0]
        view = HandView(game, self.holes, k, 0, other, tuple(board), cache, True)
        eqs: dict[int, F64] = {}

        def eq0(shown: int) -> F64:
            got = eqs.get(shown)
            if got is None:
                seen = tuple(board[:shown])
                dead = np.array(list(other) + list(seen), dtype=np.int64)
                ok = np.flatnonzero(~np.isin(self.holes, dead).any(axis=1))
                e = np.full(n, 0.5)
                e[ok] = equities(game, other, seen, self.holes[ok],
                                 _boards(game, other, seen, salt), is_holdem(game))
                got = eqs[shown] = e if k == 1 else 1.0 - e  # e: seat o's
            return got

        def value(state: BettingState, shown: int) -> F64:
            if state.finished and not state.is_showdown:
                return np.full(n, float(state.payoffs()[0]))
            out: F64 = checkdown_value(state, eq0(shown))
            return out

        deal = Deal(holes, board)
        state = BettingState.initial(game)
        shown = game.board_cards_through(0)
        terms = value(state, shown) - 0.0  # the hole cards (root mean 0)
        hyps: Hyps = {0: view.possible(0).astype(np.float64)}
        lik = np.ones(n)
        bo: Belief | None = None if mo is None else ((1.0, mo.start(o, deal)),)
        round_ = 0
        for action in actions:
            if state.round != round_:  # new board cards: holdings with them are out
                round_ = state.round
                mask = view.possible(round_)
                hyps = {key: w * mask for key, w in hyps.items() if (w * mask).any()}
            if state.player == k:
                dist = self._distribution(sm, view, hyps, state)
                lik = lik * dist.get(action, np.zeros(n))
                if len(dist) > 1:
                    ev = np.zeros(n)
                    for a, q in dist.items():
                        ev += q * value(state.apply(a), shown)
                    terms = terms + value(state.apply(action), shown) - ev
                if mo is not None and bo is not None:
                    bo = observe_belief(mo, bo, state, action)
            elif mo is not None and bo is not None:
                odist = action_distribution(mo, bo, state, o, deal)
                key = RAISE_RANGE if (RAISE_RANGE in odist
                                      and action.kind is ActionKind.RAISE) else action
                got = odist[key]
                if len(odist) > 1:
                    ev = np.zeros(n)
                    for a, (qo, _) in odist.items():
                        ev += qo * (_raise_mean(state, eq0(shown)) if a is RAISE_RANGE
                                   else value(state.apply(a), shown))
                    terms = terms + value(state.apply(action), shown) - ev
                bo = got[1]
            hyps = sm.update(view, hyps, state, action)
            state = state.apply(action)
            now = game.board_cards_through(state.round)
            if now > shown:
                terms = terms + value(state, now) - value(state, shown)
                shown = now
        y = value(state, len(board)) - terms
        dead = np.array(list(other) + list(board), dtype=np.int64)
        w = np.where(np.isin(self.holes, dead).any(axis=1), 0.0, lik)
        return y, w, self.index[tuple(sorted(holes[k]))]

    def correction(self, models: Sequence[Model | None],
                   holes: tuple[tuple[int, ...], ...], board: tuple[int, ...],
                   actions: Sequence[Action], salt: tuple[int, ...] = (),
                   ) -> tuple[float, int]:
        """``sum over the batched seats of (Y_real - mean_w Y)`` (subtracted from ``X``)
        and the holdings averaged."""
        out = 0.0
        count = 0
        for p in range(len(models)):
            if not batch_applies(models, p):
                continue
            y, w, real = self.seat(models, holes, board, actions, p, salt)
            if not w[real] > 0.0:
                raise AbstractionError(
                    f"expected the batched model of position {p} to give its real cards "
                    f"{holes[p]!r} a positive probability of the actions "
                    f"{''.join(str(a) for a in actions)!r}, got {w[real]!r}")
            live = w > 0.0
            out += float(y[real] - (w[live] @ y[live]) / w[live].sum())
            count += int(live.sum())
        return out, count
