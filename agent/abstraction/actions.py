"""Betting abstractions and the canonical abstract betting tree.

A :class:`BettingAbstraction` says which actions exist at each abstract decision: fold (when
facing a bet), check/call, bets and raises as fractions of the pot (``x``, docs/background.md; see
:mod:`agent.acpc.betsize`) per round and raise depth, all-in, and a cap on abstract raises
per round. ``fcpa`` is fold, call, pot, all-in; ``fchpa`` adds half pot. Limit games have
one raise size, so their abstraction is the game itself.

The sizes can say more than "per round and raise depth":

* **per player** (``players``): position ``p``'s own bets and raises may use their own
  ``fractions`` table (asymmetric abstractions); a position without one uses the default;
* **per abstract betting sequence** (``sequences``): an override table keyed by the node's
  abstract action history (:func:`history_key`), e.g. ``cb/c``, giving the sizes of the
  sized bets at that node (``[]``: none, only the all-in if it exists). This is what learned
  bet sizes (:mod:`strategies.sizes.learned`) write: one size per betting sequence.

At a node the sizes come from the first that applies: the sequence table under the node's
*sized* key (``cb0.5/c``), under its *bare* key (``cb/c``), the acting position's own table,
the default table.

:func:`build_tree` enumerates the abstract game's betting tree *canonically*: depth first,
children in the order fold, call, raises by increasing size, with every abstract raise
turned into chips in the real rules engine (rounded to whole chips, clamped to the legal
range, duplicates such as "pot = all-in" merged). Node ids are the enumeration order, so a
strategy file row is ``(node id, bucket)`` and no string keys are stored: the agent and the
solver build the same tree from the same game and abstraction. The spec round-trips through
JSON (:meth:`BettingAbstraction.to_json` / :func:`parse_betting_abstraction`).

Bounds (docs/reference/limits.md): a spec's text is checked for size (:data:`MAX_SPEC_CHARS`) and
nesting before it is parsed, its numbers for range; :func:`build_tree` first counts the
tree (:func:`count_tree_nodes`, memoised, no node built) and refuses one over
:func:`max_tree_nodes` (:data:`MAX_TREE_NODES`, or :data:`TREE_NODES_ENV`), so every caller
(strategy files, the solvers, ``learn-sizes``, the agent) gets the same cap.

Imports the stdlib and :mod:`agent.acpc` only.
"""

from __future__ import annotations

import functools
import heapq
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.acpc.betsize import pot_fraction, raise_to_from_pot_fraction, round_raise_to
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import check_json, excerpt, read_text_file

ALL_IN = -1.0
"""Marker for the all-in action in a node's list of sizes."""


Fractions = tuple[tuple[tuple[float, ...], ...], ...]
"""``fractions[round][depth]``: the pot fractions of a round's raise depth."""

_KEY = re.compile(r"(?:[fca/]|[br](?:\d+(?:\.\d*)?(?:e-?\d+)?)?)*")
"""The grammar of a sequence key (:func:`history_key`)."""
_SIZE = re.compile(r"\d+(?:\.\d*)?(?:e-?\d+)?")


