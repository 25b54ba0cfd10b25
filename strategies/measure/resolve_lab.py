"""The re-solving lab: no-limit Leduc agents that re-solve (:mod:`agent.resolve`) or
translate, best-responded exactly in a real game (Royal, whose deals are too many to
enumerate: :mod:`strategies.measure.resolve_royal`, built on this module's settings and
rows).

**The real games.** A *setting* limits the best responder to some pot fractions (fold,
call, those raises realised in chips as :func:`agent.abstraction.convention.realise_raise_to`
realises them, the all-in) or lets it bet every whole chip (``every-chip``, the lab's full
game). :func:`responder_game` builds, per seat of the agent, the real tree where the agent's
nodes offer every legal action and the responder's the setting's
(:func:`strategies.measure.translation.full_br.build_full_tree` with
:func:`limited_actions`), flattened with lossless cards. The exploitability of the agent in
seat ``p`` is ``br[1-p] - v[1-p]`` with ``v`` the value of the game where *both* players are
limited to the setting's actions (:func:`setting_value`: the project's DCFR, bracketed by
best responses; the agents' own actions are within it, so the figure is >= 0 up to that
bracket), and the table reports the average over both seats.

**The agents.** The translating blueprint is the translation lab's (the decision model
expanded by :func:`strategies.measure.translation.full_br.induced_table`) for each mapping
and purification. The re-solving agent is *assembled* (:func:`resolving_table`): the real
tree is walked from the root with one :class:`agent.resolve.HandResolver` per public
history (copied where the history branches; per board in later rounds); at every agent node
reached, :meth:`~agent.resolve.HandResolver.decide` gives its strategy for every private
hand (re-solving exactly where the live agent would: the nesting follows), and the rows of
the node's lossless buckets are filled from a representative hand and board. Nodes the
agent never reaches keep uniform rows (no reach: a best response ignores them).

**The file.** :func:`agent_file` writes an assembled agent (either kind) as JSON: per seat,
every information set the agent reaches with positive probability (the ACPC betting
string, its hole cards and the board, in ACPC card text) with the probability of each legal
real action in ACPC action text (``f``, ``c``, ``r9``); information sets absent from the
file are never reached by the agent. :func:`read_agent_file` validates one (every betting
string replayed, every action legal, every row a distribution) and returns its tables.

Imports numpy, :mod:`agent` and :mod:`strategies`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import ALL_IN, AbstractAction, BettingAbstraction, Node
from agent.abstraction.buckets import LosslessCards
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, realise_raise_to
from agent.abstraction.translation import get_mapping
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import (
    CALL,
    FOLD,
    Action,
    ActionKind,
    BettingState,
    format_action,
    parse_action,
    parse_betting,
)
from agent.acpc.cards import format_cards, parse_cards
from agent.acpc.errors import AcpcError, StrategyFileError, UsageError
from agent.acpc.gamedef import Game, format_gamedef, parse_gamedef
from agent.acpc.limits import check_json, excerpt, read_text_file
from agent.resolve import Decision, HandResolver, ResolveConfig, Resolver
from agent.resolve.tree import stated_fractions
from agent.strategy.fileformat import Strategy
from agent.strategy.purification import parse_purification
from strategies.games.abstract import AbstractGame, build_abstract_game, uniform_table
from strategies.measure.best_response import best_response
from strategies.measure.translation.full_br import (
    RealValue,
    agent_game,
    build_agent_model,
    build_full_tree,
    full_actions,
    game_value,
    induced_table,
    purify_table,
    real_child,
)
from strategies.measure.translation.lab import KNOWN_REAL_VALUES

F64 = npt.NDArray[np.float64]
ProgressFn = Callable[[str], None]

EVERY_CHIP = "every-chip"
MAX_AGENT_FILE_BYTES = 256 * 1024 * 1024
"""Largest agent file :func:`read_agent_file` reads."""
AGENT_FILE_DEPTH = 4
"""Nesting of an agent file: the document, ``seats``, a seat, an information set's row."""
AGENT_FILE_FORMAT = "acpc-arena/assembled-agent"
AGENT_FILE_VERSION = 1


