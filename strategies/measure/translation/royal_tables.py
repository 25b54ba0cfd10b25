"""The Royal tables: exploitability of each abstraction x mapping x purification, and the
round robin of the abstractions against each other, all exact
(:mod:`strategies.measure.translation.royal_br`), as markdown, JSON and PNG.

Used by ``python scripts/royal_tables.py --out DIR``. Units: chips per hand in the JSON,
milli-big-blinds per hand (mbb/h: chips / big blind x 1000) in the tables and plots.

* Exploitability: ``(br0 + br1) / 2`` of the agent (strategy file + mapping +
  purification) against a best responder that may bet every whole chip; each seat's best
  response is in the JSON.
* Round robin: the exact value of the row agent against the column agent, averaged over
  the two seats (each agent with its own mapping draws), all with one mapping and one
  purification (default Rand-psHar, none).

Imports numpy, :mod:`agent` and :mod:`strategies` (matplotlib inside :func:`plot_tables`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agent.abstraction.translation import get_mapping
from agent.acpc.errors import UsageError
from agent.strategy.fileformat import Strategy
from agent.strategy.purification import parse_purification
from strategies.measure.translation import royal_br as rb

NoteFn = Callable[[str], None]


def _quiet(text: str) -> None:
    return None


@dataclass
class RoyalTables:
    """What :func:`measure_tables` measured (possibly interrupted: what is done)."""

    names: list[str]
    big_blind: float
    checksums: dict[str, str] = field(default_factory=dict)
    """Per abstraction: its strategy file's table checksum (what ``previous`` matches)."""
    exploitability: list[dict[str, Any]] = field(default_factory=list)
    round_robin: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "checksums": self.checksums,
                "big_blind": self.big_blind, "units": "chips per hand",
                "exploitability": self.exploitability, "round_robin": self.round_robin,
                "seconds": round(self.seconds, 2), "complete": self.complete}


def measure_tables(
    strategies: Sequence[tuple[str, Strategy]], mappings: Sequence[str],
    purifications: Sequence[str], rr_mapping: str = "rand-pshar", rr_purify: str = "none",
    note: NoteFn = _quiet, tick: Callable[[int, int], None] | None = None,
    previous: dict[str, Any] | None = None,
) -> RoyalTables:
    """Measure every table cell; Ctrl-C returns what is done (``complete`` False).

    ``previous`` (an earlier run's JSON) supplies the cells it has for the same strategy
    files (same table checksums), mappings and purifications: a run can be continued.

    Raises:
        ValueError: for strategies of different games or unknown mappings/purifications.
    """
    if not strategies:
        raise UsageError("expected at least one strategy file, got none")
    game = strategies[0][1].game
    for name, s in strategies:
        if s.game.fingerprint != game.fingerprint:
            raise UsageError(f"expected every strategy for the same game, {name!r} is for "
                             f"another")
    maps = {m: get_mapping(m) for m in [*mappings, rr_mapping]}
    pures = {p: parse_purification(p) for p in [*purifications, rr_purify]}
    out = RoyalTables([n for n, _ in strategies], float(game.big_blind),
                      {n: s.checksum for n, s in strategies})
    old_sums = dict(previous.get("checksums", {})) if previous else {}
    same = {n for n in out.names if old_sums.get(n) == out.checksums[n]}
    old_cells = {(r["abstraction"], r["purification"], r["mapping"]): r
                 for r in (previous or {}).get("exploitability", [])
                 if r.get("abstraction") in same}
    old_rr = {(r["row"], r["column"], r["mapping"], r["purification"]): r
              for r in (previous or {}).get("round_robin", [])
              if r.get("row") in same and r.get("column") in same}
    total = len(strategies) * len(purifications) * len(mappings) + len(strategies) ** 2
    done = 0
    start = time.monotonic()

    def step() -> None:
        nonlocal done
        done += 1
        if tick is not None:
            tick(done, total)

    try:
        for name, strategy in strategies:
            for p in purifications:
                lab = rb.RoyalLab(rb.translated_agent(strategy, pures[p], name=name))
                for m in mappings:
                    if (name, p, m) in old_cells:
                        out.exploitability.append(old_cells[name, p, m])
                        step()
                        continue
                    t = time.monotonic()
                    fig = lab.measure(maps[m])
                    out.exploitability.append({
                        "abstraction": name, "purification": p, "mapping": m,
                        "best_responses": list(fig.best_responses), "average": fig.average,
                        "seconds": round(time.monotonic() - t, 3)})
                    note(f"{name} {p} {m}: (br0 + br1) / 2 = {fig.average:.6f} chips/hand")
                    step()
        agents = [rb.translated_agent(s, pures[rr_purify], name=n) for n, s in strategies]
        models = [(rb.seat_model(a, 0), rb.seat_model(a, 1)) for a in agents]
        rr = maps[rr_mapping]
        for i, row in enumerate(out.names):
            for j, col in enumerate(out.names):
                if (row, col, rr_mapping, rr_purify) in old_rr:
                    out.round_robin.append(old_rr[row, col, rr_mapping, rr_purify])
                    step()
                    continue
                # the row agent in seat q against the column agent in the other seat
                seats = [rb.head_to_head(models[j][1 - q], models[i][q], rr, rr)
                         for q in (0, 1)]
                out.round_robin.append({"row": row, "column": col, "seats": seats,
                                        "value": (seats[0] + seats[1]) / 2,
                                        "mapping": rr_mapping, "purification": rr_purify})
                note(f"{row} vs {col}: {(seats[0] + seats[1]) / 2:+.6f} chips/hand")
                step()
        out.complete = True
    except KeyboardInterrupt:
        note("interrupted: writing what is done")
    out.seconds = time.monotonic() - start
    return out


