"""Learned bet sizes: the multiplayer betting-game transformation (docs/background.md, "Learned
bet sizes"; Hawkin, Holte and Szafron, AAAI 2011).

**The game.** Two players, no-limit betting with *continuous* chips (the sizes being learned
are real numbers: a pot fraction of 0.4142 must not be rounded to whole chips while it is
learned): blinds/antes, equal stacks, the rounds, first players, deck, hole and board cards of
an ACPC game definition, and the betting abstraction's actions (fold when facing a bet,
check/call, sized bets as pot fractions ``x`` of :mod:`agent.acpc.betsize`, all-in, a raise
cap per round). A sized bet is clamped to ``[max_spent + max(min_bet, last raise), stack]``
and merged into the all-in when it reaches the stack, as the canonical tree does
(:func:`agent.abstraction.actions.node_actions`), but never rounded. ``min_bet`` is the ACPC
rule (the big blind) unless given (0 for the textbook games, whose bets may be any size).
Deals are enumerated (:func:`strategies.games.abstract.enumerate_deals`), cards are lossless.

**The transformation.** At every decision of a learning position (at the chosen sequences)
where the abstraction has a sized bet, the sized bets become one action *bet*; after it a
*bet-sizing player* (position ``2 + p`` for card player ``p``, seeing no cards, paid exactly
what ``p`` is paid) chooses the low size ``L`` or the high size ``H``. The card players do
not see that choice: their information sets span both branches (the flat table shares the
rows of the nodes with the same abstract history, so the kernels of
:mod:`strategies.solvers.kernels` walk the transformed game unchanged). With ``P(H) = q``
the effective size is ``B = (1 - q) L + q H``; as long as no clamp binds below the bet,
every payoff is affine in the bet, so the transformed game has the value of the abstract
game that bets ``B``.

**The algorithm.** Card players: regret matching over counterfactual regrets (CFR, or CFR+
with ``regret_plus``), simultaneous updates, the average strategy weighted by ``t**gamma``.
Sizing players: each iteration regret matching on their cumulative regrets gives a size
``sr_t``; the played size moves smoothly, ``s_{t+1} = s_t + (sr_t - s_t) / min(t, N)``
(``N`` = :data:`SMOOTHING`), and ``q = (s - L) / (H - L)`` is what the sizing player plays.

**Fixed sizes.** The same builder with nothing to learn is the continuous abstract game of
a spec (learned sizes as ``sequences`` overrides): :func:`solve_fixed` solves it with the
one :class:`~strategies.solvers.cfr.Solver` (CFR+ or CFR, alternating) and
:func:`strategies.measure.best_response.exploitability` measures it (the flat game here
offers the attributes those functions read). The learner is the same solver over the
:class:`LearnedSizes` game adapter.

Sequence keys follow :func:`agent.abstraction.actions.action_token`; a learned spec keys
every learned size by its node's *sized* key, so :func:`agent.abstraction.actions.build_tree`
finds them in the ACPC game (where they are rounded to whole chips, as every size is).

Imports numpy, numba (through the kernels), :mod:`agent` and :mod:`strategies`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import (
    ALL_IN,
    AbstractAction,
    BettingAbstraction,
    action_token,
    bare_key,
    count_tree_nodes,
)
from agent.abstraction.buckets import LosslessCards
from agent.acpc.betting import CALL, FOLD, Action, ActionKind
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game, format_gamedef
from agent.jit import kernel
from strategies.cache import write_npz
from strategies.commands.defaults import SMOOTHING
from strategies.games.abstract import KernelGame, enumerate_deals, kernel_game, normalise_rows
from strategies.solvers.cfr import FrozenRows, Solver, SolverConfig
from strategies.solvers.kernels import cfr_pass, post_update, regret_matching

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

UNDETERMINED_REACH = 1e-6
"""A learned size whose bet is reached (or not folded to) with less probability than this
is reported as undetermined (docs/background.md: it has no effect on the value)."""
CHECKPOINT_FORMAT = "acpc-arena-sizing-checkpoint"


class SizingError(AcpcError, ValueError):
    """A learning problem that cannot be set up as asked."""


# --------------------------------------------------------------------------- the rules


@dataclass(frozen=True, slots=True)
class Rules:
    """Continuous two-player no-limit betting (module docstring); chips are floats."""

    blinds: tuple[float, float]
    stack: float
    first_player: tuple[int, ...]
    min_bet: float

    @classmethod
    def of(cls, game: Game, *, min_bet: float | None = None,
           blinds: tuple[float, float] | None = None, stack: float | None = None) -> Rules:
        """The rules of an ACPC game definition, optionally with other chip amounts.

        Raises:
            SizingError: for a game that is not two-player no-limit with equal stacks.
        """
        if game.num_players != 2 or not game.is_nolimit:
            raise SizingError(f"expected a two-player no-limit game to learn bet sizes in, "
                              f"got {game.num_players} players, {game.betting_type.value}")
        if blinds is None:
            blinds = (float(game.blind[0]), float(game.blind[1]))
        if stack is None:
            if game.stack[0] != game.stack[1]:
                raise SizingError(f"expected equal stacks, got {list(game.stack)!r}")
            stack = float(game.stack[0])
        if min_bet is None:
            min_bet = float(max(game.blind))
        if not (stack > max(blinds) >= 0.0) or min_bet < 0.0 or min(blinds) < 0.0:
            raise SizingError(f"expected 0 <= blinds < stack and min_bet >= 0, got blinds "
                              f"{list(blinds)!r}, stack {stack!r}, min_bet {min_bet!r}")
        return cls((float(blinds[0]), float(blinds[1])), float(stack), game.first_player,
                   float(min_bet))


@dataclass(frozen=True, slots=True)
class LearnSpec:
    """Which decisions learn their size and between which pot fractions.

    ``positions``: the card players whose bets are learned; ``sequences``: bare keys of the
    nodes to learn (``None``: every node of those positions with a sized bet);
    ``low``/``high``: ``L`` and ``H`` for every learned node, or ``None`` to take them from
    the node's own two sizes in the spec.
    """

    positions: frozenset[int]
    sequences: frozenset[str] | None = None
    low: float | None = None
    high: float | None = None
    skip_unstable: bool = False
    """Learn only where ``L`` and ``H`` keep the tree's shape (:func:`stable_learn`)."""
    skipped: tuple[str, ...] = ()
    """Nodes left at their base sizes by :func:`stable_learn`."""

    def learns(self, position: int, key: str) -> bool:
        """True for a node of ``position`` with sized key ``key`` that learns."""
        if position not in self.positions:
            return False
        return self.sequences is None or bare_key(key) in self.sequences

    def describe(self) -> dict[str, Any]:
        """A JSON-able description."""
        return {
            "positions": sorted(self.positions),
            "sequences": None if self.sequences is None else sorted(self.sequences),
            "low": self.low, "high": self.high, "skipped": list(self.skipped),
        }