def _quiet(_: str) -> None:
    pass


# --------------------------------------------------------------------------- real games


def limited_actions(fractions: Sequence[float], free_seat: int | None
                    ) -> Callable[[BettingState], tuple[AbstractAction, ...]]:
    """The actions of a real tree where ``free_seat`` (if any) may take every legal action
    and everyone else only fold, call, the ``fractions`` realised in chips and the all-in."""
    fracs = tuple(sorted(set(float(f) for f in fractions)))

    def actions(state: BettingState) -> tuple[AbstractAction, ...]:
        if state.player == free_seat:
            return full_actions(state)
        out: list[AbstractAction] = []
        if state.can_fold():
            out.append(AbstractAction(FOLD, -2.0, -2.0))
        out.append(AbstractAction(CALL, 0.0, 0.0))
        bounds = state.raise_bounds()
        if bounds is not None:
            tos = {realise_raise_to(state, f) for f in fracs} | {bounds[1]}
            for to in sorted(t for t in tos if t is not None):
                x = pot_fraction(state, to)
                out.append(AbstractAction(Action(ActionKind.RAISE, to),
                                          ALL_IN if to == bounds[1] else x, x))
        return tuple(out)

    return actions


@dataclass(frozen=True)
class Setting:
    """What the best responder may do: ``fractions`` (``None``: every whole chip)."""

    name: str
    fractions: tuple[float, ...] | None

    @property
    def label(self) -> str:
        if self.fractions is None:
            return EVERY_CHIP
        return "{" + ", ".join(f"{f:g}" for f in self.fractions) + "} pot + all-in"


def responder_game(game: Game, setting: Setting, agent_seat: int | None) -> AbstractGame:
    """The real game of ``setting`` with the agent in ``agent_seat`` free (module
    docstring); ``agent_seat`` None: both players limited (the value's game)."""
    actions: Callable[[BettingState], tuple[AbstractAction, ...]]
    if setting.fractions is None:
        actions = full_actions
    else:
        actions = limited_actions(setting.fractions, agent_seat)
    label = BettingAbstraction(f"{setting.name}-seat{agent_seat}", ((),))
    tree = build_full_tree(game, actions=actions, label=label)
    return build_abstract_game(game, label, LosslessCards(game), tree=tree)


def setting_value(game: Game, setting: Setting, iterations: int = 2000) -> RealValue:
    """The value of the game where both players are limited to ``setting`` (every-chip:
    the stored value of :data:`strategies.measure.translation.lab.KNOWN_REAL_VALUES` when
    there is one)."""
    if setting.fractions is None:
        known = KNOWN_REAL_VALUES.get(game.fingerprint)
        if known is not None:
            return known
    return game_value(responder_game(game, setting, None), iterations)


# --------------------------------------------------------------------------- agents


def translating_table(strategy: Strategy, real: AbstractGame, seat: int, mapping: str,
                      purification: str, sizes_in: str = DEFAULT_SIZE_CONVENTION) -> F64:
    """The translating blueprint's behaviour in ``real`` (the translation lab's model)."""
    agent = agent_game(strategy)
    from strategies.measure.best_response import strategy_table
    table = purify_table(agent, strategy_table(agent, strategy),
                         parse_purification(purification))
    model = build_agent_model(real, agent, seat, sizes_in)
    return induced_table(model, table, get_mapping(mapping))


