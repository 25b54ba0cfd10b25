"""Game size: betting sequences, information sets, infoset-actions and memory of a game.

Johanson's measures ("Measuring the Size of Large No-Limit Poker Games", 2013; docs/background.md,
"Game size") for any ACPC game, in full (every legal action, every whole-chip raise in
no-limit) or under a betting abstraction (:mod:`agent.abstraction.actions`, whose canonical
tree the solvers and the agent build):

* **betting sequences**: the decision nodes of the betting tree per round and per player to
  act, and the terminal nodes per round in which the hand ended (folds and showdowns apart;
  an all-in that runs out the board ends in the round of the last action);
* **observations** per round: what a player sees of the cards, with perfect recall: their
  own hole cards and the board cards round by round. Raw: ``C(N, hole) * C(N - hole, b_1)
  * ...`` for a deck of ``N`` cards; isomorphic: the classes of
  :class:`~agent.abstraction.isomorphism.HandIndexer` with the card groups ``[hole, b_1,
  b_2, ...]`` (rounds dealing no card left out) for that game's deck;
* **information sets**: sum over decision nodes of the acting player's observations in that
  node's round; **infoset-actions**: the same sum weighted by the node's number of actions;
  **game states** (histories at decision nodes): weighted by the deals of every player's hole
  cards and the board so far;
* **memory**: CFR keeps 2 doubles per infoset-action (regret and average strategy,
  :data:`CFR_BYTES`); a strategy keeps 1 number per infoset-action: a double
  (:data:`STRATEGY_BYTES` ``["float64"]``, the convention of the published Royal figures), a
  float32 or a uint16 (quantised).

Counting does not enumerate the betting tree (children are built with
``BettingState._apply_unchecked`` as :func:`~agent.abstraction.actions.build_tree` does: the
actions are legal by construction): :func:`count_betting` memoises the counts
under a node on a key of the :class:`~agent.acpc.betting.BettingState` fields that decide its
future (:func:`betting_key`): the round, the player to act, the chips spent per player, the
folded flags (all-in follows from spent and stack), the current bet and the minimum
raise-to, the raises and actions so far in the round (``maxRaises``, the abstraction's raise
depth and the 64-action cap), and how many players still able to act have called the last
raise (with the folded flags and the player to act this says who must still act: the
reference ``numCalled``). The pot and the amount to call, which an abstraction's pot
fractions need, follow from these. The tests compare it with explicit enumeration.

Royal's full game counts in under a second (2,068 distinct states, 7,569 transitions). The
work grows with a high power of the stack in big blinds times chips per big blind: heads-up
no-limit with blinds 50/100 and stacks of 400, 500 and 600 chips takes 3e5, 2.1e6 and more
than 5e6 transitions (~10-15 us each); with the ACPC stacks of 20,000 there are 9.7e7
distinct states two actions after an opening raise and 2.1e11 transitions at them alone
(weeks of work, ~50 GB of memo), so :func:`check_countable` refuses it in milliseconds,
before any long work, with a :class:`GameTooLargeError` that suggests a betting
abstraction; a budget of transitions stops any other count that would run too long.

:func:`run` is the body of ``acpc-strategy size`` (``strategies.cli`` only parses and
dispatches). Imports :mod:`agent.acpc`, :mod:`agent.abstraction` (numpy and numba only when
the hand indexer is needed), :mod:`agent.fileio` and the stdlib; nothing from the solvers
or the CLI.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from agent.abstraction.actions import (
    BettingAbstraction,
    action_token,
    betting_key,
    node_actions,
    parse_betting_abstraction,
)
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.fileio import write_atomic

__all__ = [
    "CFR_BYTES",
    "DEFAULT_MAX_TRANSITIONS",
    "STRATEGY_BYTES",
    "BettingCounts",
    "GameSize",
    "GameTooLargeError",
    "betting_key",
    "check_countable",
    "count_betting",
    "deals",
    "format_size",
    "game_size",
    "observation_groups",
    "observations",
    "run",
]

CFR_BYTES = 16
"""Bytes per infoset-action of a CFR solver: 2 doubles (cumulative regret and average)."""

STRATEGY_BYTES: dict[str, int] = {"float64": 8, "float32": 4, "uint16": 2}
"""Bytes per infoset-action of a strategy stored as doubles, float32 or quantised uint16."""

DEFAULT_MAX_TRANSITIONS = 5_000_000
"""Transitions (child states built at distinct states) :func:`count_betting` may make:
about a minute, and at most that many memoised states (~0.5 KB of memory each)."""


class GameTooLargeError(AcpcError, ValueError):
    """The betting tree has too many distinct states to count here."""


# --------------------------------------------------------------------------- betting


@dataclass(frozen=True, slots=True)
class BettingCounts:
    """The betting tree of a game (or an abstraction) counted per round.

    ``decisions[r][p]``: decision nodes of round ``r`` where position ``p`` acts;
    ``actions[r][p]``: the sum of their numbers of actions; ``folds[r]`` and
    ``showdowns[r]``: terminal nodes whose last action was taken in round ``r``;
    ``distinct_states``: decision states memoised; ``transitions``: child states built at
    them (the work the count took).
    """

    decisions: tuple[tuple[int, ...], ...]
    actions: tuple[tuple[int, ...], ...]
    folds: tuple[int, ...]
    showdowns: tuple[int, ...]
    distinct_states: int
    transitions: int

    @property
    def num_rounds(self) -> int:
        return len(self.decisions)

    def decisions_in(self, round_: int) -> int:
        """Decision nodes of ``round_`` (all players)."""
        return sum(self.decisions[round_])

    def actions_in(self, round_: int) -> int:
        """Actions at the decision nodes of ``round_`` (all players)."""
        return sum(self.actions[round_])

    @property
    def total_decisions(self) -> int:
        return sum(map(sum, self.decisions))

    @property
    def total_terminals(self) -> int:
        return sum(self.folds) + sum(self.showdowns)


def _full_actions(state: BettingState) -> list[Action]:
    """Every legal action: fold (facing a bet), call, every whole-chip raise-to."""
    out: list[Action] = []
    if state.can_fold():
        out.append(FOLD)
    out.append(CALL)
    bounds = state.raise_bounds()
    if bounds is not None:
        if state.game.is_nolimit:
            out.extend(Action(ActionKind.RAISE, to) for to in range(bounds[0], bounds[1] + 1))
        else:
            out.append(LIMIT_RAISE)
    return out


def _num_full_actions(state: BettingState) -> int:
    bounds = state.raise_bounds()
    raises = 0 if bounds is None else (bounds[1] - bounds[0] + 1 if state.game.is_nolimit
                                       else 1)
    return int(state.can_fold()) + 1 + raises


def _actions_of(state: BettingState, abstraction: BettingAbstraction | None,
                history: str | None = None) -> list[Action]:
    if abstraction is None:
        return _full_actions(state)
    return [a.action for a in node_actions(state, abstraction, state.num_raises(), history)]


def _child_histories(state: BettingState, abstraction: BettingAbstraction,
                     history: str) -> list[str]:
    """The sequence keys of the children (same order as :func:`_actions_of`)."""
    depth = state.num_raises()
    out = []
    for act in node_actions(state, abstraction, depth, history):
        child = state._apply_unchecked(act.action)
        key = history + action_token(act, depth)
        if child.round != state.round and not child.finished:
            key += "/"
        out.append(key)
    return out


def _too_large(game_name: str, abstraction: BettingAbstraction | None, what: str) -> str:
    subject = (f"the full game {game_name}" if abstraction is None
               else f"{game_name} under {abstraction.name!r}")
    hint = ("pass --abstraction (e.g. fcpa) to count an abstract game" if abstraction is None
            else "cap raises with max_raises or use fewer sizes")
    return f"cannot count {subject}: {what}; {hint}"


def _num_actions(state: BettingState, abstraction: BettingAbstraction | None) -> int:
    if abstraction is None:
        return _num_full_actions(state)
    return len(node_actions(state, abstraction, state.num_raises()))


def check_countable(
    game: Game,
    abstraction: BettingAbstraction | None = None,
    *,
    max_transitions: int = DEFAULT_MAX_TRANSITIONS,
    game_name: str = "game",
) -> int:
    """Estimate the work of :func:`count_betting` cheaply; refuse if it is surely too large.

    The estimate is a lower bound on the count's transitions: the actions taken at the
    nodes within two actions of the root, which are distinct betting states (they differ
    in chips spent, round, actions this round or folds). It is summed level by level and
    stops as soon as it passes ``max_transitions``, so it costs at most about as many state
    updates as there are nodes two actions deep, and far fewer when the game is too large
    (heads-up no-limit hold'em: milliseconds).

    Returns:
        The lower bound (exact, or the partial sum that passed the budget).

    Raises:
        GameTooLargeError: if the lower bound exceeds ``max_transitions``.
    """
    root = BettingState.initial(game)
    if root.finished:
        return 0

    total = 0

    def spend(n: int, where: str) -> None:
        nonlocal total
        total += n
        if total > max_transitions:
            raise GameTooLargeError(_too_large(
                game_name, abstraction,
                f"more than {max_transitions:,} betting transitions {where}, too many to "
                f"count (~10 us each; the work grows with a high power of the stack)"))

    spend(_num_actions(root, abstraction), "at the first decision alone")
    for action in _actions_of(root, abstraction):
        child = root._apply_unchecked(action)  # legal by construction
        if child.finished:
            continue
        spend(_num_actions(child, abstraction), "within the first two actions")
        for action2 in _actions_of(child, abstraction):
            grandchild = child._apply_unchecked(action2)
            if not grandchild.finished:
                spend(_num_actions(grandchild, abstraction),
                      "within the first three actions alone")
    return total


def count_betting(
    game: Game,
    abstraction: BettingAbstraction | None = None,
    *,
    max_transitions: int = DEFAULT_MAX_TRANSITIONS,
    game_name: str = "game",
) -> BettingCounts:
    """Count the betting tree of ``game`` (every legal action) or of ``abstraction``.

    Memoised on :func:`betting_key`; the work is one transition (a child state built and
    looked up) per action at each distinct key, not the size of the tree. First
    :func:`check_countable` estimates the work; the count also stops once it has made
    ``max_transitions`` transitions.

    Raises:
        GameTooLargeError: if :func:`check_countable` refuses, or the count needs more than
            ``max_transitions`` transitions after all.
    """
    check_countable(game, abstraction, max_transitions=max_transitions, game_name=game_name)
    rounds, players = game.num_rounds, game.num_players
    cells = rounds * players
    width = 2 * cells + 2 * rounds  # decisions, actions, folds, showdowns
    memo: dict[tuple[Any, ...], tuple[int, ...]] = {}
    work = 0

    by_sequence = abstraction is not None and bool(abstraction.sequences)

    def visit(state: BettingState, history: str = "") -> tuple[int, ...]:
        nonlocal work
        key = (betting_key(state), history) if by_sequence else betting_key(state)
        got = memo.get(key)
        if got is not None:
            return got
        actions = _actions_of(state, abstraction, history if by_sequence else None)
        histories = (_child_histories(state, abstraction, history)
                     if by_sequence and abstraction is not None else [""] * len(actions))
        work += len(actions)
        if work > max_transitions:
            raise GameTooLargeError(_too_large(
                game_name, abstraction,
                f"more than {max_transitions:,} betting transitions ({len(memo):,} distinct "
                f"states so far)"))
        values = [0] * width
        r = state.round
        cell = r * players + state.player
        values[cell] = 1
        values[cells + cell] = len(actions)
        for action, child_history in zip(actions, histories, strict=True):
            child = state._apply_unchecked(action)  # legal by construction
            if child.finished:
                folded = child.num_folded + 1 >= players
                values[2 * cells + (0 if folded else rounds) + r] += 1
                continue
            sub = visit(child, child_history)
            for i in range(width):
                values[i] += sub[i]
        result = tuple(values)
        memo[key] = result
        return result

    root = BettingState.initial(game)
    if root.finished:  # every blind is an all-in: no decision at all
        showdown = root.num_folded + 1 < players
        zero = (0,) * rounds
        one = (1,) + (0,) * (rounds - 1)
        return BettingCounts(
            decisions=((0,) * players,) * rounds, actions=((0,) * players,) * rounds,
            folds=zero if showdown else one, showdowns=one if showdown else zero,
            distinct_states=0, transitions=0)
    total = visit(root)

    def grid(offset: int) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(total[offset + r * players + p] for p in range(players))
                     for r in range(rounds))

    return BettingCounts(
        decisions=grid(0),
        actions=grid(cells),
        folds=tuple(total[2 * cells: 2 * cells + rounds]),
        showdowns=tuple(total[2 * cells + rounds: 2 * cells + 2 * rounds]),
        distinct_states=len(memo),
        transitions=work,
    )


# --------------------------------------------------------------------------- cards


def observation_groups(game: Game) -> tuple[tuple[int, ...], ...]:
    """Per round, the :class:`HandIndexer` card groups a player has seen by then.

    ``[hole, board_round0, board_round1, ...]`` with empty groups left out (a round that
    deals no board card adds nothing to see); may be empty (no hole card, no board yet).
    """
    out = []
    seen: list[int] = [game.num_hole_cards] if game.num_hole_cards else []
    for r in range(game.num_rounds):
        if game.num_board_cards[r]:
            seen.append(game.num_board_cards[r])
        out.append(tuple(seen))
    return tuple(out)


def observations(game: Game, *, isomorphic: bool) -> tuple[int, ...]:
    """Per round, the distinct observations of one player (own hole cards, board by round).

    Raw: ordered by round, unordered within a round, the opponents' cards unknown.
    Isomorphic: classes up to a relabelling of the suits (:class:`HandIndexer`).

    Raises:
        ValueError: if the deal does not fit the deck, or the hand indexer cannot number it.
    """
    deck = game.num_ranks * game.num_suits
    if game.cards_per_hand > deck:
        raise UsageError(f"expected a deal of at most {deck} cards, got {game.cards_per_hand}")
    groups = observation_groups(game)
    if not isomorphic:
        return tuple(_ordered_sets(deck, g) for g in groups)
    if not groups[-1]:
        return (1,) * game.num_rounds
    from agent.abstraction.isomorphism import HandIndexer  # numpy + numba: only when asked

    indexer = HandIndexer(groups[-1], num_ranks=game.num_ranks, num_suits=game.num_suits)
    return tuple(indexer.size(len(g) - 1) if g else 1 for g in groups)


def _ordered_sets(deck: int, groups: Iterable[int]) -> int:
    """Ways to draw sets of the given sizes one after another from ``deck`` cards."""
    value = 1
    for k in groups:
        value *= math.comb(deck, k)
        deck -= k
    return value


def deals(game: Game) -> tuple[int, ...]:
    """Per round, the deals a history has seen: every player's hole cards and the board."""
    deck = game.num_ranks * game.num_suits
    holes = [game.num_hole_cards] * game.num_players
    return tuple(
        _ordered_sets(deck, [*holes, *game.num_board_cards[: r + 1]])
        for r in range(game.num_rounds)
    )


# --------------------------------------------------------------------------- sizes


@dataclass(frozen=True, slots=True)
class GameSize:
    """Every figure of a game's size (see the module docstring); JSON via :meth:`to_json`."""

    game_name: str
    abstraction: BettingAbstraction | None
    betting: BettingCounts
    observations_raw: tuple[int, ...]
    observations_iso: tuple[int, ...]
    deals: tuple[int, ...]
    seconds: float

    @property
    def num_rounds(self) -> int:
        return self.betting.num_rounds

    def infosets(self, *, isomorphic: bool) -> tuple[int, ...]:
        """Information sets per round (all players)."""
        obs = self.observations_iso if isomorphic else self.observations_raw
        return tuple(self.betting.decisions_in(r) * obs[r] for r in range(self.num_rounds))

    def infoset_actions(self, *, isomorphic: bool) -> tuple[int, ...]:
        """Infoset-actions per round (all players)."""
        obs = self.observations_iso if isomorphic else self.observations_raw
        return tuple(self.betting.actions_in(r) * obs[r] for r in range(self.num_rounds))

    def player_infosets(self, player: int, *, isomorphic: bool) -> int:
        """Information sets of one position."""
        obs = self.observations_iso if isomorphic else self.observations_raw
        return sum(self.betting.decisions[r][player] * obs[r] for r in range(self.num_rounds))

    def states(self) -> tuple[int, ...]:
        """Game states (histories) at decision nodes per round: decisions times deals."""
        return tuple(self.betting.decisions_in(r) * self.deals[r]
                     for r in range(self.num_rounds))

    def total_infosets(self, *, isomorphic: bool) -> int:
        return sum(self.infosets(isomorphic=isomorphic))

    def total_infoset_actions(self, *, isomorphic: bool) -> int:
        return sum(self.infoset_actions(isomorphic=isomorphic))

    def memory(self, *, isomorphic: bool) -> dict[str, int]:
        """Bytes of a CFR solver (``cfr``) and of a strategy in each stored type."""
        ia = self.total_infoset_actions(isomorphic=isomorphic)
        return {"cfr": CFR_BYTES * ia, **{f"strategy_{t}": b * ia
                                          for t, b in STRATEGY_BYTES.items()}}

    def to_json(self) -> dict[str, Any]:
        """The figures as a JSON-able dict (integers exact)."""
        b = self.betting
        rounds = range(self.num_rounds)

        def view(isomorphic: bool) -> dict[str, Any]:
            return {
                "observations": list(self.observations_iso if isomorphic
                                     else self.observations_raw),
                "infosets": list(self.infosets(isomorphic=isomorphic)),
                "infosets_per_player": [self.player_infosets(p, isomorphic=isomorphic)
                                        for p in range(len(b.decisions[0]))],
                "total_infosets": self.total_infosets(isomorphic=isomorphic),
                "infoset_actions": list(self.infoset_actions(isomorphic=isomorphic)),
                "total_infoset_actions": self.total_infoset_actions(isomorphic=isomorphic),
                "memory_bytes": self.memory(isomorphic=isomorphic),
            }

        return {
            "game": self.game_name,
            "abstraction": None if self.abstraction is None else self.abstraction.to_json(),
            "betting": {
                "decision_nodes": [b.decisions_in(r) for r in rounds],
                "decision_nodes_per_player": [list(row) for row in b.decisions],
                "actions": [b.actions_in(r) for r in rounds],
                "actions_per_player": [list(row) for row in b.actions],
                "terminal_folds": list(b.folds),
                "terminal_showdowns": list(b.showdowns),
                "distinct_states": b.distinct_states,
                "transitions": b.transitions,
            },
            "deals": list(self.deals),
            "states": list(self.states()),
            "raw": view(False),
            "isomorphic": view(True),
            "bytes_per_infoset_action": {"cfr": CFR_BYTES, **STRATEGY_BYTES},
            "seconds": round(self.seconds, 3),
        }


def game_size(
    game: Game,
    abstraction: BettingAbstraction | None = None,
    *,
    game_name: str = "game",
    max_transitions: int = DEFAULT_MAX_TRANSITIONS,
) -> GameSize:
    """Count the size of ``game`` (full, or under ``abstraction``).

    Raises:
        GameTooLargeError: if the betting tree is too large to count (see
            :func:`check_countable`).
        ValueError: if the deal does not fit the deck.
    """
    start = time.perf_counter()
    raw = observations(game, isomorphic=False)
    betting = count_betting(game, abstraction, max_transitions=max_transitions,
                            game_name=game_name)
    iso = observations(game, isomorphic=True)
    return GameSize(
        game_name=game_name, abstraction=abstraction, betting=betting, observations_raw=raw,
        observations_iso=iso, deals=deals(game), seconds=time.perf_counter() - start,
    )


# --------------------------------------------------------------------------- text


def _bytes(n: int) -> str:
    units = (("EB", 10**18), ("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6),
             ("kB", 10**3))
    for unit, scale in units:
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    return [("  " + cells[0].ljust(widths[0]) + "".join(
        "  " + c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))).rstrip()
        for cells in (header, *rows)]


def format_size(size: GameSize) -> str:
    """The figures as readable text (what ``acpc-strategy size`` prints)."""
    b = size.betting
    rounds = range(size.num_rounds)
    players = len(b.decisions[0])
    what = ("full game (every legal action)" if size.abstraction is None
            else f"abstraction {size.abstraction.name!r}")
    lines = [f"{size.game_name}, {what}: counted in {size.seconds:.2f} s "
             f"({b.distinct_states:,} distinct betting states, {b.transitions:,} transitions)"]
    header = ["", *(f"round {r}" for r in rounds), "total"]

    def row(label: str, values: Sequence[int]) -> list[str]:
        return [label, *(f"{v:,}" for v in values), f"{sum(values):,}"]

    lines.append("betting sequences:")
    rows = [row("decision nodes", [b.decisions_in(r) for r in rounds])]
    rows += [row(f"  position {p} acts", [b.decisions[r][p] for r in rounds])
             for p in range(players)]
    rows += [row("actions at them", [b.actions_in(r) for r in rounds]),
             row("terminal: fold", b.folds), row("terminal: showdown", b.showdowns)]
    lines += _table(header, rows)

    lines.append("per player, perfect recall (own hole cards, board by round):")
    rows = [row("observations raw", size.observations_raw)[:-1] + [""],
            row("observations isomorphic", size.observations_iso)[:-1] + [""]]
    for iso in (False, True):
        tag = "isomorphic" if iso else "raw"
        rows.append(row(f"infosets {tag}", size.infosets(isomorphic=iso)))
        rows += [row(f"  position {p}", [b.decisions[r][p] * (
            size.observations_iso if iso else size.observations_raw)[r] for r in rounds])
            for p in range(players)]
        rows.append(row(f"infoset-actions {tag}", size.infoset_actions(isomorphic=iso)))
    rows.append(row("histories at decision nodes", size.states()))
    lines += _table(header, rows)

    lines.append("memory (bytes per infoset-action; 1 GB = 1e9 B):")
    mem_rows = []
    labels = [("cfr", f"CFR: 2 doubles ({CFR_BYTES} B)")] + [
        (f"strategy_{t}", f"strategy {t} ({n} B)") for t, n in STRATEGY_BYTES.items()]
    raw_mem, iso_mem = size.memory(isomorphic=False), size.memory(isomorphic=True)
    for key, label in labels:
        mem_rows.append([label, _bytes(raw_mem[key]), _bytes(iso_mem[key])])
    lines += _table(["", "raw", "isomorphic"], mem_rows)
    return "\n".join(lines)


# --------------------------------------------------------------------------- command


def run(
    game_spec: str,
    *,
    abstraction_spec: str | None = None,
    json_out: str | None = None,
    max_transitions: int | None = None,
    out: TextIO,
) -> int:
    """``acpc-strategy size GAME [--abstraction SPEC] [--json OUT]``: print the figures.

    Returns:
        The exit status (0).

    Raises:
        GameDefError: if the game cannot be read.
        ValueError: for a bad abstraction spec, or a game too large to count
            (:class:`GameTooLargeError`).
        OSError: if the JSON file cannot be written.
    """
    game = load_game(game_spec)
    abstraction = (None if abstraction_spec is None
                   else parse_betting_abstraction(abstraction_spec, "--abstraction"))
    size = game_size(game, abstraction, game_name=game_spec,
                     max_transitions=max_transitions or DEFAULT_MAX_TRANSITIONS)
    print(format_size(size), file=out)
    if json_out:
        write_atomic(json_out, (json.dumps(size.to_json(), indent=1) + "\n").encode())
        print(f"wrote {json_out}", file=out)
    return 0
