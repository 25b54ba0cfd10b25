"""The public tree of a subgame, its private hands and its terminal payoffs, as flat arrays.

A :class:`PublicTree` starts at a real betting state with a known board. At every decision
its actions are the *stated abstraction* (:func:`stated_actions`): fold (when legal), call,
a raise to the blueprint's every pot fraction (realised in chips exactly as the agent
realises its own raises, :func:`agent.abstraction.convention.realise_raise_to`) and the
all-in; along the real ``path`` the real action is added when it is not one of those (the
opponent's off-tree action is in the tree: nested solving). When a round ends before the
game does, a chance node deals the next round's board cards (every combination of the
remaining deck; the branch of the real board is the one the path follows); so does a
showdown reached before the last round (an all-in called), dealing the rest of the board.

*Depth limits* (``depth``): the first node of round ``root.round + depth`` becomes a *leaf*:
a decision node of ``leaf_player`` (:attr:`PublicTree.leaf`) whose children, one per
continuation (edge labels: :attr:`PublicTree.continuations`), are each a copy of the rest of
the game from there (chance nodes included); :attr:`PublicTree.under` says which copy a node
lies in and :attr:`PublicTree.twin` maps every copy's edges onto the first copy's. The real
path never crosses a leaf, and :meth:`PublicTree.follow` stops at one (a plan ends there).

Nodes are numbered in pre-order, so a subtree is a contiguous range of ids
(:attr:`PublicTree.end`); the children of node ``n`` are
``children[child_start[n] : child_start[n] + num_children[n]]`` and the position ``e`` in
that array is the *edge* a strategy array is indexed by (``strategy[hand, e]``).

*Hands* are every combination of ``numHoleCards`` cards of the deck (Leduc: 6; hold'em: 1,326),
each with a card mask; ``valid[board, hand]`` is 0 for a hand that shares a card with the
board. Terminal values come from ``compat[board, i, j]`` (hands ``i`` and ``j`` share no
card with each other or the board) and, on a complete board, ``strength[board, hand]`` (the
showdown rank, :func:`agent.acpc.evaluator.rank_hand_fast` -- the rule every project
evaluator uses) with ``order[board]`` (the hands sorted by it): the kernels value a showdown
by one sweep over the sorted hands, not over pairs. ``compat`` is dense (``boards x hands
x hands``): one hold'em river board is 1,081 x 1,081; a subgame over many hold'em boards
would need it replaced by the per-card sums the kernels already use.

Imports numpy, :mod:`agent.acpc` and :mod:`agent.abstraction`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import ALL_IN, BettingAbstraction
from agent.abstraction.convention import realise_raise_to
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
from agent.acpc.cards import deck_for
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.evaluator import rank_hand_fast
from agent.acpc.gamedef import Game

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

TERMINAL_FOLD, TERMINAL_SHOWDOWN, DECISION, CHANCE = 0, 1, 2, 3
"""Node kinds."""

MAX_SUBGAME_NODES = 200_000
"""Default bound on a subgame's public tree."""
MAX_HANDS = 1_326
"""Most private hands a subgame handles (hold'em's two-card hands)."""


def stated_fractions(abstraction: BettingAbstraction,
                     extra: Sequence[float] = ()) -> tuple[float, ...]:
    """Every pot fraction a betting abstraction names anywhere (rounds, depths, players,
    sequences), plus ``extra``, sorted, without the all-in sentinel."""
    out: set[float] = {float(x) for x in extra if x != ALL_IN}
    tables = [abstraction.fractions, *[p for p in abstraction.players if p is not None]]
    for table in tables:
        for per_round in table:
            for per_depth in per_round:
                out.update(float(x) for x in per_depth if x != ALL_IN)
    for _, sizes in abstraction.sequences:
        out.update(float(x) for x in sizes if x != ALL_IN)
    if any(not (x > 0 and math.isfinite(x)) for x in out):
        raise UsageError(f"expected positive finite pot fractions, got {sorted(out)!r}")
    return tuple(sorted(out))


def stated_actions(state: BettingState, fractions: Sequence[float],
                   max_raises: int | None = None) -> list[Action]:
    """The subgame's actions at ``state``: fold (facing a bet), call, a raise to each
    fraction realised in chips, the all-in; distinct, in that order (raises ascending).
    Once the round holds ``max_raises`` raises, the all-in is the only raise."""
    out: list[Action] = []
    if state.can_fold():
        out.append(FOLD)
    out.append(CALL)
    if state.raise_bounds() is None:
        return out
    capped = max_raises is not None and sum(
        a.kind is ActionKind.RAISE for a in state.actions[state.round]) >= max_raises
    tos = set() if capped else {realise_raise_to(state, f) for f in fractions}
    tos.add(realise_raise_to(state, ALL_IN))
    out.extend(Action(ActionKind.RAISE, to) for to in sorted(t for t in tos if t is not None))
    return out