def parse_learn(texts: Sequence[str], range_text: str | None, *,
                skip_unstable: bool = False) -> LearnSpec:
    """``--learn POSITION[:KEYS]`` options (``0``, ``1`` or ``both``; keys comma-separated
    bare sequence keys, ``root`` for the first decision) and ``--range L,H``.

    Raises:
        UsageError: with what was expected and what came.
    """
    positions: set[int] = set()
    keys: set[str] | None = None
    for text in texts:
        who, _, where = text.partition(":")
        if who == "both":
            positions |= {0, 1}
        elif who in ("0", "1"):
            positions.add(int(who))
        else:
            raise UsageError(f"expected --learn POSITION[:KEYS] with POSITION 0, 1 or both, "
                             f"got {text!r}")
        if where:
            keys = set() if keys is None else keys
            for key in where.split(","):
                key = "" if key == "root" else key
                if bare_key(key) != key or any(ch not in "fcabr/" for ch in key):
                    raise UsageError(f"expected bare sequence keys such as 'root', 'c' or "
                                     f"'cb/c' after {who}:, got {key!r} in {text!r}")
                keys.add(key)
    if not positions:
        raise UsageError("expected at least one --learn POSITION (0, 1 or both)")
    low = high = None
    if range_text is not None:
        try:
            lo_text, hi_text = range_text.split(",")
            low, high = float(lo_text), float(hi_text)
        except ValueError:
            raise UsageError(f"expected --range L,H (two pot fractions), got "
                             f"{range_text!r}") from None
        if not (0.0 < low < high) or not math.isfinite(high):
            raise UsageError(f"expected 0 < L < H for --range, got {range_text!r}")
    return LearnSpec(frozenset(positions), None if keys is None else frozenset(keys), low, high,
                     skip_unstable)


# --------------------------------------------------------------------------- the builder


@dataclass(slots=True)
class _State:
    round: int
    spent: tuple[float, float]
    player: int
    acted: int
    raises: int
    last_raise: float


@dataclass(slots=True)
class _Node:
    player: int
    """0/1 card players, 2/3 sizing players, -1 terminal."""
    round: int
    key: str
    """Sequence key (learned bets as bare ``b``/``r``)."""
    actions: list[AbstractAction] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    learned: int = -1
    """Sizing nodes: the index of the learned size."""
    spent: tuple[float, float] = (0.0, 0.0)
    folded: int = -1
    """Terminals: the position that folded, or -1 for a showdown."""


@dataclass(frozen=True, slots=True)
class LearnedNode:
    """One learned size: where it is and its range."""

    key: str
    """The node's sequence key (bare tokens for earlier learned bets)."""
    position: int
    depth: int
    low: float
    high: float
    path: tuple[tuple[str, int], ...]
    """``(token, learned index or -1)`` of the actions leading to the node."""


BET = Action(ActionKind.RAISE, 0)
"""The placeholder action of a learned bet (its chips are the sizing player's)."""


