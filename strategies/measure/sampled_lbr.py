"""Sampled local best response (Lisý and Bowling, 2017): real hands against the real agent.

Where :mod:`strategies.measure.lbr` values LBR exactly (small games), this module *plays* it: hands
are dealt from a seed (the reference dealing, :func:`agent.acpc.dealing.deal_hands`) and
each deal is played twice, LBR in position 0 and then in position 1 with the same cards by
position (duplicate: LBR gets the agent's cards the second time, which cuts the card
luck). The agent is the real policy object (:func:`agent.agents.make_policy`: strategy file
with mapping, purification and size convention, or a built-in), asked through
``act(MatchState)`` and drawing its private randomness exactly as in a match (no time guard:
a match's 1 s guard never triggers at these speeds). Any two-player no-limit game.

**LBR's side.** It never sees the agent's cards. It keeps the agent's *range*: a weight per
hole of the deck (1,326 in hold'em; :func:`strategies.measure.lbr_cards.all_holes`), uniform at the
start, zero for holes that touch its own cards or the board, and after every agent action
``a`` multiplied by ``P(a | hole, history)`` from an *agent model*: for a strategy file the
decision model of :mod:`agent.decision` expanded (:class:`StrategyModel`; the rules and
every fallback are described there). It carries *hypotheses*, pairs (abstract node, or
off-tree) x weight per hole. An LBR raise is read as the agent reads it
(:func:`agent.decision.read_on_tree`, the same size convention): a randomized mapping
splits a hypothesis in two with weights ``f`` and ``1 - f`` (the agent's private draw: a
*mixture*, never a guess). An agent action keeps, per hypothesis, the abstract actions
that :func:`agent.decision.own_moves` turns into that real action, weighted by the
purified row of each hole's bucket (:func:`strategies.measure.lbr_cards.hole_buckets`),
and moves to their children. Built-ins: ``call``, ``fold`` and ``minraise``
ignore their cards (the range never changes), ``random`` too (its probabilities are known:
:class:`RandomModel`), ``equity`` is asked hole by hole (:class:`QueryModel`).

**LBR's decision** (``choose``): with ``w`` the range and ``eq`` LBR's equity against each
hole with the rest of the board dealt out (:func:`strategies.measure.lbr_cards.equities`), the
values, in chips of the hand, of

* fold (facing a bet): ``-spent_LBR``;
* check/call: ``sum_h w_h (2 eq_h - 1) S / sum_h w_h`` with ``S`` the amount both have in
  after the call (then everybody checks or calls to the showdown);
* a raise to ``T``: the agent folds hole ``h`` with its model probability ``p_h`` at the
  state after the raise (translation included), LBR then wins ``spent_agent``; else it calls
  and the hand is checked down: ``sum_h w_h [p_h spent_agent + (1 - p_h)(2 eq_h - 1) T] /
  sum_h w_h``.

The candidate raises are the legal raise nearest each pot fraction of ``fractions``
(default :data:`DEFAULT_FRACTIONS`; nearest in real pot fraction, ties to the smaller, as
:func:`strategies.measure.lbr.candidate_actions`) and the all-in. The maximum wins; ties go to the
first of fold, call, raises by size. **Preflop** (:data:`PREFLOP_RULES`): ``call`` (the
default, as the fast configuration of the published evaluations: LBR checks or calls every
preflop decision, so hold'em needs no preflop equities) or ``best`` (the same rule as
later). Preflop equities (:data:`PREFLOP_EQUITY_RULES`, ``preflop_equity``): ``exact``
(the default) reads hold'em's from the bundled table over every board
(:mod:`strategies.measure.preflop_equity`); other games, and ``sampled``, use every board
when there are at most :data:`strategies.measure.lbr_cards.MAX_EXACT_COMPLETIONS`, else
:data:`strategies.measure.lbr_cards.PREFLOP_SAMPLES` boards drawn from the hand's seeded
generator (the rule of every hold'em run before 2026-11-29: ``sampled`` reproduces them).

**Published settings** (:data:`SETTINGS`, ``--setting``): LBR's menu per round
(:class:`Menu`: check/call only, or fold, check/call, the raises nearest some pot fractions
and the all-in), as Lisý and Bowling's Table 1: ``fc``, ``fcpa-tr``, ``56-tr``, ``56-all``.
Today's ``fractions``/``preflop`` pair is :meth:`LbrSettings.legacy`.

**Imaginary observations** (``values="imaginary"``, :func:`imaginary_value`): a hand that
ends in a showdown is scored as the mean of LBR's payoff against every hole of the agent's
range at the end (prior times the agent's probability of its actions); LBR's actions do not
depend on the agent's hole, so this is the expectation of the played chips given what is
public and LBR's cards (unbiased, less variance). Folded hands keep their chips.

**Fast path** (``fast=True``, the default of :class:`LbrConfig`): the same decisions and
values as the hole-by-hole path, bit for bit (tested), faster: :class:`BucketCache` fills a
board's buckets for every hole at once (:func:`strategies.measure.lbr_cards.board_buckets`,
the flop from the cached strength table when ``flop_table``; a potential-aware file's
through :meth:`agent.abstraction.holdem_pa.PotentialAwareCards.board_buckets`),
:meth:`HandView.every_bucket` reads every hole's bucket once per round and hand,
:meth:`StrategyModel.probs` reads the agent's rows from each node's purified rows
(:meth:`StrategyModel.purified`, once per node and process), and
:meth:`StrategyModel.raise_fold_weights` gives the agent's fold weights after every
candidate raise at once (the translation of a size is the same for every hole: read once per
size and hypothesis, then one batch of array work per reading structure; the readings and
their grouping kept per betting, :meth:`StrategyModel.raise_plan`, as are the candidate
raises, :func:`kept_raises`, and the model's :meth:`StrategyModel.standing`,
:meth:`StrategyModel.own_moves` and :meth:`StrategyModel.reading`). LBR's equities come by
rank class
(:func:`strategies.measure.lbr_cards.equities` with ``fast``: the same counts), the preflop
boards' smallest keys from one kernel, and showdowns from :func:`agent.handeval.evaluate`.

**Work and results.** Deals come in chunks of :data:`CHUNK_DEALS`; chunk ``c`` deals from
its own MT19937 seed and its agent has its own seed, both derived from ``(seed, c)``, so the
hands and their values do not depend on how many worker processes play them
(:func:`play_chunk` takes and returns JSON text: nothing of ours is pickled). Values are
chips per hand for LBR; :func:`summarize` gives mbb/h with a 95% normal interval over the
deals (each deal's value is the mean of its two hands).

Imports numpy, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from agent.abstraction.holdem_buckets import HoldemCards
from agent.abstraction.holdem_pa import PotentialAwareCards
from agent.abstraction.translation import MappingFn
from agent.acpc.betsize import pot_after_call
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
from agent.acpc.dealing import Deal, deal_hands
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.evaluator import rank_hand
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import view_of
from agent.builtin import (
    CallPolicy,
    EquityPolicy,
    FoldPolicy,
    MinRaisePolicy,
    OffTreePolicy,
    RandomPolicy,
)
from agent.decision import (
    NodeKinds,
    Reading,
    after_fallback,
    fallback_action,
    own_moves,
    read_on_tree,
    read_raises,
    standing,
)
from agent.handeval import evaluate
from agent.policy import StrategyPolicy
from agent.strategy.fileformat import DTYPES, QUANT
from agent.strategy.hotswap import LoadedStrategy
from agent.strategy.kernels import purify_rows
from agent.strategy.purification import Purification
from strategies.measure.lbr_cards import (
    all_holes,
    board_buckets,
    completions,
    equities,
    hole_buckets,
    is_holdem,
    suit_permutations,
)
from strategies.measure.preflop_equity import HOLES, preflop_equities

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

DEFAULT_FRACTIONS: tuple[float, ...] = (0.5, 1.0, 2.0)
"""Sampled LBR's bet sizes besides the all-in (pot fractions)."""

