"""``acpc-match --estimator exact-agents|sampled-agents``: duplicate results without
playing matches, the agents' randomness valued exactly or sampled with common random
numbers (issue 18, item 4).

A played match samples three things per hand: the cards, the strategy-file agents' private
randomness (each decision's draw from its purified row, each translation draw of an
opponent's off-tree raise) and the built-in opponents' draws. This estimator keeps the
cards sampled (the very deals a played match of the same seeds gets, from the dealer's
:class:`~agent.acpc.dealing.MT19937`) and, per deal and per seating (the variant in each
position: a duplicate hand), walks the real betting tree:

* a **strategy-file** agent's decisions are expanded over its whole purified row, and an
  opponent's raise it translates over both sides of the mapping's draw (``f`` and
  ``1 - f``), by :class:`FileAgent`: the decision model of :mod:`agent.decision` (the rules
  of :class:`agent.policy.StrategyPolicy` and every fallback, defined there) expanded; the
  oracle test plays it with the policy's own draws and gets the same actions and values
  as a played match;
* **builtin:random** (fold 6 %, call 47 %, raise 47 % renormalised over the legal kinds,
  a raise-to uniform between the bounds) has its kind and raise size drawn from a hash of
  (deal seed, hand, position, betting): every variant compared on a deal meets the same
  draw at the same history (common random numbers), so a difference between two variants
  is only noise where they really differ (``RandomAgent(expand=True)`` expands the kind
  over its weights instead: on hold'em it costs more CPU than it saves variance);
* the deterministic built-ins (call, fold, minraise, equity) are single branches, and so
  is a user's bot (``module:Class``, :mod:`agent.bot`): it is asked once per state the
  walk visits (hand number 0, states out of a match's order), so a bot valued here
  decides from the state alone; a bot that draws has its draws sampled, not expanded;
* at a showdown against a *card-blind* player (random, call, fold, minraise: their actions
  never depend on their cards), that player's hole cards are integrated out: the payoff is
  weighted by the other hole's exact win/tie/lose odds against every hole the rest of the
  deck allows (the path's probability does not depend on those cards, so this is the
  conditional expectation again).

``sampled-agents`` walks the same tree but follows one outcome at each of the agents'
draws, picked by a hash of (deal seed, hand, betting) like random's sizes: unbiased for
the same reason a played hand is, with common random numbers between the variants and a
single path per seating (about 2x cheaper per deal than the expansion, for a somewhat
larger spread: less CPU per unit of variance on the bundled hold'em file).

Variants against the same opponent are valued by one *joint walk*
(:func:`joint_group_values`, :func:`joint_hand_values`): each deal is dealt once and
walked once per seating for all of them, following them together while they act alike
(same file and purification, same abstract state) and read the opponent alike, splitting
where they do not; each variant gets exactly the values of its own walk (the oracle
test), and a comparison of two variants pays for their common part once. A hold'em file's
flop buckets come from the cached flop strength table of ``acpc-strategy cards`` where
there is one (:func:`flop_buckets`; the same buckets as the kernel, by the canonical
seeding of the flop estimator), the turn's and river's from the kernel without its
wrapper (:func:`kernel_buckets`).

The hot case, a ``sampled-agents`` walk of heads-up no-limit hold'em strategy files
against ``builtin:random`` (the default run's comparison), runs as a numba kernel
(:mod:`evaluation.estimators.fastwalk`, ``walk="auto"`` of :func:`joint_group_values`): the same
values as the Python walk here, which stays the reference (``walk="reference"``) and
serves every other case; the tests compare the two deal by deal.

Per variant a cross-fitted *control variate* is applied on top
(:meth:`GroupValues.controlled`, :func:`cross_fit`, folds by deal): in each seating, minus
a baseline per hole-card class fitted on the other folds, plus its exact mean over the
classes' probabilities; optionally (``features``) minus a fitted multiple of AIVAT-style
terms at random's sampled decisions (:data:`FEATURES`), which differences get too.

The value of a seating is the probability-weighted sum of the exact payoffs of the leaves
(fold or showdown with the dealt board). It is the conditional expectation of a played
hand's value given the cards and the sampled sizes, so its mean over deals is an unbiased
estimate of the same expected mbb/h a played match estimates, with a smaller variance;
the tests check it against ``acpc-match --exact`` in no-limit Leduc and against a played
run in hold'em. The statistical unit is a duplicate deal (both seatings), which is valid
because none of these agents adapts between hands.

Imports the stdlib, :mod:`agent.acpc`, :mod:`agent.strategy.purification` (stdlib only)
and :mod:`dealer` at import time; the agent's policy code (numpy) inside
:func:`make_model`, :mod:`strategies.cards.tables` (to load a cached
flop table, never to build one) when a hold'em file's model is made, and
:mod:`evaluation.estimators.fastwalk` (numba) when its walk is about to run.
"""

from __future__ import annotations

import functools
import hashlib
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.cards import NUM_SUITS, deck_for
from agent.acpc.dealing import Deal, deal_hands
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import MatchState
from agent.strategy.purification import sample_index
from dealer.logfile import hand_values
from evaluation.match.schedule import deal_seed
from evaluation.match.variants import Variant
from evaluation.stats import Estimate, estimate, to_mbb

ESTIMATORS = ("played", "exact-agents", "sampled-agents")
"""``--estimator`` choices: ``played`` (matches are played, the default), ``exact-agents``
and ``sampled-agents`` (this module)."""

WALKS = ("auto", "reference")
"""How :func:`joint_group_values` walks: the numba kernel where it applies, or always the
reference walk."""

CARD_BLIND = ("builtin:call", "builtin:fold", "builtin:minraise")
"""Deterministic built-ins that never look at their cards."""

Outcome = tuple[float, Action, Any]
"""``(probability, real action, the agent's state after it)``."""


class Model(Protocol):
    """One seat's behaviour as a distribution (see the module docstring)."""

    draws: bool
    """True if the agent consumes private draws (its outcomes are a distribution)."""
    card_blind: bool
    """True if the agent's actions never depend on its own cards (its hole cards can be
    integrated out at a showdown: random, call, fold, minraise)."""

    def start(self, position: int, deal: Deal) -> Any:
        """The agent's state at the start of a hand in ``position``."""
        ...

    def act(self, st: Any, state: BettingState, position: int, deal: Deal,
            key: tuple[int, ...], draw: Callable[[], float] | None = None,
            ) -> tuple[list[Outcome], bool]:
        """The agent's outcomes where it is to act, and whether it takes a draw there;
        with ``draw``, called only where the agent draws, the one outcome it picks."""
        ...

    def observe(self, st: Any, state: BettingState,
                action: Action) -> tuple[list[tuple[float, Any]], bool]:
        """The agent's states after another player's ``action`` at ``state`` (and whether
        it takes a draw to read it)."""
        ...


@functools.lru_cache(maxsize=1024)
def _key_bytes(key: tuple[int, ...]) -> bytes:
    return repr(key).encode()


def _hash_u64(key: tuple[int, ...], salt: bytes, betting: str = "") -> int:
    """64 pseudo-random bits from the deal's ``key``, a ``salt`` and the ``betting``."""
    data = b"%s|%s|%s" % (salt, _key_bytes(key), betting.encode())
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