@dataclass(frozen=True, eq=False)
class Hands:
    """The private hands of a game (every ``numHoleCards``-subset of the deck)."""

    cards: tuple[tuple[int, ...], ...]
    mask: I64
    """Per hand: its cards as a bit mask."""
    index: dict[tuple[int, ...], int] = field(repr=False)

    @classmethod
    def of(cls, game: Game) -> Hands:
        deck = deck_for(game)
        if game.num_hole_cards > 2:
            raise UsageError(f"expected at most 2 hole cards for re-solving, got "
                             f"{game.num_hole_cards}")
        combos = tuple(tuple(sorted(c)) for c in itertools.combinations(deck,
                                                                          game.num_hole_cards))
        if len(combos) > MAX_HANDS:
            raise UsageError(f"expected at most {MAX_HANDS} private hands, got {len(combos)}")
        mask = np.array([sum(1 << c for c in h) for h in combos], dtype=np.int64)
        return cls(combos, mask, {h: i for i, h in enumerate(combos)})

    def __len__(self) -> int:
        return len(self.cards)

    def hole(self) -> I64:
        """``[hand, 2]``: every hand's cards, -1 where a game deals one hole card."""
        out = np.full((len(self.cards), 2), -1, np.int64)
        for i, c in enumerate(self.cards):
            out[i, : len(c)] = c
        return out

    def find(self, hole: Sequence[int]) -> int:
        """The index of the hand ``hole`` (any order).

        Raises:
            UsageError: for cards that are not a hand of this game.
        """
        key = tuple(sorted(int(c) for c in hole))
        i = self.index.get(key)
        if i is None:
            raise UsageError(f"expected hole cards of this game, got {list(hole)!r}")
        return i


def board_mask(board: Sequence[int]) -> int:
    return sum(1 << int(c) for c in board)