class _Builder:
    def __init__(self, rules: Rules, abstraction: BettingAbstraction, num_rounds: int,
                 learn: LearnSpec | None) -> None:
        self.rules = rules
        self.abstraction = abstraction
        self.num_rounds = num_rounds
        self.learn = learn
        self.nodes: list[_Node] = []
        self.learned: list[LearnedNode] = []
        self._learned_at: dict[str, int] = {}
        self.used: set[str] = set()
        """Keys of the nodes where a bet was possible (for the overrides check)."""

    def new(self, node: _Node) -> int:
        self.nodes.append(node)
        if len(self.nodes) > 2_000_000:
            raise SizingError("expected a transformed tree of at most 2,000,000 nodes: cap "
                              "raises with max_raises or learn fewer nodes")
        return len(self.nodes) - 1

    def sized(self, state: _State, fraction: float) -> float:
        """The raise-to of a pot fraction, clamped to the legal range (not rounded)."""
        spent = state.spent
        top = max(spent)
        to_call = top - spent[state.player]
        lo = min(top + max(self.rules.min_bet, state.last_raise), self.rules.stack)
        return min(max(top + fraction * (sum(spent) + to_call), lo), self.rules.stack)

    def after(self, state: _State, to: float) -> _State:
        spent = list(state.spent)
        top = max(spent)
        spent[state.player] = to
        return _State(state.round, (spent[0], spent[1]), 1 - state.player, state.acted + 1,
                      state.raises + 1, max(state.last_raise, to - top))

    def build(self, state: _State, key: str, path: tuple[tuple[str, int], ...]) -> int:
        p = state.player
        node = _Node(p, state.round, key)
        index = self.new(node)
        spent = state.spent
        top = max(spent)
        to_call = top - spent[p]
        acts: list[tuple[AbstractAction, str, float, int]] = []  # action, token, raise-to, learned
        if self.abstraction.fold and to_call > 0.0:
            acts.append((AbstractAction(FOLD, -2.0, -2.0), "f", 0.0, -1))
        acts.append((AbstractAction(CALL, 0.0, 0.0), "c", 0.0, -1))
        depth = state.raises
        if depth < self.abstraction.raise_cap(state.round) and top < self.rules.stack:
            sizes = self.abstraction.sizes(state.round, depth, p, key)
            self.used.add(key)
            self.used.add(bare_key(key))
            letter = "b" if depth == 0 else "r"
            if sizes and self.learn is not None and self.learn.learns(p, key):
                lo, hi = self._range(key, sizes)
                j = self._learned_at.setdefault(key, len(self.learned))
                if j == len(self.learned):
                    self.learned.append(LearnedNode(key, p, depth, lo, hi, path))
                acts.append((AbstractAction(BET, lo, lo), letter, 0.0, j))
            else:
                seen: dict[float, float] = {}
                for frac in sizes:
                    to = self.sized(state, frac)
                    if to >= self.rules.stack and self.abstraction.all_in:
                        continue
                    seen.setdefault(to, frac)
                for to, frac in sorted(seen.items()):
                    acts.append((AbstractAction(Action(ActionKind.RAISE, 0), frac, frac),
                                 f"{letter}{frac:g}", to, -1))
            if self.abstraction.all_in:
                acts.append((AbstractAction(Action(ActionKind.RAISE, 0), ALL_IN, ALL_IN), "a",
                             self.rules.stack, -1))
        node.actions = [a for a, _, _, _ in acts]
        kids = []
        for act, token, to, j in acts:
            child_key = key + token
            child_path = (*path, (token, j))
            if act.kind is ActionKind.FOLD:
                kids.append(self.new(_Node(-1, state.round, child_key, spent=spent, folded=p)))
            elif act.kind is ActionKind.CALL:
                kids.append(self.call(state, child_key, child_path))
            elif j >= 0:
                kids.append(self.sizing(state, j, child_key, child_path))
            else:
                kids.append(self.build(self.after(state, to), child_key, child_path))
        node.children = kids
        return index

    def _range(self, key: str, sizes: tuple[float, ...]) -> tuple[float, float]:
        learn = self.learn
        assert learn is not None
        if learn.low is not None and learn.high is not None:
            return learn.low, learn.high
        if len(sizes) != 2:
            raise SizingError(f"expected --range L,H, or exactly two sizes [L, H] in the spec "
                              f"at the learned node {key or 'root'!r}, got {list(sizes)!r}")
        return sizes[0], sizes[1]

    def sizing(self, state: _State, j: int, key: str, path: tuple[tuple[str, int], ...]) -> int:
        learned = self.learned[j]
        node = _Node(2 + state.player, state.round, key, learned=j)
        index = self.new(node)
        node.actions = [AbstractAction(BET, learned.low, learned.low),
                        AbstractAction(BET, learned.high, learned.high)]
        node.children = [self.build(self.after(state, self.sized(state, f)), key, path)
                         for f in (learned.low, learned.high)]
        return index

    def call(self, state: _State, key: str, path: tuple[tuple[str, int], ...]) -> int:
        top = max(state.spent)
        spent = (top, top)
        if state.acted == 0:  # the first check (or the small blind's call) keeps the round
            return self.build(_State(state.round, spent, 1 - state.player, 1, state.raises,
                                     state.last_raise), key, path)
        if top >= self.rules.stack or state.round + 1 >= self.num_rounds:
            return self.new(_Node(-1, state.round, key, spent=spent))
        r = state.round + 1
        return self.build(_State(r, spent, self.rules.first_player[r], 0, 0, 0.0), key + "/",
                          (*path, ("/", -1)))