PREFLOP_RULES = ("call", "best")
"""LBR's preflop rule (module docstring)."""

PREFLOP_EQUITY_RULES = ("exact", "sampled")
"""Where LBR's hold'em preflop equities come from (module docstring): the bundled exact
table, or boards drawn per decision (the rule before 2026-11-29)."""

PUBLISHED_FRACTIONS: tuple[float, ...] = tuple(0.05 * 1.15**k for k in range(55))
"""The published "56 bets": 0.05 x 1.15^k of the pot, k = 0..54 (0.05 to 94.8 pots), and
the all-in."""

MAX_FRACTIONS = 64
"""Most bet sizes one round's menu may hold (LBR's own bound, not a betting spec's: the
published menu has 55 and the all-in)."""


@dataclass(frozen=True)
class Menu:
    """LBR's actions in one round: ``bets`` False = it only checks or calls (the published
    "C"); else fold (facing a bet), check/call, the legal raise nearest each pot fraction
    of ``fractions`` and, with ``all_in``, the all-in."""

    bets: bool
    fractions: tuple[float, ...] = ()
    all_in: bool = False


CALL_ONLY = Menu(False)
FC = Menu(True)
FCPA = Menu(True, (1.0,), True)
BETS_56 = Menu(True, PUBLISHED_FRACTIONS, True)

SETTINGS: dict[str, tuple[Menu, ...]] = {
    "fc": (FC, FC, FC, FC),
    "fcpa-tr": (CALL_ONLY, CALL_ONLY, FCPA, FCPA),
    "56-tr": (CALL_ONLY, CALL_ONLY, BETS_56, BETS_56),
    "56-all": (BETS_56, BETS_56, BETS_56, BETS_56),
}
"""The published settings (Lisý and Bowling 2017, Table 1), one menu per round (preflop,
flop, turn, river): ``fc`` = FC on every round; ``fcpa-tr`` = C, C, FCPA, FCPA (fold,
call, pot, all-in on the turn and river, "rounds 3-4"); ``56-tr`` = C, C, 56 bets, 56 bets;
``56-all`` = 56 bets on every round. Games with fewer rounds use the first menus; games
with more repeat the last."""

VALUE_RULES = ("played", "imaginary")
"""How a hand is scored (module docstring): its chips, or imaginary observations."""

CHUNK_DEALS = 10
"""Deals per chunk (20 hands): the unit of work of a worker and of the seeds."""

Hyps = dict[int, F64]
"""Hypotheses: abstract node (or :data:`agent.decision.OFF_TREE`; 0 for built-ins) ->
weight per hole."""


# --------------------------------------------------------------------------- hands


@dataclass
class HandView:
    """What the range machinery knows of one hand: the holes, the agent's position and the
    cards LBR sees (the agent's hole is there only for the agent's policy)."""

    game: Game
    holes: I64
    agent_position: int
    hand_number: int
    lbr_hole: tuple[int, ...]
    board: tuple[int, ...]
    """The whole board of the hand; rounds see their prefix."""
    cache: BucketCache | None = None
    fast: bool = False
    """Read the agent's rows through :meth:`every_bucket` (:meth:`StrategyModel.probs`)."""
    _buckets: dict[int, I64] = field(default_factory=dict)
    _every: dict[int, I64] = field(default_factory=dict)
    columns: dict[tuple[int, int, int], F64] = field(default_factory=dict)
    """Memo of :meth:`StrategyModel.column`."""
    _possible: dict[int, npt.NDArray[np.bool_]] = field(default_factory=dict)

    def visible(self, round_: int) -> tuple[int, ...]:
        return self.board[: self.game.board_cards_through(round_)]

    def possible(self, round_: int) -> npt.NDArray[np.bool_]:
        """Holes that miss LBR's cards and the board visible in ``round_`` (once per
        round; read-only)."""
        have = self._possible.get(round_)
        if have is None:
            dead = np.zeros(64, dtype=bool)
            dead[list(self.lbr_hole) + list(self.visible(round_))] = True
            have = np.logical_not(dead[self.holes].any(axis=1))
            have.setflags(write=False)
            self._possible[round_] = have
        return have

    def buckets(self, cards: Any, round_: int, which: I64) -> I64:
        """The agent's bucket of holes ``which`` (indices) in ``round_``; computed once per
        hole and round (-1 = not yet), or read from the shared :class:`BucketCache`."""
        if self.cache is not None:
            return self.cache.buckets(cards, round_, self.visible(round_), self.holes, which)
        have = self._buckets.get(round_)
        if have is None:
            have = np.full(self.holes.shape[0], -1, dtype=np.int64)
            self._buckets[round_] = have
        todo = which[have[which] < 0]
        if todo.size:
            have[todo] = hole_buckets(cards, round_, self.holes[todo], self.visible(round_))
        return have[which]

    def every_bucket(self, cards: Any, round_: int) -> I64:
        """The agent's bucket of every hole in ``round_``, -1 for the impossible ones (once
        per round and hand; read-only)."""
        have = self._every.get(round_)
        if have is None:
            every = np.flatnonzero(self.possible(round_))
            have = np.full(self.holes.shape[0], -1, dtype=np.int64)
            have[every] = self.buckets(cards, round_, every)
            have.setflags(write=False)
            self._every[round_] = have
        return have


