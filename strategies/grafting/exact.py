"""Strategy grafting (Waugh, Bard, Bowling 2009): grafts solved against a base, then joined.

**Partition.** A :class:`Partition` names the grafts of a player by the rank of its
(highest) hole card and the round the graft starts (:class:`agent.abstraction.graft_cards.
GraftPart`): from round 0 a *preflop graft* owns every history of those hands; from round 1
a *flop graft* owns their rounds after the first, the base playing the first. Every graft
uses the finer card abstraction ``cards`` (lossless by default) and the same partition is
grafted for each position in ``players``. Spec (JSON)::

    {"grafts": [{"ranks": "Q", "from_round": 1}, {"ranks": "K", "from_round": 1}],
     "cards": {"kind": "lossless"}, "players": [0, 1]}

or a preset: ``preflop`` / ``flop`` (one graft per rank of the deck), optionally limited to
some ranks, ``flop:KA`` (one graft per rank listed). Hold'em grafts name preflop classes
(``{"classes": [...] or "pairs" / "equity:1/2" ..., "from_round": 1}``, default cards
``{"kind": "holdem", "buckets": [169, 100, 100, 100]}``; presets ``holdem-flop:N``,
``holdem-preflop:N``) and are solved over a deal pool by :mod:`strategies.grafting.pool`.

**Graft games.** The grafted card abstraction (:class:`~agent.abstraction.graft_cards.
GraftCards`) numbers base buckets first, so a table in its layout can play the base
exactly (:func:`expand_base`: every graft row copies the base row of the same hands; the
graft's cards must refine the base's). The graft game of graft ``j`` for player ``i``
(:func:`graft_game`) is the abstract game in which ``i`` sees the grafted buckets and the
opponent its base buckets (``deal_bucket`` per position); ``i``'s rows outside graft ``j``
are *frozen* to the base's probabilities (chance nodes with the base's probabilities: the
solver resets them before every pass and never lets the best response choose there), the
rows of graft ``j`` and all the opponent's rows are free. :func:`solve_graft` runs full-width
CFR / CFR+ (:class:`strategies.solvers.cfr.Solver` configured with
:class:`~strategies.solvers.cfr.FrozenRows`: the frozen entries are overwritten after each
regret matching) until the graft game's NashConv (:func:`graft_nash_conv`) is at most the
target or the iterations run out, and reports the NashConv it reached.

**Assembly.** :func:`graft_strategy` solves every (player, graft) pair, in a process pool
when ``workers > 1`` or as Ray tasks on every CPU of the cluster (``backend="ray"``;
:mod:`jobs.backends`) (only JSON specs and numpy arrays cross the process boundary; no file
is pickled) and writes each graft's rows of its player into the expanded base: the grafted
strategy, an ordinary table whose card spec is the ``graft`` kind.

Guarantee (tested): against an opponent that best-responds to the base in the base's
abstract game, the grafted strategy of player ``i`` wins at least what the base wins, less
the sum of its grafts' NashConvs.

Imports numpy, :mod:`agent`, :mod:`jobs` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingAbstraction, parse_betting_abstraction
from agent.abstraction.buckets import CardAbstraction, card_abstraction_from_spec
from agent.abstraction.graft_cards import GraftCards, GraftPart, check_parts
from agent.abstraction.rank_cards import check_ranks, deck_ranks
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamedef import Game, format_gamedef, parse_gamedef
from jobs.backends import open_jobs
from strategies.games.abstract import (
    AbstractGame,
    build_abstract_game,
    player_rows,
)
from strategies.grafting import graft_workers
from strategies.measure.best_response import best_response, expected_values
from strategies.measure.crossplay import best_response_value
from strategies.solvers.cfr import FrozenRows, Solver, solver_config

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

PRESETS = ("preflop", "flop")
HOLDEM_GRAFT_CARDS: dict[str, Any] = {"kind": "holdem", "buckets": [169, 100, 100, 100]}
"""The default cards inside a hold'em graft (refining the base's 50 buckets per round)."""
DEFAULT_TARGET = 1e-3
"""Default NashConv target of a graft game, chips per hand (0.5 millibets per hand)."""


# --------------------------------------------------------------------------- partition


@dataclass(frozen=True)
class Partition:
    """Which hands each graft plays, with which cards, for which positions."""

    parts: tuple[GraftPart, ...]
    cards: dict[str, Any] = field(default_factory=lambda: {"kind": "lossless"})
    players: tuple[int, ...] = (0, 1)

    def to_json(self) -> dict[str, Any]:
        return {"grafts": [p.to_json() for p in self.parts], "cards": dict(self.cards),
                "players": list(self.players)}


def partition_from_json(game: Game, data: object) -> Partition:
    """Validate a partition spec (module docstring).

    Raises:
        UsageError: for unknown keys, bad grafts, players or cards.
    """
    if not isinstance(data, dict):
        raise UsageError(f"expected a partition object with 'grafts', got {data!r}")
    unknown = set(data) - {"grafts", "cards", "players"}
    if unknown:
        raise UsageError(f"expected partition keys 'grafts', 'cards', 'players', got "
                         f"{sorted(unknown)!r}")
    grafts = data.get("grafts", [])
    by_class = isinstance(grafts, list) and any(
        isinstance(g, dict) and "classes" in g for g in grafts)
    if by_class:
        from strategies.grafting.pool import expand_class_presets

        grafts = expand_class_presets(grafts)
    try:
        parts = check_parts(game, grafts if isinstance(grafts, list) else [], "partition graft")
    except AbstractionError as exc:
        raise UsageError(str(exc)) from None
    cards = data.get("cards", HOLDEM_GRAFT_CARDS if by_class else {"kind": "lossless"})
    if not isinstance(cards, dict) or cards.get("kind") in (None, "graft"):
        raise UsageError(f"expected partition 'cards' to be a card abstraction spec (not a "
                         f"graft), got {cards!r}")
    players = data.get("players", [0, 1])
    if not isinstance(players, list) or not players or any(
        isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < game.num_players
        for p in players
    ) or len(set(players)) != len(players):
        raise UsageError(f"expected partition 'players' to be distinct positions in "
                         f"0..{game.num_players - 1}, got {players!r}")
    return Partition(parts, dict(cards), tuple(sorted(players)))


def parse_partition(game: Game, text: str) -> Partition:
    """A partition from a preset (``preflop``, ``flop``, ``flop:KA``), JSON text, or a
    ``.json`` file.

    Raises:
        UsageError: for an unknown preset, bad JSON, an unreadable file or a bad spec.
    """
    text = text.strip()
    if text.startswith("holdem-"):
        from strategies.grafting.pool import pool_preset

        try:
            found = pool_preset(text)
        except AbstractionError as exc:
            raise UsageError(str(exc)) from None
        if found is not None:
            if game.num_ranks != 13 or game.num_hole_cards != 2:
                raise UsageError(f"expected a hold'em game for the partition {text!r}")
            return Partition(found, dict(HOLDEM_GRAFT_CARDS))
    name, _, ranks = text.partition(":")
    if name in PRESETS:
        try:
            chosen = check_ranks(game, ranks, f"partition {text!r}") if ranks \
                else deck_ranks(game)
        except AbstractionError as exc:
            raise UsageError(str(exc)) from None
        start = 0 if name == "preflop" else 1
        if start >= game.num_rounds:
            raise UsageError(f"expected a game with a second round for a {name} graft")
        return Partition(tuple(GraftPart(c, start) for c in chosen))
    if text.startswith("{"):
        source = "partition"
        raw = text
    else:
        path = Path(text)
        if path.suffix != ".json":
            raise UsageError(f"expected a partition preset ({', '.join(PRESETS)}, e.g. "
                             f"'flop:KA'; hold'em: 'holdem-flop:N', 'holdem-preflop:N'), "
                             f"JSON, or a .json file, got {text!r}")
        source = str(path)
        try:
            raw = path.read_text()
        except OSError as exc:
            raise UsageError(f"{source}: cannot read the partition: {exc.strerror}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}: expected JSON: {exc}") from None
    return partition_from_json(game, data)


def graft_cards(game: Game, base: CardAbstraction, partition: Partition) -> GraftCards:
    """The grafted card abstraction of ``base`` and ``partition``.

    Raises:
        UsageError: if the partition's cards do not fit the game.
    """
    spec = dict(partition.cards)
    try:
        if "buckets" not in spec:
            spec["buckets"] = list(_probe(game, spec).buckets)
        inner = card_abstraction_from_spec(game, spec)
    except AbstractionError as exc:
        raise UsageError(f"partition cards: {exc}") from None
    return GraftCards(game, base, partition.parts, [inner] * len(partition.parts))


def _probe(game: Game, spec: dict[str, Any]) -> CardAbstraction:
    """The abstraction of a spec without ``buckets`` (its own count is taken)."""
    kind = spec.get("kind")
    if kind == "lossless":
        from agent.abstraction.buckets import LosslessCards

        return LosslessCards(game)
    if kind == "rank-groups":
        from agent.abstraction.rank_cards import RankGroupCards

        return RankGroupCards.from_spec(game, spec)
    raise AbstractionError(f"expected 'buckets' in the card spec {spec!r}")


# --------------------------------------------------------------------------- graft games


@dataclass(frozen=True, eq=False)
class GraftGames:
    """The base game, the grafted game (grafted buckets for both positions) and the map
    from grafted to base buckets."""

    base: AbstractGame
    grafted: AbstractGame
    cards: GraftCards
    base_of: tuple[I64, ...]
    """Per round: the base bucket of each grafted bucket (0 where no deal lands)."""


def build_graft_games(
    game: Game, betting: BettingAbstraction, base: CardAbstraction, cards: GraftCards
) -> GraftGames:
    """Flatten the base and the grafted abstractions (the same deals, in the same order).

    Raises:
        UsageError: if a graft's cards do not refine the base's (a grafted bucket holding
            hands of two base buckets).
    """
    base_game = build_abstract_game(game, betting, base)
    grafted = build_abstract_game(game, betting, cards, tree=base_game.tree)
    maps = []
    for r in range(game.num_rounds):
        out = np.full(cards.buckets[r], -1, dtype=np.int64)
        gb = grafted.deal_bucket[:, :, r].ravel()
        bb = base_game.deal_bucket[:, :, r].ravel()
        out[gb] = bb
        if (out[gb] != bb).any():
            raise UsageError(f"expected each graft's cards to refine the base's: a round {r} "
                             f"graft bucket holds hands of several base buckets")
        out[out < 0] = 0
        maps.append(out)
    return GraftGames(base_game, grafted, cards, tuple(maps))


def expand_base(games: GraftGames, base_table: npt.ArrayLike) -> F64:
    """A table in the grafted layout that plays exactly like ``base_table`` (base layout)."""
    src = np.asarray(base_table, dtype=np.float64).reshape(-1)
    g, b = games.grafted, games.base
    if src.size != b.table_size:
        raise UsageError(f"expected a base table of {b.table_size} values, got {src.size}")
    out = np.empty(g.table_size)
    for node in np.flatnonzero(g.offset >= 0):
        k = int(g.num_actions[node])
        rows = games.base_of[int(g.round[node])]
        block = src[int(b.offset[node]) : int(b.offset[node]) + int(b.rows[node]) * k]
        out[int(g.offset[node]) : int(g.offset[node]) + len(rows) * k] = \
            block.reshape(-1, k)[rows].ravel()
    return out


def graft_game(games: GraftGames, player: int) -> AbstractGame:
    """The grafted game in which the opponent of ``player`` sees its base buckets."""
    bucket = games.grafted.deal_bucket.copy()
    for q in range(games.grafted.num_players):
        if q != player:
            bucket[:, q, :] = games.base.deal_bucket[:, q, :]
    return replace(games.grafted, deal_bucket=bucket)


def graft_mask(games: GraftGames, player: int, graft: int) -> B:
    """Per table entry: True where ``player`` plays graft ``graft`` (its free rows)."""
    g = games.grafted
    mask = np.zeros(g.table_size, dtype=bool)
    for node in np.flatnonzero((g.offset >= 0) & (g.player == player)):
        lo, hi = games.cards.graft_range(int(g.round[node]), graft)
        k = int(g.num_actions[node])
        mask[int(g.offset[node]) + lo * k : int(g.offset[node]) + hi * k] = True
    return mask


def frozen_mask(games: GraftGames, player: int, graft: int) -> B:
    """Per table entry: True at ``player``'s rows outside graft ``graft`` (forced to the
    base in that graft game)."""
    return player_rows(games.grafted, player) & ~graft_mask(games, player, graft)


# --------------------------------------------------------------------------- solving


def graft_nash_conv(game: AbstractGame, table: npt.ArrayLike, player: int,
                    frozen: npt.ArrayLike) -> float:
    """NashConv of ``table`` in a graft game: the opponent's best-response gain plus
    ``player``'s, who may deviate only at its unfrozen rows (chips per hand)."""
    values = expected_values(game, table)
    opp = 1 - player
    gain_opp = best_response(game, table, opp).value - values[opp]
    gain_own = best_response_value(game, table, player, frozen=frozen) - values[player]
    return float(gain_opp + gain_own)