def _mbb(chips: float, big_blind: float) -> float:
    return chips / big_blind * 1000.0


def format_tables(t: RoyalTables) -> str:
    """The markdown: exploitability per abstraction and purification (rows) and mapping
    (columns), then the round robin (row's value against the column, both seats)."""
    lines: list[str] = []
    mappings = list(dict.fromkeys(r["mapping"] for r in t.exploitability))
    purifications = list(dict.fromkeys(r["purification"] for r in t.exploitability))
    if t.exploitability:
        lines += ["Exploitability (br0 + br1) / 2 in mbb/h (a best responder betting every "
                  "whole chip):", "",
                  "| abstraction | purification | " + " | ".join(mappings) + " |",
                  "|---|---|" + "---|" * len(mappings)]
        cells = {(r["abstraction"], r["purification"], r["mapping"]): r
                 for r in t.exploitability}
        for name in t.names:
            for p in purifications:
                row = [cells.get((name, p, m)) for m in mappings]
                if all(c is None for c in row):
                    continue
                values = [_mbb(c["average"], t.big_blind) if c else float("nan") for c in row]
                best = min(values)
                text = [f"**{v:.1f}**" if v == best else f"{v:.1f}" for v in values]
                lines.append(f"| {name} | {p} | " + " | ".join(text) + " |")
        lines += ["", "Per seat, mbb/h: what a best responder in seat 0 (resp. 1) wins "
                  "against the agent in seat 1 (resp. 0); seat 0 posts the big blind:", "",
                  "| abstraction | purification | " + " | ".join(
                      f"{m} br0 / br1" for m in mappings) + " |",
                  "|---|---|" + "---|" * len(mappings)]
        for name in t.names:
            for p in purifications:
                row = [cells.get((name, p, m)) for m in mappings]
                if all(c is None for c in row):
                    continue
                lines.append(f"| {name} | {p} | " + " | ".join(
                    f"{_mbb(c['best_responses'][0], t.big_blind):.1f} / "
                    f"{_mbb(c['best_responses'][1], t.big_blind):.1f}" if c else ""
                    for c in row) + " |")
        lines.append("")
    if t.round_robin:
        rr = t.round_robin[0]
        lines += [f"Round robin ({rr['mapping']}, purification {rr['purification']}): the "
                  "row's expected value against the column in mbb/h, averaged over both "
                  "seats:", "",
                  "| row \\ column | " + " | ".join(t.names) + " | mean |",
                  "|---|" + "---|" * (len(t.names) + 1)]
        cells2: dict[tuple[str, str], float] = {(r["row"], r["column"]): float(r["value"])
                                                for r in t.round_robin}
        for a in t.names:
            found: list[float | None] = [cells2.get((a, b)) for b in t.names]
            others = [v for b, v in zip(t.names, found, strict=True)
                      if v is not None and b != a]
            mean = f"{_mbb(float(np.mean(others)), t.big_blind):+.3f}" if others else ""
            lines.append(f"| {a} | " + " | ".join(
                f"{_mbb(v, t.big_blind):+.3f}" if v is not None else "" for v in found)
                + f" | {mean} |")
        lines.append("")
    return "\n".join(lines)