@dataclass(eq=False)
class PublicTree:
    """A subgame's public tree (module docstring). Arrays are filled by :func:`build_tree`."""

    game: Game
    hands: Hands
    states: list[BettingState]
    boards: list[tuple[int, ...]]
    """Distinct boards; ``board_of[n]`` indexes this list."""
    actions: list[Action | tuple[int, ...] | str]
    """Per edge: the real action, the cards a chance edge deals, or a leaf's continuation
    (its label in :attr:`continuations`)."""
    kind: npt.NDArray[np.int8]
    player: I64
    child_start: I64
    num_children: I64
    children: I64
    parent: I64
    end: I64
    board_of: I64
    spent: I64
    """``[node, player]``: chips put in (terminals)."""
    folder: I64
    """The player who folded (fold terminals; else -1)."""
    chance_weight: F64
    """Chance nodes: the probability of each compatible deal of the next board cards."""
    on_path: npt.NDArray[np.bool_]
    """Nodes on the real path (root included)."""
    path_nodes: list[int]
    """The real path's nodes, root first, the last the real state reached."""
    valid: F64
    """``[board, hand]``: 1 when the hand shares no card with the board."""
    compat: F64
    """``[board, i, j]``."""
    hole: I64
    """``[hand, k]``: the hand's cards (-1 pads a game with one hole card)."""
    strength: I64
    """``[board, hand]``: the hand's showdown rank on a complete board
    (:func:`agent.acpc.evaluator.rank_hand_fast`); -1 when the board blocks it or is not
    complete."""
    order: I64
    """``[board, k]``: the hands sorted by :attr:`strength` (ascending, stable)."""
    perm_start: I64
    """Per edge: the first row of :attr:`perms` of a chance edge that stands for a suit
    class of boards (``suits``: :func:`build_tree`); :attr:`perm_count` 0 for every other
    edge."""
    perm_count: I64
    perms: I64
    """``[row, hand]``: for each board a class edge stands for (:attr:`perm_boards`), the
    index of every hand's image in the edge's (canonical) board's frame: a value of hand
    ``h`` on that board is the canonical child's value of hand ``perms[row, h]``."""
    perm_boards: list[tuple[int, ...]]
    """Per row of :attr:`perms`: the board (sorted cards) it stands for."""
    under: I64
    """Per node: the continuation (index into the leaves' children) it lies under, -1 above
    every leaf (a tree without ``depth``: -1 everywhere). Module docstring, *depth limits*."""
    leaf: npt.NDArray[np.bool_]
    """Per node: True at a depth limit's leaf (a decision of :attr:`leaf_player` whose
    children are the continuations)."""
    twin: I64 = field(default_factory=lambda: np.zeros(0, np.int64))
    """Per edge: the same edge in its leaf's first continuation (the edge itself above the
    leaves and in a first continuation): the continuations are copies of one subtree."""
    continuations: tuple[str, ...] = ()
    """The leaves' children's labels, in order (empty: no depth limit)."""

    @property
    def num_nodes(self) -> int:
        return len(self.states)

    @property
    def num_edges(self) -> int:
        return len(self.children)

    @property
    def depth_limited(self) -> bool:
        return bool(self.leaf.any())

    def edge_nodes(self) -> I64:
        """Per edge: the node it leaves (a node's edges are contiguous, in node order)."""
        return np.repeat(np.arange(self.num_nodes, dtype=np.int64), self.num_children)

    def continuation_nodes(self) -> npt.NDArray[np.bool_]:
        """The decision nodes under the leaves (held fixed for both players)."""
        out: npt.NDArray[np.bool_] = (self.under >= 0) & (self.kind == DECISION)
        return out

    def edge_actions(self, n: int) -> list[Action]:
        """The real actions of decision node ``n``'s children, in order (not a leaf)."""
        s = int(self.child_start[n])
        out = []
        for e in range(s, s + int(self.num_children[n])):
            a = self.actions[e]
            assert isinstance(a, Action)
            out.append(a)
        return out

    def child_for(self, n: int, action: Action) -> int:
        """The child of decision node ``n`` reached by ``action`` (-1 if none)."""
        s = int(self.child_start[n])
        for e in range(s, s + int(self.num_children[n])):
            if self.actions[e] == action:
                return int(self.children[e])
        return -1

    def child_for_cards(self, n: int, cards: Sequence[int]) -> int:
        """The child of chance node ``n`` dealing ``cards`` (-1 if none)."""
        key = tuple(sorted(int(c) for c in cards))
        s = int(self.child_start[n])
        for e in range(s, s + int(self.num_children[n])):
            if self.actions[e] == key:
                return int(self.children[e])
        return -1

    def dealt(self, n: int, cards: Sequence[int]) -> tuple[int, I64 | None]:
        """The child of chance node ``n`` that deals ``cards`` and the hands' map into its
        frame: ``(child, None)`` for a child dealing them, ``(child, perm)`` for the class
        child that stands for them (suit classes: a value or row of hand ``h`` on ``cards``
        is the child's of hand ``perm[h]``), ``(-1, None)`` if none."""
        c = self.child_for_cards(n, cards)
        if c >= 0:
            return c, None
        key = tuple(sorted(int(x) for x in cards))
        s = int(self.child_start[n])
        for e in range(s, s + int(self.num_children[n])):
            q0 = int(self.perm_start[e])
            for q in range(q0, q0 + int(self.perm_count[e])):
                if self.perm_boards[q] == key:
                    return int(self.children[e]), self.perms[q]
        return -1, None

    def follow(self, actions: Sequence[Action], board: Sequence[int], start: int = 0) -> int:
        """The node reached from ``start`` by ``actions`` (dealing ``board``'s cards at each
        chance node); -1 if the tree does not contain them (a board a suit class stands
        for: :meth:`follow_perm`)."""
        n, perm = self.follow_perm(actions, board, start)
        return n if perm is None else -1

    def follow_perm(self, actions: Sequence[Action], board: Sequence[int], start: int = 0
                    ) -> tuple[int, I64 | None]:
        """:meth:`follow`, through suit classes too: the node and the hands' map into its
        frame (None: the identity; :meth:`dealt`)."""
        n = start
        i = 0
        perm: I64 | None = None
        while True:
            k = int(self.kind[n])
            if k == CHANCE:
                r = self.states[n].round
                cards = board[self.game.board_start(r): self.game.board_cards_through(r)]
                if len(cards) < self.game.board_cards_through(r) - self.game.board_start(r):
                    return (n, perm) if i == len(actions) else (-1, None)
                n, p = self.dealt(n, cards)
                if n < 0:
                    return -1, None
                if p is not None:
                    perm = p if perm is None else perm[p]
                continue
            if self.leaf[n]:  # the plan ends at a depth limit
                return -1, None
            if i == len(actions):
                return n, perm
            if k != DECISION:
                return -1, None
            n = self.child_for(n, actions[i])
            if n < 0:
                return -1, None
            i += 1