# --------------------------------------------------------------------------- the flat game


@dataclass(frozen=True, eq=False)
class SizingGame:
    """A continuous game (with or without sizing players), flat for the CFR kernels.

    Offers what :mod:`strategies.measure.best_response` reads (``kernel_args``, ``table_size``,
    ``max_depth``, ``num_players``, ``num_deals``, ``deal_prob``, ``max_actions``,
    ``max_buckets``) so the exact best response measures its fixed-size form.
    """

    game: Game
    rules: Rules
    betting: BettingAbstraction
    learn: LearnSpec | None
    nodes: tuple[_Node, ...]
    learned: tuple[LearnedNode, ...]
    arrays: KernelGame
    num_players: int
    table_size: int
    max_depth: int
    max_actions: int
    max_buckets: int
    size_rows: I64
    """Per learned size: its row (``[P(L), P(H)]``) in the table."""
    deal_prob: F64
    offset: I64
    rows: I32
    num_actions: I32

    def kernel_args(self) -> KernelGame:
        """The flat arrays: a :class:`strategies.games.abstract.KernelGame`."""
        return self.arrays

    @property
    def num_deals(self) -> int:
        """Enumerated deals."""
        return len(self.deal_prob)

    @property
    def low(self) -> F64:
        """``L`` per learned size."""
        return np.array([n.low for n in self.learned], dtype=np.float64)

    @property
    def high(self) -> F64:
        """``H`` per learned size."""
        return np.array([n.high for n in self.learned], dtype=np.float64)

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match (JSON-normalised)."""
        identity: dict[str, Any] = json.loads(json.dumps({
            "game": format_gamedef(self.game),
            "rules": dataclasses.asdict(self.rules),
            "betting": self.betting.to_json(),
            "learn": None if self.learn is None else self.learn.describe(),
            "table_len": self.table_size,
        }))
        return identity


def _build(game: Game, abstraction: BettingAbstraction, learn: LearnSpec | None,
           rules: Rules) -> _Builder:
    builder = _Builder(rules, abstraction, game.num_rounds, learn)
    builder.build(_State(0, rules.blinds, rules.first_player[0], 0, 0, 0.0), "", ())
    return builder


def _check_structure(nodes: Sequence[_Node]) -> None:
    """Raise if two nodes of one information set (the L and H branches) differ in shape."""
    seen: dict[tuple[int, str], int] = {}
    for node in nodes:
        if node.player < 0:
            continue
        k = seen.setdefault((node.player, node.key), len(node.actions))
        if k != len(node.actions):
            raise SizingError(
                f"expected the L and H branches of a learned bet to have the same actions, "
                f"got {k} and {len(node.actions)} at {node.key or 'root'!r} (a size reaches "
                f"the stack or the minimum raise: narrow --range, or --skip-unstable)")


def stable_learn(game: Game, abstraction: BettingAbstraction, learn: LearnSpec,
                 rules: Rules) -> LearnSpec:
    """``learn`` restricted to the nodes whose ``L`` and ``H`` branches keep the tree's
    shape: candidates in tree order, each kept if the game with it and the ones kept so far
    still has one shape per information set (greedy). :attr:`LearnSpec.skipped` lists the
    others."""
    fixed = _build(game, abstraction, None, rules)
    candidates: list[str] = []
    for node in fixed.nodes:
        if 0 <= node.player < 2 and learn.learns(node.player, node.key) and any(
            a.kind is ActionKind.RAISE and a.fraction != ALL_IN for a in node.actions
        ):
            key = bare_key(node.key)
            if key not in candidates:
                candidates.append(key)
    kept: list[str] = []
    skipped: list[str] = []
    for key in candidates:
        trial = dataclasses.replace(learn, sequences=frozenset([*kept, key]),
                                    skip_unstable=False)
        try:
            _check_structure(_build(game, abstraction, trial, rules).nodes)
        except SizingError:
            skipped.append(key)
            continue
        kept.append(key)
    return dataclasses.replace(learn, sequences=frozenset(kept), skip_unstable=False,
                               skipped=tuple(skipped))


def build_sizing_game(game: Game, abstraction: BettingAbstraction, *,
                      learn: LearnSpec | None = None, rules: Rules | None = None) -> SizingGame:
    """The continuous game of ``abstraction`` in ``game``, transformed where ``learn`` says.

    Raises:
        SizingError: for a game the learner cannot play, a learned node whose ``L`` and
            ``H`` branches lead to differently shaped subtrees, or nothing to learn.
        UsageError: for games whose deals cannot be enumerated.
        AbstractionError: for an abstraction whose tree is over the node cap
            (:func:`~agent.abstraction.actions.count_tree_nodes`), before any work.
    """
    rules = rules or Rules.of(game)
    if game.num_players == 2 and game.is_nolimit:
        # The chip tree's size, counted before anything is built (the continuous tree has
        # the same shape up to merged sizes; the builder's own cap catches the rest).
        count_tree_nodes(game, abstraction)
    if learn is not None and learn.skip_unstable:
        learn = stable_learn(game, abstraction, learn, rules)
    builder = _build(game, abstraction, learn, rules)
    _check_structure(builder.nodes)
    unused = sorted({key for key, _ in abstraction.sequences} - builder.used)
    if unused:
        raise SizingError(f"expected every 'sequences' key of {abstraction.name!r} to name a "
                          f"node where a bet is possible, got {len(unused)} that do not: "
                          f"{unused[:5]!r}")
    if learn is not None and not builder.learned:
        raise SizingError(f"expected at least one decision of position(s) "
                          f"{sorted(learn.positions)} with a sized bet to learn, found none "
                          f"(check --learn keys and the spec's sizes)")
    for ln in builder.learned:
        if not ln.low < ln.high:
            raise SizingError(f"expected L < H at {ln.key or 'root'!r}, got {ln.low}, {ln.high}")
    nodes = builder.nodes
    n_players = 4 if learn is not None else 2
    cards = LosslessCards(game)
    deal_cards, deal_prob, bucket2, rank = enumerate_deals(game, cards)
    del deal_cards
    buckets = tuple(int(b) for b in cards.buckets)
    n_deals = len(deal_prob)
    deal_bucket = np.zeros((n_deals, n_players, game.num_rounds), dtype=np.int32)
    deal_bucket[:, :2, :] = bucket2
    deal_pattern = np.where(rank[:, 0] > rank[:, 1], 0,
                            np.where(rank[:, 1] > rank[:, 0], 1, 2)).astype(np.int32)[:, None]

    n = len(nodes)
    player = np.full(n, -1, dtype=np.int32)
    round_ = np.zeros(n, dtype=np.int32)
    num_actions = np.zeros(n, dtype=np.int32)
    child_start = np.zeros(n, dtype=np.int32)
    children: list[int] = []
    offset = np.full(n, -1, dtype=np.int64)
    rows = np.zeros(n, dtype=np.int32)
    terminal = np.full(n, -1, dtype=np.int32)
    term_set: list[int] = []
    payoffs: list[list[list[float]]] = []
    infosets: dict[tuple[int, str], tuple[int, int]] = {}
    total = 0
    size_rows = np.zeros(len(builder.learned), dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    for i, node in enumerate(nodes):
        round_[i] = node.round
        child_start[i] = len(children)
        children.extend(node.children)
        for c in node.children:
            depth[c] = depth[i] + 1
        if node.player < 0:
            terminal[i] = len(term_set)
            s0, s1 = node.spent
            if node.folded >= 0:
                term_set.append(-1)
                v0 = -s0 if node.folded == 0 else s1
                payoffs.append([[v0, -v0, v0, -v0]] * 3)
            else:
                term_set.append(0)
                payoffs.append([[s1, -s1, s1, -s1], [-s0, s0, -s0, s0], [0.0] * 4])
            continue
        k = len(node.actions)
        player[i] = node.player
        num_actions[i] = k
        ident = (node.player, node.key)
        known = infosets.get(ident)
        if known is None:
            width = buckets[node.round] if node.player < 2 else 1
            known = (total, k)
            infosets[ident] = known
            total += width * k
            if node.player >= 2:
                size_rows[node.learned] = known[0]
        offset[i] = known[0]
        rows[i] = buckets[node.round] if node.player < 2 else 1
    term_payoff = np.array(payoffs, dtype=np.float64)[:, :, :n_players].copy()
    arrays = kernel_game(
        player=player, round=round_, num_actions=num_actions, child_start=child_start,
        children=np.array(children, dtype=np.int32), offset=offset, rows=rows,
        terminal=terminal, term_set=np.array(term_set, dtype=np.int32),
        term_payoff=term_payoff, deal_prob=deal_prob, deal_bucket=deal_bucket,
        deal_pattern=deal_pattern,
    )
    return SizingGame(
        game=game, rules=rules, betting=abstraction, learn=learn, nodes=tuple(nodes),
        learned=tuple(builder.learned), arrays=arrays, num_players=n_players, table_size=total,
        max_depth=int(depth.max(initial=0)), max_actions=int(num_actions.max(initial=1)),
        max_buckets=max(*buckets, 1), size_rows=size_rows, deal_prob=deal_prob,
        offset=offset, rows=rows, num_actions=num_actions,
    )


# --------------------------------------------------------------------------- the kernels


@kernel
def _set_sizes(current: F64, size_rows: I64, low: F64, high: F64, sizes: F64) -> None:
    """The sizing players play ``q = (s - L) / (H - L)``."""
    for j in range(len(size_rows)):
        q = (sizes[j] - low[j]) / (high[j] - low[j])
        q = min(max(q, 0.0), 1.0)
        current[size_rows[j]] = 1.0 - q
        current[size_rows[j] + 1] = q


@kernel
def learn_run(
    g: KernelGame, iterations: int, t0: int, plus: bool, gamma: float, smoothing: int,
    regrets: F64, strategy_sum: F64, current: F64, reach: F64, value: F64,
    action_value: F64, node_at: I64, next_action: I64, size_rows: I64, low: F64,
    high: F64, sizes: F64,
) -> None:
    """``iterations`` iterations of the published algorithm (module docstring): the card
    players' simultaneous CFR(+) pass of :mod:`strategies.solvers.kernels`, then the sizing
    players' smoothed step."""
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        regret_matching(g, regrets, current, 0)
        regret_matching(g, regrets, current, 1)
        _set_sizes(current, size_rows, low, high, sizes)
        reach[0, :, :] = 1.0
        cfr_pass(g, -1, weight, current, regrets, strategy_sum, reach, value, action_value,
                 node_at, next_action)
        post_update(g, regrets, 0, t, plus, False, 0.0, 0.0)
        post_update(g, regrets, 1, t, plus, False, 0.0, 0.0)
        step = float(min(t, smoothing))
        for j in range(len(size_rows)):
            r_low = max(regrets[size_rows[j]], 0.0)
            r_high = max(regrets[size_rows[j] + 1], 0.0)
            q = r_high / (r_low + r_high) if r_low + r_high > 0.0 else 0.5
            target = low[j] + q * (high[j] - low[j])
            sizes[j] += (target - sizes[j]) / step


