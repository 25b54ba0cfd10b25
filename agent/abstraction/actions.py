"""Betting abstractions and the canonical abstract betting tree.

A :class:`BettingAbstraction` says which actions exist at each abstract decision: fold (when
facing a bet), check/call, bets and raises as fractions of the pot (DOMAIN.md's ``x``, see
:mod:`agent.acpc.betsize`) per round and raise depth, all-in, and a cap on abstract raises
per round. ``fcpa`` is fold, call, pot, all-in; ``fchpa`` adds half pot. Limit games have
one raise size, so their abstraction is the game itself.

:func:`build_tree` enumerates the abstract game's betting tree *canonically*: depth first,
children in the order fold, call, raises by increasing size, with every abstract raise
turned into chips in the real rules engine (rounded to whole chips, clamped to the legal
range, duplicates such as "pot = all-in" merged). Node ids are the enumeration order, so a
strategy file row is ``(node id, bucket)`` and no string keys are stored: the agent and the
solver build the same tree from the same game and abstraction. The spec round-trips through
JSON (:meth:`BettingAbstraction.to_json` / :func:`parse_betting_abstraction`).

Imports the stdlib and :mod:`agent.acpc` only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.acpc.betsize import pot_fraction, raise_to_from_pot_fraction, round_raise_to
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game

ALL_IN = -1.0
"""Marker for the all-in action in a node's list of sizes."""


@dataclass(frozen=True, slots=True)
class BettingAbstraction:
    """Which abstract actions exist (see the module docstring).

    ``fractions[r][d]`` are the pot fractions allowed in round ``r`` at raise depth ``d``
    (0 = the first bet of the round); the last entry of a round repeats for deeper raises,
    and the last round's list serves later rounds. ``max_raises[r]`` caps abstract raises per
    round (all-in included); past it only fold and call remain.
    """

    name: str
    fractions: tuple[tuple[tuple[float, ...], ...], ...]
    fold: bool = True
    all_in: bool = True
    max_raises: tuple[int, ...] = (255,)

    def sizes(self, round_: int, depth: int) -> tuple[float, ...]:
        """Pot fractions allowed at raise depth ``depth`` of ``round_``."""
        per_round = self.fractions[min(round_, len(self.fractions) - 1)]
        if not per_round:
            return ()
        return per_round[min(depth, len(per_round) - 1)]

    def raise_cap(self, round_: int) -> int:
        """Abstract raises allowed in ``round_``."""
        return self.max_raises[min(round_, len(self.max_raises) - 1)]

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :func:`parse_betting_abstraction` reads back."""
        return {
            "name": self.name,
            "fold": self.fold,
            "all_in": self.all_in,
            "fractions": [[list(d) for d in r] for r in self.fractions],
            "max_raises": list(self.max_raises),
        }


PRESETS: dict[str, BettingAbstraction] = {
    "fcpa": BettingAbstraction("fcpa", (((1.0,),),)),
    "fchpa": BettingAbstraction("fchpa", (((0.5, 1.0),),)),
    "fcpa3": BettingAbstraction("fcpa3", (((1.0,),),), max_raises=(3,)),
    "fchpa3": BettingAbstraction("fchpa3", (((0.5, 1.0),),), max_raises=(3,)),
    "fc2pa": BettingAbstraction("fc2pa", (((0.5, 1.0, 2.0), (1.0,)),), max_raises=(3,)),
    "fca": BettingAbstraction("fca", ((),)),
}
"""Named abstractions: ``fcpa``, ``fchpa`` (unlimited raises), their 3-raise-capped forms,
``fc2pa`` (half, pot, 2x pot for the first bet, pot for raises, 3 raises), ``fca``."""


def parse_betting_abstraction(spec: str | dict[str, Any]) -> BettingAbstraction:
    """A preset name, a JSON object text, or a dict from :meth:`BettingAbstraction.to_json`.

    Raises:
        ValueError: with what was expected and what came.
    """
    if isinstance(spec, str):
        text = spec.strip()
        if text in PRESETS:
            return PRESETS[text]
        if not text.startswith("{"):
            raise AbstractionError(
                f"expected a betting abstraction ({', '.join(PRESETS)}) or a JSON object, "
                f"got {spec!r}"
            )
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AbstractionError(f"expected a JSON betting abstraction, got {spec!r}: "
                                   f"{exc}") from None
    if not isinstance(spec, dict):
        raise AbstractionError(f"expected a betting abstraction object, got {spec!r}")
    try:
        fractions = tuple(
            tuple(tuple(float(x) for x in depth) for depth in rnd) for rnd in spec["fractions"]
        )
        result = BettingAbstraction(
            name=str(spec.get("name", "custom")),
            fractions=fractions,
            fold=bool(spec.get("fold", True)),
            all_in=bool(spec.get("all_in", True)),
            max_raises=tuple(int(m) for m in spec.get("max_raises", [255])),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AbstractionError(f"expected betting abstraction fields, got {spec!r}: "
                               f"{exc}") from None
    if not result.fractions or not result.max_raises:
        raise AbstractionError(f"expected non-empty 'fractions' and 'max_raises', got {spec!r}")
    for rnd in result.fractions:
        for depth in rnd:
            if any(not (x > 0.0) for x in depth) or list(depth) != sorted(set(depth)):
                raise AbstractionError(
                    f"expected increasing positive pot fractions, got {list(depth)!r}"
                )
    return result


@dataclass(frozen=True, slots=True)
class AbstractAction:
    """One action of an abstract node: what it is, in chips, and as a pot fraction.

    ``fraction`` is the spec's nominal pot fraction (``ALL_IN`` for the all-in, 0 for the
    call, -2 for the fold); ``x`` the size it really has in this node after rounding and
    clamping (what translation compares real bets against).
    """

    action: Action
    fraction: float
    x: float

    @property
    def kind(self) -> ActionKind:
        return self.action.kind


@dataclass(slots=True)
class Node:
    """A node of the abstract tree."""

    id: int
    state: BettingState
    parent: int
    depth: int
    """Abstract raises so far in this node's round."""
    actions: tuple[AbstractAction, ...] = ()
    children: tuple[int, ...] = ()

    @property
    def is_terminal(self) -> bool:
        return self.state.finished

    @property
    def player(self) -> int:
        return self.state.player

    @property
    def round(self) -> int:
        return self.state.round