@dataclass(frozen=True, slots=True)
class BettingAbstraction:
    """Which abstract actions exist (see the module docstring).

    ``fractions[r][d]`` are the pot fractions allowed in round ``r`` at raise depth ``d``
    (0 = the first bet of the round); the last entry of a round repeats for deeper raises,
    and the last round's list serves later rounds. ``max_raises[r]`` caps abstract raises per
    round (all-in included); past it only fold and call remain. ``players[p]``, when given
    and not ``None``, replaces ``fractions`` for position ``p``'s own actions;
    ``sequences`` is the override table ``(key, sizes)`` sorted by key.
    """

    name: str
    fractions: Fractions
    fold: bool = True
    all_in: bool = True
    max_raises: tuple[int, ...] = (255,)
    players: tuple[Fractions | None, ...] = ()
    sequences: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def sizes(self, round_: int, depth: int, player: int | None = None,
              history: str | None = None) -> tuple[float, ...]:
        """Pot fractions allowed at raise depth ``depth`` of ``round_`` for ``player`` at
        the node whose sized key is ``history`` (module docstring: first that applies)."""
        if history is not None and self.sequences:
            table = _sequence_table(self)
            found = table.get(history)
            if found is None:
                found = table.get(bare_key(history))
            if found is not None:
                return found
        fractions = self.fractions
        if player is not None and player < len(self.players):
            own = self.players[player]
            if own is not None:
                fractions = own
        per_round = fractions[min(round_, len(fractions) - 1)]
        if not per_round:
            return ()
        return per_round[min(depth, len(per_round) - 1)]

    def raise_cap(self, round_: int) -> int:
        """Abstract raises allowed in ``round_``."""
        return self.max_raises[min(round_, len(self.max_raises) - 1)]

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :func:`parse_betting_abstraction` reads back (``players``
        and ``sequences`` only when used, so plain specs keep their old form)."""
        out: dict[str, Any] = {
            "name": self.name,
            "fold": self.fold,
            "all_in": self.all_in,
            "fractions": _fractions_json(self.fractions),
            "max_raises": list(self.max_raises),
        }
        if self.players:
            out["players"] = [None if f is None else _fractions_json(f) for f in self.players]
        if self.sequences:
            out["sequences"] = {key: list(sizes) for key, sizes in self.sequences}
        return out


def _fractions_json(fractions: Fractions) -> list[list[list[float]]]:
    return [[list(d) for d in r] for r in fractions]


@functools.lru_cache(maxsize=64)
def _sequence_table(abstraction: BettingAbstraction) -> Mapping[str, tuple[float, ...]]:
    return dict(abstraction.sequences)


def bare_key(key: str) -> str:
    """A sized sequence key without its sizes: ``cb0.5r1/c`` -> ``cbr/c``."""
    return _SIZE.sub("", key)


def action_token(action: AbstractAction, depth: int) -> str:
    """One abstract action in a sequence key: ``f`` fold, ``c`` check/call, ``a`` all-in,
    ``b<size>`` the round's first sized bet (raise depth 0), ``r<size>`` a later raise; a
    limit raise is ``b``/``r`` with no size."""
    kind = action.kind
    if kind is ActionKind.FOLD:
        return "f"
    if kind is ActionKind.CALL:
        return "c"
    if action.fraction == ALL_IN:
        return "a"
    letter = "b" if depth == 0 else "r"
    if action.action == LIMIT_RAISE:
        return letter
    return f"{letter}{action.fraction:g}"


def history_key(tokens: Sequence[str]) -> str:
    """Join tokens of :func:`action_token` and round separators into a key."""
    return "".join(tokens)


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


MAX_SPEC_CHARS = 1 << 20
"""Longest betting spec read, inline or from a file (1 MiB; learned specs are a few KB)."""
MAX_RAISES_CAP = 255
"""Largest ``max_raises`` entry (the game file's own cap, ``maxRaises``, has the same)."""
MAX_SIZES = 16
"""Most pot fractions in one list of a spec (a round's depth, a sequence; the presets have
at most 3, learned specs 1): counting a hostile tree of 16 sizes and 255 raises per round
takes under a second, one of 1,000 took minutes."""
"""Largest ``max_raises`` entry (the game file's own cap, ``maxRaises``, has the same)."""


def parse_betting_abstraction(spec: str | dict[str, Any],
                              where: str = "betting abstraction") -> BettingAbstraction:
    """A preset name, a JSON object text, a ``.json`` file holding one (or holding it under
    ``"betting"``), or a dict from :meth:`BettingAbstraction.to_json`.

    Text is checked for size (:data:`MAX_SPEC_CHARS`) and nesting depth
    (:data:`~agent.acpc.limits.MAX_JSON_DEPTH`) before it is parsed, numbers for range;
    messages quote at most a short excerpt of the input. ``where`` names the input in them
    (a file's path is used for a file).

    Raises:
        AbstractionError: with what was expected and what came.
    """
    if isinstance(spec, str):
        text = spec.strip()
        if text in PRESETS:
            return PRESETS[text]
        if text.endswith(".json") and not text.startswith("{"):
            return _spec_file(text)
        if not text.startswith("{"):
            raise AbstractionError(
                f"{where}: expected a preset ({', '.join(PRESETS)}), a JSON object or a "
                f".json file, got {excerpt(spec)}"
            )
        spec = _loads(text, where)
    if not isinstance(spec, dict):
        raise AbstractionError(f"{where}: expected a betting abstraction object, got "
                               f"{excerpt(spec)}")
    known = {"name", "fold", "all_in", "fractions", "max_raises", "players", "sequences"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise AbstractionError(f"{where}: expected betting abstraction keys {sorted(known)}, "
                               f"got unknown {excerpt(unknown)}")
    try:
        fractions = _parse_fractions(spec["fractions"], "fractions")
        players_raw = spec.get("players", [])
        if not isinstance(players_raw, list):
            raise AbstractionError(f"expected 'players' to be a list (one entry per "
                                   f"position, null for the default), got "
                                   f"{excerpt(players_raw)}")
        players = tuple(None if f is None else _parse_fractions(f, f"players[{i}]")
                        for i, f in enumerate(players_raw))
        sequences_raw = spec.get("sequences", {})
        if not isinstance(sequences_raw, dict):
            raise AbstractionError(f"expected 'sequences' to be an object of key: [sizes], "
                                   f"got {excerpt(sequences_raw)}")
        sequences = tuple(sorted(
            (_check_key(str(key)), _check_sizes(value, f"sequences[{excerpt(str(key), 40)}]",
                                                allow_empty=True))
            for key, value in sequences_raw.items()
        ))
        result = BettingAbstraction(
            name=str(spec.get("name", "custom")),
            fractions=fractions,
            fold=bool(spec.get("fold", True)),
            all_in=bool(spec.get("all_in", True)),
            max_raises=_check_max_raises(spec.get("max_raises", [MAX_RAISES_CAP])),
            players=players,
            sequences=sequences,
        )
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, AbstractionError):
            raise AbstractionError(f"{where}: {exc}") from None
        raise AbstractionError(f"{where}: expected betting abstraction fields, got "
                               f"{excerpt(spec)}: {excerpt(str(exc))}") from None
    if not result.fractions or not result.max_raises:
        raise AbstractionError(f"{where}: expected non-empty 'fractions' and 'max_raises', "
                               f"got {excerpt(spec)}")
    for own in result.players:
        if own is not None and not own:
            raise AbstractionError(f"{where}: expected a non-empty fractions table per "
                                   f"player, got {excerpt(spec.get('players'))}")
    return result


def _loads(text: str, where: str) -> Any:
    """JSON text of a spec, its size and depth checked first."""
    check_json(text, where=where, what="a JSON betting abstraction", max_chars=MAX_SPEC_CHARS,
               error=AbstractionError)
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or a number past the int conversion limit
        raise AbstractionError(f"{where}: expected a JSON betting abstraction, got "
                               f"{excerpt(text)}: {excerpt(str(exc))}") from None


def _spec_file(path: str) -> BettingAbstraction:
    """A betting abstraction from a JSON file: the spec itself, or an object whose
    ``"betting"`` holds it (what ``acpc-strategy learn-sizes --out`` writes); at most
    :data:`MAX_SPEC_CHARS` bytes are read."""
    text = read_text_file(path, max_bytes=MAX_SPEC_CHARS, what="betting abstraction file",
                          decoded="a UTF-8 JSON betting abstraction", error=AbstractionError)
    spec = _loads(text, path)
    if isinstance(spec, dict) and isinstance(spec.get("betting"), dict):
        spec = spec["betting"]
    return parse_betting_abstraction(spec, path)


def _check_max_raises(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or any(
        isinstance(m, bool) or not isinstance(m, int | float) or m != m
        or not 0 <= m <= MAX_RAISES_CAP or m != int(m) for m in value
    ):
        raise AbstractionError(f"expected 'max_raises' as a list of whole numbers in "
                               f"0..{MAX_RAISES_CAP}, got {excerpt(value)}")
    return tuple(int(m) for m in value)


def _check_sizes(value: Any, where: str, *, allow_empty: bool = True) -> tuple[float, ...]:
    if not isinstance(value, list | tuple):
        raise AbstractionError(f"expected a list of pot fractions at {where}, got "
                               f"{excerpt(value)}")
    if len(value) > MAX_SIZES:
        raise AbstractionError(f"expected at most {MAX_SIZES} pot fractions at {where}, got "
                               f"{len(value):,}: {excerpt(list(value))}")
    sizes = tuple(float(x) for x in value)
    if any(not (x > 0.0) or x != x or x == float("inf") for x in sizes) or (
        list(sizes) != sorted(set(sizes))
    ):
        raise AbstractionError(f"expected increasing positive pot fractions at {where}, "
                               f"got {excerpt(list(value))}")
    if not sizes and not allow_empty:
        raise AbstractionError(f"expected at least one pot fraction at {where}, got []")
    return sizes


def _parse_fractions(value: Any, where: str) -> Fractions:
    if not isinstance(value, list | tuple):
        raise AbstractionError(f"expected {where} as [[[fractions per depth] per round]], "
                               f"got {excerpt(value)}")
    out = []
    for r, rnd in enumerate(value):
        if not isinstance(rnd, list | tuple):
            raise AbstractionError(f"expected a list of depths at {where}[{r}], got "
                                   f"{excerpt(rnd)}")
        out.append(tuple(_check_sizes(depth, f"{where}[{r}][{d}]")
                         for d, depth in enumerate(rnd)))
    return tuple(out)


def _check_key(key: str) -> str:
    if _KEY.fullmatch(key) is None:
        raise AbstractionError(
            f"expected a betting sequence key of f, c, a, b[size], r[size] and '/' "
            f"(e.g. 'cb/c' or 'cb0.5r1/'), got {excerpt(key)}"
        )
    return key


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
    history: str = ""
    """The node's sized sequence key (:func:`action_token`), e.g. ``cb1r0.5/c``."""

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
    state: BettingState, abstraction: BettingAbstraction, depth: int,
    history: str | None = None,
) -> tuple[AbstractAction, ...]:
    """The abstract actions at ``state`` (canonical order: fold, call, raises by size);
    ``history`` is the node's sized sequence key, for the ``sequences`` overrides."""
    moves = node_moves(state, abstraction, depth, history)
    if moves[-1][0] == LIMIT_RAISE:
        bounds = state.raise_bounds()
        assert bounds is not None  # a limit raise was found legal
        return (*(AbstractAction(a, f, f) for a, f in moves[:-1]),
                AbstractAction(LIMIT_RAISE, 1.0, pot_fraction(state, bounds[0])))
    return tuple(AbstractAction(a, f, f if a.kind is not ActionKind.RAISE
                                else pot_fraction(state, a.raise_to)) for a, f in moves)


def node_moves(
    state: BettingState, abstraction: BettingAbstraction, depth: int,
    history: str | None = None,
) -> list[tuple[Action, float]]:
    """:func:`node_actions` without the real sizes: ``(action, nominal fraction)`` (-2 the
    fold, 0 the call, 1 a limit raise, :data:`ALL_IN`), what counting the tree needs."""
    out: list[tuple[Action, float]] = []
    if abstraction.fold and state.can_fold():
        out.append((FOLD, -2.0))
    out.append((CALL, 0.0))
    bounds = state.raise_bounds()
    if bounds is None or depth >= abstraction.raise_cap(state.round):
        return out
    if not state.game.is_nolimit:
        out.append((LIMIT_RAISE, 1.0))
        return out
    lo, hi = bounds
    seen: dict[int, float] = {}
    for frac in abstraction.sizes(state.round, depth, state.player, history):
        to = round_raise_to(raise_to_from_pot_fraction(state, frac))
        to = min(max(to, lo), hi)
        if to == hi:
            if not abstraction.all_in:
                seen.setdefault(to, frac)
            break  # the sizes increase: the rest are all-ins too (the all-in stands for them)
        seen.setdefault(to, frac)
    if abstraction.all_in:
        seen.setdefault(hi, ALL_IN)
    for to in sorted(seen):
        out.append((Action(ActionKind.RAISE, to), seen[to]))
    return out


@dataclass
class BettingTree:
    """The canonical abstract tree: ``nodes[i].id == i``; root is node 0."""

    game: Game
    abstraction: BettingAbstraction
    nodes: Sequence[Node] = field(default_factory=list)
    """Every node by id: a list, or for a tree read from the cache
    (:mod:`agent.abstraction.treecache`) a sequence that builds each node on first use."""
    derived: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Per-tree caches of derived data (e.g. table layouts by bucket counts)."""

    @property
    def decision_nodes(self) -> list[Node]:
        return [n for n in self.nodes if not n.is_terminal]

    def child(self, node_id: int, action_index: int) -> Node:
        return self.nodes[self.nodes[node_id].children[action_index]]


def child_node(node: Node, act: AbstractAction, new_id: int) -> Node:
    """The child of ``node`` after its abstract action ``act`` (no actions or children yet):
    its state, raise depth and sequence key, with id ``new_id``."""
    child_state = node.state._apply_unchecked(act.action)  # legal by construction
    same_round = child_state.round == node.state.round and not child_state.finished
    depth = node.depth + 1 if (act.kind is ActionKind.RAISE and same_round) else (
        node.depth if same_round else 0)
    history = node.history + action_token(act, node.depth)
    if not same_round and not child_state.finished:
        history += "/"
    return Node(new_id, child_state, node.id, depth, history=history)


def betting_key(state: BettingState) -> tuple[Any, ...]:
    """The fields of ``state`` that decide every count under it: the round, the player to
    act, the chips spent per player, the folded flags (all-in follows from spent and stack),
    the current bet and the minimum raise-to, the raises and actions so far in the round
    (``maxRaises``, the abstraction's raise depth and the 64-action cap), and how many
    players still able to act have called the last raise (the reference ``numCalled``).

    Two states with equal keys have equal legal actions, equal abstract actions (the pot,
    the amount to call and the raise depth follow from the key) and children with equal keys.
    Some fields are functions of the others in the games tried (the player to act, the
    folded flags, the current bet, the called count); they are kept so that the key holds
    every input of the rules directly and costs no extra states. The tests pin games where
    the round, the minimum raise-to and the raise count each change the counts.
    """
    r = state.round
    stack = state.game.stack
    spent = state.spent
    called = 0  # numCalled: actions since the last raise (raiser included) by players who
    # can still act
    actions = state.actions[r]
    actors = state.actors[r]
    for i in range(len(actions) - 1, -1, -1):
        kind = actions[i].kind
        if kind is ActionKind.FOLD:
            continue
        if spent[actors[i]] < stack[actors[i]]:
            called += 1
        if kind is ActionKind.RAISE:
            break
    raises = state.num_raises()
    return (r, state.player, spent, state.folded, state.max_spent, state.min_raise_to,
            raises, len(actions), called)


MAX_TREE_NODES = 1_000_000
"""Default cap on the nodes of an abstract betting tree (docs/reference/limits.md): the largest tree
of a bundled file, recipe or documented command has 307,250 (hold'em ``fchpa``); a tree at
the cap takes about 1 GB and half a minute or more to build. :data:`TREE_NODES_ENV`
overrides it."""
TREE_NODES_ENV = "ACPC_ARENA_MAX_TREE_NODES"
"""Environment variable that replaces :data:`MAX_TREE_NODES` (a positive whole number)."""
MIN_COUNT_TRANSITIONS = 250_000
"""Least work :func:`count_tree_nodes` may do (child states built at distinct states, never
more than the tree's nodes): heads-up trees merge well (the largest bundled one, 307,250
nodes, needs 6,459), multiway ones do not (six-player hold'em with pot raises preflop and
on the flop, 126,539 nodes, needs 66,006); about 5-25 s at ~20-90 us each (load 1-11)."""


def max_tree_nodes() -> int:
    """The node cap in force: :data:`TREE_NODES_ENV` if set, else :data:`MAX_TREE_NODES`.

    Raises:
        AbstractionError: if the variable is set to anything but a positive whole number.
    """
    raw = os.environ.get(TREE_NODES_ENV, "").strip()
    if not raw:
        return MAX_TREE_NODES
    if not raw.isdigit() or len(raw) > 12 or int(raw) < 1:
        raise AbstractionError(f"expected {TREE_NODES_ENV} to be a positive whole number of "
                               f"at most 12 digits, got {excerpt(raw)}")
    return int(raw)


def count_tree_nodes(game: Game, abstraction: BettingAbstraction, limit: int | None = None,
                     max_transitions: int | None = None) -> int:
    """The number of nodes :func:`build_tree` would build, counted without building them.

    Forward, on the merged states: a state (:func:`betting_key`, with the sequence key when
    ``sequences`` are used) is expanded once, after every state that leads to it, carrying
    the number of tree nodes it stands for (its paths from the root); its children add that
    number times its action count to the total. States are taken in increasing order of
    (chips in the pot, folds, round, actions this round), which every action increases, so
    the work is one child state per action at each *distinct* state, not the tree's size
    (the bundled hold'em tree: 35,610 nodes, 1,765 transitions, 0.05 s), and the total only
    grows: a tree too large passes ``limit`` (default :func:`max_tree_nodes`) as soon as its
    many paths meet, not after its states are all seen. The count also stops once the work
    passes ``max_transitions`` (default the larger of :data:`MIN_COUNT_TRANSITIONS` and a
    quarter of the limit; distinct states are never more than nodes).

    Raises:
        AbstractionError: saying what was expected, the count reached and the limit.
    """
    cap = max_tree_nodes() if limit is None else limit
    budget = max(MIN_COUNT_TRANSITIONS, cap // 4) if max_transitions is None else (
        max_transitions)
    root = BettingState.initial(game)
    if root.finished:
        return 1
    by_sequence = bool(abstraction.sequences)

    def too_large(got: str) -> AbstractionError:
        return AbstractionError(
            f"expected an abstract betting tree of at most {cap:,} nodes (set "
            f"{TREE_NODES_ENV} to allow more), got {got} for {excerpt(abstraction.name, 40)} "
            f"on a {game.num_players}-player {game.betting_type.value} game: cap raises "
            f"with max_raises or use fewer sizes")

    def order(state: BettingState) -> tuple[int, int, int, int]:
        return (sum(state.spent), sum(state.folded), state.round,
                len(state.actions[state.round]))

    # pending[memo key] = [paths to it, state, sequence key]; heap of (order, serial, key)
    pending: dict[Any, list[Any]] = {}
    heap: list[tuple[tuple[int, int, int, int], int, Any]] = []
    total = 1
    work = 0
    seen = 0
    state, history, paths = root, "", 1
    while True:
        depth = state.num_raises()
        acts = node_moves(state, abstraction, depth, history if by_sequence else None)
        work += len(acts)
        if work > budget:
            raise too_large(f"a tree too large to count in {budget:,} steps ({seen:,} "
                            f"distinct states so far, {total:,} nodes)")
        total += paths * len(acts)
        if total > cap:
            raise too_large(f"more than {cap:,}")
        for action, fraction in acts:
            child = state._apply_unchecked(action)  # legal by construction
            if child.finished:
                continue
            key = ""
            if by_sequence:
                key = history + action_token(AbstractAction(action, fraction, 0.0), depth)
                if child.round != state.round:
                    key += "/"
                mkey: Any = (betting_key(child), key)
            else:
                mkey = betting_key(child)
            entry = pending.get(mkey)
            if entry is None:
                pending[mkey] = [paths, child, key]
                heapq.heappush(heap, (order(child), len(pending) + seen, mkey))
            else:
                entry[0] += paths
        if not heap:
            return total
        mkey = heapq.heappop(heap)[2]
        paths, state, history = pending.pop(mkey)
        seen += 1


def build_tree(game: Game, abstraction: BettingAbstraction,
               limit: int | None = None) -> BettingTree:
    """Enumerate the abstract betting tree depth first (see the module docstring), once
    :func:`count_tree_nodes` has found it has at most ``limit`` nodes (default
    :func:`max_tree_nodes`).

    Raises:
        AbstractionError: if the tree would exceed ``limit`` nodes (tighten the
            abstraction), or a ``sequences`` key matches no node of the tree.
    """
    if limit is None:
        limit = max_tree_nodes()
    count_tree_nodes(game, abstraction, limit)
    tree = BettingTree(game, abstraction)
    nodes: list[Node] = []
    tree.nodes = nodes
    root = Node(0, BettingState.initial(game), -1, 0)
    nodes.append(root)
    stack = [0]
    used: set[str] = set()
    overrides = dict(abstraction.sequences)
    if overrides and not game.is_nolimit:
        raise AbstractionError(f"expected 'sequences' only for a no-limit game (a limit game "
                               f"has one raise size), got {len(overrides)} for "
                               f"{excerpt(abstraction.name, 40)}")
    while stack:
        node = nodes[stack.pop()]
        if node.is_terminal:
            continue
        node.actions = node_actions(node.state, abstraction, node.depth, node.history)
        if overrides:
            key = node.history if node.history in overrides else bare_key(node.history)
            if key in overrides and node.state.raise_bounds() is not None and (
                node.depth < abstraction.raise_cap(node.state.round)
            ):
                used.add(key)
        kids: list[int] = []
        for act in node.actions:
            child = child_node(node, act, len(nodes))
            nodes.append(child)
            kids.append(child.id)
            if len(nodes) > limit:
                raise AbstractionError(
                    f"expected an abstract tree of at most {limit:,} nodes for "
                    f"{excerpt(abstraction.name, 40)}, got more: cap raises with max_raises"
                )
        node.children = tuple(kids)
        stack.extend(reversed(kids))
    unused = sorted(set(overrides) - used)
    if unused:
        raise AbstractionError(
            f"expected every 'sequences' key of {excerpt(abstraction.name, 40)} to name a node "
            f"where a bet is possible, got {len(unused)} that do not: "
            f"{excerpt(unused[:5])}"
        )
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


def find_node(tree: BettingTree, key: str) -> Node:
    """The node whose sized or bare sequence key is ``key``.

    Raises:
        AbstractionError: if no node has that key.
    """
    cache = tree.derived.get("by_key")
    if not isinstance(cache, dict):
        cache = {}
        for n in tree.nodes:
            cache.setdefault(n.history, n)
            cache.setdefault(bare_key(n.history), n)
        tree.derived["by_key"] = cache
    found = cache.get(key)
    if not isinstance(found, Node):
        raise AbstractionError(f"expected a betting sequence of the abstract tree "
                               f"(e.g. 'cb/c'), got {excerpt(key)}")
    return found


def describe_path(tree: BettingTree, node_id: int) -> str:
    """The real betting string of a node (``cc/r300``), for messages and inspection."""
    return tree.nodes[node_id].state.betting


def fractions_of(actions: Sequence[AbstractAction]) -> list[float]:
    """The real pot fractions of a node's non-fold actions (call first, then raises)."""
    return [a.x for a in actions if a.kind is not ActionKind.FOLD]



def action_name(action: AbstractAction) -> str:
    """An abstract action's name for people: ``fold``, ``check/call``, ``pot``, ``0.5 pot``,
    ``all-in``, ``raise`` (limit). The trace (``acpc-agent --trace``) uses these."""
    kind = action.kind
    if kind is ActionKind.FOLD:
        return "fold"
    if kind is ActionKind.CALL:
        return "check/call"
    if action.action == LIMIT_RAISE:
        return "raise"
    if action.fraction == ALL_IN:
        return "all-in"
    return "pot" if action.fraction == 1.0 else f"{action.fraction:g} pot"
