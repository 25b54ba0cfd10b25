"""The re-solving agent's decisions: :class:`Resolver` (per blueprint) and :class:`HandResolver`
(per hand), described in :mod:`agent.resolve`."""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from agent.abstraction.buckets import CardAbstraction, card_abstraction_from_spec
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, parse_size_convention
from agent.abstraction.translation import MappingFn, get_mapping
from agent.acpc.betting import Action, BettingState
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.resolve.blueprint import BucketCache, behaviour, path_states
from agent.resolve.depth import (
    CONTINUATIONS,
    DEFAULT_BIAS,
    check_bias,
    check_continuations,
    continuation_rows,
    continuation_strategy,
    parse_leaf,
)
from agent.resolve.gadgets import Solution, Subgame, evaluate, parse_gadget, reaches, solve
from agent.resolve.tree import (
    CHANCE,
    DECISION,
    MAX_SUBGAME_NODES,
    Hands,
    PublicTree,
    build_tree,
    stated_fractions,
    suit_card_maps,
    suit_maps,
)
from agent.strategy.fileformat import Strategy
from agent.strategy.purification import Purification, parse_purification

F64 = npt.NDArray[np.float64]

MODES: tuple[str, ...] = ("round", "off-tree", "always")
"""When the agent re-solves (:mod:`agent.resolve`)."""
MAX_ROOT_CACHE = 4096
MAX_WHOLE_DEALS = 10_000
"""The largest (private hands) x (boards by the last round) whose every round is re-solved
from a history tree over every board (Leduc, Kuhn); above it (hold'em, Royal) only the last
round is re-solved, from a root walked along the real history
(:meth:`Resolver.last_round_only`)."""
MAX_SUIT_DEALS = 20_000
"""The largest (private hands) x (suit classes of the board) of a game above
:data:`MAX_WHOLE_DEALS` that deals its whole board in one round after the first, whose first
round is re-solved too, over one board per suit class (:func:`suit_deals`;
:attr:`Resolver.first_round_by_suits`). Royal: 190 x 95 = 18,050."""
SUIT_SYMMETRIC_CARDS = ("lossless", "blind")
"""Card abstraction kinds whose buckets do not tell suits apart: the blueprint's play is the
same on every board of a suit class (up to the suits)."""