class BucketCache:
    """Hold'em buckets of every hole by suit-canonical board, shared by the hands of a
    process (LRU of :attr:`size` boards): the duplicate hand replays the same boards, and
    flops repeat up to suit relabelling (1,755 classes). Sound because the hold'em metric
    and the potential-aware clusters are invariant under relabelling the suits
    (:mod:`agent.abstraction.holdem_buckets`, :mod:`agent.abstraction.holdem_pa`; tested):
    hole ``h`` on board ``b`` has the bucket of ``perm(h)`` on ``perm(b)``."""

    def __init__(self, holes: I64, size: int = 20_000, fast: bool = False,
                 flop_values: F64 | None = None) -> None:
        self.size = size
        self.flop_values = flop_values
        """See :func:`strategies.measure.lbr_cards.board_buckets` (fast path only)."""
        self.fast = fast
        """Fill a board's entry for every hole at once (:func:`board_buckets`), else only
        the holes asked for, hole by hole (:func:`hole_buckets`); same buckets."""
        self._card_perm, self._hole_perm = suit_permutations(holes)
        self._boards: OrderedDict[tuple[int, ...], npt.NDArray[np.int16]] = OrderedDict()
        self._forms: dict[tuple[int, tuple[int, ...]], tuple[int, tuple[int, ...]]] = {}

    def buckets(self, cards: Any, round_: int, board: tuple[int, ...], holes: I64,
                which: I64) -> I64:
        known = self._forms.get((round_, board))
        if known is None:
            forms = [tuple(sorted(row)) for row in self._card_perm[:, list(board)].tolist()] \
                if board else [()] * len(self._card_perm)
            p = min(range(len(forms)), key=forms.__getitem__)
            known = (p, (round_, *forms[p]))
            if len(self._forms) > self.size:
                self._forms.clear()
            self._forms[(round_, board)] = known
        p, key = known
        have = self._boards.get(key)
        if have is None:
            have = np.full(holes.shape[0], -1, dtype=np.int16)
            self._boards[key] = have
            if len(self._boards) > self.size:
                self._boards.popitem(last=False)
        else:
            self._boards.move_to_end(key)
        at = self._hole_perm[p, which]
        todo = which[have[at] < 0]
        if todo.size and self.fast:
            every = board_buckets(cards, round_, holes, board, self.flop_values)
            live = np.flatnonzero(every >= 0)
            have[self._hole_perm[p, live]] = every[live]
        elif todo.size:
            have[self._hole_perm[p, todo]] = hole_buckets(cards, round_, holes[todo], board)
        out: I64 = have[at].astype(np.int64)
        return out


def total(hyps: Hyps, size: int) -> F64:
    """The range: the weight per hole summed over the hypotheses."""
    out = np.zeros(size)
    for w in hyps.values():
        out += w
    return out


def _add(out: Hyps, key: int, w: F64) -> None:
    if not w.any():
        return
    have = out.get(key)
    out[key] = w.copy() if have is None else have + w


class AgentModel(Protocol):
    """``P(action | hole, history)`` of an agent, through hypotheses (module docstring)."""

    def update(self, view: HandView, hyps: Hyps, state: BettingState, action: Action) -> Hyps:
        """The hypotheses after ``action`` at ``state`` (the agent's or LBR's)."""
        ...


# --------------------------------------------------------------------------- agent models


MAX_RAISE_PLANS = 10_000
"""Raise plans a :class:`StrategyModel` keeps (:meth:`StrategyModel.raise_plan`; with 56
sizes up to about 9 KB each, measured), and candidate raises :func:`kept_raises` keeps."""


@dataclass(frozen=True)
class RaisePlan:
    """The candidate raises' fold weights as array work (:meth:`StrategyModel.raise_plan`):
    per group of sizes read alike, the sizes (``js``), their coefficients (``[size,
    term]``) and, per abstract child where the agent may fold, its fold action and the
    hypotheses that feed it (index, and coefficient column or -1 for weight 1)."""

    groups: list[tuple[I64, F64, list[tuple[int, int, list[tuple[int, int]]]]]]


@dataclass(frozen=True)
class _KeptPlan:
    plan: RaisePlan | None
    smallest: list[float]
    """Per hypothesis, its smallest nonzero coefficient (1.0 if none)."""