# --------------------------------------------------------------------------- the learner


SIZING_CONFIGS: dict[bool, SolverConfig] = {
    True: SolverConfig("cfr+", regret_plus=True, gamma=1.0, alternating=False),
    False: SolverConfig("cfr", alternating=False),
}
"""The card players' configuration by ``plus``: CFR+ (RM+, linear averaging) or CFR, with
simultaneous updates (the published algorithm)."""


class LearnedSizes:
    """The game adapter of a transformed game (:class:`strategies.solvers.cfr.SolverGame`):
    :func:`learn_run` over ``game`` moving ``sizes`` (updated in place) with the smoothing
    constant ``smoothing``; the average plays the current sizes at the sizing rows."""

    def __init__(self, game: SizingGame, sizes: F64, smoothing: int) -> None:
        self.game = game
        self.sizes = sizes
        self.smoothing = smoothing

    @property
    def table_size(self) -> int:
        return self.game.table_size

    def identity(self) -> dict[str, Any]:
        return self.game.identity()

    def runner(self, config: SolverConfig, frozen: FrozenRows | None) -> _LearnRunner:
        if (config.sampling != "full" or config.alternating or config.discount
                or frozen is not None):
            raise SizingError(f"expected simultaneous full-width CFR or CFR+ without frozen "
                              f"rows for learned sizes, got {config.name!r}")
        return _LearnRunner(self, config)

    def average(self, strategy_sum: F64, regrets: F64, frozen: FrozenRows | None) -> F64:
        """The card players' average (sizing rows: the current ``q``)."""
        g = self.game
        out = _normalise(g, strategy_sum)
        _set_sizes(out, g.size_rows, g.low, g.high, self.sizes)
        return out


