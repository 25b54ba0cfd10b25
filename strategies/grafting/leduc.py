"""The Leduc grafting experiment (Waugh, Bard, Bowling 2009; docs/background.md), exactly.

Limit Leduc as bundled (deck Q, K, A: the paper's J, Q, K are the lowest, middle and highest
rank). Card abstractions (:mod:`agent.abstraction.rank_cards`): *J.Q.K* (``["Q","K","A"]``),
*JQ.K* (``["QK","A"]``), *J.QK* (``["Q","KA"]``); after the flop each knows only whether its
card pairs the board (and its preflop group). For each, the base equilibrium (CFR or CFR+,
both players abstracted), its *preflop* grafted strategy (one graft per rank, the whole hand,
lossless cards) and its *flop* grafted strategy (one graft per rank from the flop on, the
base playing the first round), grafted for both positions: nine strategies.

Measured, exactly (every deal, both seats, no sampling), in millibets per hand (1 mbb =
0.002 chips, the small bet being 2 chips):

* the round robin: row's expected winnings against column, averaged over the two seats;
* each strategy's exploitability in the real game, ``(br0 + br1) / 2`` against lossless
  best responses (:func:`strategies.measure.crossplay.real_exploitability`);
* what each strategy wins against the best response (in the base's abstraction) to its
  base, averaged over seats: grafting's guarantee says a grafted strategy wins at least
  what its base does there.

:func:`run_config` runs one solver configuration; :func:`write_report` writes the tables,
JSON and the heat map. Used by ``scripts/grafting_leduc.py``.

Imports numpy, (lazily) matplotlib, :mod:`agent` and :mod:`strategies`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingAbstraction, parse_betting_abstraction
from agent.abstraction.buckets import card_abstraction_from_spec
from agent.abstraction.rank_cards import RankGroupCards, deck_ranks
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.strategy.fileformat import dump_strategy
from strategies.games.abstract import AbstractGame, build_abstract_game
from strategies.grafting.exact import Partition, graft_strategy, parse_partition
from strategies.measure.best_response import best_response, exploitability
from strategies.measure.crossplay import cross_value, real_exploitability
from strategies.solvers.cfr import Solver

F64 = npt.NDArray[np.float64]
MBB = 0.002
"""Chips per millibet (the small bet is 2 chips)."""
GAME = "leduc.limit.2p.game"
ABSTRACTIONS = ("J.Q.K", "JQ.K", "J.QK")
KINDS = ("base", "preflop", "flop")


def groups_of(name: str, ranks: str) -> list[str]:
    """``'JQ.K'`` in the paper's ranks -> groups of the deck's ranks (``['QK', 'A']``)."""
    paper = dict(zip("JQK", ranks, strict=True))
    return ["".join(paper[c] for c in part) for part in name.split(".")]


@dataclass(frozen=True, eq=False)
class Player:
    """One of the nine strategies: its name, abstract game and table."""

    name: str
    abstraction: str
    kind: str
    game: AbstractGame
    table: F64
    cards: dict[str, Any]
    meta: dict[str, Any]


@dataclass(frozen=True)
class Config:
    """One solver configuration of the experiment."""

    solver: str
    iterations: int
    graft_iterations: int
    graft_target: float

    @property
    def label(self) -> str:
        return f"{self.solver} {self.iterations} (grafts {self.graft_iterations})"


def build_players(config: Config, *, workers: int = 1,
                  say: Callable[[str], None] = print) -> list[Player]:
    """The nine strategies of one configuration."""
    game = load_game(GAME)
    betting = parse_betting_abstraction("fcpa")
    ranks = deck_ranks(game)
    players: list[Player] = []
    for name in ABSTRACTIONS:
        cards = RankGroupCards(game, groups_of(name, ranks))
        bg = build_abstract_game(game, betting, cards)
        start = time.perf_counter()
        solver = Solver(bg, config.solver)
        solver.iterate(config.iterations)
        table = solver.average_strategy()
        nash = exploitability(bg, table).nash_conv
        say(f"base {name}: {config.solver} {config.iterations} iterations "
            f"({time.perf_counter() - start:.1f} s), abstract NashConv {nash:.3g} chips/hand")
        players.append(Player(name, name, "base", bg, table, cards.spec,
                              {"solver": config.solver, "iterations": config.iterations,
                               "abstract_nash_conv": nash}))
        for kind in ("preflop", "flop"):
            partition = parse_partition(game, kind)
            players.append(_grafted(game, betting, name, kind, cards, table, partition,
                                    config, workers, say))
    return players


def _grafted(game: Game, betting: BettingAbstraction, name: str, kind: str,
             cards: RankGroupCards, table: F64, partition: Partition, config: Config,
             workers: int, say: Callable[[str], None]) -> Player:
    start = time.perf_counter()
    grafted = graft_strategy(game, betting, cards, table, partition,
                             iterations=config.graft_iterations, target=config.graft_target,
                             solver=config.solver, workers=workers)
    worst = max(r.nash_conv for r in grafted.results)
    say(f"  {name} {kind} grafts: {len(grafted.results)} solved "
        f"({time.perf_counter() - start:.1f} s), largest graft-game NashConv "
        f"{worst:.3g} chips/hand")
    g = build_abstract_game(game, betting, card_abstraction_from_spec(game, grafted.cards))
    return Player(f"{name} {kind}", name, kind, g, grafted.table, grafted.cards,
                  {"solver": config.solver, "iterations": config.graft_iterations,
                   "grafting": grafted.meta()})


def head_to_head(a: Player, b: Player) -> float:
    """``a``'s expected chips per hand against ``b``, averaged over the two seats."""
    first = cross_value([a.game, b.game], [a.table, b.table])
    second = -cross_value([b.game, a.game], [b.table, a.table])
    return 0.5 * (first + second)