class StrategyModel:
    """The model of a :class:`~agent.policy.StrategyPolicy` (module docstring)."""

    def __init__(self, loaded: LoadedStrategy, mapping: MappingFn,
                 purification: Purification, sizes_in: str) -> None:
        self.loaded = loaded
        self.mapping = mapping
        self.purification = purification
        self.sizes_in = sizes_in
        strategy = loaded.strategy
        table = np.asarray(strategy.table).astype(np.float64)
        if strategy.table.dtype == DTYPES["uint16"]:
            table /= QUANT
        self._table = table
        self._layout = strategy.layout
        self._purified: dict[int, F64] = {}
        self._plans: dict[tuple[str, tuple[int, ...], tuple[int, ...], tuple[bool, ...]],
                          _KeptPlan] = {}
        self._standing: dict[tuple[int, str], str | None] = {}
        self._moves: dict[tuple[int, str], list[tuple[Action, int]]] = {}
        self._readings: dict[tuple[int, str, Action], Reading] = {}

    @classmethod
    def of(cls, policy: StrategyPolicy) -> StrategyModel:
        return cls(policy.loaded, policy.mapping, policy.purification, policy.sizes_in)

    def probs(self, view: HandView, node_id: int, round_: int, which: I64) -> F64:
        """``[len(which), k]``: the purified row of each hole's bucket at ``node_id``."""
        if view.fast:  # every hole's bucket once per round and hand, the node's rows once
            buckets = view.every_bucket(self.loaded.cards, round_)[which]
            if buckets.size and buckets.min() < 0:
                raise AbstractionError(f"expected holes possible in round {round_}, got "
                                       f"{view.holes[which[buckets < 0][0]].tolist()!r}")
            out: F64 = self.purified(node_id)[buckets]
            return out
        return self._rows(view, node_id, round_, which)

    def column(self, view: HandView, node_id: int, round_: int, action: int) -> F64:
        """The probability of abstract action ``action`` at ``node_id`` for every hole, 0
        for the holes impossible in ``round_`` (once per hand; read-only)."""
        key = (node_id, round_, action)
        have = view.columns.get(key)
        if have is None:
            buckets = view.every_bucket(self.loaded.cards, round_)
            have = np.where(buckets >= 0,
                            self.purified(node_id)[np.maximum(buckets, 0), action], 0.0)
            have.setflags(write=False)
            view.columns[key] = have
        return have

    def raise_fold_weights(self, view: HandView, hyps: Hyps, state: BettingState,
                           tos: Sequence[int], which: I64) -> F64:
        """``[len(tos), len(which)]``: row ``j`` is the agent's fold weight per hole of
        ``which`` after LBR's raise to ``tos[j]`` at ``state``, ``total(update(view,
        update(view, hyps, state, raise), after, FOLD))[which]`` (zeros if the agent cannot
        fold after it), every size at once. The translation is the same for every hole, so
        each size costs only its reading per hypothesis (scalars, all sizes read at once:
        :func:`agent.decision.read_raises`); sizes whose readings have the same structure
        (the same abstract children, fed by the same hypotheses, in the same order) share
        one batch of array work whose every element is the same products and sums, in the
        same order, as the two updates and the total compute size by size (``_add`` leaves
        out a term whose product is all zero: with rounding monotone, exactly when the
        term's largest entry gives zero; a hypothesis the strategy is not asked at falls
        back to check/call and adds nothing): the same bits. That structure and its
        coefficients (:class:`RaisePlan`) depend only on the betting, the sizes, the
        hypotheses' nodes and which of them are empty, so they are kept per process
        (:meth:`raise_plan`) and the hands that reach the same betting reuse them."""
        n = which.size
        out = np.zeros((len(tos), n))
        if not tos:
            return out
        items = list(hyps.items())
        tops = [float(w.max()) if w.size else 0.0 for _, w in items]
        plan = self.raise_plan(view, state, tuple(tos), [k for k, _ in items], tops)
        if plan is None:
            return out
        ws = [w[which] for _, w in items]  # zero outside ``which`` (the range's holes)
        for js, table, children in plan.groups:
            acc = np.zeros((len(js), n))
            for child, fold, terms in children:
                wc: F64 | None = None
                for h, k in terms:
                    w = ws[h]
                    v = w[None, :] if k < 0 else table[:, k, None] * w[None, :]
                    wc = v if wc is None else wc + v
                assert wc is not None
                acc += wc * self.column(view, child, state.round, fold)[which][None, :]
            out[js] = acc
        return out

    def raise_plan(self, view: HandView, state: BettingState, tos: tuple[int, ...],
                   nodes: list[int], tops: list[float]) -> RaisePlan | None:
        """How :meth:`raise_fold_weights` combines the hypotheses (nodes ``nodes``, largest
        weights ``tops``) after each raise of ``tos`` at ``state`` (None: the agent cannot
        fold after a raise there): read and grouped once per betting, sizes, nodes and
        empty hypotheses, and kept (up to :data:`MAX_RAISE_PLANS`, then all dropped). A
        term is left out when its coefficient times its hypothesis's largest weight is 0;
        a kept plan is reused only where that is decided by the coefficient alone (every
        product with the smallest nonzero coefficient stays nonzero), else it is made again
        for these weights."""
        key = (state.betting, tos, tuple(nodes), tuple(t != 0.0 for t in tops))
        have = self._plans.get(key)
        if have is not None and (have.plan is None or all(
                t == 0.0 or t * c != 0.0 for t, c in zip(tops, have.smallest, strict=True))):
            return have.plan
        made = self._make_raise_plan(view, state, tos, nodes, tops)
        if have is None:
            if len(self._plans) >= MAX_RAISE_PLANS:
                self._plans.clear()
            self._plans[key] = made
        return made.plan

    def _make_raise_plan(self, view: HandView, state: BettingState, tos: tuple[int, ...],
                         nodes: list[int], tops: list[float]) -> _KeptPlan:
        # every raise at ``state`` leaves the other player to act in the same round
        after = state.apply(Action(ActionKind.RAISE, tos[0]))
        if after.finished or after.player != view.agent_position or not after.can_fold():
            return _KeptPlan(None, [1.0] * len(nodes))
        tree = self.loaded.tree
        smallest = [1.0] * len(nodes)
        readers: list[int | list[Reading]] = []
        for node_id in nodes:
            why = self.standing(node_id, state)
            if why is not None:  # LBR's action under a fallback: the history waits or leaves
                readers.append(after_fallback(node_id, why))
            else:
                node = tree.nodes[node_id]
                readers.append(read_raises(node, NodeKinds.of(node), state, tos,
                                           self.sizes_in))
        Shape = tuple[tuple[int, tuple[tuple[int, bool], ...]], ...]
        shapes: dict[Shape, tuple[list[int], list[list[float]]]] = {}
        for j in range(len(tos)):
            children: dict[int, list[tuple[int, float | None]]] = {}
            for h, reader in enumerate(readers):
                if isinstance(reader, int):
                    terms: list[tuple[int, float | None]] = [(reader, None)]
                else:
                    reading = reader[j]
                    if reading.certain:
                        terms = [(reading.low, None)]
                    else:
                        f = reading.prob_low(self.mapping)
                        terms = [(reading.low, f), (reading.high, 1.0 - f)]
                for child, c in terms:
                    if c is not None and c != 0.0:
                        smallest[h] = min(smallest[h], abs(c))
                    if (1.0 if c is None else c) * tops[h] != 0.0:
                        children.setdefault(child, []).append((h, c))
            shape: Shape = tuple((child, tuple((h, c is None) for h, c in ts))
                                 for child, ts in children.items())
            js, coefs = shapes.setdefault(shape, ([], []))
            js.append(j)
            coefs.append([c for ts in children.values() for _, c in ts if c is not None])
        groups: list[tuple[I64, F64, list[tuple[int, int, list[tuple[int, int]]]]]] = []
        for shape, (js, coefs) in shapes.items():
            table = np.array(coefs, dtype=np.float64).reshape(len(js), -1)
            table.setflags(write=False)
            kept: list[tuple[int, int, list[tuple[int, int]]]] = []
            col = 0
            for child, ts in shape:
                first = col
                col += sum(not plain for _, plain in ts)
                if self.standing(child, after) is not None:
                    continue
                fold = NodeKinds.of(tree.nodes[child]).fold
                if fold < 0:
                    continue
                terms_at: list[tuple[int, int]] = []
                k = first
                for h, plain in ts:
                    if plain:
                        terms_at.append((h, -1))
                    else:
                        terms_at.append((h, k))
                        k += 1
                kept.append((child, fold, terms_at))
            groups.append((np.array(js, dtype=np.int64), table, kept))
        return _KeptPlan(RaisePlan(groups), smallest)

    def standing(self, node_id: int, state: BettingState) -> str | None:
        """:func:`agent.decision.standing` of ``node_id`` at ``state``, kept per node and
        betting (a function of the two; up to :data:`MAX_RAISE_PLANS`, then all dropped)."""
        key = (node_id, state.betting)
        if key in self._standing:
            return self._standing[key]
        if len(self._standing) >= MAX_RAISE_PLANS:
            self._standing.clear()
        why = self._standing[key] = standing(self.loaded.tree, node_id, state)
        return why

    def reading(self, node_id: int, state: BettingState, action: Action) -> Reading:
        """:func:`agent.decision.read_on_tree` of LBR's ``action`` at ``node_id`` and
        ``state``, kept per node, betting and action (up to :data:`MAX_RAISE_PLANS`, then
        all dropped)."""
        key = (node_id, state.betting, action)
        have = self._readings.get(key)
        if have is None:
            if len(self._readings) >= MAX_RAISE_PLANS:
                self._readings.clear()
            node = self.loaded.tree.nodes[node_id]
            have = self._readings[key] = read_on_tree(node, NodeKinds.of(node), state, action,
                                                      self.sizes_in)
        return have

    def own_moves(self, node_id: int, state: BettingState) -> list[tuple[Action, int]]:
        """:func:`agent.decision.own_moves` of ``node_id`` at ``state``, kept likewise
        (read-only)."""
        key = (node_id, state.betting)
        have = self._moves.get(key)
        if have is None:
            if len(self._moves) >= MAX_RAISE_PLANS:
                self._moves.clear()
            have = self._moves[key] = own_moves(self.loaded.tree.nodes[node_id], state)
        return have

    def purified(self, node_id: int) -> F64:
        """``[buckets, k]``: the purified row of every bucket at ``node_id``, once per node
        (read-only): purification treats each row on its own, so these are the very rows
        :meth:`_rows` purifies hand by hand."""
        have = self._purified.get(node_id)
        if have is None:
            k = int(self._layout.num_actions[node_id])
            start = int(self._layout.offsets[node_id])
            rows = self._table[start:start + int(self._layout.rows[node_id]) * k]
            have = purify_rows(rows.reshape(-1, k), self.purification)
            have.setflags(write=False)
            self._purified[node_id] = have
        return have

    def _rows(self, view: HandView, node_id: int, round_: int, which: I64) -> F64:
        k = int(self._layout.num_actions[node_id])
        buckets = view.buckets(self.loaded.cards, round_, which)
        start = int(self._layout.offsets[node_id])
        rows = self._table[start + buckets[:, None] * k + np.arange(k)[None, :]]
        return purify_rows(rows, self.purification)

    def update(self, view: HandView, hyps: Hyps, state: BettingState, action: Action) -> Hyps:
        """The hypotheses after ``action``: the decision model (:mod:`agent.decision`)
        expanded per hypothesis, the agent's actions weighted by each hole's row."""
        tree = self.loaded.tree
        agent = state.player == view.agent_position
        out: Hyps = {}
        for node_id, w in hyps.items():
            why = self.standing(node_id, state) if view.fast else \
                standing(tree, node_id, state)
            if why is not None:  # the agent waits or is off the tree
                if not agent or action == fallback_action(state, why):
                    _add(out, after_fallback(node_id, why), w)
                continue
            node = tree.nodes[node_id]
            if agent:
                which = np.flatnonzero(w)
                probs = self.probs(view, node_id, state.round, which)
                moves = self.own_moves(node_id, state) if view.fast else \
                    own_moves(node, state)
                for i, (real, child) in enumerate(moves):
                    if real == action:
                        moved = np.zeros_like(w)
                        moved[which] = w[which] * probs[:, i]
                        _add(out, child, moved)
                continue
            reading = self.reading(node_id, state, action) if view.fast else \
                read_on_tree(node, NodeKinds.of(node), state, action, self.sizes_in)
            if reading.certain:
                _add(out, reading.low, w)
                continue
            f = reading.prob_low(self.mapping)
            _add(out, reading.low, f * w)
            _add(out, reading.high, (1.0 - f) * w)
        return out