@dataclass
class AssemblyStats:
    """What assembling a re-solving agent cost."""

    decisions: int = 0
    """Calls of :meth:`agent.resolve.HandResolver.decide`."""
    solves: int = 0
    seconds: float = 0.0
    solve_seconds: float = 0.0
    max_relative_exploitability: float = 0.0
    """Largest accuracy estimate (per visit of the root) of any re-solve."""
    total_exploitability: float = 0.0
    """Sum of the re-solves' accuracy estimates (chips per hand of the game): what their
    gadget games leave on the table, an allowance for the safety check."""
    iterations: int = 0
    sources: dict[str, int] = field(default_factory=dict)
    first_round_solves: int = 0
    """Re-solves of the first round (counted by the Royal lab, whose first round is
    re-solved over suit classes)."""

    def decide(self, hand: HandResolver, state: BettingState, board: Sequence[int],
               weight: float = 1.0) -> Decision:
        """``hand.decide(state, board)``, counted: the decision, its source, and for a
        re-solve its time, iterations and accuracy (``weight`` times its estimate added to
        :attr:`total_exploitability`)."""
        t0 = time.perf_counter()
        decision = hand.decide(state, board)
        dt = time.perf_counter() - t0
        self.decisions += 1
        src = decision.stats.source
        self.sources[src] = self.sources.get(src, 0) + 1
        if src == "resolve":
            self.solve_seconds += dt
            self.iterations += decision.stats.iterations
            self.max_relative_exploitability = max(self.max_relative_exploitability,
                                                   decision.stats.relative_exploitability)
            self.total_exploitability += decision.stats.exploitability * weight
        return decision


def _representatives(real: AbstractGame, seat: int) -> list[dict[int, tuple[tuple[int, ...],
                                                                            tuple[int, ...]]]]:
    """Per round: lossless bucket -> a (hole, board) with it (the first deal that has it)."""
    game = real.game
    h = game.num_hole_cards
    out: list[dict[int, tuple[tuple[int, ...], tuple[int, ...]]]] = [
        {} for _ in range(game.num_rounds)]
    n_players = game.num_players
    for d in range(real.num_deals):
        row = [int(c) for c in real.deal_cards[d]]
        hole = tuple(row[seat * h: (seat + 1) * h])
        board = tuple(row[n_players * h:])
        for r in range(game.num_rounds):
            b = int(real.deal_bucket[d, seat, r])
            out[r].setdefault(b, (hole, board[: game.board_cards_through(r)]))
    return out


def resolving_table(real: AbstractGame, seat: int, resolver: Resolver,
                    progress: ProgressFn = _quiet) -> tuple[F64, AssemblyStats]:
    """The re-solving agent's behaviour in ``real`` with the agent in ``seat`` (module
    docstring), and what assembling it cost."""
    game = real.game
    start = time.perf_counter()
    table = uniform_table(real)
    stats = AssemblyStats()
    reps = _representatives(real, seat)
    by_board: list[dict[tuple[int, ...], list[tuple[int, tuple[int, ...]]]]] = []
    for r in range(game.num_rounds):
        groups: dict[tuple[int, ...], list[tuple[int, tuple[int, ...]]]] = {}
        for b, (hole, board) in reps[r].items():
            groups.setdefault(board, []).append((b, hole))
        by_board.append(groups)
    nodes = real.tree.nodes
    solves_before = resolver.solves
    last = [time.perf_counter()]

    def visit(n: int, hr: HandResolver, board: tuple[int, ...]) -> None:
        node = nodes[n]
        state = node.state
        if state.finished:
            return
        r = state.round
        if len(board) < game.board_cards_through(r):
            for bd in by_board[r]:
                visit(n, hr.copy(), bd)
            return
        kids = node.children
        if state.player != seat:
            for i, c in enumerate(kids):
                visit(c, hr if i == len(kids) - 1 else hr.copy(), board)
            return
        decision = stats.decide(hr, state, board)
        k = int(real.num_actions[n])
        off = int(real.offset[n])
        index = [list(kids).index(real_child(node, a)) for a in decision.actions]
        for b, hole in by_board[r].get(board, []):
            row = np.zeros(k)
            row[index] = decision.probs[resolver.hands.find(hole)]
            table[off + b * k: off + (b + 1) * k] = row
        used = decision.probs.max(axis=0) > 0
        now = time.perf_counter()
        if now - last[0] > 10:
            last[0] = now
            progress(f"  seat {seat}: {stats.decisions} decisions, "
                     f"{resolver.solves - solves_before} re-solves, {now - start:.0f} s")
        targets = [(i, c) for i, c in zip(index, decision.actions, strict=True)]
        live = [(i, a) for (i, a), u in zip(targets, used, strict=True) if u]
        for j, (i, _) in enumerate(live):
            visit(kids[i], hr if j == len(live) - 1 else hr.copy(), board)

    visit(0, resolver.new_hand(seat), ())
    stats.solves = resolver.solves - solves_before
    stats.seconds = time.perf_counter() - start
    return table, stats


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Row:
    """One agent in one setting, both seats (chips per hand)."""

    setting: str
    responder: str
    blueprint: str
    agent: str
    """``translate`` or ``resolve``."""
    mapping: str
    purification: str
    gadget: str
    best_responses: tuple[float, float]
    value: RealValue
    extra: dict[str, Any] = field(default_factory=dict)

    def seat(self, p: int) -> float:
        return self.best_responses[1 - p] - self.value.values[1 - p]

    @property
    def average(self) -> float:
        return (self.seat(0) + self.seat(1)) / 2

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.setting, "responder": self.responder,
                "blueprint": self.blueprint, "agent": self.agent, "mapping": self.mapping,
                "purification": self.purification, "gadget": self.gadget,
                "exploitability_seat0": self.seat(0), "exploitability_seat1": self.seat(1),
                "exploitability_average": self.average,
                "best_response_seat0": self.best_responses[0],
                "best_response_seat1": self.best_responses[1],
                "value_seat0": self.value.values[0], "value_error": self.value.error,
                "units": "chips per hand", **self.extra}