@dataclass(frozen=True)
class GraftJob:
    """One graft to solve, in JSON-able pieces and arrays (sent to worker processes)."""

    game_text: str
    betting: dict[str, Any]
    base_cards: dict[str, Any]
    cards: dict[str, Any]
    base_table: F64
    player: int
    graft: int
    iterations: int
    target: float
    solver: str
    check_every: int


@dataclass(frozen=True)
class GraftResult:
    """A solved graft: where its rows go in the grafted table, and how well it converged."""

    player: int
    graft: int
    iterations: int
    nash_conv: float
    seconds: float
    index: I64
    values: F64

    def summary(self, part: GraftPart) -> dict[str, Any]:
        return {"player": self.player, "graft": self.graft, "ranks": part.ranks,
                "from_round": part.from_round, "iterations": self.iterations,
                "nash_conv": self.nash_conv, "seconds": round(self.seconds, 3)}


def _games_of(job: GraftJob) -> GraftGames:
    game = parse_gamedef(job.game_text, "graft job")
    base = card_abstraction_from_spec(game, job.base_cards)
    cards = card_abstraction_from_spec(game, job.cards)
    assert isinstance(cards, GraftCards)
    return build_graft_games(game, parse_betting_abstraction(job.betting), base, cards)


def solve_graft(job: GraftJob, games: GraftGames | None = None) -> GraftResult:
    """Solve one graft game: CFR in chunks of ``check_every`` until its NashConv is at
    most ``target`` or ``iterations`` are done."""
    start = time.perf_counter()
    games = games or _games_of(job)
    g = graft_game(games, job.player)
    frozen = frozen_mask(games, job.player, job.graft)
    base = expand_base(games, job.base_table)
    solver = Solver(g, job.solver, frozen=FrozenRows(frozen, base))
    nash_conv = float("inf")
    while solver.iteration < job.iterations:
        solver.iterate(min(job.check_every, job.iterations - solver.iteration))
        nash_conv = graft_nash_conv(g, solver.average_strategy(), job.player, frozen)
        if nash_conv <= job.target:
            break
    table = solver.average_strategy()
    if solver.iteration == 0:
        nash_conv = graft_nash_conv(g, table, job.player, frozen)
    index = np.flatnonzero(graft_mask(games, job.player, job.graft)).astype(np.int64)
    return GraftResult(job.player, job.graft, solver.iteration, nash_conv,
                       time.perf_counter() - start, index, table[index])


