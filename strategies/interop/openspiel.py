"""Tabular policies to and from OpenSpiel: its own Kuhn and Leduc, and ``universal_poker``.

**universal_poker** (:func:`universal_poker_for`) is OpenSpiel's game made from an ACPC game
definition: every field of ours is passed, with ``bettingAbstraction`` ``fcpa`` or ``fchpa``
(our presets of those names: fold, call, pot, [half pot,] all-in, no raise cap; checked
sequence by sequence while mapping) for no-limit games. Its information state strings carry
the ACPC betting (``[Sequences: cc|r3]``), so a state's row is the node with that betting and
the bucket of its ``[Private: ...]`` and ``[Public: ...]`` cards (its decks are the lowest
ranks and first suits, ours the highest and last); an OpenSpiel action's is the child with
the betting it leads to (read from the child's ``ACPC State`` line). Two OpenSpiel actions
leading to one of ours get its probability on the first. A policy file's ``parameters`` are
rebuilt from its ``acpc_game`` and compared before OpenSpiel sees them (OpenSpiel aborts the
process on some bad ones). The walk visits every ordered deal and betting sequence: more than
:data:`MAX_UNIVERSAL_HISTORIES` is refused (royal and full hold'em are).

**Games (kuhn_poker, leduc_poker).** OpenSpiel's ``kuhn_poker`` (N players: N+1 cards, ante 1,
one bet of 1, player 0 first) is the ACPC limit game with ``numPlayers = N``, one round,
``blind = 1 ... 1``,
``raiseSize = 1``, ``firstPlayer = 1``, ``maxRaises = 1``, 1 suit, N+1 ranks, 1 hole card and
no board (``kuhn.limit.3p.game``; ``tests/data/kuhn.limit.2p.game``); ``leduc_poker`` (2
players, 6 cards in 3 ranks, ante 1, raises 2 then 4, at most 2 a round, player 0 first in
both rounds, one public card) is ``leduc.limit.2p.game``. Stacks must cover the most a hand
can cost (Kuhn 2, Leduc 13; OpenSpiel's Leduc gives each player 100). Any other game is
refused with one line (:func:`spiel_game_for`). ACPC position ``p`` is OpenSpiel player
``p``. Cards: OpenSpiel's Kuhn card ``c`` is the ``c``-th lowest rank; its Leduc card ``c``
has rank ``c // 2`` and suit ``c % 2``; they map to the ACPC deck's cards of those ranks and
suits (:func:`agent.acpc.cards.deck_for`: the highest ranks, the last suits). Actions:
Leduc ``0 1 2`` are fold, call, raise; Kuhn ``0`` (Pass) is a check, or a fold facing the bet,
and ``1`` (Bet) the bet, or the call facing it.

**The mapping** (:func:`info_sets`) walks OpenSpiel's game tree and the strategy's abstract
tree together (every deal, every action) and ties each OpenSpiel information state string
(``state.information_state_string()``: ``'0pb'`` in Kuhn, ``'[Observer: 0][Private: 3]...'``
in Leduc) to the strategy row ``(node, bucket)`` played there and each OpenSpiel action to
the node's action. The strategy's betting abstraction must be the whole game (for these
limit games every preset is); its card abstraction may be anything the file names: several
OpenSpiel states share a row when their cards share a bucket (lossless buckets merge suit
isomorphs in Leduc).

**The policy file** (JSON, :data:`FORMAT`): ``{"format": "acpc-arena-openspiel-policy",
"version": 1, "game": "leduc_poker", "parameters": {"players": 2}, "acpc_game": <the
game definition text>, "source": {...}, "policy": {<information state string>: [[action,
probability], ...], ...}}``, one entry per OpenSpiel information state, the legal actions
in OpenSpiel's order. :func:`tabular_policy` turns it into an OpenSpiel ``TabularPolicy``;
from OpenSpiel, ``{key: [[a, p] for a, p in policy.action_probabilities(state).items()]}``
over the states gives the ``policy`` map (:func:`policy_from_openspiel` does it for any
OpenSpiel policy object).

**Import** (:func:`import_table`): each row of our table gets the mean of the OpenSpiel
rows mapped to it; when those differ (a policy that plays suit isomorphs differently,
which a lossless-bucket file cannot hold) the largest difference is reported, and the
imported strategy is then not the same strategy.

**Units.** Both measure chips per hand, and both call NashConv / number of players the
exploitability (OpenSpiel's ``exploitability.exploitability``; our
:attr:`strategies.measure.best_response.Exploitability.exploitability`), so the figures compare
one to one (the conversion factor is 1).

Imports numpy and :mod:`agent` at import time; OpenSpiel (``pyspiel``, in the ``test``
extra, never a dependency of acpc-arena) only inside the functions that need it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import PRESETS, BettingAbstraction, BettingTree
from agent.abstraction.buckets import CardAbstraction
from agent.acpc.betting import ActionKind
from agent.acpc.cards import NUM_RANKS, NUM_SUITS, make_card
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import (
    UNLIMITED_RAISES,
    BettingType,
    Game,
    format_gamedef,
    parse_gamedef,
)
from agent.acpc.limits import check_json, excerpt, read_text_file

FORMAT = "acpc-arena-openspiel-policy"
VERSION = 1
ROW_TOLERANCE = 1e-6
"""How far from 1 an imported row may sum (it is renormalised)."""
EXACT_SUM = 1e-12
"""A row summing to 1 within this (float rounding) is imported as it is, not renormalised."""
MAX_POLICY_BYTES = 16 << 20
"""Largest policy file read (16 MiB; two-player Leduc's, 936 states, is about 60 KB)."""
MAX_SPIEL_PLAYERS = 10
"""Most players of a policy's game (OpenSpiel's Kuhn takes 2..10, its Leduc 2)."""

F64 = npt.NDArray[np.float64]


class InteropError(AcpcError, ValueError):
    """A game, strategy or policy file that cannot go to or come from OpenSpiel."""


def _pyspiel(module: str = "pyspiel") -> Any:
    """An OpenSpiel module, imported now (OpenSpiel is no dependency of acpc-arena).

    Raises:
        InteropError: one line naming the extra to install when it is missing.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InteropError(f"expected OpenSpiel installed (pip install 'acpc-arena[test]' or "
                           f"pip install open_spiel), got {exc}") from None


@dataclass(frozen=True)
class SpielGame:
    """An OpenSpiel game that is an ACPC game, with the card and action maps."""

    name: str
    """``kuhn_poker``, ``leduc_poker`` or ``universal_poker``."""
    players: int
    universal: tuple[tuple[str, str | int], ...] = ()
    """``universal_poker``'s parameters (:func:`universal_poker_for`), sorted by name."""

    @property
    def parameters(self) -> dict[str, str | int]:
        if self.name == UNIVERSAL:
            return dict(self.universal)
        return {"players": self.players}

    def load(self) -> Any:
        """The ``pyspiel`` game (universal_poker's parameters are only ever ones
        :func:`universal_poker_for` made from a parsed game: OpenSpiel crashes the process on
        some bad ones rather than raising)."""
        return _pyspiel().load_game(self.name, self.parameters)

    @property
    def acpc_text(self) -> str:
        """The ACPC game definition of this game (infinite stacks: the reference default)."""
        n = self.players
        if self.name == "kuhn_poker":
            return ("GAMEDEF\nlimit\n"
                    f"numPlayers = {n}\nnumRounds = 1\nblind = {' '.join(['1'] * n)}\n"
                    "raiseSize = 1\nfirstPlayer = 1\nmaxRaises = 1\nnumSuits = 1\n"
                    f"numRanks = {n + 1}\nnumHoleCards = 1\nnumBoardCards = 0\nEND GAMEDEF\n")
        return ("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 1 1\n"
                "raiseSize = 2 4\nfirstPlayer = 1 1\nmaxRaises = 2 2\nnumSuits = 2\n"
                "numRanks = 3\nnumHoleCards = 1\nnumBoardCards = 0 1\nEND GAMEDEF\n")

    def acpc_game(self) -> Game:
        return parse_gamedef(self.acpc_text, f"<{self.name}>")

    def card(self, outcome: int) -> int:
        """The ACPC card of an OpenSpiel card (a chance outcome)."""
        suits = 1 if self.name == "kuhn_poker" else 2
        ranks = self.players + 1 if self.name == "kuhn_poker" else 3
        rank, suit = divmod(outcome, suits)
        return make_card(NUM_RANKS - ranks + rank, NUM_SUITS - suits + suit)

    def kind(self, action: int, facing_bet: bool) -> ActionKind:
        """What an OpenSpiel action is in ACPC terms."""
        if self.name == "leduc_poker":
            return (ActionKind.FOLD, ActionKind.CALL, ActionKind.RAISE)[action]
        if action == 0:
            return ActionKind.FOLD if facing_bet else ActionKind.CALL
        return ActionKind.CALL if facing_bet else ActionKind.RAISE


def spiel_game_for(game: Game) -> SpielGame:
    """The OpenSpiel game ``game`` is.

    Raises:
        InteropError: for a game OpenSpiel has no game for (the message says what would do).
    """
    n = game.num_players
    limit = game.betting_type is BettingType.LIMIT
    if (limit and game.num_rounds == 1 and game.blind == (1,) * n and game.raise_size == (1,)
            and game.first_player == (0,) and game.max_raises == (1,) and game.num_suits == 1
            and game.num_ranks == n + 1 and game.num_hole_cards == 1
            and game.num_board_cards == (0,) and min(game.stack) >= 2 and 2 <= n <= 10):
        return SpielGame("kuhn_poker", n)
    if (limit and n == 2 and game.num_rounds == 2 and game.blind == (1, 1)
            and game.raise_size == (2, 4) and game.first_player == (0, 0)
            and game.max_raises == (2, 2) and game.num_suits == 2 and game.num_ranks == 3
            and game.num_hole_cards == 1 and game.num_board_cards == (0, 1)
            and min(game.stack) >= 13):
        return SpielGame("leduc_poker", 2)
    raise InteropError(
        "expected a game OpenSpiel has: Kuhn (kuhn_poker: limit, N players, ante 1 each, "
        "one bet of 1, N+1 ranks of 1 suit, 1 hole card) or Leduc (leduc_poker: "
        "leduc.limit.2p.game), got a "
        f"{game.betting_type.value} game of {n} players, {game.num_rounds} rounds, "
        f"{game.num_suits} suits x {game.num_ranks} ranks, blinds {list(game.blind)}")


UNIVERSAL = "universal_poker"
UNIVERSAL_ABSTRACTIONS = ("fcpa", "fchpa")
"""Our betting presets that are universal_poker's ``bettingAbstraction`` of the same name
(no-limit games; a limit game's tree is the game whatever the preset)."""
MAX_UNIVERSAL_HISTORIES = 2_000_000
"""Most histories (deals x betting sequences) the universal_poker walk may visit: two-player
no-limit Leduc ``fchpa`` has about 34,000; royal hold'em ``fcpa`` some 10**10 and hold'em
far more (refused in one line with the count)."""
_RANKS = "23456789TJQKA"
_SUITS = "cdhs"
_INFO = re.compile(r"\[Player: (\d+)\].*\[Private: ([^\]]*)\]\[Public: ([^\]]*)\]"
                   r"\[Sequences: ([^\]]*)\]$")
_ACPC_STATE = re.compile(r"^ACPC State: STATE:\d+:([^:]*):", re.MULTILINE)


def universal_poker_for(game: Game, betting: BettingAbstraction) -> SpielGame:
    """``universal_poker`` playing ``game`` under ``betting``: every field of the game
    definition, and ``bettingAbstraction`` ``fcpa`` or ``fchpa`` (our preset of that name;
    limit games: ``fcpa``, which universal_poker ignores for them).

    Raises:
        InteropError: for a no-limit abstraction universal_poker has not (only fcpa and
            fchpa: OpenSpiel's pot bet, half-pot bet and all-in are ours, caps none).
    """
    limit = game.betting_type is BettingType.LIMIT
    if limit:
        abstraction = "fcpa"
    elif betting.name in UNIVERSAL_ABSTRACTIONS and betting == PRESETS[betting.name]:
        abstraction = betting.name
    else:
        raise InteropError(
            f"expected betting fcpa or fchpa for OpenSpiel's universal_poker (its "
            f"bettingAbstraction: fold, call, pot[, half pot], all-in, no raise cap), got "
            f"{excerpt(betting.name)}")

    def joined(values: tuple[int, ...]) -> str:
        return " ".join(map(str, values))

    params: dict[str, str | int] = {
        "betting": "limit" if limit else "nolimit",
        "bettingAbstraction": abstraction,
        "numPlayers": game.num_players,
        "numRounds": game.num_rounds,
        "stack": joined(game.stack),
        "blind": joined(game.blind),
        "firstPlayer": joined(tuple(p + 1 for p in game.first_player)),
        "numSuits": game.num_suits,
        "numRanks": game.num_ranks,
        "numHoleCards": game.num_hole_cards,
        "numBoardCards": joined(game.num_board_cards),
    }
    if limit:
        params["raiseSize"] = joined(game.raise_size)
    if any(m != UNLIMITED_RAISES for m in game.max_raises):
        params["maxRaises"] = joined(game.max_raises)
    return SpielGame(UNIVERSAL, game.num_players, tuple(sorted(params.items())))


def choose_spiel_game(game: Game, betting: BettingAbstraction, which: str = "auto"
                      ) -> SpielGame:
    """The OpenSpiel game to export ``game`` as: ``which`` is ``kuhn_poker`` /
    ``leduc_poker`` (:func:`spiel_game_for`), ``universal_poker``
    (:func:`universal_poker_for`) or ``auto`` (the native game if ``game`` is one, else
    universal_poker).

    Raises:
        InteropError: if OpenSpiel has no such game for it.
    """
    if which == UNIVERSAL:
        return universal_poker_for(game, betting)
    if which == "auto":
        try:
            return spiel_game_for(game)
        except InteropError:
            return universal_poker_for(game, betting)
    native = spiel_game_for(game)
    if native.name != which:
        raise InteropError(f"expected a {which} game, got one that is OpenSpiel's "
                           f"{native.name}")
    return native


def universal_histories(game: Game, tree: BettingTree) -> int:
    """How many histories the universal_poker walk of ``tree`` visits (OpenSpiel deals
    card by card, so every order of the dealt cards counts)."""
    deck = game.num_suits * game.num_ranks
    hole = game.num_players * game.num_hole_cards
    per_round = [math.perm(deck, hole + game.board_cards_through(r))
                 for r in range(game.num_rounds)]
    return sum(per_round[node.round] for node in tree.nodes)


def check_walkable(tree: BettingTree) -> None:
    """Raise unless the universal_poker walk of ``tree`` is within
    :data:`MAX_UNIVERSAL_HISTORIES` (before any table is built for it).

    Raises:
        InteropError: naming the count.
    """
    histories = universal_histories(tree.game, tree)
    if histories > MAX_UNIVERSAL_HISTORIES:
        raise InteropError(
            f"expected a game whose universal_poker tree can be walked (at most "
            f"{MAX_UNIVERSAL_HISTORIES:,} histories: every ordered deal by every betting "
            f"sequence), got {histories:.3g}")


def _universal_card(text: str, game: Game) -> int:
    """Our card of an OpenSpiel universal_poker card (its small decks are the lowest
    ranks and first suits; ours the highest and last)."""
    rank, suit = _RANKS.index(text[0]), _SUITS.index(text[1])
    return make_card(NUM_RANKS - game.num_ranks + rank, NUM_SUITS - game.num_suits + suit)


def _universal_cards(text: str, game: Game) -> tuple[int, ...]:
    return tuple(_universal_card(text[i : i + 2], game) for i in range(0, len(text), 2))


def _universal_info_sets(spiel: SpielGame, tree: BettingTree, cards: CardAbstraction
                         ) -> dict[str, InfoSet]:
    """:func:`info_sets` for universal_poker: a state's node is the one with its ACPC
    betting (the ``[Sequences: ...]`` of its information state string, ``|`` between
    rounds), an OpenSpiel action's is the child with the betting the action leads to."""
    game = tree.game
    check_walkable(tree)
    by_betting = {node.state.betting: node.id for node in tree.nodes}
    moves: dict[tuple[int, int], int] = {}  # (node, OpenSpiel action) -> our action index
    out: dict[str, InfoSet] = {}
    stack = [spiel.load().new_initial_state()]
    while stack:  # bounded: MAX_UNIVERSAL_HISTORIES
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(outcome) for outcome, _ in state.chance_outcomes())
            continue
        p = state.current_player()
        key = state.information_state_string(p)
        found = _INFO.search(key)
        if found is None:
            raise InteropError(f"expected a universal_poker information state, got "
                               f"{excerpt(key)}")
        betting = found.group(4).replace("|", "/")
        node_id = by_betting.get(betting)
        if node_id is None or tree.nodes[node_id].player != p:
            raise InteropError(f"expected universal_poker's betting {betting!r} in the "
                               f"strategy's tree, got none (the abstractions differ)")
        node = tree.nodes[node_id]
        hole = _universal_cards(found.group(2), game)
        board = _universal_cards(found.group(3), game)
        bucket = cards.bucket(node.round, hole, board)
        pairs = []
        for action in state.legal_actions():
            child = state.child(action)
            index = moves.get((node_id, action))
            if index is None:
                after = _ACPC_STATE.search(str(child))
                to = None if after is None else after.group(1)
                index = next((i for i, c in enumerate(node.children)
                              if tree.nodes[c].state.betting == to), None)
                if index is None:
                    raise InteropError(
                        f"expected universal_poker's action {action} at {betting!r} (to "
                        f"{to!r}) in the strategy's tree, got none (the abstractions differ)")
                moves[(node_id, action)] = index
            pairs.append((action, index))
            stack.append(child)
        if {i for _, i in pairs} != set(range(len(node.actions))):
            raise InteropError(f"expected universal_poker to have every action of node "
                               f"{node_id} ({betting!r}), got only "
                               f"{sorted({i for _, i in pairs})} of {len(node.actions)}")
        info = InfoSet(key, p, node_id, bucket, tuple(pairs))
        seen = out.setdefault(key, info)
        if seen != info:
            raise InteropError(f"expected one row per OpenSpiel state, got {excerpt(key)} at "
                               f"rows {(seen.node, seen.bucket)} and {(node_id, bucket)}")
    return out