class RandomAgent:
    """``builtin:random`` (:class:`agent.builtin.RandomPolicy`): kinds expanded with their
    weights, the raise size sampled from a hash of the deal, position and betting."""

    draws = False
    card_blind = True

    def __init__(self, game: Game, expand: bool = False) -> None:
        from agent.builtin import RandomPolicy

        self.weights = RandomPolicy.WEIGHTS
        self.game = game
        self.expand = expand

    def start(self, position: int, deal: Deal) -> Any:
        return None

    def act(self, st: Any, state: BettingState, position: int, deal: Deal,
            key: tuple[int, ...], draw: Callable[[], float] | None = None,
            ) -> tuple[list[Outcome], bool]:
        kinds = state.legal_actions()
        weights = [self.weights[k] for k in kinds]
        total = math.fsum(weights)
        if not self.expand:
            u = _hash_u64((*key, position), b"kind", state.betting) / 2.0**64
            acc = 0.0
            chosen = kinds[-1]
            for kind, w in zip(kinds, weights, strict=True):
                acc += w / total
                if u < acc:
                    chosen = kind
                    break
            return [(1.0, self._action(chosen, state, key, position), None)], False
        return [(w / total, self._action(kind, state, key, position), None)
                for kind, w in zip(kinds, weights, strict=True)], False

    def _action(self, kind: ActionKind, state: BettingState, key: tuple[int, ...],
                position: int) -> Action:
        if kind is ActionKind.FOLD:
            return FOLD
        if kind is ActionKind.CALL:
            return CALL
        return _random_raise(self.game, state, key, position)

    def observe(self, st: Any, state: BettingState,
                action: Action) -> tuple[list[tuple[float, Any]], bool]:
        return [(1.0, None)], False


class PolicyAgent:
    """A deterministic built-in (call, fold, minraise, equity) or a user's bot: its own
    ``act``."""

    draws = False

    def __init__(self, policy: Any, card_blind: bool) -> None:
        self.policy = policy
        self.card_blind = card_blind

    def start(self, position: int, deal: Deal) -> Any:
        return None

    def act(self, st: Any, state: BettingState, position: int, deal: Deal,
            key: tuple[int, ...], draw: Callable[[], float] | None = None,
            ) -> tuple[list[Outcome], bool]:
        game = state.game
        none: tuple[tuple[int, ...]] = ((),)
        n = game.num_players
        hole = none * position + (deal.hole[position],) + none * (n - 1 - position)
        ms = MatchState(position, 0, state, hole, deal.board[: game.board_cards_through(
            state.round)])
        return [(1.0, self.policy.act(ms), None)], False

    def observe(self, st: Any, state: BettingState,
                action: Action) -> tuple[list[tuple[float, Any]], bool]:
        return [(1.0, None)], False


def flop_buckets(cards: Any, table: Any = None,
                 ) -> Callable[[Sequence[int], Sequence[int]], int] | None:
    """The flop bucket of ``cards`` (an E[HS^2] hold'em abstraction,
    :class:`agent.abstraction.holdem_buckets.HoldemCards`) by a look-up: its E[HS^2] from
    ``table`` (default: the flop strength table of ``acpc-strategy cards`` if it is in the
    cache for the abstraction's estimator, :mod:`strategies.cards.tables`, loaded and
    validated once per process, never built here), an array by the lossless class of (hole,
    flop). The flop estimator is seeded by the suit-canonical cards, so every hand of a
    class has its class's value: the same bucket as ``cards.bucket`` for about 5 us
    instead of the kernel's ~130 us (a test checks the equality). None for other
    abstractions or without a table."""
    from agent.abstraction.holdem_buckets import HoldemCards

    if type(cards) is not HoldemCards:
        return None
    rivers = cards.flop_rivers_per_turn
    ehs2 = table if table is not None else _cached_flop_table(rivers)
    if ehs2 is None:
        return None
    from agent.abstraction.isomorphism import holdem_indexer

    index = holdem_indexer("board", 1).index
    of_value = cards.bucket_of_value

    def bucket(hole: Sequence[int], board: Sequence[int]) -> int:
        return of_value(1, float(ehs2[index((*hole, *board))]))
    return bucket


def flop_bucket_batch(cards: Any, hands: Any, table: Any = None) -> Any:
    """:func:`flop_buckets` of many (hole, flop) hands at once (an int64 array, one hand
    per row: two hole cards, then the flop), by one call of the indexer's kernel: the same
    buckets (the look-up and the thresholds ``<= value``), a few microseconds less per
    hand than one by one. None where :func:`flop_buckets` is None.

    Raises:
        ValueError: unless ``hands`` has 5 columns of distinct cards per row.
    """
    from agent.abstraction.holdem_buckets import HoldemCards

    if type(cards) is not HoldemCards:
        return None
    ehs2 = table if table is not None else _cached_flop_table(cards.flop_rivers_per_turn)
    if ehs2 is None:
        return None
    import numpy as np

    from agent.abstraction.isomorphism import holdem_indexer

    values = ehs2[holdem_indexer("board", 1).index_batch(hands, check=True)]
    return np.array([cards.bucket_of_value(1, float(v)) for v in values], np.int64)