def node_actions(
    state: BettingState, abstraction: BettingAbstraction, depth: int
) -> tuple[AbstractAction, ...]:
    """The abstract actions at ``state`` (canonical order: fold, call, raises by size)."""
    out: list[AbstractAction] = []
    if abstraction.fold and state.can_fold():
        out.append(AbstractAction(FOLD, -2.0, -2.0))
    out.append(AbstractAction(CALL, 0.0, 0.0))
    bounds = state.raise_bounds()
    if bounds is None or depth >= abstraction.raise_cap(state.round):
        return tuple(out)
    game = state.game
    if not game.is_nolimit:
        to = bounds[0]
        out.append(AbstractAction(LIMIT_RAISE, 1.0, pot_fraction(state, to)))
        return tuple(out)
    lo, hi = bounds
    seen: dict[int, float] = {}
    for frac in abstraction.sizes(state.round, depth):
        to = round_raise_to(raise_to_from_pot_fraction(state, frac))
        to = min(max(to, lo), hi)
        if to == hi and abstraction.all_in:
            continue  # the all-in below stands for it
        seen.setdefault(to, frac)
    if abstraction.all_in:
        seen.setdefault(hi, ALL_IN)
    for to in sorted(seen):
        out.append(AbstractAction(Action(ActionKind.RAISE, to), seen[to], pot_fraction(state, to)))
    return tuple(out)


@dataclass
class BettingTree:
    """The canonical abstract tree: ``nodes[i].id == i``; root is node 0."""

    game: Game
    abstraction: BettingAbstraction
    nodes: list[Node] = field(default_factory=list)
    derived: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Per-tree caches of derived data (e.g. table layouts by bucket counts)."""

    @property
    def decision_nodes(self) -> list[Node]:
        return [n for n in self.nodes if not n.is_terminal]

    def child(self, node_id: int, action_index: int) -> Node:
        return self.nodes[self.nodes[node_id].children[action_index]]


def build_tree(game: Game, abstraction: BettingAbstraction, limit: int = 5_000_000) -> BettingTree:
    """Enumerate the abstract betting tree depth first (see the module docstring).

    Raises:
        ValueError: if the tree would exceed ``limit`` nodes (tighten the abstraction).
    """
    tree = BettingTree(game, abstraction)
    nodes = tree.nodes
    root = Node(0, BettingState.initial(game), -1, 0)
    nodes.append(root)
    stack = [0]
    while stack:
        node = nodes[stack.pop()]
        if node.is_terminal:
            continue
        node.actions = node_actions(node.state, abstraction, node.depth)
        kids: list[int] = []
        for act in node.actions:
            child_state = node.state._apply_unchecked(act.action)  # legal by construction
            same_round = child_state.round == node.state.round and not child_state.finished
            depth = node.depth + 1 if (act.kind is ActionKind.RAISE and same_round) else (
                node.depth if same_round else 0)
            child = Node(len(nodes), child_state, node.id, depth)
            nodes.append(child)
            kids.append(child.id)
            if len(nodes) > limit:
                raise AbstractionError(
                    f"expected an abstract tree of at most {limit} nodes for "
                    f"{abstraction.name!r}, got more: cap raises with max_raises"
                )
        node.children = tuple(kids)
        stack.extend(reversed(kids))
    _renumber_depth_first(tree)
    return tree


def _renumber_depth_first(tree: BettingTree) -> None:
    """Give ids in pre-order (parents before children, first child's subtree first)."""
    order: list[int] = []
    stack = [0]
    nodes = tree.nodes
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(nodes[i].children))
    new_id = {old: new for new, old in enumerate(order)}
    renumbered = []
    for old in order:
        n = nodes[old]
        n.id = new_id[old]
        n.parent = new_id[n.parent] if n.parent >= 0 else -1
        n.children = tuple(new_id[c] for c in n.children)
        renumbered.append(n)
    tree.nodes = renumbered


def describe_path(tree: BettingTree, node_id: int) -> str:
    """The real betting string of a node (``cc/r300``), for messages and inspection."""
    return tree.nodes[node_id].state.betting


def fractions_of(actions: Sequence[AbstractAction]) -> list[float]:
    """The real pot fractions of a node's non-fold actions (call first, then raises)."""
    return [a.x for a in actions if a.kind is not ActionKind.FOLD]