@dataclass
class Lab:
    """One blueprint in one setting: the real games (both seats) and the value."""

    strategy: Strategy
    blueprint: str
    setting: Setting
    value: RealValue
    games: tuple[AbstractGame, AbstractGame]
    tables: dict[tuple[str, str, str], tuple[F64, F64]] = field(default_factory=dict)
    """(agent, mapping/gadget, purification) -> the assembled table per seat."""

    @classmethod
    def build(cls, strategy: Strategy, blueprint: str, setting: Setting,
              value_iterations: int = 2000) -> Lab:
        game = strategy.game
        value = setting_value(game, setting, value_iterations)
        games = (responder_game(game, setting, 0), responder_game(game, setting, 1))
        return cls(strategy, blueprint, setting, value, games)

    def brs(self, tables: tuple[F64, F64]) -> tuple[float, float]:
        """``(br0, br1)``: the responder in seat ``q`` against the agent in ``1 - q``."""
        return (best_response(self.games[1], tables[1], 0).value,
                best_response(self.games[0], tables[0], 1).value)

    def translate(self, mapping: str, purification: str) -> Row:
        tables = (translating_table(self.strategy, self.games[0], 0, mapping, purification),
                  translating_table(self.strategy, self.games[1], 1, mapping, purification))
        self.tables[("translate", mapping, purification)] = tables
        return Row(self.setting.name, self.setting.label, self.blueprint, "translate",
                   mapping, purification, "", self.brs(tables), self.value)

    def resolve(self, config: ResolveConfig, mapping: str = "rand-pshar",
                purification: str = "none", progress: ProgressFn = _quiet) -> Row:
        resolver = Resolver(self.strategy, config, mapping=mapping, purification=purification)
        t0, s0 = resolving_table(self.games[0], 0, resolver, progress)
        t1, s1 = resolving_table(self.games[1], 1, resolver, progress)
        self.tables[resolve_key(config, purification)] = (t0, t1)
        extra = {"mode": config.mode, "iterations": config.iterations, **depth_extra(config),
                 "decisions": s0.decisions + s1.decisions, "resolves": s0.solves + s1.solves,
                 "assembly_seconds": s0.seconds + s1.seconds,
                 "mean_resolve_ms": 1000 * (s0.solve_seconds + s1.solve_seconds) /
                 max(s0.solves + s1.solves, 1),
                 "max_relative_subgame_exploitability": max(
                     s0.max_relative_exploitability, s1.max_relative_exploitability),
                 "total_subgame_exploitability": s0.total_exploitability +
                 s1.total_exploitability}
        return Row(self.setting.name, self.setting.label, self.blueprint, "resolve", mapping,
                   purification, config.gadget, self.brs((t0, t1)), self.value, extra)