class RandomModel:
    """``builtin:random``: its kind and size probabilities, the same for every hole."""

    def update(self, view: HandView, hyps: Hyps, state: BettingState, action: Action) -> Hyps:
        if state.player != view.agent_position:
            return hyps
        return {k: w * random_prob(state, action) for k, w in hyps.items()}


def random_prob(state: BettingState, action: Action) -> float:
    """The probability that :class:`agent.builtin.RandomPolicy` plays ``action``."""
    kinds = state.legal_actions()
    weights = RandomPolicy.WEIGHTS
    if action.kind not in kinds:
        return 0.0
    p = weights[action.kind] / sum(weights[k] for k in kinds)
    if action.kind is ActionKind.RAISE and state.game.is_nolimit:
        bounds = state.raise_bounds()
        assert bounds is not None
        return p / (bounds[1] - bounds[0] + 1) if bounds[0] <= action.raise_to <= bounds[1] \
            else 0.0
    return p


class QueryModel:
    """A built-in without randomness, asked hole by hole through its ``act`` (``call``,
    ``fold``, ``minraise`` once: they ignore their cards; ``equity`` per hole)."""

    def __init__(self, policy: Any, per_hole: bool) -> None:
        self.policy = policy
        self.per_hole = per_hole

    def update(self, view: HandView, hyps: Hyps, state: BettingState, action: Action) -> Hyps:
        if state.player != view.agent_position:
            return hyps
        w0 = total(hyps, view.holes.shape[0])
        which = np.flatnonzero(w0) if self.per_hole else np.array([-1])
        like = np.zeros(view.holes.shape[0])
        for i in which.tolist():
            hole = tuple(int(c) for c in view.holes[i]) if i >= 0 else view.lbr_hole
            cards = tuple(hole if p == view.agent_position else view.lbr_hole
                          for p in range(2))
            ms = view_of(view.agent_position, view.hand_number, state, cards, view.board)
            played = self.policy.act(ms) == action
            if i < 0:
                like[:] = float(played)
            else:
                like[i] = float(played)
        return {k: w * like for k, w in hyps.items() if (w * like).any()}


def agent_model(policy: Any) -> AgentModel:
    """The model of a policy :func:`agent.agents.make_policy` made.

    Raises:
        UsageError: for a policy of a kind this module does not model.
    """
    if isinstance(policy, StrategyPolicy):
        return StrategyModel.of(policy)
    if isinstance(policy, RandomPolicy):
        return RandomModel()
    if isinstance(policy, EquityPolicy):
        # the model's own instance, asked for every hole: a cache of every hole's equity
        # on the board (its values are a function of the cards, so only speed changes)
        setattr(policy, "CACHE_SIZE", 1 << 16)  # noqa: B010 (shadows the ClassVar)
        return QueryModel(policy, per_hole=True)
    if isinstance(policy, OffTreePolicy):  # deterministic, a function of its cards too
        return QueryModel(policy, per_hole=True)
    if isinstance(policy, CallPolicy | FoldPolicy | MinRaisePolicy):
        return QueryModel(policy, per_hole=False)
    raise UsageError(f"expected a strategy file or a built-in agent for LBR, got "
                     f"{type(policy).__name__!r}")