def measure(players: list[Player]) -> dict[str, Any]:
    """Round robin, real-game exploitability and the value against the base's best
    response, all in mbb/h."""
    lossless = build_abstract_game(players[0].game.game, players[0].game.betting)
    names = [p.name for p in players]
    n = len(players)
    matrix = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            v = head_to_head(players[i], players[j]) / MBB
            matrix[i, j], matrix[j, i] = v, -v
    expl = {p.name: real_exploitability(p.game, p.table, lossless) / MBB for p in players}
    bases = {p.abstraction: p for p in players if p.kind == "base"}
    vs_br: dict[str, float] = {}
    for p in players:
        base = bases[p.abstraction]
        total = 0.0
        for seat in (0, 1):
            opp = 1 - seat
            br = best_response(base.game, base.table, opp).strategy
            games = [p.game, base.game] if seat == 0 else [base.game, p.game]
            tables = [p.table, br] if seat == 0 else [br, p.table]
            v = cross_value(games, tables)
            total += v if seat == 0 else -v
        vs_br[p.name] = 0.5 * total / MBB
    return {"names": names, "round_robin": matrix.tolist(),
            "mean": {names[i]: float(matrix[i].sum() / (n - 1)) for i in range(n)},
            "exploitability": expl, "vs_base_best_response": vs_br}


def run_config(config: Config, *, workers: int = 1, out: Path | None = None,
               say: Callable[[str], None] = print) -> tuple[list[Player], dict[str, Any]]:
    """Build and measure the nine strategies of ``config``; with ``out``, write their
    strategy files there."""
    players = build_players(config, workers=workers, say=say)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for p in players:
            dump_strategy(out / f"{p.name.replace(' ', '-')}.strat", p.game.game,
                          p.game.betting, p.cards, p.table, meta=p.meta, tree=p.game.tree)
    result = measure(players)
    result["config"] = {"solver": config.solver, "iterations": config.iterations,
                        "graft_iterations": config.graft_iterations,
                        "graft_target_chips": config.graft_target}
    result["graft_nash_conv"] = {
        p.name: max(g["nash_conv"] for g in p.meta["grafting"]["grafts"])
        for p in players if p.kind != "base"
    }
    result["base_nash_conv"] = {p.name: p.meta["abstract_nash_conv"]
                                for p in players if p.kind == "base"}
    return players, result


# --------------------------------------------------------------------------- report


def _fmt(v: float) -> str:
    return f"{v:+.1f}"