def kernel_buckets(cards: Any) -> Callable[[int, Sequence[int], Sequence[int]], int] | None:
    """``cards.bucket`` for an E[HS^2] hold'em abstraction
    (:class:`agent.abstraction.holdem_buckets.HoldemCards`) after the preflop, by its
    kernel with buffers allocated once: the walk's cards are valid by construction, and
    on the turn and river the wrapper's checks and allocations cost about as much as the
    kernel (the oracle tests check the buckets through the played policy's). None for
    other abstractions."""
    from agent.abstraction.holdem_buckets import (
        SCRATCH_SIZE,
        STRENGTH_TABLES,
        HoldemCards,
        strength_moments,
    )

    if type(cards) is not HoldemCards:
        return None
    import numpy as np

    buf = np.zeros(7, np.int64)
    scratch = np.zeros(SCRATCH_SIZE, np.int64)
    out = np.zeros(2)
    rivers = cards.flop_rivers_per_turn
    of_value = cards.bucket_of_value

    def bucket(round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        n = len(board)
        buf[0], buf[1] = hole
        buf[2:2 + n] = board
        strength_moments(buf, n, rivers, *STRENGTH_TABLES, scratch, out)
        return of_value(round_, float(out[1]))
    return bucket


@functools.cache
def _cached_flop_table(flop_rivers_per_turn: int) -> Any:
    """The cached flop E[HS^2] array (:func:`flop_buckets`), or None if not cached."""
    import numpy as np

    from strategies.cache import cache_dir
    from strategies.cards.tables import StrengthTable, load_strength_table

    probe = StrengthTable(1, flop_rivers_per_turn, np.zeros(0), np.zeros(0),
                          np.zeros(0, np.uint8))
    path = cache_dir() / f"holdem-strength-{probe.key}.npz"
    if not path.exists():
        return None
    table = load_strength_table(path, 1, flop_rivers_per_turn=flop_rivers_per_turn)
    return None if table is None else table.ehs2


class CardCache:
    """The buckets of one deal's holes by (round, position), shared by the models of one
    strategy file (they bucket the same cards alike) and reset when the deal changes."""

    def __init__(self) -> None:
        self.deal: Deal | None = None
        self.buckets: dict[tuple[int, int], int] = {}
        self.readings: dict[tuple[int, str, str, int], Any] = {}
        """Bet readings by (node, betting, size convention, raise-to): the variants of a
        file that differ in the mapping bracket a raise alike."""
        self.kernels: dict[tuple[int, ...], tuple[list[Any], Any]] = {}
        """The numba walks (:class:`evaluation.estimators.fastwalk.NumbaWalk`, or None where the
        kernel does not apply) of sets of this file's agents, by the agents' ids, each with
        the agents themselves (alive as long as the entry, so an id is never reused)."""

    def reset(self, deal: Deal) -> None:
        """Start ``deal`` (a no-op if it is the current one)."""
        if deal is not self.deal:
            self.deal = deal
            self.buckets.clear()
            self.readings.clear()


@dataclass(frozen=True, slots=True)
class _FileState:
    node: int
    off_tree: bool = False


class FileAgent:
    """A strategy file as :class:`agent.policy.StrategyPolicy` plays it, as distributions:
    the decision model (:mod:`agent.decision`) expanded.

    The state is the abstract history (its node, and whether the hand left the tree);
    sampling the outcomes with the policy's draws gives its actions (the oracle test).
    """

    draws = True
    card_blind = False

    def __init__(self, policy: Any, cards: CardCache | None = None) -> None:
        self.loaded = policy.loaded
        self.tree = policy.loaded.tree
        self.mapping = policy.mapping
        self.purification = policy.purification
        self.sizes_in = policy.sizes_in
        self.cards = cards if cards is not None else CardCache()
        self._rows: dict[tuple[int, int], list[float]] = {}
        self.flop = flop_buckets(self.loaded.cards)
        """The flop's buckets from the cached strength table, where there is one
        (:func:`flop_buckets`); None: the abstraction's own kernel."""
        self.later = kernel_buckets(self.loaded.cards)
        """Turn and river buckets straight from the kernel (:func:`kernel_buckets`)."""
        from agent import decision

        self._decision = decision
        self._kinds: dict[int, Any] = {}
        """Per node: its :class:`agent.decision.NodeKinds`."""

    def _node_kinds(self, node: Any) -> Any:
        got = self._kinds.get(node.id)
        if got is None:
            got = self._kinds[node.id] = self._decision.NodeKinds.of(node)
        return got

    @property
    def act_key(self) -> tuple[int, Any]:
        """Models with equal keys act alike in equal states (the file and the
        purification; the mapping and the size convention only read the opponent)."""
        return (id(self.loaded), self.purification)

    def start(self, position: int, deal: Deal) -> Any:
        self.cards.reset(deal)
        return _FileState(0)

    def _bucket(self, round_: int, position: int, deal: Deal) -> int:
        cache = self.cards
        if deal is not cache.deal:
            cache.reset(deal)
        key = (round_, position)
        b = cache.buckets.get(key)
        if b is None:
            game = self.tree.game
            board = deal.board[: game.board_cards_through(round_)]
            if round_ == 1 and self.flop is not None:
                b = self.flop(deal.hole[position], board)
            elif round_ > 1 and self.later is not None:
                b = self.later(round_, deal.hole[position], board)
            else:
                b = self.loaded.cards.bucket(round_, deal.hole[position], board)
            cache.buckets[key] = b
        return b

    def _purified(self, node: int, bucket: int) -> list[float]:
        key = (node, bucket)
        row = self._rows.get(key)
        if row is None:
            raw = [float(p) for p in self.loaded.strategy.row(node, bucket)]
            row = self.purification.apply(raw)
            if len(self._rows) > 1 << 18:
                self._rows.clear()
            self._rows[key] = row
        return row

    def _at(self, st: Any) -> int:
        return self._decision.OFF_TREE if st.off_tree else st.node

    def _state(self, st: Any, at: int) -> Any:
        """The state for abstract history ``at`` (off the tree: ``st``'s node, marked)."""
        if at == self._decision.OFF_TREE:
            return st if st.off_tree else _FileState(st.node, True)
        return _FileState(at)

    def fold_probability(self, st: Any, state: BettingState, position: int,
                         deal: Deal) -> float:
        """The probability that :meth:`act` folds at ``state`` (or, if another player is
        to act there, at the agent's next decision in ``state``'s round)."""
        if self._decision.standing(self.tree, self._at(st), state, position) is not None:
            return 0.0
        node = self.tree.nodes[st.node]
        row = self._purified(node.id, self._bucket(state.round, position, deal))
        return math.fsum(p for a, p in zip(node.actions, row, strict=True)
                         if a.action.kind is ActionKind.FOLD)

    def act(self, st: Any, state: BettingState, position: int, deal: Deal,
            key: tuple[int, ...], draw: Callable[[], float] | None = None,
            ) -> tuple[list[Outcome], bool]:
        decision = self._decision
        at = self._at(st)
        why = decision.standing(self.tree, at, state)
        if why is not None:
            return [(1.0, decision.fallback_action(state, why),
                     self._state(st, decision.after_fallback(at, why)))], False
        node = self.tree.nodes[at]
        row = self._purified(node.id, self._bucket(state.round, position, deal))
        if draw is not None:
            action, child = decision.own_move(node, state, sample_index(row, draw()))
            return [(1.0, action, _FileState(child))], True
        return [(p, action, _FileState(child))
                for p, action, child in decision.own_outcomes(node, state, row)], True

    def observe(self, st: Any, state: BettingState,
                action: Action) -> tuple[list[tuple[float, Any]], bool]:
        decision = self._decision
        at = self._at(st)
        why = decision.standing(self.tree, at, state)
        if why is not None:
            return [(1.0, self._state(st, decision.after_fallback(at, why)))], False
        node = self.tree.nodes[at]
        if action.kind is ActionKind.RAISE and state.game.is_nolimit:
            # bet readings are cached per deal: the variants of a file that differ in the
            # mapping bracket a raise alike
            rk = (at, state.betting, self.sizes_in, action.raise_to)
            readings = self.cards.readings
            reading = readings.get(rk)
            if reading is None:
                reading = readings[rk] = decision.read_on_tree(
                    node, self._node_kinds(node), state, action, self.sizes_in)
        else:
            reading = decision.read_on_tree(node, self._node_kinds(node), state, action,
                                            self.sizes_in)
        return [(p, self._state(st, nxt)) for p, nxt in reading.outcomes(self.mapping)], \
            reading.draws


def make_model(variant: Variant, game: Game, *, expand_random: bool = False,
               shared: dict[tuple[str, str | None], Any] | None = None) -> Model:
    """The model of one variant (strategy files and built-ins; not external commands).

    ``shared`` keeps loaded strategy files by (path, size convention), so variants of one
    file that differ in mapping or purification load it once.

    Raises:
        UsageError: for an external command (``cmd=``) or an exploiting agent
            (``exploit=``), which cannot be modelled.
    """
    if variant.kind == "cmd" or variant.strategy is None:
        raise UsageError(f"expected strategy files or built-ins with --estimator "
                         f"exact-agents or sampled-agents, got variant {variant.name!r} = "
                         f"{variant.spec!r}")
    if variant.exploit is not None:
        raise UsageError(f"expected agents that play one fixed strategy with --estimator "
                         f"exact-agents or sampled-agents, got variant {variant.name!r} with "
                         f"exploit={variant.exploit} (it changes its strategy as it plays: "
                         f"duplicate matches, --estimator played, measure it)")
    from evaluation.match.variants import make_seat_policy

    if variant.kind == "file":
        if shared is None:
            return FileAgent(make_seat_policy(variant, game, 0))
        from agent.abstraction.translation import choose_mapping
        from agent.agents import make_policy
        from agent.policy import StrategyPolicy
        from agent.strategy.purification import parse_purification

        key = (variant.strategy, variant.sizes)
        entry: Any = shared.get(key)
        if entry is None:
            entry = shared[key] = (make_policy(variant.strategy, game, seed=0,
                                               mapping=variant.mapping,
                                               purify=variant.purify,
                                               sizes_in=variant.sizes), CardCache())
        base, cards = entry
        strategy = base.loaded.strategy
        mapping, mapping_fn = choose_mapping(variant.mapping, strategy.default_mapping,
                                             strategy.source)
        return FileAgent(StrategyPolicy(
            base.loaded, mapping_fn,
            parse_purification(variant.purify or strategy.default_purification),
            seed=0, mapping_name=mapping, sizes_in=base.sizes_in), cards)
    spec = variant.strategy.strip().lower()
    if spec == "builtin:random":
        return RandomAgent(game, expand_random)
    if variant.kind == "bot":  # the user's bot: asked like the deterministic built-ins
        from agent.agents import BotSpecError

        try:
            return PolicyAgent(make_seat_policy(variant, game, 0), False)
        except BotSpecError as exc:
            raise BotSpecError(f"variant {variant.name!r}: {exc}") from None
    return PolicyAgent(make_seat_policy(variant, game, 0), spec in CARD_BLIND)


# ---------------------------------------------------------------------- the walk


def hand_value(game: Game, models: Sequence[Model], deal: Deal, key: tuple[int, ...],
               *, integrate_cards: bool = True, sample: bool = False) -> float:
    """Position 0's expected chips on ``deal`` with ``models[p]`` in position ``p``
    (heads-up), the models' distributions expanded (module docstring). With
    ``integrate_cards``, a card-blind player's hole cards are integrated out at showdowns."""
    sts = [m.start(p, deal) for p, m in enumerate(models)]
    blind = -1
    if integrate_cards:
        blind = next((p for p in (1, 0) if models[p].card_blind), -1)
    walk = _Walk(models, deal, key, blind, sample)
    return walk.value(BettingState.initial(game), sts)


def state_value(models: Sequence[Model], deal: Deal, state: BettingState,
                sts: Sequence[Any], key: tuple[int, ...] = ()) -> float:
    """Position 0's expected chips from ``state`` on the whole ``deal`` (its board is the
    one dealt later), ``models[p]`` in position ``p`` in agent state ``sts[p]``, the
    models' distributions expanded (:func:`hand_value` from a later state; no card is
    integrated out)."""
    return _Walk(models, deal, key, -1).value(state, list(sts))


def _pick_index(key: tuple[int, ...], probs: list[float], state: BettingState,
                salt: bytes) -> int:
    """One index drawn from ``probs`` by a hash of the deal's ``key`` and the history."""
    return sample_index(probs, _hash_u64(key, salt, state.betting) / 2.0**64)


def _act_draw(key: tuple[int, ...], p: int, state: BettingState) -> Callable[[], float]:
    """The hashed draw of the player at position ``p`` acting at ``state`` (sampled walks)."""

    def draw() -> float:
        return _hash_u64(key, b"act%d" % p, state.betting) / 2.0**64
    return draw


def _reading(observer: Model, st: Any, state: BettingState, action: Action, position: int,
             key: tuple[int, ...], sample: bool) -> list[tuple[float, Any]]:
    """How ``observer`` (at ``position``) reads ``action``: its weighted readings, or in a
    sampled walk the one a hash of the deal and the history picks."""
    seen, _ = observer.observe(st, state, action)
    if sample and len(seen) > 1:
        i = _pick_index(key, [r for r, _ in seen], state, b"see%d" % position)
        return [(1.0, seen[i][1])]
    return list(seen)


class _Walk:
    """One seating of one deal: the expanded tree's value (see :func:`hand_value`)."""

    def __init__(self, models: Sequence[Model], deal: Deal, key: tuple[int, ...],
                 blind: int, sample: bool = False) -> None:
        self.models = models
        self.deal = deal
        self.key = key
        self.blind = blind
        self.sample = sample
        self._odds: dict[tuple[int, int], tuple[float, float, float]] = {}

    def value(self, state: BettingState, sts: list[Any]) -> float:
        if state.finished:
            return self.leaf(state)
        models, deal, key = self.models, self.deal, self.key
        p = state.player
        o = 1 - p
        draw = _act_draw(key, p, state) if self.sample else None
        outs, _ = models[p].act(sts[p], state, p, deal, key, draw)
        total = 0.0
        for q, action, new in outs:
            if q <= 0.0:
                continue
            seen = _reading(models[o], sts[o], state, action, o, key, self.sample)
            child = state.apply(action)
            for r, other in seen:
                if r <= 0.0:
                    continue
                nxt = [new, other] if p == 0 else [other, new]
                total += q * r * self.value(child, nxt)
        return total

    def leaf(self, state: BettingState) -> float:
        return _leaf_value(state, self.deal, self.blind, self._odds)


def _act_key(model: Model) -> Any:
    """Models with equal keys act alike in equal states (:attr:`FileAgent.act_key`)."""
    return getattr(model, "act_key", None) or id(model)


def _blind_position(models: Sequence[Model]) -> int:
    """The card-blind position whose cards a showdown integrates out (-1: none)."""
    return next((p for p in (1, 0) if models[p].card_blind), -1)


def joint_hand_values(game: Game, agents: Sequence[Model], opponent: Model, position: int,
                      deal: Deal, key: tuple[int, ...], *, sample: bool = False,
                      odds: dict[tuple[int, int], tuple[float, float, float]] | None = None,
                      ) -> list[float]:
    """Position 0's expected chips on ``deal`` for every agent of ``agents`` in
    ``position`` against ``opponent``: each equal to :func:`hand_value` of that agent
    (same outcomes, same hashed draws), computed in one walk that follows the agents
    together while they act alike and read the opponent alike, and splits where they do
    not. ``odds`` caches showdown odds (pass one dict for both seatings of a deal)."""
    return _joint(game, agents, opponent, position, deal, key, sample=sample, odds=odds)[0]


def _joint(game: Game, agents: Sequence[Model], opponent: Model, position: int, deal: Deal,
           key: tuple[int, ...], *, sample: bool = False,
           odds: dict[tuple[int, int], tuple[float, float, float]] | None = None,
           features: bool = False,
           ) -> tuple[list[float], list[list[float]] | None]:
    """:func:`joint_hand_values`, and with ``features`` each agent's control-variate terms
    (:data:`FEATURES`, the agent's chips; None without)."""
    walk = _JointWalk(agents, opponent, position, deal, key, sample,
                      {} if odds is None else odds, features)
    members = list(range(len(agents)))
    sts = [a.start(position, deal) for a in agents]
    values = walk.value(BettingState.initial(game), opponent.start(1 - position, deal),
                        members, sts, 1.0)
    return values, walk.feats


FEATURES = ("random folds", "random raises, the agent folds",
            "random raises, the agent goes on", "random calls", "random raises",
            "random calls (indicator)")
"""The control-variate terms of a seating (:class:`_JointWalk`), AIVAT-style: at each of
``builtin:random``'s sampled kinds, ``h(taken) - sum_k P(k) h(k)`` over its known kind
weights, for baseline functions ``h`` of the kind in the agent's chips: random's fold, its
exact payoff; a raise to the size random draws there (drawn apart from the kind, so the
correction is conditional on it), the agent's purified fold probability after reading it
times minus the agent's chips in, and the rest times the agent's showdown edge (P(win) -
P(lose) of its hole on the whole board against a random hole) times the size; a call,
the edge times the level; and the raise and call indicators. Each term has mean 0 given
the history, the cards and the size (random's kind draw is independent of them), so any
multiple of their sum fixed without the deal can be subtracted: unbiased."""


def _random_raise(game: Game, state: BettingState, key: tuple[int, ...],
                  position: int) -> Action:
    """The raise ``builtin:random`` (:class:`RandomAgent`) makes at ``state``."""
    if not game.is_nolimit:
        return LIMIT_RAISE
    bounds = state.raise_bounds()
    assert bounds is not None
    lo, hi = bounds
    h = _hash_u64((*key, position), b"size", state.betting)
    return Action(ActionKind.RAISE, lo + h % (hi - lo + 1))


def _fold_probability(model: Model, st: Any, state: BettingState, position: int,
                      deal: Deal) -> float:
    """The probability that ``model`` in ``position`` folds in ``state``'s round as the
    next to act (0 for a model without the estimate: any value is a valid baseline)."""
    get = getattr(model, "fold_probability", None)
    return float(get(st, state, position, deal)) if get is not None else 0.0


class _JointWalk:
    """One seating of one deal for several agents at once (:func:`joint_hand_values`)."""

    def __init__(self, agents: Sequence[Model], opponent: Model, position: int, deal: Deal,
                 key: tuple[int, ...], sample: bool,
                 odds: dict[tuple[int, int], tuple[float, float, float]],
                 features: bool = False) -> None:
        self.feats: list[list[float]] | None = None
        if features and isinstance(opponent, RandomAgent):
            self.feats = [[0.0] * len(FEATURES) for _ in agents]
        self._edge: float | None = None
        self.weights = opponent.weights if isinstance(opponent, RandomAgent) else {}
        self.agents = agents
        self.opponent = opponent
        self.position = position
        self.deal = deal
        self.key = key
        self.sample = sample
        self.odds = odds
        self.act_keys = [_act_key(a) for a in agents]
        self.blinds = [_blind_position((a, opponent) if position == 0 else (opponent, a))
                       for a in agents]

    def _draw(self, p: int, state: BettingState) -> Callable[[], float] | None:
        return _act_draw(self.key, p, state) if self.sample else None

    def edge(self, game: Game) -> float:
        """The agent's P(win) - P(lose) with the whole board against a random hole."""
        if self._edge is None:
            deal = self.deal
            n = len(deal.board)
            got = self.odds.get((self.position, n))
            if got is None:
                got = self.odds[(self.position, n)] = _heads_up_odds(
                    game, deal.hole[self.position], deal.board)
            self._edge = got[0] - got[2]
        return self._edge

    def _random_terms(self, state: BettingState, action: Action, w: float,
                      members: list[int], sts: list[Any]) -> None:
        """Add ``w`` times random's terms (:data:`FEATURES`) for its sampled ``action``
        at ``state`` to every member's features."""
        assert self.feats is not None
        p = state.player
        game = state.game
        kinds = state.legal_actions()
        if len(kinds) < 2:
            return
        e = self.edge(game)
        weights = self.weights
        total = math.fsum(weights[k] for k in kinds)
        pf = weights[ActionKind.FOLD] / total if ActionKind.FOLD in kinds else 0.0
        pc = weights[ActionKind.CALL] / total if ActionKind.CALL in kinds else 0.0
        pr = weights[ActionKind.RAISE] / total if ActionKind.RAISE in kinds else 0.0
        taken = action.kind
        is_fold = 1.0 if taken is ActionKind.FOLD else 0.0
        is_call = 1.0 if taken is ActionKind.CALL else 0.0
        is_raise = 1.0 if taken is ActionKind.RAISE else 0.0
        fold_value = float(state.spent[p])  # the agent wins what random has put in
        call_value = e * float(min(state.max_spent, game.stack[p]))
        common = (w * (is_fold - pf) * fold_value, w * (is_call - pc) * call_value,
                  w * (is_raise - pr), w * (is_call - pc))
        raise_action: Action | None = None
        if pr > 0.0:
            # the size random draws here (apart from its kind: the terms are conditional
            # on it)
            raise_action = action if is_raise else _random_raise(game, state, self.key, p)
            level = float(raise_action.raise_to or min(
                state.max_spent + game.raise_size[state.round], game.stack[p]))
        spent_agent = float(state.spent[self.position])
        cache: dict[tuple[int, Any], tuple[float, float]] = {}
        for j, m in enumerate(members):
            f = self.feats[m]
            f[0] += common[0]
            f[3] += common[1]
            f[4] += common[2]
            f[5] += common[3]
            if raise_action is None:
                continue
            agent = self.agents[m]
            pk = (id(agent), sts[j])
            terms = cache.get(pk)
            if terms is None:
                seen, _ = agent.observe(sts[j], state, raise_action)
                # the agent acts next in this round: its fold probability at ``state``'s
                # round after reading the raise
                fold = math.fsum(r * _fold_probability(agent, st, state, self.position,
                                                       self.deal)
                                 for r, st in seen if r > 0.0)
                scale = w * (is_raise - pr)
                terms = cache[pk] = (-scale * fold * spent_agent,
                                     scale * (1.0 - fold) * e * level)
            f[1] += terms[0]
            f[2] += terms[1]

    def value(self, state: BettingState, opp_st: Any, members: list[int],
              sts: list[Any], w: float) -> list[float]:
        if state.finished:
            return self.leaves(state, members)
        p = state.player
        deal, key = self.deal, self.key
        out = [0.0] * len(members)
        sample = self.sample
        if p == self.position:
            classes: dict[tuple[Any, Any], list[int]] = {}
            for j, m in enumerate(members):
                classes.setdefault((self.act_keys[m], sts[j]), []).append(j)
            for (_, st), idx in classes.items():
                sub = [members[j] for j in idx]
                outs, _ = self.agents[sub[0]].act(st, state, p, deal, key,
                                                  self._draw(p, state) if sample else None)
                for q, action, new in outs:
                    if q <= 0.0:
                        continue
                    seen = _reading(self.opponent, opp_st, state, action, 1 - p, key, sample)
                    child = state.apply(action)
                    for r, other in seen:
                        if r <= 0.0:
                            continue
                        vals = self.value(child, other, sub, [new] * len(sub), w * q * r)
                        for j, v in zip(idx, vals, strict=True):
                            out[j] += q * r * v
            return out
        opponent = self.opponent
        outs, _ = opponent.act(opp_st, state, p, deal, key, self._draw(p, state))
        for q, action, new_opp in outs:
            if q <= 0.0:
                continue
            if self.feats is not None and len(outs) == 1:
                self._random_terms(state, action, w * q, members, sts)
            child = state.apply(action)
            splits: dict[tuple[tuple[float, Any], ...], list[int]] = {}
            for j, m in enumerate(members):
                seen = _reading(self.agents[m], sts[j], state, action, 1 - p, key, sample)
                splits.setdefault(tuple(seen), []).append(j)
            for seen_key, idx in splits.items():
                sub = [members[j] for j in idx]
                for r, st in seen_key:
                    if r <= 0.0:
                        continue
                    vals = self.value(child, new_opp, sub, [st] * len(sub), w * q * r)
                    for j, v in zip(idx, vals, strict=True):
                        out[j] += q * r * v
        return out

    def leaves(self, state: BettingState, members: list[int]) -> list[float]:
        cache: dict[int, float] = {}
        out = []
        for m in members:
            blind = self.blinds[m]
            v = cache.get(blind)
            if v is None:
                v = cache[blind] = _leaf_value(state, self.deal, blind, self.odds)
            out.append(v)
        return out


def _kernel_walks(files: Sequence[FileAgent], opponent: RandomAgent,
                  ) -> list[tuple[list[int], Any]] | None:
    """The numba walks (:func:`evaluation.estimators.fastwalk.numba_walk_for`) of ``files``, one per
    load of a strategy file (its card cache), with the agents' indexes; None unless the
    kernel covers every one. Each walk is kept by its card cache (its flattened tree nodes
    serve every later call)."""
    parts: dict[int, list[int]] = {}
    for i, a in enumerate(files):
        parts.setdefault(id(a.cards), []).append(i)
    found = []
    for idx in parts.values():
        sub = [files[i] for i in idx]
        kernels = sub[0].cards.kernels
        ids = tuple(id(a) for a in sub)
        if ids not in kernels:
            from evaluation.estimators.fastwalk import numba_walk_for

            # the agents are kept with their walk, so their ids stay theirs
            kernels[ids] = (sub, numba_walk_for(sub, opponent.weights, flop_bucket_batch))
        walk = kernels[ids][1]
        if walk is None:
            return None
        found.append((idx, walk))
    return found


def fast_walk_applies(agents: Sequence[Model], opponent: Model, *, sample: bool,
                      features: bool) -> bool:
    """True for the case of the numba walk (:mod:`evaluation.estimators.fastwalk`, which checks
    the rest: the game, the files, the mappings): a ``sampled-agents`` walk without
    :data:`FEATURES` of strategy files against ``builtin:random`` with its kinds
    sampled."""
    return (sample and not features and bool(agents)
            and type(opponent) is RandomAgent and not opponent.expand
            and all(type(a) is FileAgent for a in agents))


def _leaf_value(state: BettingState, deal: Deal, blind: int,
                odds: dict[tuple[int, int], tuple[float, float, float]]) -> float:
    """Position 0's chips at a finished ``state`` (:meth:`_Walk.leaf`), ``odds`` cached by
    (seen position, visible board cards)."""
    if not state.is_showdown or blind < 0:
        return hand_values(state, deal.hole, deal.board)[0]
    q = blind
    visible = state.game.board_cards_through(state.round)
    got = odds.get((1 - q, visible))
    if got is None:
        got = odds[(1 - q, visible)] = _heads_up_odds(state.game, deal.hole[1 - q],
                                                      deal.board[:visible])
    win, tie, lose = got  # of the seen player (1 - q) against q's unknown cards
    hi, lo = (1, 0) if q == 1 else (0, 1)
    return (win * state.payoffs((hi, lo))[0] + tie * state.payoffs((0, 0))[0]
            + lose * state.payoffs((lo, hi))[0])


def _heads_up_odds(game: Game, hole: Sequence[int],
                   board: Sequence[int]) -> tuple[float, float, float]:
    """Odds worth :func:`showdown_odds` in a heads-up showdown, where a tie pays 0 and a
    loss the opposite of a win, so only ``win - lose`` matters: on a hold'em river,
    ``(HS, 0, 1 - HS)`` with HS = P(win) + P(tie) / 2 from the hand-strength kernel
    (exact there, and several times cheaper); else :func:`showdown_odds` itself."""
    if (game.num_players == 2 and len(board) == 5 and len(hole) == 2
            and game.num_suits * game.num_ranks == 52):
        hs = _river_strength()(hole, board)
        return hs, 0.0, 1.0 - hs
    return showdown_odds(game, hole, board)


@functools.cache
def _river_strength() -> Callable[[Sequence[int], Sequence[int]], float]:
    """HS of a hold'em hole on a 5-card board: the kernel of
    :func:`agent.abstraction.holdem_buckets.hand_strength_moments` (exact on the river)
    with buffers allocated once (the walk's cards are valid by construction)."""
    import numpy as np

    from agent.abstraction.holdem_buckets import (
        SCRATCH_SIZE,
        STRENGTH_TABLES,
        strength_moments,
    )

    cards = np.zeros(7, np.int64)
    scratch = np.zeros(SCRATCH_SIZE, np.int64)
    out = np.zeros(2)

    def strength(hole: Sequence[int], board: Sequence[int]) -> float:
        cards[0], cards[1] = hole
        cards[2:7] = board
        strength_moments(cards, 5, 1, *STRENGTH_TABLES, scratch, out)
        return float(out[0])
    return strength


def showdown_odds(game: Game, hole: Sequence[int],
                  board: Sequence[int]) -> tuple[float, float, float]:
    """``(win, tie, lose)`` of ``hole`` on the showdown ``board`` against an opponent hole
    drawn uniformly from the rest of the deck (exact enumeration)."""

    used = set(hole) | set(board)
    return _odds_on(game, hole, board, [c for c in deck_for(game) if c not in used])


_COMBOS: dict[tuple[tuple[int, ...], int], Any] = {}
"""Per (deck, hole size): every hole of the deck as an int64 array (rows of card ids)."""


def _odds_on(game: Game, hole: Sequence[int], board: Sequence[int],
             rest: Sequence[int]) -> tuple[float, float, float]:
    import itertools

    from agent.acpc.evaluator import rank_hand_fast

    mine = rank_hand_fast([*hole, *board])
    k = len(hole)
    if math.comb(len(rest), k) <= 64:
        theirs = [rank_hand_fast([*c, *board]) for c in itertools.combinations(rest, k)]
        win = sum(1 for r in theirs if r < mine)
        tie = sum(1 for r in theirs if r == mine)
        n = len(theirs)
        return win / n, tie / n, (n - win - tie) / n
    import numpy as np

    from agent.handeval import evaluate_batch

    deck = tuple(deck_for(game))
    combos = _COMBOS.get((deck, k))
    if combos is None:
        combos = _COMBOS[(deck, k)] = np.array(list(itertools.combinations(deck, k)),
                                               np.int64).reshape(-1, k)
    used = np.zeros(max(deck) + 1, np.bool_)
    used[list(hole)] = True
    used[list(board)] = True
    keep = combos[~used[combos].any(axis=1)]
    hands = np.empty((len(keep), k + len(board)), np.int64)
    hands[:, :k] = keep
    hands[:, k:] = board
    ranks = evaluate_batch(hands, check=False)
    n = len(keep)
    win = int(np.count_nonzero(ranks < mine))
    tie = int(np.count_nonzero(ranks == mine))
    return win / n, tie / n, (n - win - tie) / n


def play_hand(models: Sequence[Model], deal: Deal, draws: Sequence[Callable[[], float]],
              opponents: Sequence[Any | None], game: Game, hand: int,
              lazy: bool = False) -> tuple[str, float]:
    """The slow oracle's twin: one hand played by the models with sampled outcomes.

    ``draws[p]`` is position ``p``'s uniform source (the policy's ``rng.random``), used
    exactly where the policy draws; where ``opponents[p]`` is a real policy object it acts
    instead of the model; ``lazy``: the models pick their own outcome with the draw (the
    ``sampled-agents`` path) instead of listing them all (the ``exact-agents`` one).
    Returns the betting and position 0's chips.
    """
    from agent.strategy.purification import sample_index

    state = BettingState.initial(game)
    sts = [m.start(p, deal) for p, m in enumerate(models)]
    n = game.num_players
    for _ in range(10_000):
        if state.finished:
            break
        p = state.player
        o = 1 - p
        real = opponents[p]
        if real is not None:
            none: tuple[tuple[int, ...]] = ((),)
            hole = none * p + (deal.hole[p],) + none * (n - 1 - p)
            ms = MatchState(p, hand, state, hole,
                            deal.board[: game.board_cards_through(state.round)])
            action = real.act(ms)
        else:
            if lazy:
                outs, _ = models[p].act(sts[p], state, p, deal, (), draws[p])
                _, action, sts[p] = outs[0]
            else:
                outs, drawn = models[p].act(sts[p], state, p, deal, ())
                i = sample_index([q for q, _, _ in outs], draws[p]()) if drawn else 0
                _, action, sts[p] = outs[i]
        if opponents[o] is None:
            seen, drawn = models[o].observe(sts[o], state, action)
            i = sample_index([r for r, _ in seen], draws[o]()) if drawn else 0
            sts[o] = seen[i][1]
        state = state.apply(action)
    return state.betting, hand_values(state, deal.hole, deal.board)[0]


# ---------------------------------------------------------------------- the run


def hole_class(hole: Sequence[int]) -> tuple[int, ...]:
    """The suit-isomorphic class of hole cards: ranks descending, then 1 if all share a
    suit (hold'em: the 169 preflop classes)."""
    key = tuple(hole)
    got = _HOLE_CLASSES.get(key)
    if got is None:
        ranks = sorted((c // NUM_SUITS for c in hole), reverse=True)
        suited = len(hole) > 1 and len({c % NUM_SUITS for c in hole}) == 1
        got = _HOLE_CLASSES[key] = (*ranks, int(suited))
    return got


_HOLE_CLASSES: dict[tuple[int, ...], tuple[int, ...]] = {}
""":func:`hole_class` by hole (at most every hole of a deck)."""


def class_probabilities(game: Game) -> dict[tuple[int, ...], float]:
    """The exact probability of each :func:`hole_class` of one player's deal."""
    import itertools


    combos = list(itertools.combinations(deck_for(game), game.num_hole_cards))
    counts: dict[tuple[int, ...], int] = {}
    for c in combos:
        k = hole_class(c)
        counts[k] = counts.get(k, 0) + 1
    return {k: n / len(combos) for k, n in counts.items()}


@dataclass
class GroupValues:
    """Per duplicate deal of a group: the first variant's chips in each seating, the hole
    class it held there and the duplicate unit of the deal."""

    group: tuple[str, str]
    seatings: list[tuple[float, float]] = field(default_factory=list)
    classes: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    units: list[int] = field(default_factory=list)
    cpu_seconds: float = 0.0

    @property
    def values(self) -> list[float]:
        """Per deal: the mean of both seatings (no control variate)."""
        return [0.5 * (a + b) for a, b in self.seatings]

    features: list[tuple[list[float], list[float]]] = field(default_factory=list)
    """Per deal, with ``features``: the control-variate terms (:data:`FEATURES`) of the
    first variant in each seating (empty without)."""

    def controlled(self, probs: dict[tuple[int, ...], float],
                   by_class: bool = True) -> list[float]:
        """Per deal, with control variates (:func:`cross_fit`): in each seating, the value
        minus the fitted multiple of its :data:`FEATURES` terms (mean 0) and (with
        ``by_class``) minus a baseline ``b(class)`` plus its exact mean
        ``sum_c P(c) b(c)``."""
        features = self.features if self.features else None
        return cross_fit(self.seatings, self.classes, probs, features, by_class=by_class)


def difference(x: GroupValues, sx: float, y: GroupValues, sy: float) -> GroupValues:
    """Per seating, ``sx`` times ``x``'s value minus ``sy`` times ``y``'s (on the same
    deals), with the same difference of their features where both have them."""
    out = GroupValues((x.group[0], y.group[0]), classes=list(x.classes),
                      units=list(x.units), cpu_seconds=x.cpu_seconds + y.cpu_seconds)
    out.seatings = [(sx * a0 - sy * b0, sx * a1 - sy * b1)
                    for (a0, a1), (b0, b1) in zip(x.seatings, y.seatings, strict=True)]
    if x.features and y.features:
        out.features = [([sx * u - sy * v for u, v in zip(fx0, fy0, strict=True)],
                         [sx * u - sy * v for u, v in zip(fx1, fy1, strict=True)])
                        for (fx0, fx1), (fy0, fy1) in zip(x.features, y.features,
                                                          strict=True)]
    return out


def cross_fit(seatings: Sequence[tuple[float, float]],
              classes: Sequence[tuple[tuple[int, ...], tuple[int, ...]]],
              probs: dict[tuple[int, ...], float],
              features: Sequence[tuple[Sequence[float], Sequence[float]]] | None = None,
              folds: int = 5, by_class: bool = True) -> list[float]:
    """Per deal, the mean of both seatings' values with cross-fitted control variates.

    The deals are split into ``folds`` by their index; for the deals of each fold the
    coefficients are fitted on the *other* folds only, so they are independent of the
    deal (the deals are independent) and each correction keeps the value's expectation:

    * ``features`` (terms with mean 0 given the cards, :data:`FEATURES`): minus
      ``beta . x``, ``beta`` the least-squares fit of the value on them (with an
      intercept, not subtracted);
    * then, per seating and hole class, minus the mean residual ``b(class)`` (shrunk
      toward 0 by :data:`BASELINE_PRIOR`) plus its exact mean over the classes.

    With fewer than ``2 * folds`` deals, or neither ``features`` nor ``by_class``, there
    is nothing to fit: the plain means.
    """
    n = len(seatings)
    if n < 2 * folds or (features is None and not by_class):
        return [0.5 * (a + b) for a, b in seatings]
    import numpy as np

    y = np.array(seatings, dtype=np.float64).reshape(2 * n)  # deal i: rows 2i, 2i + 1
    fold = np.repeat(np.arange(n) % folds, 2)
    seat = np.tile(np.arange(2), n)
    x = None
    if features is not None:
        x = np.array([row for pair in features for row in pair], dtype=np.float64)
        x = x.reshape(2 * n, -1)
    labels: dict[tuple[int, tuple[int, ...]], int] = {}
    cls = np.array([labels.setdefault((s, c), len(labels))
                    for pair in classes for s, c in enumerate(pair)], dtype=np.int64)
    mean_of = np.zeros((2, len(labels)), dtype=np.float64)  # P(class) per seat and label
    for (s, c), k in labels.items():
        mean_of[s, k] = probs.get(c, 0.0)
    out = np.empty(2 * n, dtype=np.float64)
    for k in range(folds):
        train = fold != k
        test = ~train
        resid = y.copy()
        if x is not None:
            design = np.column_stack([np.ones(int(train.sum())), x[train]])
            beta = np.linalg.lstsq(design, y[train], rcond=None)[0][1:]
            resid = y - x @ beta
        sums = np.bincount(cls[train], weights=resid[train], minlength=len(labels))
        counts = np.bincount(cls[train], minlength=len(labels))
        base = np.where(counts > 0, sums / (counts + BASELINE_PRIOR), 0.0)
        if not by_class:
            base[:] = 0.0
        means = mean_of @ base  # per seat: sum over the classes of P(c) b(c)
        out[test] = resid[test] - base[cls[test]] + means[seat[test]]
    return [float(v) for v in out.reshape(n, 2).mean(axis=1)]


BASELINE_PRIOR = 10.0
"""Shrinkage of the per-class baseline toward 0 (a pseudo-count): any baseline fixed
independently of the deal keeps the estimate unbiased; shrinking only tames sparse
classes."""


def group_values(game: Game, models: tuple[Model, Model], *, master_seed: int, units: int,
                 hands: int, group: tuple[str, str], first_unit: int = 0,
                 sample: bool = False) -> GroupValues:
    """The duplicate value of ``group`` on every deal a played run of these seeds deals
    (``units`` x ``hands``: unit ``k`` deals from :func:`deal_seed` ``(master, k)``, for
    ``k`` from ``first_unit``)."""
    out = GroupValues(group)
    start = time.process_time()
    a, b = models
    for unit in range(first_unit, first_unit + units):
        seed = deal_seed(master_seed, unit)
        deals = deal_hands(game, seed)
        for h in range(hands):
            deal = next(deals)
            key = (seed, h)
            v0 = hand_value(game, (a, b), deal, key, sample=sample)
            v1 = -hand_value(game, (b, a), deal, key, sample=sample)
            out.seatings.append((v0, v1))
            out.classes.append((hole_class(deal.hole[0]), hole_class(deal.hole[1])))
            out.units.append(unit)
    out.cpu_seconds = time.process_time() - start
    return out


def joint_group_values(game: Game, agents: Sequence[Model], opponent: Model, *,
                       master_seed: int, units: int, hands: int,
                       groups: Sequence[tuple[str, str]], first_unit: int = 0,
                       sample: bool = False, features: bool = False,
                       walk: str = "auto") -> list[GroupValues]:
    """:func:`group_values` of every agent against one ``opponent`` (``groups[i]`` names
    ``agents[i]`` and the opponent), in one pass: each deal is dealt once and walked once
    per seating for all the agents together (:func:`joint_hand_values`), so a comparison
    of variants that agree on most of a hand pays for the shared part once. The values are
    those of :func:`group_values`; the CPU time is shared out equally among the groups
    (their sum is the pass's). ``features``: also each seating's control-variate terms
    (:data:`FEATURES`; against ``builtin:random`` only, else none are kept). ``walk``
    (:data:`WALKS`): ``auto``, the numba kernel (:mod:`evaluation.estimators.fastwalk`, the same
    values as the reference walk) where it covers the case (:func:`fast_walk_applies`,
    :func:`evaluation.estimators.fastwalk.numba_walk_for`), else the reference walk
    (:class:`_JointWalk`); ``reference``, always the reference walk.

    Raises:
        UsageError: for groups that do not match the agents, or an unknown ``walk``.
    """
    outs = [GroupValues(g) for g in groups]
    if len(groups) != len(agents):
        raise UsageError(f"expected one group per agent, got {len(groups)} groups for "
                         f"{len(agents)} agents")
    if walk not in WALKS:
        raise UsageError(f"expected a walk in {', '.join(WALKS)}, got {walk!r}")
    kernel: list[tuple[list[int], Any]] | None = None
    start = time.process_time()
    if walk != "reference" and fast_walk_applies(agents, opponent, sample=sample,
                                                 features=features):
        files = [a for a in agents if isinstance(a, FileAgent)]
        assert isinstance(opponent, RandomAgent)
        buckets = sys.modules.get("agent.abstraction.holdem_buckets")
        if walk == "auto" and buckets is not None and all(
                type(a.loaded.cards) is buckets.HoldemCards for a in files):
            kernel = _kernel_walks(files, opponent)
    for unit in range(first_unit, first_unit + units):
        seed = deal_seed(master_seed, unit)
        if kernel is not None:  # the cards dealt and walked by the kernel
            import numpy as np

            cards = kernel[0][1].deal(seed, hands)
            keys = [(seed, h) for h in range(hands)]
            values = np.zeros((hands, 2, len(agents)))
            for idx, walker in kernel:
                values[:, :, idx] = walker.values(cards, keys)
            table = values.tolist()
            for c, (first, second) in zip(cards[:, :4].tolist(), table, strict=True):
                classes = (hole_class((c[0], c[1])), hole_class((c[2], c[3])))
                for out, v0, v1 in zip(outs, first, second, strict=True):
                    out.seatings.append((v0, -v1))
                    out.classes.append(classes)
                    out.units.append(unit)
            continue
        deals = deal_hands(game, seed)
        for h in range(hands):
            deal = next(deals)
            key = (seed, h)
            odds: dict[tuple[int, int], tuple[float, float, float]] = {}
            first, f0 = _joint(game, agents, opponent, 0, deal, key, sample=sample,
                               odds=odds, features=features)
            second, f1 = _joint(game, agents, opponent, 1, deal, key, sample=sample,
                                odds=odds, features=features)
            classes = (hole_class(deal.hole[0]), hole_class(deal.hole[1]))
            for i, (out, v0, v1) in enumerate(zip(outs, first, second, strict=True)):
                out.seatings.append((v0, -v1))
                out.classes.append(classes)
                out.units.append(unit)
                if f0 is not None and f1 is not None:
                    out.features.append((f0[i], f1[i]))
    cpu = time.process_time() - start
    for out in outs:
        out.cpu_seconds = cpu / len(outs)
    return outs


@dataclass(frozen=True, slots=True)
class EstimatorRow:
    """One line of the estimator's table: a variant against an opponent, or a difference."""

    label: str
    estimate: Estimate
    cpu_seconds: float


def summarize(game: Game, results: Sequence[GroupValues]) -> list[EstimatorRow]:
    """Each group's result (mbb/h) for both variants (with the control variates of
    :meth:`GroupValues.controlled`), then the paired difference of every two variants
    measured against a common opponent (on the same deals, common random numbers; with
    the difference of their :data:`FEATURES` terms where both have them, no class
    baseline: the classes cancel in the difference)."""
    big = game.big_blind or 1
    rows: list[EstimatorRow] = []
    by_pair: dict[tuple[str, str], GroupValues] = {}
    probs = class_probabilities(game)
    for r in results:
        a, b = r.group
        mbb = [to_mbb(v, big) for v in r.controlled(probs)]
        est = estimate(mbb, 2 * len(mbb))
        rows.append(EstimatorRow(f"{a} vs {b}", est, r.cpu_seconds))
        rows.append(EstimatorRow(f"{b} vs {a}", est.negated(), r.cpu_seconds))
        by_pair[(a, b)] = r
    names = list(dict.fromkeys(n for r in results for n in r.group))

    def signed(x: str, c: str) -> tuple[GroupValues, float] | None:
        if (x, c) in by_pair:
            return by_pair[(x, c)], 1.0
        if (c, x) in by_pair:
            return by_pair[(c, x)], -1.0
        return None

    for i, x in enumerate(names):
        for y in names[i + 1:]:
            for c in names:
                if c in (x, y):
                    continue
                gx, gy = signed(x, c), signed(y, c)
                if gx is None or gy is None or len(gx[0].units) != len(gy[0].units):
                    continue
                d = difference(gx[0], gx[1], gy[0], gy[1])
                diff = [to_mbb(v, big) for v in d.controlled(probs, by_class=False)]
                cpu = sum(r.cpu_seconds for r in results
                          if set(r.group) in ({x, c}, {y, c}))
                rows.append(EstimatorRow(f"{x} - {y} vs {c}", estimate(diff, 2 * len(diff)),
                                         cpu))
    return rows


def estimate_run(game: Game, variants: Sequence[Variant],
                 groups: Sequence[tuple[str, ...]], *, master_seed: int, units: int,
                 hands: int, sample: bool = False,
                 features: bool = False) -> list[EstimatorRow]:
    """Every group's rows (:func:`summarize`) on ``units`` x ``hands`` deals; ``sample``:
    the agents' draws sampled (``sampled-agents``) instead of expanded; ``features``:
    with the :data:`FEATURES` control variates against ``builtin:random``.

    Raises:
        UsageError: for a group that is not a pair, or a variant that cannot be modelled.
    """
    by = {v.name: v for v in variants}
    models: dict[str, Model] = {}
    shared: dict[tuple[str, str | None], Any] = {}
    for g in groups:
        if len(g) != 2:
            raise UsageError(f"expected heads-up pairs with --estimator exact-agents, got "
                             f"{','.join(g)!r}")
        for name in g:
            if name not in models:
                models[name] = make_model(by[name], game, shared=shared)
    by_opponent: dict[str, list[tuple[str, str]]] = {}
    for g in groups:
        by_opponent.setdefault(g[1], []).append((g[0], g[1]))
    found: dict[tuple[str, str], GroupValues] = {}
    for opponent, pairs in by_opponent.items():
        joint = joint_group_values(game, [models[x] for x, _ in pairs], models[opponent],
                                   master_seed=master_seed, units=units, hands=hands,
                                   groups=pairs, sample=sample, features=features)
        found.update(zip(pairs, joint, strict=True))
    return summarize(game, [found[(g[0], g[1])] for g in groups])


def rows_json(rows: Sequence[EstimatorRow]) -> list[dict[str, Any]]:
    """The rows as JSON-able dicts (mbb/h)."""
    return [{"comparison": r.label, **r.estimate.to_dict(), "cpu_seconds": r.cpu_seconds}
            for r in rows]


def format_rows(rows: Sequence[EstimatorRow], sample: bool = False) -> str:
    """The table ``acpc-match --estimator exact-agents|sampled-agents`` prints."""
    width = max(len(r.label) for r in rows)
    lines = [f"{'comparison':<{width}}  {'mbb/h':>10}  {'95% interval':>23}  {'+/-':>8}  "
             f"{'deals':>7}  {'cpu s':>7}"]
    for r in rows:
        e = r.estimate
        lines.append(f"{r.label:<{width}}  {e.mean:>+10.2f}  [{e.ci_low:>+10.2f}, "
                     f"{e.ci_high:>+10.2f}]  {e.half_width:>8.2f}  {e.units:>7}  "
                     f"{r.cpu_seconds:>7.1f}")
    how = ("the agents' draws sampled from a hash of the deal and the betting"
           if sample else "the agents' randomness valued exactly")
    lines.append(f"({'sampled' if sample else 'exact'}-agents: the deals of the played run "
                 f"of these seeds, each in both seatings; {how}; random's draws with common "
                 f"random numbers; a card-blind opponent's cards integrated at showdowns)")
    return "\n".join(lines) + "\n"