# --------------------------------------------------------------------------- LBR


def candidate_raises(state: BettingState, fractions: Sequence[float],
                     all_in: bool = True) -> list[int]:
    """Raise-to amounts LBR considers: the legal one nearest each pot fraction (ties to the
    smaller) and, with ``all_in``, the all-in, ascending; none if no raise is legal."""
    bounds = state.raise_bounds()
    if bounds is None:
        return []
    lo, hi = bounds
    base = pot_after_call(state)
    out = {hi} if all_in else set()
    for f in fractions:
        target = state.max_spent + f * base
        below = min(max(math.floor(target), lo), hi)
        above = min(max(math.ceil(target), lo), hi)
        out.add(below if abs(below - target) <= abs(above - target) else above)
    return sorted(out)


_KEPT_RAISES: dict[tuple[Game, str, Menu], list[int]] = {}


def kept_raises(state: BettingState, menu: Menu) -> list[int]:
    """:func:`candidate_raises` of ``menu`` at ``state``, kept per game, betting and menu
    (up to :data:`MAX_RAISE_PLANS`, then all dropped; read-only)."""
    key = (state.game, state.betting, menu)
    have = _KEPT_RAISES.get(key)
    if have is None:
        if len(_KEPT_RAISES) >= MAX_RAISE_PLANS:
            _KEPT_RAISES.clear()
        have = _KEPT_RAISES[key] = candidate_raises(state, menu.fractions, menu.all_in)
    return have


@dataclass
class LbrSettings:
    """How LBR plays: its menu per round (the last repeats) and how hands are scored."""

    menus: tuple[Menu, ...] = (CALL_ONLY, Menu(True, DEFAULT_FRACTIONS, True))
    """The default: today's (``--fractions``/``--preflop`` defaults, :meth:`legacy`)."""
    values: str = "played"
    preflop_equity: str = "exact"
    """:data:`PREFLOP_EQUITY_RULES`."""

    @classmethod
    def legacy(cls, fractions: Sequence[float] = DEFAULT_FRACTIONS,
               preflop: str = "call", preflop_equity: str = "exact") -> LbrSettings:
        """The menus of ``--fractions``/``--preflop``: the raises nearest ``fractions`` and
        the all-in on every round, preflop only checks or calls with ``preflop="call"``."""
        bets = Menu(True, tuple(fractions), True)
        return cls((CALL_ONLY if preflop == "call" else bets, bets), "played", preflop_equity)

    @classmethod
    def named(cls, name: str, values: str = "imaginary",
              preflop_equity: str = "exact") -> LbrSettings:
        """A published setting (:data:`SETTINGS`).

        Raises:
            UsageError: for a name that is not one of them.
        """
        if name not in SETTINGS:
            raise UsageError(f"expected an LBR setting among {', '.join(SETTINGS)}, got "
                             f"{name!r}")
        return cls(SETTINGS[name], values, preflop_equity)

    def menu(self, round_: int) -> Menu:
        return self.menus[min(round_, len(self.menus) - 1)]


class LbrPlayer:
    """LBR's decisions in one hand (module docstring)."""

    def __init__(self, view: HandView, model: AgentModel, settings: LbrSettings,
                 rng: np.random.Generator) -> None:
        self.view = view
        self.model = model
        self.settings = settings
        self.rng = rng
        self._eq: dict[int, F64] = {}

    def equity(self, round_: int, which: I64) -> F64:
        """LBR's equity against holes ``which`` in ``round_`` (cached per round)."""
        view = self.view
        have = self._eq.get(round_)
        if have is None:
            have = np.full(view.holes.shape[0], np.nan)
            self._eq[round_] = have
        todo = which[np.isnan(have[which])]
        if todo.size:
            board = view.visible(round_)
            # hold'em preflop: the bundled table over every board, no draws
            if not board and self.settings.preflop_equity == "exact" and \
                    is_holdem(view.game) and view.holes.shape[0] == HOLES:
                have[todo] = preflop_equities(view.lbr_hole, todo)
                return have[which]
            boards = completions(view.game, view.lbr_hole, board, self.rng, view.fast)
            have[todo] = equities(view.game, view.lbr_hole, board, view.holes[todo], boards,
                                  view.fast)
        return have[which]

    def values(self, hyps: Hyps, state: BettingState) -> list[tuple[Action, float]]:
        """Each candidate action with its value (chips; module docstring)."""
        view = self.view
        me = 1 - view.agent_position
        agent = view.agent_position
        w = total(hyps, view.holes.shape[0])
        which = np.flatnonzero(w)
        mass = float(w[which].sum())
        if not mass > 0:
            raise AbstractionError(f"expected the agent's action to have a positive "
                                   f"probability under LBR's model of it, got a range that "
                                   f"vanished at {state.betting!r}")
        ww = w[which]
        gain = 2.0 * self.equity(state.round, which) - 1.0
        edge = float(ww @ gain) / mass
        cap = min(view.game.stack[me], view.game.stack[agent]) if view.game.is_nolimit \
            else None
        out: list[tuple[Action, float]] = []
        if state.can_fold():
            out.append((FOLD, -float(state.spent[me])))
        called = state.max_spent if cap is None else min(state.max_spent, cap)
        out.append((CALL, edge * called))
        menu = self.settings.menu(state.round)
        tos = kept_raises(state, menu) if view.fast else \
            candidate_raises(state, menu.fractions, menu.all_in)
        if view.fast and isinstance(self.model, StrategyModel):  # every size at once
            folds_by = self.model.raise_fold_weights(view, hyps, state, tos, which)
            fold_mass = folds_by.sum(axis=1)  # each row's own pairwise sum, as row.sum()
            rest = ww[None, :] - folds_by
            for j, to in enumerate(tos):
                shown = to if cap is None else min(to, cap)
                value = (float(fold_mass[j]) * state.spent[agent]
                         + float(rest[j] @ gain) * shown) / mass  # one dot per row
                out.append((Action(ActionKind.RAISE, to), value))
            return out
        for to in tos:
            act = Action(ActionKind.RAISE, to)
            after = state.apply(act)
            moved = self.model.update(view, hyps, state, act)
            fold_w = np.zeros_like(w)
            if not after.finished and after.player == agent and after.can_fold():
                fold_w = total(self.model.update(view, moved, after, FOLD), w.size)
            folds = fold_w[which]
            shown = to if cap is None else min(to, cap)
            value = (float(folds.sum()) * state.spent[agent]
                     + float((ww - folds) @ gain) * shown) / mass
            out.append((act, value))
        return out

    def choose(self, hyps: Hyps, state: BettingState) -> Action:
        """LBR's action: the best value of its round's menu, first on ties (check/call in a
        call-only round)."""
        if not self.settings.menu(state.round).bets:
            return CALL
        options = self.values(hyps, state)
        best = max(v for _, v in options)
        return next(a for a, v in options if v >= best)