def plot_tables(t: RoyalTables, out_dir: Path) -> list[Path]:
    """Heat maps: exploitability (abstraction x purification rows, mapping columns) and the
    round robin. Returns the PNG paths.

    Raises:
        ValueError: without matplotlib.
    """
    from strategies.measure.translation.plots import pyplot

    plt = pyplot()
    paths: list[Path] = []
    if t.exploitability:
        mappings = list(dict.fromkeys(r["mapping"] for r in t.exploitability))
        rows = list(dict.fromkeys((r["abstraction"], r["purification"])
                                  for r in t.exploitability))
        grid = np.full((len(rows), len(mappings)), np.nan)
        for r in t.exploitability:
            grid[rows.index((r["abstraction"], r["purification"])),
                 mappings.index(r["mapping"])] = _mbb(r["average"], t.big_blind)
        fig, ax = plt.subplots(figsize=(1.4 * len(mappings) + 3, 0.5 * len(rows) + 2))
        im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
        for (y, x), v in np.ndenumerate(grid):
            ax.text(x, y, f"{v:.0f}", ha="center", va="center", color="white", fontsize=8)
        ax.set_xticks(range(len(mappings)), mappings, rotation=30, ha="right")
        ax.set_yticks(range(len(rows)), [f"{a} / {p}" for a, p in rows])
        ax.set_title("Royal: exploitability (mbb/h), best responder betting every chip")
        fig.colorbar(im, ax=ax)
        fig.tight_layout()
        path = out_dir / "royal_exploitability.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    if t.round_robin:
        names = t.names
        grid = np.full((len(names), len(names)), np.nan)
        for r in t.round_robin:
            grid[names.index(r["row"]), names.index(r["column"])] = _mbb(r["value"],
                                                                         t.big_blind)
        fig, ax = plt.subplots(figsize=(1.3 * len(names) + 3, 1.0 * len(names) + 2))
        lim = float(np.nanmax(np.abs(grid))) or 1.0
        im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim)
        for (y, x), v in np.ndenumerate(grid):
            ax.text(x, y, f"{v:+.3f}", ha="center", va="center", fontsize=9)
        ax.set_xticks(range(len(names)), names)
        ax.set_yticks(range(len(names)), names)
        rr = t.round_robin[0]
        ax.set_title(f"Royal round robin, row vs column (mbb/h), {rr['mapping']}")
        fig.colorbar(im, ax=ax)
        fig.tight_layout()
        path = out_dir / "royal_round_robin.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def write_tables(t: RoyalTables, out_dir: Path, plots: bool = True) -> list[Path]:
    """``royal_tables.md``, ``royal_tables.json`` and the PNGs in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "royal_tables.md"
    md.write_text(format_tables(t), encoding="utf-8")
    js = out_dir / "royal_tables.json"
    js.write_text(json.dumps(t.to_json(), indent=2) + "\n", encoding="utf-8")
    paths = [md, js]
    if plots:
        paths += plot_tables(t, out_dir)
    return paths