def suit_card_maps(game: Game) -> list[dict[int, int]]:
    """Every permutation of the deck's suits (the identity first) as a map of its cards."""
    deck = deck_for(game)
    suits = sorted({c % 4 for c in deck})
    out: list[dict[int, int]] = []
    for perm in itertools.permutations(suits):
        to = dict(zip(suits, perm, strict=True))
        out.append({c: c - c % 4 + to[c % 4] for c in deck})
    return out


def suit_maps(game: Game, hands: Hands) -> list[tuple[dict[int, int], I64]]:
    """Every permutation of the deck's suits (the identity first): its map of cards
    (:func:`suit_card_maps`) and the hands' map (``fwd[h]``: the index of hand ``h``'s
    image)."""
    return [(cards, np.array([hands.index[tuple(sorted(cards[c] for c in h))]
                              for h in hands.cards], np.int64))
            for cards in suit_card_maps(game)]


def suit_classes(game: Game, hands: Hands, combos: Sequence[tuple[int, ...]],
                 first: tuple[int, ...] | None = None
                 ) -> list[tuple[tuple[int, ...], list[tuple[tuple[int, ...], I64]]]]:
    """``combos`` (sorted card tuples, closed under the suit permutations) in suit classes:
    per class its representative (``first``'s class: ``first``; otherwise its first combo)
    and, per board of the class, the board and the hands' map into the representative's
    frame (``perm[h]``: the hand whose value on the representative is ``h``'s on the
    board)."""
    maps = suit_maps(game, hands)
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[tuple[int, ...], list[tuple[tuple[int, ...], I64]]]] = []
    order = ([first] if first is not None else []) + list(combos)
    for rep in order:
        if rep in seen:
            continue
        members: list[tuple[tuple[int, ...], I64]] = []
        for cards, fwd in maps:
            image = tuple(sorted(cards[c] for c in rep))
            if image in seen:
                continue
            seen.add(image)
            inverse = np.empty_like(fwd)
            inverse[fwd] = np.arange(len(fwd))
            members.append((image, inverse))
        out.append((rep, members))
    return out