def depth_extra(config: ResolveConfig) -> dict[str, Any]:
    """A re-solving row's depth limit: ``depth`` (None: to the end) and ``leaf`` (the leaf
    kind; empty without a depth limit)."""
    return {"depth": config.depth, "leaf": config.leaf if config.depth is not None else ""}


def resolve_name(gadget: str, extra: dict[str, Any]) -> str:
    """A re-solving row's name: its gadget, and its depth limit when it has one."""
    depth = extra.get("depth")
    return gadget if depth is None else f"{gadget} d{depth} {extra.get('leaf', '')}"


def resolve_key(config: ResolveConfig, purification: str) -> tuple[str, str, str]:
    """The key of a re-solving agent's tables (:attr:`Lab.tables`)."""
    return ("resolve", resolve_name(config.gadget, depth_extra(config)), purification)


def blueprint_setting(strategy: Strategy, name: str, removed: Sequence[float] = ()
                      ) -> Setting:
    """The setting of the blueprint's own sizes (``removed`` empty), or with ``removed``
    sizes added for the responder (the published experiment's shape)."""
    own = stated_fractions(strategy.betting)
    return Setting(name, tuple(sorted(set(own) | {float(x) for x in removed})))


# --------------------------------------------------------------------------- agent files


def _infosets(real: AbstractGame, seat: int, table: F64) -> Iterator[tuple[str, str, str,
                                                                          list[str],
                                                                          list[float]]]:
    """The agent's reached information sets in ``real``: (betting, hole, board, actions,
    probabilities)."""
    game = real.game
    h = game.num_hole_cards
    n_players = game.num_players
    # the agent's reach per (node, deal) is the product of its rows: walk the deals
    reach = np.zeros((real.num_nodes, real.num_deals))
    reach[0] = 1.0
    nodes = real.tree.nodes
    seen: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
    for node in nodes:
        n = node.id
        if node.is_terminal or not reach[n].any():
            continue
        k = int(real.num_actions[n])
        off = int(real.offset[n])
        if node.player != seat:
            for c in node.children:
                reach[c] = reach[n]
            continue
        r = node.round
        buckets = real.deal_bucket[:, seat, r]
        probs = table[off + buckets[:, None] * k + np.arange(k)[None, :]]
        for i, c in enumerate(node.children):
            reach[c] = reach[n] * probs[:, i]
        acts = [format_action(a.action, game) for a in node.actions]
        for d in np.flatnonzero(reach[n] > 0):
            row = [int(x) for x in real.deal_cards[d]]
            hole = tuple(row[seat * h: (seat + 1) * h])
            board = tuple(row[n_players * h:][: game.board_cards_through(r)])
            key = (n, hole, board)
            if key in seen:
                continue
            seen.add(key)
            yield (node.state.betting, format_cards(hole), format_cards(board), acts,
                   [float(p) for p in probs[d]])


def agent_file(path: Path, real: tuple[AbstractGame, AbstractGame],
               tables: tuple[F64, F64], description: dict[str, Any]) -> int:
    """Write an assembled agent (both seats) as JSON (module docstring); returns the number
    of information sets written."""
    game = real[0].game
    seats: dict[str, dict[str, dict[str, float]]] = {}
    count = 0
    for seat in (0, 1):
        rows: dict[str, dict[str, float]] = {}
        for betting, hole, board, acts, probs in _infosets(real[seat], seat, tables[seat]):
            rows[f"{betting}|{hole}|{board}"] = {
                a: round(p, 12) for a, p in zip(acts, probs, strict=True) if p > 0}
            count += 1
        seats[str(seat)] = rows
    doc = {"format": AGENT_FILE_FORMAT, "version": AGENT_FILE_VERSION,
           "game": format_gamedef(game), "description": description, "seats": seats}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    return count


def _bad(path: Path, what: str) -> StrategyFileError:
    return StrategyFileError(f"{path}: {what}")