@dataclass(frozen=True)
class ResolveConfig:
    """How the agent re-solves (every field has a default)."""

    gadget: str = "reach-maxmargin"
    mode: str = "round"
    iterations: int = 200
    """CFR+ iterations per re-solve (the whole budget when :attr:`seconds` is None)."""
    seconds: float | None = None
    """Time budget per re-solve (then :attr:`iterations` is the most it runs)."""
    extra_fractions: tuple[float, ...] = ()
    """Pot fractions added to the blueprint's inside every subgame (both players)."""
    max_nodes: int = MAX_SUBGAME_NODES
    max_raises: int | None = None
    """Raises per round inside a subgame off the real path, after which the all-in is the
    only raise (:func:`agent.resolve.tree.stated_actions`); None: the blueprint's cap for
    the round (:meth:`~agent.abstraction.actions.BettingAbstraction.raise_cap`) in a game
    re-solved on its last round only, no cap otherwise."""
    depth: int | None = None
    """Rounds a subgame spans, counting its root's; None: to the end of the game. A
    subgame that stops before the end has leaves (:mod:`agent.resolve.depth`)."""
    leaf: str = "multi"
    """With :attr:`depth`: ``blueprint`` (single-valued leaves: the opponent continues with
    its blueprint) or ``multi`` (it chooses among :attr:`continuations` per hand)."""
    continuations: tuple[str, ...] = CONTINUATIONS
    """The opponent's continuations at a multi-valued leaf
    (:data:`agent.resolve.depth.CONTINUATIONS`, the blueprint first)."""
    bias: float = DEFAULT_BIAS
    """The biased continuations' factor."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "gadget", parse_gadget(self.gadget))
        if self.mode not in MODES:
            raise UsageError(f"expected a re-solve mode ({', '.join(MODES)}), got "
                             f"{self.mode!r}")
        if not isinstance(self.iterations, int) or self.iterations < 1:
            raise UsageError(f"expected a positive number of iterations, got "
                             f"{self.iterations!r}")
        if self.max_raises is not None and (not isinstance(self.max_raises, int) or
                                            self.max_raises < 0):
            raise UsageError(f"expected a non-negative raise cap, got {self.max_raises!r}")
        if self.depth is not None and (isinstance(self.depth, bool) or
                                       not isinstance(self.depth, int) or self.depth < 1):
            raise UsageError(f"expected a depth of at least 1 round (or None: to the end), "
                             f"got {self.depth!r}")
        object.__setattr__(self, "leaf", parse_leaf(self.leaf))
        object.__setattr__(self, "continuations", check_continuations(self.continuations))
        object.__setattr__(self, "bias", check_bias(self.bias))

    @classmethod
    def from_flags(cls, mode: str, *, iterations: int | None = None, gadget: str | None = None,
                   seconds: float | None = None, depth: int | None = None,
                   leaf: str | None = None) -> ResolveConfig:
        """The configuration the command-line flags name (``--resolve``,
        ``--resolve-iterations``, ``--gadgets``, ``--resolve-depth``, ``--resolve-leaf``;
        None: the field's default), as ``acpc-agent`` and ``acpc-strategy lbr`` build it.

        Raises:
            UsageError: for ``leaf`` without ``depth``, or a bad value (one line).
        """
        if leaf is not None and depth is None:
            raise UsageError("expected --resolve-leaf only with --resolve-depth N")
        return cls(mode=mode, seconds=seconds, depth=depth,
                   iterations=cls.iterations if iterations is None else iterations,
                   gadget=cls.gadget if gadget is None else gadget,
                   leaf=cls.leaf if leaf is None else leaf)

    def leaf_labels(self) -> tuple[str, ...]:
        """The continuations a leaf offers: the blueprint alone, or :attr:`continuations`."""
        return ("blueprint",) if self.leaf == "blueprint" else self.continuations


@dataclass(frozen=True)
class ResolveStats:
    """What one decision cost and how accurate its re-solve is (``None`` fields: the
    decision came from an existing plan, no re-solve)."""

    source: str
    """``"blueprint"`` (round 0 plan: the translating blueprint), ``"plan"`` (an earlier
    re-solve of this hand covers the state) or ``"resolve"``."""
    gadget: str = ""
    nodes: int = 0
    """Public nodes of the subgame."""
    hands: int = 0
    """Private hands per player."""
    live_hands: int = 0
    """Opponent hands in the gadget."""
    iterations: int = 0
    seconds: float = 0.0
    exploitability: float = 0.0
    """The gadget game's exploitability (:class:`agent.resolve.gadgets.Solution`), chips
    per hand of the game."""
    relative_exploitability: float = 0.0
    """The same per visit of the subgame's root."""
    min_margin: float = 0.0
    reason: str = ""
    """Why a re-solve ran (:data:`REASONS`); empty for a plan read."""
    depth: int | None = None
    """The re-solve's depth limit (:attr:`ResolveConfig.depth`; None: to the end)."""
    leaf: str = ""
    """Its leaves' kind (``blueprint`` or ``multi``) when the subgame stops before the end
    of the game; empty otherwise."""
    leaves: int = 0
    """Its leaves (public nodes where the rest of the game is a continuation)."""


REASONS: tuple[str, ...] = ("new round", "off plan", "always")
"""Why a decision re-solved: the first re-solve of a round (no plan covers it: mode
``round`` in a later round, hold'em's river, or a plan that stopped at its depth limit),
the opponent's action left the current plan's tree (a blueprint plan or an earlier
re-solve), or mode ``always``."""


@dataclass(frozen=True)
class Decision:
    """The agent's strategy at one real decision, for every private hand."""

    actions: tuple[Action, ...]
    """The legal real actions it may take (the subgame's actions at the state)."""
    probs: F64
    """``[hand, action]``."""
    hands: Hands
    stats: ResolveStats

    def for_hole(self, hole: Sequence[int]) -> dict[Action, float]:
        """The distribution for the hand ``hole``."""
        row = self.probs[self.hands.find(hole)]
        return {a: float(p) for a, p in zip(self.actions, row, strict=True)}


@dataclass(frozen=True)
class _RootInfo:
    agent_reach: F64
    opp_reach: F64
    cbv: F64
    gift: F64
    scale: float


@dataclass(eq=False)
class _Plan:
    tree: PublicTree
    strategy: F64
    root_betting: str
    root_round: int
    root: _RootInfo | None = None
    """A solved plan's root (its ranges, scale and gifts); None for the blueprint's."""
    walked: tuple[F64, F64, F64] | None = None
    """Its reaches, the opponent's best-response values and the values its gifts are taken
    from (:meth:`HandResolver._nested_root`, kept: every later round's root of the plan
    reads them)."""


class Resolver:
    """A blueprint and how it is re-solved: shared by every hand of a match.

    ``mapping``, ``purification`` and ``sizes_in`` are the translating agent's (the
    decision model reads the blueprint with them: its ranges, its counterfactual values and
    the round-0 plan in modes ``round`` and ``off-tree``).
    """

    def __init__(self, blueprint: Strategy, config: ResolveConfig | None = None, *,
                 mapping: str | MappingFn = "rand-pshar",
                 purification: str | Purification = "none",
                 sizes_in: str = DEFAULT_SIZE_CONVENTION,
                 cards: CardAbstraction | None = None) -> None:
        game = blueprint.game
        if game.num_players != 2 or not game.is_nolimit:
            raise UsageError(f"expected a two-player no-limit blueprint, got "
                             f"{game.num_players} players, "
                             f"{'no-limit' if game.is_nolimit else 'limit'}")
        self.blueprint = blueprint
        self.game: Game = game
        self.config = config or ResolveConfig()
        self.mapping: MappingFn = get_mapping(mapping) if isinstance(mapping, str) else mapping
        self.purification = (parse_purification(purification)
                             if isinstance(purification, str) else purification)
        self.sizes_in = parse_size_convention(sizes_in)
        self.cards = cards if cards is not None else card_abstraction_from_spec(
            game, blueprint.cards, blueprint.checked_cards)
        self.hands = Hands.of(game)
        self.fractions = stated_fractions(blueprint.betting, self.config.extra_fractions)
        self._blueprint_plans: dict[int, _Plan] = {}
        self._roots: dict[tuple[object, ...], dict[tuple[int, ...], _RootInfo]] = {}
        self._path_roots: dict[tuple[object, ...], tuple[_RootInfo, dict[int, F64]]] = {}
        self._buckets: BucketCache = {}
        self.last_round_only = whole_deals(game) > MAX_WHOLE_DEALS
        """Above :data:`MAX_WHOLE_DEALS`: the last round is re-solved from a root walked
        along the real history (its ranges and counterfactual values) when no re-solved
        plan holds it; earlier rounds are not re-solved, but for
        :attr:`first_round_by_suits`."""
        suits = suit_deals(game) if self.last_round_only else None
        self.first_round_by_suits = (
            suits is not None and suits <= MAX_SUIT_DEALS and
            self.cards.spec.get("kind") in SUIT_SYMMETRIC_CARDS)
        """The first round is re-solved as well (Royal: :data:`MAX_SUIT_DEALS`), over the
        whole game with the board dealt one board per suit class
        (:func:`agent.resolve.tree.build_tree` with ``suits``); the last round's root then
        comes from that re-solve (nested) when one ran, else from the real history."""
        self._suit_maps: list[npt.NDArray[np.int64]] | None = None
        self.solves = 0
        """Re-solves run by this resolver (all hands)."""

    def with_config(self, config: ResolveConfig) -> Resolver:
        """A resolver for the same blueprint and decision model under ``config``."""
        return Resolver(self.blueprint, config, mapping=self.mapping,
                        purification=self.purification, sizes_in=self.sizes_in,
                        cards=self.cards)

    def resolves(self, round_: int) -> bool:
        """True when decisions in ``round_`` are re-solved (every round; when
        :attr:`last_round_only`, the last one, and the first when
        :attr:`first_round_by_suits`)."""
        return (not self.last_round_only or round_ == self.game.num_rounds - 1 or
                (round_ == 0 and self.first_round_by_suits))

    def check_suit_symmetric(self, what: str, arrays: Sequence[F64]) -> None:
        """Raise unless every array (``[hand]`` or ``[hand, k]``) is the same under every
        permutation of the suits (a tree over suit classes needs it).

        Raises:
            UsageError: naming ``what``.
        """
        if self._suit_maps is None:
            self._suit_maps = [fwd for _, fwd in suit_maps(self.game, self.hands)[1:]]
        for arr in arrays:
            for fwd in self._suit_maps:
                if not np.allclose(arr[fwd], arr, rtol=1e-9, atol=1e-12):
                    raise UsageError(f"expected {what} the same under every permutation of "
                                     f"the suits (a re-solve over suit classes of boards)")

    def raise_cap(self, round_: int) -> int | None:
        """The subgame's raise cap in ``round_`` (:attr:`ResolveConfig.max_raises`)."""
        if self.config.max_raises is not None:
            return self.config.max_raises
        return self.blueprint.betting.raise_cap(round_) if self.last_round_only else None

    def new_hand(self, seat: int) -> HandResolver:
        """The re-solving state of one hand with the agent in ``seat``."""
        if seat not in (0, 1):
            raise UsageError(f"expected the agent's seat 0 or 1, got {seat!r}")
        return HandResolver(self, seat)

    # ------------------------------------------------------------------ building blocks

    def blueprint_plan(self, seat: int) -> _Plan:
        """The translating blueprint over the stated tree of the whole game."""
        plan = self._blueprint_plans.get(seat)
        if plan is None:
            tree = build_tree(self.game, BettingState.initial(self.game), (), self.fractions,
                              hands=self.hands, max_nodes=self.config.max_nodes,
                              suits=self.first_round_by_suits)
            strat = behaviour(tree, self.blueprint, self.cards, seat, self.mapping,
                              self.purification, self.sizes_in)
            plan = self._blueprint_plans[seat] = _Plan(tree, strat, "", 0)
        return plan

    def root_info(self, seat: int, state: BettingState, board: Sequence[int],
                  own: dict[str, tuple[tuple[Action, ...], F64]]) -> _RootInfo:
        """Ranges, counterfactual values and gifts at the start of ``state``'s round with
        ``board`` (module docstring of :mod:`agent.resolve`)."""
        game = self.game
        r = state.round
        start = round_start(state)
        prefix = board[: game.board_start(r)] if r > 0 else ()
        here = tuple(sorted(board[game.board_start(r): game.board_cards_through(r)]))
        path_actions = [a for rnd in state.actions[:r] for a in rnd]
        owned = sorted((k, v[1].tobytes()) for k, v in own.items()
                       if len(k) <= len(start.betting))
        digest = hashlib.sha256(repr(owned).encode()).hexdigest()
        key = (seat, start.betting, tuple(prefix), digest)
        infos = self._roots.get(key)
        if infos is None:
            infos = self._root_infos(seat, path_actions, tuple(prefix), own)
            if len(self._roots) >= MAX_ROOT_CACHE:
                self._roots.clear()
            self._roots[key] = infos
        info = infos.get(here)
        if info is None:
            raise UsageError(f"expected a board of this game, got {list(board)!r}")
        return info

    def _root_infos(self, seat: int, path: Sequence[Action], prefix: tuple[int, ...],
                    own: dict[str, tuple[tuple[Action, ...], F64]]
                    ) -> dict[tuple[int, ...], _RootInfo]:
        game = self.game
        tree = build_tree(game, BettingState.initial(game), prefix, self.fractions, path,
                          hands=self.hands, max_nodes=self.config.max_nodes,
                          suits=self.first_round_by_suits)
        overrides = {}
        for n in tree.path_nodes:
            st = tree.states[n]
            if tree.kind[n] == DECISION and st.player == seat and st.betting in own:
                acts, rows = own[st.betting]
                overrides[n] = _align(tree, n, acts, rows)
        opp = 1 - seat
        mine = behaviour(tree, self.blueprint, self.cards, seat, self.mapping,
                         self.purification, self.sizes_in, overrides)
        theirs = behaviour(tree, self.blueprint, self.cards, opp, self.mapping,
                           self.purification, self.sizes_in)
        strategy = mine + theirs
        ones = tree.valid[int(tree.board_of[0])]
        scale = 1.0 / float(tree.compat[int(tree.board_of[0])].sum())
        root = (ones, ones)
        reach = reaches(tree, strategy, root)
        values = evaluate(tree, opp, True, strategy, root, scale)
        last = tree.path_nodes[-1]
        roots = ([last] if tree.kind[last] != CHANCE else
                 [int(c) for c in tree.children[tree.child_start[last]:
                                                tree.child_start[last] +
                                                tree.num_children[last]]])
        # gifts along the path: sum over the opponent's decisions of (best - taken), each
        # scaled by the chance probability of the later board cards (split among boards)
        # a gift (best minus taken at an opponent decision on the path) is shared by the
        # boards dealt after it; values leave out the chance probabilities above their node
        gift = np.zeros(len(self.hands))
        mult = 1.0
        nodes = tree.path_nodes
        for i, n in enumerate(nodes):
            if tree.kind[n] == CHANCE:
                mult *= float(tree.chance_weight[n])
            elif tree.kind[n] == DECISION and tree.player[n] == opp and i + 1 < len(nodes):
                s = int(tree.child_start[n])
                kids = tree.children[s: s + int(tree.num_children[n])]
                gift += values[kids].max(axis=0) - values[nodes[i + 1]]
        gift *= mult
        out: dict[tuple[int, ...], _RootInfo] = {}
        path_scale = scale * mult
        for rt in roots:
            b = int(tree.board_of[rt])
            bd = tree.boards[b]
            key = tuple(sorted(bd[len(prefix):]))
            valid = tree.valid[b]
            theirs_here = reach[rt, opp] * valid
            if not theirs_here.any():  # the blueprint never plays this way: no information
                theirs_here = valid.copy()
            # the values below a chance node are per deal: times its probability they are
            # in the subgame's units (scale = the root's pair weight times the chances)
            info = _RootInfo(reach[rt, seat] * valid, theirs_here,
                             values[rt] * valid * (path_scale / scale),
                             np.maximum(gift, 0.0) * valid, path_scale)
            out[key] = info
        return out


    def path_root(self, seat: int, state: BettingState, board: Sequence[int]
                  ) -> tuple[_RootInfo, dict[int, F64]]:
        """The root at the start of ``state``'s round walked along the real history only
        (:attr:`last_round_only`): both ranges by :func:`agent.resolve.blueprint.
        path_states` (the agent's: its translating decisions, which is what it played
        before the round), the opponent's counterfactual best-response values against the
        blueprint over the round's stated tree (no real action of the round in it), no gift
        (the gifts of earlier rounds need the values of the actions not taken, over boards
        this root does not enumerate: reach-maxmargin is maxmargin here). Also the agent's
        abstract histories at the root (to read the blueprint inside the subgame).

        Raises:
            UsageError: for a board that does not cover the round.
        """
        game = self.game
        start = round_start(state)
        r = start.round
        need = game.board_cards_through(r)
        bd = tuple(int(c) for c in board[:need])
        if len(bd) < need or len(set(bd)) < need:
            raise UsageError(f"expected {need} distinct board cards at {state.betting!r}, got "
                             f"{list(board)!r}")
        key = (seat, start.betting, bd)
        got = self._path_roots.get(key)
        if got is not None:
            return got
        prior = [a for rnd in state.actions[:r] for a in rnd]
        cards = self.hands.cards
        mine, _ = path_states(game, self.blueprint, self.cards, seat, self.mapping,
                              self.purification, self.sizes_in, cards, prior, bd,
                              self._buckets)
        theirs, _ = path_states(game, self.blueprint, self.cards, 1 - seat, self.mapping,
                                self.purification, self.sizes_in, cards, prior, bd,
                                self._buckets)
        tree = build_tree(game, start, bd, self.fractions, hands=self.hands,
                          max_nodes=self.config.max_nodes, max_raises=self.raise_cap(r))
        b = int(tree.board_of[0])
        valid = tree.valid[b]
        agent_reach = sum(mine.values(), np.zeros(len(self.hands))) * valid
        opp_reach = sum(theirs.values(), np.zeros(len(self.hands))) * valid
        if not opp_reach.any():  # the blueprint never plays this way: no information
            opp_reach = valid.copy()
        strategy = behaviour(tree, self.blueprint, self.cards, seat, self.mapping,
                             self.purification, self.sizes_in, start=mine,
                             buckets=self._buckets)
        scale = 1.0 / float(tree.compat[b].sum())
        pair = (agent_reach, valid) if seat == 0 else (valid, agent_reach)
        cbv = evaluate(tree, 1 - seat, True, strategy, pair, scale)[0] * valid
        info = _RootInfo(agent_reach, opp_reach, cbv, np.zeros(len(self.hands)), scale)
        if len(self._path_roots) >= MAX_ROOT_CACHE:
            self._path_roots.clear()
        self._path_roots[key] = (info, mine)
        return info, mine

    def off_tree(self, seat: int, state: BettingState, board: Sequence[int]) -> bool:
        """True when some opponent action of ``state``'s history is off the blueprint's
        abstraction as the agent reads it (:func:`agent.resolve.blueprint.path_states`)."""
        actions = [a for rnd in state.actions for a in rnd]
        _, off = path_states(self.game, self.blueprint, self.cards, 1 - seat, self.mapping,
                             self.purification, self.sizes_in, self.hands.cards, actions,
                             board, self._buckets)
        return off


def suit_deals(game: Game) -> int | None:
    """Private hands times the suit classes of the board (boards the same up to a
    permutation of the suits), for a game that deals its whole board at the start of its
    second and last round (Royal); None for any other."""
    if game.num_rounds != 2 or game.board_cards_through(0) != 0:
        return None
    deck = deck_for(game)
    maps = suit_card_maps(game)
    seen: set[tuple[int, ...]] = set()
    classes = 0
    for combo in itertools.combinations(sorted(deck), game.total_board_cards):
        if combo in seen:
            continue
        classes += 1
        seen.update(tuple(sorted(m[c] for c in combo)) for m in maps)
    hole = game.num_hole_cards
    return math.comb(len(deck), hole) * classes


def whole_deals(game: Game) -> int:
    """Private hands times the boards dealt by the last round."""
    deck = game.num_suits * game.num_ranks
    hole = game.num_hole_cards
    return math.comb(deck, hole) * math.comb(deck - hole,
                                             game.board_cards_through(game.num_rounds - 1))


def round_start(state: BettingState) -> BettingState:
    """The betting state at the start of ``state``'s round."""
    st = BettingState.initial(state.game)
    for rnd in state.actions[: state.round]:
        for a in rnd:
            st = st.apply(a)
    return st


def _align(tree: PublicTree, n: int, acts: tuple[Action, ...], rows: F64) -> F64:
    here = tree.edge_actions(n)
    if list(acts) == here:
        return rows
    out = np.zeros((rows.shape[0], len(here)))
    for i, a in enumerate(acts):
        if a not in here:
            raise UsageError(f"expected the action {a} the agent played at "
                             f"{tree.states[n].betting!r} in the subgame")
        out[:, here.index(a)] = rows[:, i]
    return out


@dataclass(eq=False)
class HandResolver:
    """The re-solving agent's state in one hand (module docstring of :mod:`agent.resolve`).

    Call :meth:`decide` at each of the agent's decisions (with the full real betting state
    and the board dealt so far); it re-solves when the mode asks for it, keeps the plan
    and records what the agent played at each decision, for every hand (the later
    subgames hold those rows fixed and take the agent's range from them).
    """

    resolver: Resolver
    seat: int
    own: dict[str, tuple[tuple[Action, ...], F64]] = field(default_factory=dict)
    plan: _Plan | None = None
    plan_board: tuple[int, ...] = ()
    decisions: int = 0

    def copy(self) -> HandResolver:
        """An independent copy (for evaluators that branch over histories)."""
        return replace(self, own=dict(self.own))

    def decide(self, state: BettingState, board: Sequence[int]) -> Decision:
        """The agent's strategy at ``state`` (its turn) for every hand; ``board``: the board
        cards dealt so far (at least those of ``state``'s round).

        Raises:
            UsageError: if it is not the agent's turn, or the board is short.
        """
        res = self.resolver
        game = res.game
        if state.finished or state.player != self.seat:
            raise UsageError(f"expected the agent (seat {self.seat}) to act, got "
                             f"{state.betting!r}")
        if state.game.fingerprint != game.fingerprint:
            raise UsageError("expected a betting state of the blueprint's game")
        need = game.board_cards_through(state.round)
        board = tuple(int(c) for c in board[:need])
        if len(board) < need:
            raise UsageError(f"expected {need} board cards at {state.betting!r}, got "
                             f"{list(board)!r}")
        if not res.resolves(state.round):
            raise UsageError(f"expected a decision in the last round (this game is "
                             f"re-solved on its last round only), got {state.betting!r}")
        plan = self._usable_plan(state, board)
        if plan is not None:
            node, perm, source = plan
            assert self.plan is not None
            decision = self._from_plan(self.plan, node, source, perm)
        else:
            mode = res.config.mode
            if mode == "always":
                reason = "always"
            elif self.plan is None or (mode == "round" and
                                       self.plan.root_round != state.round) or (
                    self.plan.tree.depth_limited and self.plan.root_round != state.round):
                reason = "new round"  # (or the plan stopped at its depth limit)
            else:
                reason = "off plan"
            decision = self._resolve(state, board, reason)
        self.own[state.betting] = (decision.actions, decision.probs)
        self.decisions += 1
        return decision

    def played(self, state: BettingState, action: Action) -> None:
        """Record that the agent took ``action`` at ``state`` without :meth:`decide` (a
        fallback such as the live agent's time guard): the same action for every hand.

        Raises:
            UsageError: if it is not the agent's turn or the action is illegal.
        """
        if state.finished or state.player != self.seat:
            raise UsageError(f"expected the agent (seat {self.seat}) to act, got "
                             f"{state.betting!r}")
        try:
            state.check_action(action)
        except ValueError as exc:
            raise UsageError(f"expected a legal action at {state.betting!r}: {exc}") from None
        rows = np.ones((len(self.resolver.hands), 1))
        self.own[state.betting] = ((action,), rows)

    # ------------------------------------------------------------------ internals

    def _usable_plan(self, state: BettingState, board: tuple[int, ...]
                     ) -> tuple[int, npt.NDArray[np.int64] | None, str] | None:
        res = self.resolver
        mode = res.config.mode
        if mode == "always":
            return None
        if self.plan is None:
            if (state.round > 0 and mode == "round") or not res.resolves(0):
                return None
            self.plan = res.blueprint_plan(self.seat)
            self.plan_board = ()
        plan = self.plan
        if mode == "round" and plan.root_round != state.round:
            return None
        if not state.betting.startswith(plan.root_betting):
            return None
        actions = _actions_since(state, plan.root_betting)
        node, perm = plan.tree.follow_perm(actions, board)
        if node < 0 or plan.tree.kind[node] != DECISION:
            return None
        return node, perm, ("blueprint" if plan.root_betting == "" and plan.root_round == 0
                            and plan is res._blueprint_plans.get(self.seat) else "plan")

    def _nested_root(self, state: BettingState, start: BettingState,
                     board: tuple[int, ...]) -> _RootInfo | None:
        """The root of a new subgame from the current *solved* plan, when its tree holds the
        start of ``state``'s round (nested solving: ranges, counterfactual values and gifts
        against the previous re-solve's strategy); None otherwise."""
        plan = self.plan
        if plan is None or plan.root is None or plan.root_betting == start.betting or \
                not start.betting.startswith(plan.root_betting):
            return None
        tree = plan.tree
        path = _actions_since(start, plan.root_betting)
        nodes = [0]
        n = 0
        for a in path:
            n = tree.child_for(n, a) if tree.kind[n] == DECISION else -1
            if n < 0:
                return None
            nodes.append(n)
        if tree.leaf[n]:  # a depth limit: the next round's root in the first continuation
            n = int(tree.children[tree.child_start[n]])
            nodes.append(n)
        perm: npt.NDArray[np.int64] | None = None  # the real board's hands in n's frame
        while tree.kind[n] == CHANCE:
            r = tree.states[n].round
            n, p = tree.dealt(n, board[self.resolver.game.board_start(r):
                                       self.resolver.game.board_cards_through(r)])
            if n < 0:
                return None
            if p is not None:
                perm = p if perm is None else perm[p]
            nodes.append(n)
        if tree.kind[n] != DECISION:
            return None
        seat, opp = self.seat, 1 - self.seat
        root = plan.root
        pair = (root.agent_reach, root.opp_reach) if seat == 0 else \
            (root.opp_reach, root.agent_reach)
        if plan.walked is None:
            ones = tree.valid[int(tree.board_of[0])]
            walk = plan.strategy
            if tree.depth_limited:
                # the first continuation (the blueprint's) with the leaf's whole reach; the
                # opponent best-responds in it: the CBVs are against the agent's blueprint
                # continuation, the play the next re-solve replaces (safe against it; the
                # leaf's own values, the best of the continuations, were measured less
                # safe: docs/reports/resolve-lab.md, depth limits)
                walk = walk.copy()
                for leaf in np.flatnonzero(tree.leaf):
                    s0 = int(tree.child_start[leaf])
                    walk[:, s0: s0 + int(tree.num_children[leaf])] = 0.0
                    walk[:, s0] = 1.0
            vals = evaluate(tree, opp, True, walk,
                            (root.agent_reach, ones) if seat == 0 else
                            (ones, root.agent_reach), root.scale)
            gifts = vals
            if tree.depth_limited:
                # gifts in the game the plan solved: the continuations held, the opponent's
                # choice at each leaf (smaller than against the whole continuation, and
                # measured less exploitable: docs/reports/resolve-lab.md, depth limits)
                gifts = evaluate(tree, opp, True, walk,
                                 (root.agent_reach, ones) if seat == 0 else
                                 (ones, root.agent_reach), root.scale,
                                 tree.continuation_nodes())
            plan.walked = (reaches(tree, walk, pair), vals, gifts)
        reach, values, gift_values = plan.walked
        # values at a node leave out the chance probabilities above it; a gift is shared
        # by the boards dealt after it: every term is in the new root's units times mult
        mult = 1.0
        gift = root.gift.copy()
        for i, m in enumerate(nodes):
            if tree.kind[m] == CHANCE:
                mult *= float(tree.chance_weight[m])
            elif tree.kind[m] == DECISION and tree.player[m] == opp and i + 1 < len(nodes) \
                    and not tree.leaf[m]:
                s = int(tree.child_start[m])
                kids = tree.children[s: s + int(tree.num_children[m])]
                gift += gift_values[kids].max(axis=0) - gift_values[nodes[i + 1]]
        gift *= mult
        # the chance edge of a suit class: the arrays at n are its board's; to the real one
        # (the gifts were taken before it, where every hand is in the real frame)
        def here(x: F64) -> F64:
            return x if perm is None else x[perm]

        valid = here(tree.valid[int(tree.board_of[n])])
        theirs = here(reach[n, opp]) * valid
        if not theirs.any():
            theirs = valid.copy()
        return _RootInfo(here(reach[n, seat]) * valid, theirs, here(values[n]) * valid * mult,
                         np.maximum(gift, 0.0) * valid, root.scale * mult)

    def _from_plan(self, plan: _Plan, node: int, source: str,
                   perm: npt.NDArray[np.int64] | None = None) -> Decision:
        tree = plan.tree
        s = int(tree.child_start[node])
        m = int(tree.num_children[node])
        rows = plan.strategy[:, s: s + m]
        return Decision(tuple(tree.edge_actions(node)),
                        rows.copy() if perm is None else rows[perm],
                        tree.hands, ResolveStats(source))

    def _resolve(self, state: BettingState, board: tuple[int, ...],
                 reason: str = "") -> Decision:
        res = self.resolver
        cfg = res.config
        game = res.game
        start = round_start(state)
        plan = self.plan
        info: _RootInfo | None
        mine: dict[int, F64] | None = None
        if plan is not None and plan.root is not None and plan.root_betting == start.betting \
                and self.plan_board == board:
            info = plan.root  # a later re-solve in the same round: the same root
        else:
            info = self._nested_root(state, start, board)
        if info is None and res.last_round_only and state.round > 0:
            info, mine = res.path_root(self.seat, state, board)
        if info is None:
            info = res.root_info(self.seat, state, board, self.own)
        in_round = list(state.actions[state.round])
        sub_board = board if state.round > 0 else ()
        depth = (cfg.depth if cfg.depth is not None and
                 state.round + cfg.depth < game.num_rounds else None)
        tree = build_tree(game, start, sub_board, res.fractions, in_round, hands=res.hands,
                          max_nodes=cfg.max_nodes, max_raises=res.raise_cap(state.round),
                          suits=res.first_round_by_suits, depth=depth,
                          continuations=cfg.leaf_labels(), leaf_player=1 - self.seat)
        frozen = {}
        blue: F64 | None = None
        for n in tree.path_nodes[:-1]:
            st = tree.states[n]
            if tree.kind[n] == DECISION and st.player == self.seat:
                if st.betting in self.own:
                    acts, rows = self.own[st.betting]
                    frozen[n] = _align(tree, n, acts, rows)
                elif res.last_round_only:
                    # the agent translated here (no re-solve yet in the round): the
                    # blueprint's rows, as the root's range assumes
                    if blue is None:
                        if mine is None:
                            mine = res.path_root(self.seat, state, board)[1]
                        blue = behaviour(tree, res.blueprint, res.cards, self.seat,
                                         res.mapping, res.purification, res.sizes_in,
                                         start=mine, buckets=res._buckets)
                    s0 = int(tree.child_start[n])
                    frozen[n] = blue[:, s0: s0 + int(tree.num_children[n])].copy()
                else:
                    raise UsageError(f"expected the agent's decision at {st.betting!r} "
                                     f"(decide() or played()) before {state.betting!r}")
        if tree.perm_count.any():
            res.check_suit_symmetric("the root's ranges, values and the agent's fixed rows",
                                     [info.agent_reach, info.opp_reach, info.cbv, info.gift,
                                      *frozen.values()])
        continuation = (self._continuation(tree, state, board, frozen)
                        if tree.depth_limited else None)
        sub = Subgame(tree, self.seat, info.agent_reach, info.opp_reach, info.cbv, info.gift,
                      info.scale, frozen, continuation)
        sol: Solution = solve(sub, cfg.gadget, cfg.iterations, cfg.seconds)
        res.solves += 1
        self.plan = _Plan(tree, sol.strategy, start.betting, state.round,
                          _RootInfo(info.agent_reach, sol.opp_root, info.cbv, info.gift,
                                    info.scale))
        self.plan_board = board
        node = tree.path_nodes[-1]
        s = int(tree.child_start[node])
        m = int(tree.num_children[node])
        stats = ResolveStats("resolve", cfg.gadget, tree.num_nodes, len(res.hands),
                             int(sub.live().sum()), sol.iterations, sol.seconds,
                             sol.exploitability, sol.relative_exploitability, sol.min_margin,
                             reason, cfg.depth, cfg.leaf if tree.depth_limited else "",
                             int(tree.leaf.sum()))
        return Decision(tuple(tree.edge_actions(node)), sol.strategy[:, s: s + m].copy(),
                        res.hands, stats)

    def _continuation(self, tree: PublicTree, state: BettingState, board: tuple[int, ...],
                      frozen: dict[int, F64]) -> F64:
        """Both players' rows under a depth-limited tree's leaves
        (:mod:`agent.resolve.depth`): the translating agent's blueprint for the agent (its
        abstract histories follow what it really played, ``frozen``), the opponent's
        blueprint biased per continuation; the abstract histories at a root after the
        start of the hand walked along the real history (:func:`agent.resolve.blueprint.
        path_states`)."""
        res = self.resolver
        game = res.game
        starts: list[dict[int, F64] | None] = [None, None]
        if tree.states[0].round > 0 or tree.states[0].betting:
            prior = [a for rnd in state.actions[: state.round] for a in rnd]
            bd = board[: game.board_cards_through(state.round)]
            for p in (0, 1):
                starts[p] = path_states(game, res.blueprint, res.cards, p, res.mapping,
                                        res.purification, res.sizes_in, res.hands.cards,
                                        prior, bd, res._buckets)[0]
        seat, opp = self.seat, 1 - self.seat
        mine = continuation_rows(tree, res.blueprint, res.cards, seat, res.mapping,
                                 res.purification, res.sizes_in, frozen, starts[seat],
                                 res._buckets)
        theirs = continuation_rows(tree, res.blueprint, res.cards, opp, res.mapping,
                                   res.purification, res.sizes_in, None, starts[opp],
                                   res._buckets)
        return continuation_strategy(tree, seat, mine, theirs, res.config.bias)


def _actions_since(state: BettingState, root_betting: str) -> list[Action]:
    """The real actions after the state whose betting text is ``root_betting``."""
    st = BettingState.initial(state.game)
    out: list[Action] = []
    for rnd in state.actions:
        for a in rnd:
            if len(st.betting) >= len(root_betting) and st.betting.startswith(root_betting):
                out.append(a)
            st = st.apply(a)
    return out