def build_tree(game: Game, root: BettingState, board: Sequence[int],
               fractions: Sequence[float], path: Sequence[Action] = (),
               hands: Hands | None = None, max_nodes: int = MAX_SUBGAME_NODES,
               max_raises: int | None = None, suits: bool = False,
               depth: int | None = None, continuations: Sequence[str] = (),
               leaf_player: int = -1) -> PublicTree:
    """The public tree from ``root`` (board ``board`` dealt) with the stated actions and the
    real ``path`` (actions from ``root``; board cards of later rounds are taken from
    ``board`` where it has them); ``max_raises``: :func:`stated_actions`' cap per round
    (the path's own raises are always in).

    ``suits``: a chance node that deals the whole board from none deals one board per suit
    class (:func:`suit_classes`; the real board, where the path crosses it, is its class's
    representative), its edge standing for every board of the class
    (:attr:`PublicTree.perms`): right when every range and fixed row above it is
    symmetric under the suits (the caller checks), as the play below is then.

    ``depth``: rounds the tree spans, counting the root's (None: to the end of the game);
    the first node of round ``root.round + depth`` (the chance node that deals its cards)
    becomes a *leaf*: a decision of ``leaf_player`` whose children, labelled
    ``continuations``, are each a copy of the rest of the game (module docstring).

    Raises:
        AbstractionError: for a path action that is illegal, or a tree above ``max_nodes``.
        UsageError: for a depth below 1, or a depth limit without continuations or with
            no leaf player.
    """
    if depth is not None:
        if not isinstance(depth, int) or depth < 1:
            raise UsageError(f"expected a depth of at least 1 round, got {depth!r}")
        if not continuations or leaf_player not in (0, 1):
            raise UsageError(f"expected continuations and a leaf player (0 or 1) with a "
                             f"depth limit, got {tuple(continuations)!r} and "
                             f"{leaf_player!r}")
    stop = None if depth is None else root.round + depth
    hands = Hands.of(game) if hands is None else hands
    board = tuple(int(c) for c in board)
    deck = deck_for(game)
    states: list[BettingState] = []
    node_board: list[tuple[int, ...]] = []
    kinds: list[int] = []
    parents: list[int] = []
    on_path: list[bool] = []
    kids: list[list[tuple[Action | tuple[int, ...] | str, int]]] = []
    path_nodes: list[int] = []
    class_of: dict[int, list[tuple[tuple[int, ...], list[tuple[tuple[int, ...], I64]]]]] = {}
    under: list[int] = []
    leaf: list[bool] = []
    # (state, board, parent, edge label, path position or -1, continuation or -1)
    stack: list[tuple[BettingState, tuple[int, ...], int, Action | tuple[int, ...] | str,
                      int, int]] = [
        (root, board[: game.board_cards_through(root.round)], -1, (), 0, -1)]
    while stack:
        state, bd, parent, label, pos, cont = stack.pop()
        n = len(states)
        if n >= max_nodes:
            raise AbstractionError(f"expected a subgame of at most {max_nodes} public nodes, "
                                   f"got more")
        states.append(state)
        node_board.append(bd)
        parents.append(parent)
        kids.append([])
        on_path.append(pos >= 0)
        under.append(cont)
        if pos >= 0:
            path_nodes.append(n)
        if parent >= 0:
            kids[parent].append((label, n))
        cut = (stop is not None and cont < 0 and not state.finished and
               state.round >= stop)
        leaf.append(cut)
        if cut:  # a depth limit: the opponent picks a continuation of the rest of the game
            kinds.append(DECISION)
            for k in range(len(continuations) - 1, -1, -1):
                stack.append((state, bd, n, continuations[k], -1, k))
            continue
        dealt = game.board_cards_through(state.round)
        if state.finished and not (state.is_showdown and len(bd) < dealt):
            kinds.append(TERMINAL_SHOWDOWN if state.is_showdown else TERMINAL_FOLD)
            continue
        if len(bd) < dealt:  # a chance node deals the round's (or an all-in's) board cards
            kinds.append(CHANCE)
            used = board_mask(bd)
            need = dealt - len(bd)
            real = board[len(bd): dealt] if len(board) >= dealt else None
            real_key = tuple(sorted(real)) if real is not None else None
            outs = [c for c in itertools.combinations([c for c in deck if not used >> c & 1],
                                                      need)]
            if suits and not bd and dealt == game.total_board_cards:
                outs = [tuple(sorted(c)) for c in outs]
                classes = suit_classes(game, hands, outs, real_key)
                class_of[n] = classes
                outs = [rep for rep, _ in classes]
            for cards in reversed(outs):
                follow = pos if (pos >= 0 and real_key == tuple(sorted(cards))) else -1
                stack.append((state, bd + tuple(cards), n, tuple(sorted(cards)), follow,
                              cont))
            continue
        kinds.append(DECISION)
        acts = stated_actions(state, fractions, max_raises)
        nxt = path[pos] if 0 <= pos < len(path) else None
        if nxt is not None and nxt not in acts:
            try:
                state.check_action(nxt)
            except ValueError as exc:
                raise AbstractionError(f"expected a legal real action on the path, got "
                                       f"{nxt!s}: {exc}") from None
            acts.append(nxt)
            acts.sort(key=_order)
        for a in reversed(acts):
            follow = pos + 1 if (nxt is not None and a == nxt) else -1
            stack.append((state.apply(a), bd, n, a, follow, cont))
    num = len(states)
    child_start = np.zeros(num, np.int64)
    num_children = np.zeros(num, np.int64)
    children: list[int] = []
    labels: list[Action | tuple[int, ...] | str] = []
    perm_start: list[int] = []
    perm_count: list[int] = []
    perm_rows: list[I64] = []
    perm_boards: list[tuple[int, ...]] = []
    for n, ks in enumerate(kids):
        child_start[n] = len(children)
        num_children[n] = len(ks)
        members = dict(class_of.get(n, ()))
        for lab, c in ks:
            children.append(c)
            labels.append(lab)
            rows = members.get(lab, []) if isinstance(lab, tuple) else []
            perm_start.append(len(perm_rows))
            perm_count.append(len(rows))
            for image, inverse in rows:
                perm_boards.append(image)
                perm_rows.append(inverse)
    end = np.arange(1, num + 1, dtype=np.int64)
    for n in range(num - 1, 0, -1):
        p = parents[n]
        end[p] = max(end[p], end[n])
    boards = sorted(set(node_board), key=lambda b: (len(b), b))
    board_index = {b: i for i, b in enumerate(boards)}
    spent = np.zeros((num, game.num_players), np.int64)
    folder = np.full(num, -1, np.int64)
    player = np.full(num, -1, np.int64)
    chance_weight = np.zeros(num)
    for n, st in enumerate(states):
        spent[n] = st.spent
        if kinds[n] == TERMINAL_FOLD:
            folder[n] = st.folded.index(True)
        elif leaf[n]:
            player[n] = leaf_player
        elif kinds[n] == DECISION:
            player[n] = st.player
        elif kinds[n] == CHANCE:
            left = len(deck) - len(node_board[n]) - game.num_players * game.num_hole_cards
            need = game.board_cards_through(st.round) - len(node_board[n])
            chance_weight[n] = 1.0 / math.comb(left, need)
    valid, compat, strength = card_tables(game, hands, boards)
    twin = np.arange(len(children), dtype=np.int64)
    for lf in np.flatnonzero(leaf).tolist():
        first = int(children[child_start[lf]])
        for e in range(int(child_start[lf]) + 1, int(child_start[lf] + num_children[lf])):
            c = int(children[e])
            d = c - first  # the copies are numbered alike (pre-order), shifted by d
            for x in range(c, int(end[c])):
                k = int(num_children[x])
                twin[child_start[x]: child_start[x] + k] = np.arange(
                    child_start[x - d], child_start[x - d] + k)
    return PublicTree(
        game=game, hands=hands, states=states, boards=boards, actions=labels,
        kind=np.array(kinds, np.int8), player=player, child_start=child_start,
        num_children=num_children, children=np.array(children, np.int64),
        parent=np.array(parents, np.int64), end=end,
        board_of=np.array([board_index[b] for b in node_board], np.int64), spent=spent,
        folder=folder, chance_weight=chance_weight, on_path=np.array(on_path, np.bool_),
        path_nodes=path_nodes, valid=valid, compat=compat, hole=hands.hole(),
        strength=strength,
        order=np.argsort(strength, axis=1, kind="stable").astype(np.int64),
        perm_start=np.array(perm_start, np.int64), perm_count=np.array(perm_count, np.int64),
        perms=(np.array(perm_rows, np.int64) if perm_rows else
               np.zeros((0, len(hands)), np.int64)),
        perm_boards=perm_boards, under=np.array(under, np.int64), twin=twin,
        leaf=np.array(leaf, np.bool_),
        continuations=tuple(continuations) if depth is not None else ())