class _LearnRunner:
    def __init__(self, adapter: LearnedSizes, config: SolverConfig) -> None:
        game = adapter.game
        self.adapter = adapter
        self.config = config
        self.g = game.kernel_args()
        self.low, self.high = game.low, game.high
        self._current = np.zeros(game.table_size)
        depth, n, deals = game.max_depth + 2, game.num_players, game.num_deals
        self._reach = np.zeros((depth, n, deals))
        self._value = np.zeros((depth, n, deals))
        self._action_value = np.zeros((depth, game.max_actions, deals))
        self._node_at = np.zeros(depth, dtype=np.int64)
        self._next_action = np.zeros(depth, dtype=np.int64)

    def run(self, iterations: int, t0: int, regrets: F64, strategy_sum: F64,
            rng_state: I64) -> float:
        a, c = self.adapter, self.config
        learn_run(self.g, iterations, t0, c.regret_plus, c.gamma, a.smoothing, regrets,
                  strategy_sum, self._current, self._reach, self._value, self._action_value,
                  self._node_at, self._next_action, a.game.size_rows, self.low, self.high,
                  a.sizes)
        return 0.0


class SizeLearner:
    """Runs the algorithm on a transformed game: the one :class:`~strategies.solvers.cfr.
    Solver` over the :class:`LearnedSizes` adapter, plus the sizes' trace and checkpoints.

    Args:
        game: a transformed game (:func:`build_sizing_game` with ``learn``).
        plus: regret matching+ for the card players (CFR+; linear averaging), else CFR.
        smoothing: ``N``.
        initial: the starting size per learned node (default the middle of ``[L, H]``).
    """

    def __init__(self, game: SizingGame, *, plus: bool = True, smoothing: int = SMOOTHING,
                 initial: Sequence[float] | None = None) -> None:
        if game.learn is None:
            raise SizingError("expected a transformed game (built with a LearnSpec)")
        if smoothing < 1:
            raise UsageError(f"expected a smoothing constant N >= 1, got {smoothing}")
        self.game = game
        self.plus = plus
        self.smoothing = int(smoothing)
        self.trace: list[tuple[int, list[float]]] = []
        """``(iteration, sizes)`` after every call of :meth:`iterate` (for the plot and the
        tail average)."""
        low, high = game.low, game.high
        self.sizes = (np.array(initial, dtype=np.float64) if initial is not None
                      else (low + high) / 2.0)
        if self.sizes.shape != low.shape or ((self.sizes < low) | (self.sizes > high)).any():
            raise UsageError(f"expected {len(low)} initial sizes within [L, H], got "
                             f"{list(self.sizes)!r}")
        self.solver = Solver(LearnedSizes(game, self.sizes, self.smoothing),
                             SIZING_CONFIGS[bool(plus)])

    @property
    def regrets(self) -> F64:
        """Cumulative regrets (the solver's)."""
        return self.solver.regrets

    @property
    def strategy_sum(self) -> F64:
        """Weighted strategy sums (the solver's)."""
        return self.solver.strategy_sum

    @property
    def iteration(self) -> int:
        """Iterations done so far."""
        return self.solver.iteration

    @iteration.setter
    def iteration(self, value: int) -> None:
        self.solver.iteration = value

    @property
    def seconds(self) -> float:
        """Wall time spent iterating."""
        return self.solver.seconds

    @seconds.setter
    def seconds(self, value: float) -> None:
        self.solver.seconds = value

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernel without iterating."""
        self.solver.warm_up()

    def iterate(self, iterations: int) -> None:
        """Run ``iterations`` more iterations."""
        if iterations <= 0:
            return
        self.solver.iterate(iterations)
        self.trace.append((self.iteration, [float(x) for x in self.sizes]))

    def tail_sizes(self) -> list[float]:
        """Per learned node, the played size averaged over the second half of the run
        (weighted by iterations; the trace's samples after iteration ``T/2``).

        The played size ``s_t`` keeps oscillating around its limit (by about +-0.002 in
        half-street Kuhn, even with ``N = 100,000``); its average over the second half is
        the learned size this module reports and writes (the final ``s_T`` is reported
        beside it).
        """
        if not self.trace:
            return [float(x) for x in self.sizes]
        half = self.iteration / 2.0
        total = np.zeros(len(self.sizes))
        weight = 0.0
        previous = 0
        for it, sizes in self.trace:
            if it > half:
                n = it - max(previous, half)
                total += n * np.asarray(sizes)
                weight += n
            previous = it
        return [float(x) for x in (total / weight if weight > 0 else self.sizes)]

    def average_strategy(self) -> F64:
        """The card players' average (sizing rows: the current ``q``)."""
        return self.solver.average_strategy()

    def undetermined(self) -> list[bool]:
        """Per learned size: True if its bet is (almost) never made or always folded to
        under the average strategies (docs/background.md: such a size is not learned)."""
        g = self.game
        table = self.average_strategy()
        reach = _node_reach(g, table)
        out = []
        for j in range(len(g.learned)):
            at = [i for i, node in enumerate(g.nodes) if node.learned == j]
            made = sum(reach[i] for i in at)
            answered = 0.0
            for i in at:
                for child in g.nodes[i].children:
                    node = g.nodes[child]
                    kinds = [a.kind for a in node.actions] if node.player >= 0 else []
                    if ActionKind.FOLD not in kinds:
                        answered += reach[child]
                        continue
                    f = kinds.index(ActionKind.FOLD)
                    grandchild = node.children[f]
                    answered += reach[child] - reach[grandchild]
            out.append(made < UNDETERMINED_REACH or answered < UNDETERMINED_REACH)
        return out

    def save_checkpoint(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write the learner's state (``.npz``, no pickle) atomically."""
        header = {
            "format": CHECKPOINT_FORMAT, "version": 1, **self.game.identity(),
            "plus": self.plus, "smoothing": self.smoothing, "iteration": self.iteration,
            "seconds": self.seconds, "trace": self.trace, "extra": extra or {},
        }
        target = Path(path)
        write_npz(target, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                  regrets=self.regrets, strategy_sum=self.strategy_sum, sizes=self.sizes)
        return target

    @classmethod
    def load_checkpoint(cls, path: str | Path, game: SizingGame) -> SizeLearner:
        """A learner restored from :meth:`save_checkpoint` for the same game and spec.

        Raises:
            SizingError: for a file of another format, game, spec or table size.
        """
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                header = json.loads(bytes(data["header"]).decode())
                regrets, sums, sizes = data["regrets"], data["strategy_sum"], data["sizes"]
        except (OSError, KeyError, ValueError) as exc:
            raise SizingError(f"expected a learn-sizes checkpoint at {str(path)!r}: "
                              f"{exc}") from None
        if header.get("format") != CHECKPOINT_FORMAT:
            raise SizingError(f"expected a learn-sizes checkpoint at {str(path)!r}, got "
                              f"format {header.get('format')!r}")
        for key, value in game.identity().items():
            if header.get(key) != value:
                raise SizingError(f"checkpoint {str(path)!r} is for another {key}: "
                                  f"{header.get(key)!r} vs {value!r}")
        learner = cls(game, plus=bool(header["plus"]), smoothing=int(header["smoothing"]),
                      initial=[float(x) for x in sizes])
        learner.regrets[:] = regrets
        learner.strategy_sum[:] = sums
        learner.iteration = int(header["iteration"])
        learner.seconds = float(header["seconds"])
        learner.trace = [(int(it), [float(x) for x in sz]) for it, sz in header["trace"]]
        return learner

    def learned_spec(self, name: str | None = None) -> BettingAbstraction:
        """The abstraction with every learned size (:meth:`tail_sizes`) as a ``sequences``
        override keyed by its node's sized key (earlier learned sizes written in)."""
        return learned_abstraction(self.game, self.tail_sizes(), name)


def learned_abstraction(game: SizingGame, sizes: Sequence[float],
                        name: str | None = None) -> BettingAbstraction:
    """``game``'s base abstraction with ``sizes`` (one per learned node) as overrides."""
    overrides = dict(game.betting.sequences)
    for ln, s in zip(game.learned, sizes, strict=True):
        key = "".join(f"{tok}{sizes[j]:g}" if j >= 0 else tok for tok, j in ln.path)
        overrides[key] = (float(s),)
    base = game.betting
    return dataclasses.replace(base, name=name or f"{base.name}-learned",
                               sequences=tuple(sorted(overrides.items())))


def _normalise(game: SizingGame, sums: F64) -> F64:
    """Rows of ``sums`` normalised (uniform where empty), as :func:`normalise_rows`."""
    return normalise_rows(game, sums)


def _node_reach(game: SizingGame, table: F64) -> F64:
    """Probability of reaching each node (chance and every player) under ``table``."""
    g = game.arrays
    player, rnd, num_actions, child_start, children, offset = (
        g.player, g.round, g.num_actions, g.child_start, g.children, g.offset)
    deal_bucket = g.deal_bucket
    n = len(player)
    reach = np.zeros((n, game.num_deals))
    reach[0] = game.deal_prob
    for i in range(n):  # parents precede children (pre-order ids)
        p = int(player[i])
        if p < 0:
            continue
        k = int(num_actions[i])
        buckets = deal_bucket[:, p, int(rnd[i])]
        for a in range(k):
            probs = table[int(offset[i]) + buckets * k + a]
            reach[int(children[int(child_start[i]) + a])] = reach[i] * probs
    out: F64 = reach.sum(axis=1)
    return out


# --------------------------------------------------------------------------- fixed sizes


def solve_fixed(game: SizingGame, iterations: int, *, plus: bool = True,
                tick: Callable[[int], None] | None = None, chunk: int = 1000) -> F64:
    """Solve a continuous game without sizing players by CFR(+); its average strategy.

    Raises:
        SizingError: for a transformed game.
    """
    if game.learn is not None:
        raise SizingError("expected a game with fixed sizes (no sizing players)")
    solver = Solver(game, "cfr+" if plus else "cfr")
    while solver.iteration < iterations:
        solver.iterate(min(chunk, iterations - solver.iteration))
        if tick is not None:
            tick(solver.iteration)
    return solver.average_strategy()


def fixed_game(game: Game, abstraction: BettingAbstraction, *,
               rules: Rules | None = None) -> SizingGame:
    """The continuous abstract game of ``abstraction`` (nothing learned)."""
    return build_sizing_game(game, abstraction, learn=None, rules=rules)


def with_fixed_size(game: Game, abstraction: BettingAbstraction, key: str, size: float, *,
                    rules: Rules | None = None) -> SizingGame:
    """The continuous game where the node ``key`` bets ``size`` (a one-node override)."""
    overrides = dict(abstraction.sequences)
    overrides[key] = (float(size),)
    spec = dataclasses.replace(abstraction, sequences=tuple(sorted(overrides.items())))
    return fixed_game(game, spec, rules=rules)


def token_of(action: AbstractAction, depth: int) -> str:
    """Re-export of :func:`agent.abstraction.actions.action_token` for scripts."""
    return action_token(action, depth)