def round_robin_markdown(result: dict[str, Any]) -> str:
    names = result["names"]
    m = result["round_robin"]
    lines = ["| row vs column (mbb/h) | " + " | ".join(names) + " | mean | wins |",
             "|---|" + "---:|" * (len(names) + 2)]
    for i, name in enumerate(names):
        cells = ["" if i == j else _fmt(m[i][j]) for j in range(len(names))]
        wins = sum(1 for j in range(len(names)) if j != i and m[i][j] > 0)
        lines.append(f"| **{name}** | " + " | ".join(cells)
                     + f" | {_fmt(result['mean'][name])} | {wins} |")
    return "\n".join(lines)


def exploitability_markdown(result: dict[str, Any]) -> str:
    lines = ["| abstraction | base | preflop grafts | flop grafts | base vs BR(base) | "
             "preflop vs BR(base) | flop vs BR(base) |", "|---|---:|---:|---:|---:|---:|---:|"]
    ex, br = result["exploitability"], result["vs_base_best_response"]
    for a in ABSTRACTIONS:
        keys = [a, f"{a} preflop", f"{a} flop"]
        lines.append(f"| {a} | " + " | ".join(f"{ex[k]:.1f}" for k in keys) + " | "
                     + " | ".join(_fmt(br[k]) for k in keys) + " |")
    return "\n".join(lines)


def spread_markdown(results: list[dict[str, Any]]) -> str:
    """Per configuration: each strategy's round-robin mean and real exploitability."""
    names = results[0]["names"]
    head = "| strategy | " + " | ".join(
        f"{r['config']['solver']} {r['config']['iterations']}" for r in results) + " |"
    lines = ["Round-robin mean (mbb/h) / real-game exploitability (mbb/h):", "", head,
             "|---|" + "---:|" * len(results)]
    for name in names:
        cells = [f"{r['mean'][name]:+.1f} / {r['exploitability'][name]:.1f}" for r in results]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Each grafted strategy against its own base, head to head (mbb/h):", "", head,
              "|---|" + "---:|" * len(results)]
    for name in names:
        if name in ABSTRACTIONS:
            continue
        base = name.split(" ")[0]
        cells = [f"{r['round_robin'][names.index(name)][names.index(base)]:+.1f}"
                 for r in results]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Convergence (chips/hand): largest abstract-game NashConv of a base / "
              "largest graft-game NashConv of a graft:", "", head,
              "|---|" + "---:|" * len(results),
              "| NashConv | " + " | ".join(
                  f"{max(r['base_nash_conv'].values()):.2g} / "
                  f"{max(r['graft_nash_conv'].values()):.2g}" for r in results) + " |"]
    return "\n".join(lines)


def heat_map(result: dict[str, Any], path: Path) -> None:
    """The round robin as a heat map (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = result["names"]
    m = np.array(result["round_robin"])
    limit = float(np.abs(m).max()) or 1.0
    fig, ax = plt.subplots(figsize=(9, 7.5))
    image = ax.imshow(m, cmap="RdBu", vmin=-limit, vmax=limit)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if i != j:
                ax.text(j, i, f"{m[i, j]:+.0f}", ha="center", va="center", fontsize=8)
    config = result["config"]
    ax.set_title(f"Leduc round robin, row vs column, mbb/h ({config['solver']}, "
                 f"{config['iterations']} base iterations)")
    fig.colorbar(image, ax=ax, label="mbb/h")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_report(out: Path, main: dict[str, Any], spread: list[dict[str, Any]],
                 command: str) -> Path:
    """``results.json``, ``tables.md`` and ``round_robin.png`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"main": main, "spread": spread,
                                                  "command": command}, indent=1) + "\n")
    parts = [f"# Leduc strategy grafting\n\nCommand: `{command}`\n",
             f"Main configuration: {main['config']}\n",
             "## Round robin (row's winnings vs column, mean of both seats, mbb/h)\n",
             round_robin_markdown(main), "",
             "## Real-game exploitability (mbb/h) and winnings against the best response to "
             "the base (mbb/h)\n", exploitability_markdown(main), ""]
    if spread:
        parts += ["## Spread over solvers and iteration counts\n", spread_markdown(spread), ""]
    path = out / "tables.md"
    path.write_text("\n".join(parts) + "\n")
    heat_map(main, out / "round_robin.png")
    return path