def showdown_values(state: BettingState, hole: Sequence[Sequence[int]],
                    board: Sequence[int], fast: bool = False) -> tuple[float, ...]:
    """Chips per position of a finished hand (the dealer's rule); ``fast``: the hands
    valued by :func:`agent.handeval.evaluate` (numba tables, the same integers) instead of
    the reference evaluator."""
    if state.is_showdown:
        visible = list(board[: state.game.board_cards_through(state.round)])
        rank = evaluate if fast else rank_hand
        return state.payoffs([rank(list(h) + visible) for h in hole])
    return state.payoffs()


@dataclass
class HandRecord:
    """One played hand, for tests and traces."""

    value: float
    """LBR's chips."""
    betting: str
    ranges: list[F64]
    """The range before each LBR decision: the weight per hole, not normalised (the
    likelihood of the agent's actions so far for each hole still possible)."""
    played: float = 0.0
    """LBR's chips as dealt (equal to :attr:`value` unless imaginary observations)."""


def play_hand(game: Game, deal: Deal, lbr_position: int, hand_number: int, policy: Any,
              model: AgentModel, settings: LbrSettings, rng: np.random.Generator,
              holes: I64 | None = None, keep_ranges: bool = False,
              cache: BucketCache | None = None, fast: bool = False) -> HandRecord:
    """Play one hand: LBR in ``lbr_position`` against ``policy`` (module docstring);
    ``cache`` (hold'em buckets shared between hands) must come with the full ``holes``;
    ``fast`` memoises the agent's rows within the hand (same values)."""
    holes = all_holes(game) if holes is None else holes
    agent = 1 - lbr_position
    view = HandView(game, holes, agent, hand_number, tuple(deal.hole[lbr_position]),
                    tuple(deal.board), cache, fast)
    lbr = LbrPlayer(view, model, settings, rng)
    state = BettingState.initial(game)
    hyps: Hyps = {0: view.possible(0).astype(np.float64)}
    round_ = 0
    ranges: list[F64] = []
    while not state.finished:
        if state.round != round_:  # new board cards: holes with them are impossible
            round_ = state.round
            mask = view.possible(round_)
            hyps = {k: w * mask for k, w in hyps.items() if (w * mask).any()}
        if state.player == agent:
            ms = view_of(agent, hand_number, state, deal.hole, deal.board)
            action = policy.act(ms)
        else:
            if keep_ranges:
                ranges.append(total(hyps, holes.shape[0]))
            action = lbr.choose(hyps, state)
        hyps = model.update(view, hyps, state, action)
        state = state.apply(action)
    played = showdown_values(state, deal.hole, deal.board, fast)[lbr_position]
    if settings.values == "imaginary" and state.is_showdown:
        value = imaginary_value(view, state, hyps)
    else:
        value = played
    return HandRecord(value, state.betting, ranges, played)


def imaginary_value(view: HandView, state: BettingState, hyps: Hyps) -> float:
    """LBR's chips at a finished showdown ``state`` as imaginary observations: the mean of
    its payoff against every hole the agent may hold, weighted by the range (the prior
    times the agent's probability of every action it took with that hole). LBR's own
    actions do not depend on the agent's hole, so this is the expectation of the played
    value given everything public and LBR's cards: unbiased, with less variance."""
    me = 1 - view.agent_position
    w = total(hyps, view.holes.shape[0]) * view.possible(state.round)
    which = np.flatnonzero(w)
    if which.size == 0:
        raise AbstractionError(f"expected the agent's actions to have a positive "
                               f"probability under LBR's model of it, got a range that "
                               f"vanished at {state.betting!r}")
    board = view.visible(state.round)
    eq = equities(view.game, view.lbr_hole, board, view.holes[which],
                  np.zeros((1, 0), np.int64), view.fast)
    ranks = {1.0: (2, 1), 0.5: (1, 1), 0.0: (1, 2)}  # LBR's (win, tie, loss), by position
    pay = {e: state.payoffs(r if me == 0 else r[::-1])[me] for e, r in ranks.items()}
    values = np.select([eq == 1.0, eq == 0.5], [pay[1.0], pay[0.5]], pay[0.0])
    return float(w[which] @ values / w[which].sum())


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class LbrConfig:
    """Everything a run needs, as JSON (worker processes get it as text)."""

    spec: str = ""
    """The agent: a strategy file (path or bundled name) or ``builtin:NAME``."""
    game: str | None = None
    """A game file (path or bundled name); ``None``: the strategy file's game."""
    mapping: str | None = None
    purify: str | None = None
    sizes_in: str | None = None
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    preflop: str = "call"
    seed: int = 0
    setting: str | None = None
    """A published setting (:data:`SETTINGS`); replaces ``fractions`` and ``preflop``."""
    values: str = "played"
    preflop_equity: str = "exact"
    """Hold'em preflop equities (:data:`PREFLOP_EQUITY_RULES`): the exact table or
    sampled boards."""
    fast: bool = True
    """The batched path (every hole's buckets per board, rows memoised); ``False``: the
    hole-by-hole path it replaced (same decisions and values; benchmarks and tests)."""
    flop_table: bool = False
    """Fast path, hold'em: read the flop from the cached strength table
    (:func:`strategies.cards.tables.find_strength_table`) when it is there."""

    def settings(self) -> LbrSettings:
        """How LBR plays.

        Raises:
            UsageError: for an unknown setting, preflop rule, value rule, or too many
                fractions.
        """
        if self.values not in VALUE_RULES:
            raise UsageError(f"expected values among {', '.join(VALUE_RULES)}, got "
                             f"{self.values!r}")
        if self.preflop_equity not in PREFLOP_EQUITY_RULES:
            raise UsageError(f"expected preflop equities among "
                             f"{', '.join(PREFLOP_EQUITY_RULES)}, got "
                             f"{self.preflop_equity!r}")
        if self.setting is not None:
            return LbrSettings.named(self.setting, self.values, self.preflop_equity)
        if self.preflop not in PREFLOP_RULES:
            raise UsageError(f"expected a preflop rule among {', '.join(PREFLOP_RULES)}, "
                             f"got {self.preflop!r}")
        if len(self.fractions) > MAX_FRACTIONS:
            raise UsageError(f"expected at most {MAX_FRACTIONS} LBR bet sizes, got "
                             f"{len(self.fractions)}")
        settings = LbrSettings.legacy(self.fractions, self.preflop, self.preflop_equity)
        settings.values = self.values
        return settings

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "fractions": list(self.fractions)})

    @classmethod
    def from_json(cls, text: str) -> LbrConfig:
        data = json.loads(text)
        data["fractions"] = tuple(data["fractions"])
        return cls(**data)