def read_agent_file(path: Path) -> tuple[Game, dict[int, dict[tuple[str, tuple[int, ...],
                                                                    tuple[int, ...]],
                                                              dict[Action, float]]]]:
    """Read and validate an agent file: ``(game, {seat: {(betting, hole, board):
    {action: probability}}})``.

    Raises:
        StrategyFileError: for anything that is not a valid agent file of this format.
    """
    text = read_text_file(path, max_bytes=MAX_AGENT_FILE_BYTES, what="agent file",
                          decoded="UTF-8 JSON", error=StrategyFileError)
    check_json(text, where=str(path), what="an agent file", max_chars=MAX_AGENT_FILE_BYTES,
               error=StrategyFileError, max_depth=AGENT_FILE_DEPTH)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _bad(path, f"expected JSON, got {excerpt(str(exc))}") from None
    if not isinstance(doc, dict) or doc.get("format") != AGENT_FILE_FORMAT or \
            doc.get("version") != AGENT_FILE_VERSION:
        raise _bad(path, f"expected format {AGENT_FILE_FORMAT!r} version "
                         f"{AGENT_FILE_VERSION}, got {excerpt(repr(doc)[:80])}")
    try:
        game = parse_gamedef(str(doc.get("game")), f"{path}: game")
    except ValueError as exc:
        raise _bad(path, f"expected a game definition: {exc}") from None
    seats = doc.get("seats")
    if not isinstance(seats, dict) or set(seats) != {"0", "1"}:
        raise _bad(path, "expected 'seats' with keys '0' and '1'")
    out: dict[int, dict[tuple[str, tuple[int, ...], tuple[int, ...]], dict[Action, float]]] = {}
    states: dict[str, BettingState] = {}
    for seat_key, rows in seats.items():
        seat = int(seat_key)
        if not isinstance(rows, dict):
            raise _bad(path, f"expected an object of information sets for seat {seat}")
        table: dict[tuple[str, tuple[int, ...], tuple[int, ...]], dict[Action, float]] = {}
        for key, row in rows.items():
            where = f"seat {seat} {excerpt(key)}"
            parts = str(key).split("|")
            if len(parts) != 3 or not isinstance(row, dict) or not row:
                raise _bad(path, f"expected 'betting|hole|board' -> {{action: probability}} "
                                 f"at {where}")
            betting, hole_text, board_text = parts
            state = states.get(betting)
            if state is None:
                try:
                    state = parse_betting(game, betting)
                except (ValueError, AcpcError) as exc:
                    raise _bad(path, f"expected a legal betting string at {where}: "
                                     f"{exc}") from None
                states[betting] = state
            if state.finished or state.player != seat:
                raise _bad(path, f"expected seat {seat} to act at {where}")
            try:
                hole = parse_cards(hole_text)
                board = parse_cards(board_text)
            except ValueError as exc:
                raise _bad(path, f"expected cards at {where}: {exc}") from None
            if len(hole) != game.num_hole_cards or \
                    len(board) != game.board_cards_through(state.round) or \
                    len(set(hole) | set(board)) != len(hole) + len(board):
                raise _bad(path, f"expected {game.num_hole_cards} hole and "
                                 f"{game.board_cards_through(state.round)} board cards, all "
                                 f"different, at {where}")
            probs: dict[Action, float] = {}
            for text, p in row.items():
                try:
                    action = parse_action(str(text), game)
                    state.check_action(action)
                except ValueError as exc:
                    raise _bad(path, f"expected a legal action at {where}, got "
                                     f"{excerpt(str(text))}: {exc}") from None
                if not isinstance(p, (int, float)) or not (0.0 <= float(p) <= 1.0):
                    raise _bad(path, f"expected a probability at {where} {text}, got {p!r}")
                probs[action] = float(p)
            total = sum(probs.values())
            if not math.isclose(total, 1.0, abs_tol=1e-6):
                raise _bad(path, f"expected probabilities summing to 1 at {where}, got "
                                 f"{total!r}")
            table[(betting, hole, board)] = probs
        out[seat] = table
    return game, out