@dataclass(frozen=True)
class InfoSet:
    """One OpenSpiel information state and the strategy row played there."""

    key: str
    player: int
    node: int
    bucket: int
    actions: tuple[tuple[int, int], ...]
    """``(OpenSpiel action, index of the node's action)``, in OpenSpiel's order."""


def _check_whole_game(tree: BettingTree) -> None:
    for node in tree.nodes:
        if node.is_terminal:
            continue
        kinds = [a.kind for a in node.actions]
        if sorted(kinds, key=lambda k: k.value) != sorted(node.state.legal_actions(),
                                                          key=lambda k: k.value):
            raise InteropError(
                f"expected a betting abstraction with every legal action (the whole game), "
                f"got node {node.id} ({node.state.betting!r}) with {[str(k.value) for k in kinds]}")


def info_sets(spiel: SpielGame, tree: BettingTree, cards: CardAbstraction) -> dict[str, InfoSet]:
    """Every OpenSpiel information state of ``spiel``, tied to the row of ``tree`` and
    ``cards`` played there (see the module docstring).

    Raises:
        InteropError: if the abstraction leaves out actions, or one OpenSpiel state would
            need two different rows (the two trees disagree).
    """
    if spiel.name == UNIVERSAL:
        return _universal_info_sets(spiel, tree, cards)
    _check_whole_game(tree)
    game = tree.game
    n = game.num_players
    out: dict[str, InfoSet] = {}
    root = spiel.load().new_initial_state()
    stack: list[tuple[Any, int, tuple[int, ...]]] = [(root, 0, ())]
    visited = 0
    while stack:  # bounded: the finite game tree, each state once
        state, node_id, dealt = stack.pop()
        visited += 1
        if state.is_terminal():
            if not tree.nodes[node_id].is_terminal:
                raise InteropError(f"expected the trees to end together, OpenSpiel ended at "
                                   f"{state.history()} and node {node_id} did not")
            continue
        if state.is_chance_node():
            for outcome, _prob in state.chance_outcomes():
                stack.append((state.child(outcome), node_id, (*dealt, spiel.card(outcome))))
            continue
        node = tree.nodes[node_id]
        p = state.current_player()
        if node.is_terminal or node.player != p or len(dealt) - n != game.board_cards_through(
                node.round):
            raise InteropError(f"expected OpenSpiel's player {p} to act at node {node_id} of "
                               f"the same round, got a different tree at {state.history()}")
        bucket = cards.bucket(node.round, dealt[p : p + 1], dealt[n:])
        facing = node.state.can_fold()
        pairs = []
        for action in state.legal_actions():
            kind = spiel.kind(action, facing)
            index = next((i for i, a in enumerate(node.actions) if a.kind is kind), None)
            if index is None:
                raise InteropError(f"expected node {node_id} to have OpenSpiel's action "
                                   f"{action} ({kind.value}), got none")
            pairs.append((action, index))
            stack.append((state.child(action), node.children[index], dealt))
        info = InfoSet(state.information_state_string(p), p, node_id, bucket, tuple(pairs))
        seen = out.setdefault(info.key, info)
        if seen != info:
            raise InteropError(f"expected one row per OpenSpiel state, got {excerpt(info.key)} at "
                               f"rows {(seen.node, seen.bucket)} and {(node_id, bucket)}")
    return out