def _order(a: Action) -> tuple[int, int]:
    return ({ActionKind.FOLD: 0, ActionKind.CALL: 1, ActionKind.RAISE: 2}[a.kind],
            a.raise_to if a.kind is ActionKind.RAISE else 0)


_LAST_TABLES: list[tuple[Hands, str, tuple[tuple[int, ...], ...],
                         tuple[F64, F64, I64]]] = []
"""The last :func:`card_tables` answer: a hold'em river decision builds two trees on one
board (the root's and the subgame's), which share these arrays (never written)."""


def card_tables(game: Game, hands: Hands,
                boards: Sequence[tuple[int, ...]]) -> tuple[F64, F64, I64]:
    """``valid[board, hand]``, ``compat[board, i, j]`` and ``strength[board, hand]`` (module
    docstring; ``strength`` only for complete boards, else -1). The last answer is kept
    and given again for the same hands, game and boards."""
    key = tuple(tuple(b) for b in boards)
    for kept_hands, fingerprint, kept_boards, tables in _LAST_TABLES:
        if kept_hands is hands and fingerprint == game.fingerprint and kept_boards == key:
            return tables
    tables = _card_tables(game, hands, boards)
    _LAST_TABLES[:] = [(hands, game.fingerprint, key, tables)]
    return tables


def _card_tables(game: Game, hands: Hands,
                 boards: Sequence[tuple[int, ...]]) -> tuple[F64, F64, I64]:
    h = len(hands)
    full = game.total_board_cards
    valid = np.zeros((len(boards), h))
    compat = np.zeros((len(boards), h, h))
    strength = np.full((len(boards), h), -1, np.int64)
    overlap = (hands.mask[:, None] & hands.mask[None, :]) != 0
    for b, bd in enumerate(boards):
        bm = board_mask(bd)
        ok = (hands.mask & bm) == 0
        valid[b] = ok
        compat[b] = ok[:, None] & ok[None, :] & ~overlap
        if len(bd) == full:
            strength[b] = [rank_hand_fast(list(c) + list(bd)) if ok[i] else -1
                           for i, c in enumerate(hands.cards)]
    return valid, compat, strength