def table_from_file(real: AbstractGame, seat: int,
                    rows: dict[tuple[str, tuple[int, ...], tuple[int, ...]],
                               dict[Action, float]]) -> F64:
    """A table of ``real`` for ``seat`` from an agent file's rows (uniform where absent)."""
    game = real.game
    table = uniform_table(real)
    cards = LosslessCards(game)
    by_betting: dict[str, Node] = {n.state.betting: n for n in real.tree.nodes
                                   if not n.is_terminal and n.player == seat}
    for (betting, hole, board), probs in rows.items():
        node = by_betting.get(betting)
        if node is None:
            raise UsageError(f"expected the betting {betting!r} in the real game")
        k = int(real.num_actions[node.id])
        b = cards.bucket(node.round, hole, board)
        row = np.zeros(k)
        for a, p in probs.items():
            row[[x.action for x in node.actions].index(a)] = p
        off = int(real.offset[node.id]) + b * k
        table[off: off + k] = row
    return table


# --------------------------------------------------------------------------- output


def _fmt(v: float) -> str:
    return "nan" if math.isnan(v) else f"{v:.5f}"


RATIO_FLOOR = 1e-4
"""No ratio is printed against a best translating row below this (an exact blueprint)."""


def format_table(rows: Sequence[Row]) -> str:
    """Per blueprint and setting: every agent's exploitability (seat 0, seat 1, average;
    chips per hand) and, for re-solving agents, how many times less exploitable than the
    best translating row of the block (when that is above :data:`RATIO_FLOOR`)."""
    blocks: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        blocks.setdefault((r.blueprint, r.setting), []).append(r)
    lines: list[str] = []
    for (blueprint, setting), items in blocks.items():
        first = items[0]
        if math.isnan(first.value.error):  # no value (Royal): per seat, the responder's gain
            lines.append(f"blueprint {blueprint}, responder {first.responder} (setting "
                         f"{setting}): chips per hand; per seat of the agent, what a best "
                         f"responder wins against it (no game value); the average is the "
                         f"exploitability")
        else:
            lines.append(f"blueprint {blueprint}, responder {first.responder} (setting "
                         f"{setting}): exploitability, chips per hand (game value "
                         f"{first.value.values[0]:.5f} +- {first.value.error:.1g} for seat 0)")
        lines.append(f"{'agent':40}{'seat 0':>10}{'seat 1':>10}{'average':>10}{'x best':>9}")
        translating = [r.average for r in items if r.agent == "translate"]
        best = min(translating) if translating else math.nan
        for r in items:
            name = (f"translate {r.mapping} ({r.purification})" if r.agent == "translate"
                    else f"resolve {resolve_name(r.gadget, r.extra)}")
            ratio = (best / r.average if r.agent == "resolve" and r.average > 0 and
                     best > RATIO_FLOOR else math.nan)
            lines.append(f"{name:40}{_fmt(r.seat(0)):>10}{_fmt(r.seat(1)):>10}"
                         f"{_fmt(r.average):>10}"
                         f"{'' if math.isnan(ratio) else f'{ratio:.1f}x':>9}")
        lines.append("")
    return "\n".join(lines)


def plot_table(path: Path, rows: Sequence[Row]) -> Path:
    """Bars of the average exploitability of every agent, one panel per blueprint and
    setting (log scale); returns ``path``."""
    from strategies.measure.translation.plots import pyplot

    plt = pyplot()
    blocks: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        blocks.setdefault((r.blueprint, r.setting), []).append(r)
    fig, axes = plt.subplots(1, len(blocks), figsize=(6.5 * len(blocks), 5.5), squeeze=False)
    for ax, ((blueprint, _), items) in zip(axes[0], blocks.items(), strict=True):
        names = [(f"{r.mapping} ({r.purification})" if r.agent == "translate"
                  else f"re-solve: {resolve_name(r.gadget, r.extra)}") for r in items]
        values = [max(r.average, 1e-7) for r in items]
        colors = ["#9aa7b8" if r.agent == "translate" else "#2f7ed8" for r in items]
        ax.barh(range(len(items)), values, color=colors)
        ax.set_yticks(range(len(items)))
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("exploitability, chips per hand (average of both seats)")
        ax.set_title(f"{blueprint}, responder {items[0].responder}", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