@dataclass(frozen=True)
class Grafted:
    """A grafted strategy: its card spec, its table and its grafts' figures."""

    cards: dict[str, Any]
    table: F64
    results: tuple[GraftResult, ...]
    partition: Partition

    def meta(self) -> dict[str, Any]:
        """What goes into the strategy file's ``meta['grafting']``."""
        return {"partition": self.partition.to_json(),
                "grafts": [r.summary(self.partition.parts[r.graft]) for r in self.results]}


def graft_strategy(
    game: Game,
    betting: BettingAbstraction,
    base_cards: CardAbstraction,
    base_table: npt.ArrayLike,
    partition: Partition,
    *,
    iterations: int = 2000,
    target: float = DEFAULT_TARGET,
    solver: str = "cfr+",
    workers: int = 1,
    check_every: int = 100,
    progress: Callable[[GraftResult, int, int], None] | None = None,
    backend: str = "local",
    address: str | None = None,
) -> Grafted:
    """Graft ``partition`` onto the base strategy (``base_table`` in ``base_cards``'s
    layout) and assemble the grafted strategy (module docstring).

    Raises:
        UsageError: for bad arguments or a partition that does not fit the base.
    """
    if game.num_players != 2:
        raise UsageError(f"expected a 2-player game for grafting, got {game.num_players}")
    if iterations < 0 or check_every < 1 or workers < 1:
        raise UsageError(f"expected iterations >= 0, check_every >= 1, workers >= 1, got "
                         f"{iterations}, {check_every}, {workers}")
    config = solver_config(solver)
    if config.sampling != "full" or not config.alternating:
        raise UsageError(f"expected a full-width alternating solver (cfr, cfr+, lcfr, dcfr) "
                         f"for a graft game, got {solver!r}")
    cards = graft_cards(game, base_cards, partition)
    games = build_graft_games(game, betting, base_cards, cards)
    base = np.asarray(base_table, dtype=np.float64).reshape(-1)
    table = expand_base(games, base)
    jobs = [
        GraftJob(format_gamedef(game), betting.to_json(), dict(base_cards.spec), cards.spec,
                 base, player, j, iterations, target, solver, check_every)
        for player in partition.players for j in range(len(partition.parts))
    ]
    results: list[GraftResult] = []

    def done(result: GraftResult) -> None:
        results.append(result)
        if progress is not None:
            progress(result, len(results), len(jobs))

    with open_jobs(backend, graft_workers(backend, workers), address) as where:
        # In this process a graft reuses the graft games built above.
        solve = partial(solve_graft, games=games) if where.inline(len(jobs)) else solve_graft
        where.run(solve, jobs, lambda finished: done(finished.result()))
    results.sort(key=lambda r: (r.player, r.graft))
    for r in results:
        table[r.index] = r.values
    return Grafted(cards.spec, table, tuple(results), partition)


def rows_outside_grafts(games: GraftGames, players: Sequence[int]) -> B:
    """Per grafted-table entry: True unless it is a row of a grafted position inside a
    graft (the entries that must equal the base)."""
    inside = np.zeros(games.grafted.table_size, dtype=bool)
    for p in players:
        for j in range(len(games.cards.parts)):
            inside |= graft_mask(games, p, j)
    return ~inside