_FLOP_TABLES: dict[int, tuple[F64 | None, str | None]] = {}


def flop_strength(rivers_per_turn: int) -> tuple[F64 | None, str | None]:
    """E[HS^2] of every flop class from the cached strength table, and its path; ``(None,
    None)`` if the table is not cached (``acpc-strategy cards --round flop`` builds it).
    Loaded once per process."""
    if rivers_per_turn not in _FLOP_TABLES:
        from strategies.cards.tables import find_strength_table

        table, path = find_strength_table(1, flop_rivers_per_turn=rivers_per_turn)
        _FLOP_TABLES[rivers_per_turn] = (table.ehs2, str(path)) if table is not None \
            else (None, None)
    return _FLOP_TABLES[rivers_per_turn]


def _derived(seed: int, chunk: int, tag: int) -> int:
    return int(np.random.SeedSequence([seed, chunk, tag]).generate_state(1)[0])


class ChunkPlayer:
    """Plays chunks of a run in one process (the strategy file loaded once)."""

    def __init__(self, config: LbrConfig) -> None:
        from agent.acpc.gamedef import parse_gamedef
        from agent.acpc.gamefiles import load_game
        from agent.agents import is_builtin, make_policy, resolve_strategy
        from agent.strategy.fileformat import read_header

        self.settings = config.settings()  # validates before any work
        self.config = config
        if config.game is not None:
            self.game = load_game(config.game)
        elif is_builtin(config.spec):
            raise UsageError(f"expected a game for the built-in agent {config.spec!r}")
        else:
            path = resolve_strategy(config.spec)
            self.game = parse_gamedef(str(read_header(path)[0].get("game", "")), str(path))
        if self.game.num_players != 2 or not self.game.is_nolimit:
            raise UsageError(f"expected a two-player no-limit game for LBR, got "
                             f"{config.game!r}")
        self._make = make_policy
        self.base = make_policy(config.spec, self.game, seed=0, mapping=config.mapping,
                                purify=config.purify, sizes_in=config.sizes_in)
        self.model = agent_model(self.base)
        self.holes = all_holes(self.game)
        self.cache: BucketCache | None = None
        self.flop_table_path: str | None = None
        """The strength table the flop is read from (fast path), or None."""
        cards = self.model.loaded.cards if isinstance(self.model, StrategyModel) else None
        if isinstance(cards, HoldemCards) or \
                (config.fast and isinstance(cards, PotentialAwareCards)):
            flop_values = None
            if config.fast and config.flop_table and isinstance(cards, HoldemCards):
                flop_values, self.flop_table_path = flop_strength(cards.flop_rivers_per_turn)
            self.cache = BucketCache(self.holes, fast=config.fast, flop_values=flop_values)

    def policy(self, seed: int) -> Any:
        """A fresh agent (its own seed), sharing the loaded strategy."""
        base = self.base
        if isinstance(base, StrategyPolicy):
            return StrategyPolicy(base.loaded, base.mapping, base.purification, seed=seed,
                                  mapping_name=base.mapping_name, sizes_in=base.sizes_in)
        return self._make(self.config.spec, self.game, seed=seed)

    def play(self, chunk: int, deals: int = CHUNK_DEALS) -> list[list[float]]:
        """``[deal, lbr_position, value]`` of the hands of chunk ``chunk`` (module
        docstring)."""
        seed = self.config.seed
        policy = self.policy(_derived(seed, chunk, 1))
        rng = np.random.default_rng(_derived(seed, chunk, 2))
        dealer = deal_hands(self.game, _derived(seed, chunk, 0))
        out: list[list[float]] = []
        for i in range(deals):
            deal = next(dealer)
            for position in (0, 1):
                record = play_hand(self.game, deal, position, 2 * i + position, policy,
                                   self.model, self.settings, rng, self.holes,
                                   cache=self.cache, fast=self.config.fast)
                out.append([chunk * CHUNK_DEALS + i, position, record.value])
                self.hand_over(deal, position, 2 * i + position, record)
        return out

    def hand_over(self, deal: Deal, lbr_position: int, hand_number: int,
                  record: HandRecord) -> None:
        """After each hand of :meth:`play` (nothing here: the agent does not learn; the
        exploiting agent's player, :mod:`strategies.measure.exploiting_lbr`, tells it the
        hand and models its next table)."""


_PLAYERS: dict[str, ChunkPlayer] = {}


def play_chunk(config_json: str, chunk: int) -> str:
    """JSON list of :meth:`ChunkPlayer.play`'s rows (for worker processes)."""
    player = _PLAYERS.get(config_json)
    if player is None:
        _PLAYERS.clear()
        player = _PLAYERS[config_json] = ChunkPlayer(LbrConfig.from_json(config_json))
    return json.dumps(player.play(chunk))


@dataclass(frozen=True)
class Summary:
    """LBR's value over complete deals."""

    hands: int
    deals: int
    chips: float
    """Mean chips per hand."""
    half_width: float
    """95% normal half-width of :attr:`chips` (nan below 2 deals)."""
    mbb: float
    mbb_half_width: float


def summarize(rows: Sequence[Sequence[float]], big_blind: float) -> Summary:
    """Mean and 95% interval of LBR's value over the deals both of whose hands are in
    ``rows`` (``[deal, position, value]``; each deal's value is its hands' mean)."""
    by_deal: dict[int, list[float]] = {}
    for deal, _, value in rows:
        by_deal.setdefault(int(deal), []).append(float(value))
    pairs = np.array([sum(v) / 2 for v in by_deal.values() if len(v) == 2])
    n = pairs.size
    mean = float(pairs.mean()) if n else float("nan")
    half = float(1.96 * pairs.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    scale = 1000.0 / big_blind
    return Summary(2 * n, n, mean, half, mean * scale, half * scale)