def _row(table: F64, layout_offset: int, k: int, bucket: int) -> F64:
    start = layout_offset + bucket * k
    return table[start : start + k]


def export_policy(spiel: SpielGame, tree: BettingTree, cards: CardAbstraction,
                  table: F64, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The policy file (a JSON-ready dict) of a strategy table (float64, table layout of
    ``tree`` and ``cards``)."""
    from agent.strategy.fileformat import table_layout

    layout = table_layout(tree, cards.buckets)
    policy: dict[str, list[list[float]]] = {}
    for key, info in sorted(info_sets(spiel, tree, cards).items()):
        k = int(layout.num_actions[info.node])
        row = _row(table, int(layout.offsets[info.node]), k, info.bucket)
        # two OpenSpiel actions leading to one of ours (universal_poker's pot bet when it is
        # the all-in): the first gets the probability, the other none
        first = {i: action for action, i in reversed(info.actions)}
        policy[key] = [[action, float(row[i]) if first[i] == action else 0.0]
                       for action, i in info.actions]
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": spiel.name,
        "parameters": spiel.parameters,
        "acpc_game": format_gamedef(tree.game),
        "source": dict(source or {}),
        "policy": policy,
    }


def read_policy(path: str | Path) -> dict[str, Any]:
    """A policy file, checked for its tag, version, game and the shape of every row.

    Raises:
        InteropError: for anything else (one line: what, where, what came).
    """
    where = str(path)
    text = read_text_file(path, max_bytes=MAX_POLICY_BYTES, what="policy file",
                          decoded="a UTF-8 JSON policy file", error=InteropError)
    check_json(text, where=where, what="a JSON policy file", max_chars=MAX_POLICY_BYTES,
               error=InteropError)
    try:
        doc = json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or a number past the int conversion limit
        raise InteropError(f"{where}: expected a JSON policy file, got "
                           f"{excerpt(str(exc))}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise InteropError(f"{where}: expected format {FORMAT!r}, got {excerpt(got)}")
    if doc.get("version") != VERSION:
        raise InteropError(f"{where}: expected version {VERSION}, got "
                           f"{excerpt(doc.get('version'))}")
    if doc.get("game") not in ("kuhn_poker", "leduc_poker", UNIVERSAL):
        raise InteropError(f"{where}: expected game 'kuhn_poker', 'leduc_poker' or "
                           f"'universal_poker', got {excerpt(doc.get('game'))}")
    params = doc.get("parameters", {})
    if doc["game"] == UNIVERSAL:
        spiel_game_of(doc, where)  # the parameters are exactly those of its acpc_game
    else:
        players = params.get("players", 2) if isinstance(params, dict) else None
        if not isinstance(players, int) or isinstance(players, bool) or not (
                2 <= players <= MAX_SPIEL_PLAYERS):
            raise InteropError(f"{where}: expected parameters {{'players': N}} with N in "
                               f"2..{MAX_SPIEL_PLAYERS}, got {excerpt(params)}")
    policy = doc.get("policy")
    if not isinstance(policy, dict) or not policy:
        raise InteropError(f"{where}: expected a non-empty 'policy' map, got "
                           f"{excerpt(policy, 60)}")
    for key, row in policy.items():
        ok = isinstance(row, list) and row and all(
            isinstance(x, list) and len(x) == 2 and isinstance(x[0], int)
            and not isinstance(x[0], bool) and isinstance(x[1], int | float)
            and math.isfinite(x[1]) and x[1] >= 0 for x in row)
        if not ok or abs(sum(x[1] for x in row) - 1.0) > ROW_TOLERANCE:
            raise InteropError(f"{where}: expected [[action, probability], ...] summing to 1 "
                               f"for {excerpt(key, 40)}, got {excerpt(row)}")
    return doc


def check_policy_game(spiel: SpielGame, game: Game, source: str) -> None:
    """Raise unless ``game`` is the OpenSpiel game ``spiel`` (before any tree or table of
    ``game`` is built for it).

    Raises:
        InteropError: naming ``source``, both games.
    """
    want = (universal_poker_for(game, universal_betting(spiel)) if spiel.name == UNIVERSAL
            else spiel_game_for(game))
    if want != spiel:
        if want.name == spiel.name == UNIVERSAL:  # name the fields that differ
            a, b = want.parameters, spiel.parameters
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            raise InteropError(f"{source}: expected a universal_poker policy of this game, "
                               f"with {excerpt({k: a.get(k) for k in keys})}, got "
                               f"{excerpt({k: b.get(k) for k in keys})}")
        raise InteropError(f"{source}: expected a policy for {want.name} "
                           f"{excerpt(want.parameters, 300)}, got {spiel.name} "
                           f"{excerpt(spiel.parameters, 300)}")


def universal_betting(spiel: SpielGame) -> BettingAbstraction:
    """Our betting preset of a universal_poker game (its ``bettingAbstraction``)."""
    return PRESETS[str(spiel.parameters.get("bettingAbstraction", "fcpa"))]


def spiel_game_of(doc: Mapping[str, Any], where: str = "<policy>") -> SpielGame:
    """The OpenSpiel game a policy file is for. A universal_poker file's is made again from
    its ``acpc_game`` and ``bettingAbstraction`` (:func:`universal_poker_for`), and its
    ``parameters`` must be exactly those: no parameter reaches OpenSpiel unchecked.

    Raises:
        InteropError: for a universal_poker file whose parameters are not its game's.
    """
    if doc.get("game") != UNIVERSAL:
        players = int(doc.get("parameters", {}).get("players", 2))
        return SpielGame(str(doc["game"]), players)
    params = doc.get("parameters")
    text = doc.get("acpc_game")
    abstraction = params.get("bettingAbstraction") if isinstance(params, dict) else None
    if not isinstance(text, str) or abstraction not in UNIVERSAL_ABSTRACTIONS:
        raise InteropError(f"{where}: expected a universal_poker policy with acpc_game (the "
                           f"game definition) and parameters with bettingAbstraction fcpa or "
                           f"fchpa, got {excerpt(params)}")
    spiel = universal_poker_for(parse_gamedef(text, f"{where}: acpc_game"),
                                PRESETS[str(abstraction)])
    if spiel.parameters != params:
        raise InteropError(f"{where}: expected the universal_poker parameters of its "
                           f"acpc_game, {excerpt(spiel.parameters, 300)}, got "
                           f"{excerpt(params, 300)}")
    return spiel


@dataclass(frozen=True)
class Imported:
    """A table made from an OpenSpiel policy."""

    table: F64
    """Float64, the layout of the tree and cards it was made for."""
    disagreement: float
    """Largest difference between OpenSpiel rows merged into one of our rows (0: the policy
    is exactly a strategy of this abstraction)."""
    states: int


def import_table(doc: Mapping[str, Any], tree: BettingTree, cards: CardAbstraction,
                 source: str = "<policy>") -> Imported:
    """Our table for a policy file (see the module docstring).

    Raises:
        InteropError: if the file's states or actions are not the game's, or a row of ours
            gets no OpenSpiel state.
    """
    from agent.strategy.fileformat import table_layout

    spiel = spiel_game_of(doc)
    check_policy_game(spiel, tree.game, source)
    layout = table_layout(tree, cards.buckets)
    sums = np.zeros(layout.total)
    counts = np.zeros(layout.total)
    lo = np.full(layout.total, np.inf)
    hi = np.full(layout.total, -np.inf)
    policy: Mapping[str, Any] = doc["policy"]
    sets = info_sets(spiel, tree, cards)
    unknown = sorted(set(policy) - set(sets))
    if unknown:
        raise InteropError(f"{source}: expected information states of {spiel.name}, got "
                           f"{len(unknown)} others such as {excerpt(unknown[0])}")
    missing = sorted(set(sets) - set(policy))
    if missing:
        raise InteropError(f"{source}: expected every information state of {spiel.name}, "
                           f"{len(missing)} missing such as {excerpt(missing[0])}")
    for key, info in sets.items():
        given = {int(a): float(p) for a, p in policy[key]}
        legal = [a for a, _ in info.actions]
        if sorted(given) != sorted(legal):
            raise InteropError(f"{source}: expected actions {legal} at {excerpt(key)}, got "
                               f"{excerpt(sorted(given))}")
        total = sum(given.values())
        if abs(total - 1.0) <= EXACT_SUM:
            total = 1.0  # a row of float rounding off 1 is taken as it is (round trips exact)
        k = int(layout.num_actions[info.node])
        start = int(layout.offsets[info.node]) + info.bucket * k
        row = np.zeros(k)
        for action, i in info.actions:  # two OpenSpiel actions to one of ours: their sum
            row[i] += given[action] / total
        span = slice(start, start + k)
        sums[span] += row
        counts[span] += 1
        lo[span] = np.minimum(lo[span], row)
        hi[span] = np.maximum(hi[span], row)
    used = layout.offsets >= 0
    for node in np.flatnonzero(used):
        k = int(layout.num_actions[node])
        start = int(layout.offsets[node])
        block = counts[start : start + int(layout.rows[node]) * k]
        if (block == 0).any():
            raise InteropError(f"{source}: expected an OpenSpiel state for every row, node "
                               f"{int(node)} has rows without one")
    table = sums / counts
    disagreement = float((hi - lo).max(initial=0.0))
    return Imported(table, disagreement, len(sets))


def tabular_policy(doc: Mapping[str, Any]) -> Any:
    """The policy file as an OpenSpiel ``TabularPolicy`` of its game."""
    spiel_policy = _pyspiel("open_spiel.python.policy")

    spiel = spiel_game_of(doc)
    tabular = spiel_policy.TabularPolicy(spiel.load())
    for key, row in doc["policy"].items():
        index = tabular.state_lookup.get(key)
        if index is None:
            raise InteropError(f"expected information states of {spiel.name}, got {excerpt(key)}")
        probs = tabular.action_probability_array[index]
        probs[:] = 0.0
        for action, p in row:
            probs[int(action)] = float(p)
    return tabular


def policy_from_openspiel(game_name: str, players: int, policy: Any,
                          source: Mapping[str, Any] | None = None, *,
                          game: Game | None = None, betting: str = "fcpa") -> dict[str, Any]:
    """A policy file from any OpenSpiel policy object of ``game_name`` (every information
    state, through ``policy.action_probabilities``); for ``universal_poker``, of the ACPC
    ``game`` under ``betting`` (``fcpa`` or ``fchpa``: :func:`universal_poker_for`)."""
    if game_name == UNIVERSAL:
        if game is None or betting not in UNIVERSAL_ABSTRACTIONS:
            raise InteropError(f"expected an ACPC game and betting fcpa or fchpa for "
                               f"universal_poker, got {game!r} and {excerpt(betting)}")
        spiel = universal_poker_for(game, PRESETS[betting])
        acpc_text = format_gamedef(game)
    else:
        spiel = SpielGame(game_name, players)
        acpc_text = spiel.acpc_text
    rows: dict[str, list[list[float]]] = {}
    stack = [spiel.load().new_initial_state()]
    while stack:  # bounded: the finite game tree
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        key = state.information_state_string(state.current_player())
        if key not in rows:
            probs = policy.action_probabilities(state)
            rows[key] = [[int(a), float(probs.get(a, 0.0))] for a in state.legal_actions()]
        stack.extend(state.child(a) for a in state.legal_actions())
    return {"format": FORMAT, "version": VERSION, "game": spiel.name,
            "parameters": spiel.parameters, "acpc_game": acpc_text,
            "source": dict(source or {}), "policy": dict(sorted(rows.items()))}


def openspiel_exploitability(doc: Mapping[str, Any]) -> tuple[float | None, float]:
    """``(exploitability, NashConv)`` of a policy file by OpenSpiel's own module
    (``exploitability.exploitability`` takes two-player games only: ``None`` for more)."""
    spiel_exploitability = _pyspiel("open_spiel.python.algorithms.exploitability")

    spiel = spiel_game_of(doc)
    game = spiel.load()
    tabular = tabular_policy(doc)
    nash_conv = float(spiel_exploitability.nash_conv(game, tabular))
    if spiel.players != 2:
        return None, nash_conv
    return float(spiel_exploitability.exploitability(game, tabular)), nash_conv


def default_game_text(spiel: SpielGame) -> str:
    """The ACPC game text an import uses when none is given: the bundled game that is this
    OpenSpiel game if there is one (``kuhn.limit.3p.game``, ``leduc.limit.2p.game``), else
    :attr:`SpielGame.acpc_text`."""
    from agent.acpc.gamefiles import load_game

    for name in ("leduc.limit.2p.game", "kuhn.limit.3p.game"):
        game = load_game(name)
        try:
            if spiel_game_for(game) == spiel:
                return format_gamedef(game)
        except InteropError:
            continue
    return spiel.acpc_text


__all__ = [
    "FORMAT",
    "UNIVERSAL",
    "Imported",
    "InfoSet",
    "InteropError",
    "SpielGame",
    "check_walkable",
    "choose_spiel_game",
    "default_game_text",
    "export_policy",
    "import_table",
    "info_sets",
    "openspiel_exploitability",
    "policy_from_openspiel",
    "read_policy",
    "spiel_game_for",
    "spiel_game_of",
    "tabular_policy",
    "universal_betting",
    "universal_histories",
    "universal_poker_for",
]
