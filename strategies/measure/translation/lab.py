"""The translation experiments: tables of exploitability per mapping, stack, seat and
purification, the best-extra-bet-size search, and their CSV/JSON output.

* :func:`measure_half_street`: the clairvoyance game or no-limit Kuhn
  (:mod:`.games`) for every stack, mapping and purification. The clairvoyance agent
  plays the analytic equilibrium, the Kuhn agent the CFR+ equilibrium of its abstraction.
* :func:`measure_strategy`: a strategy file of a small two-player no-limit game (no-limit
  Leduc's bundled ``fcpa``/``fchpa`` files) for every mapping, purification and size
  convention (:mod:`agent.abstraction.convention`), in both seats (:mod:`.full_br`), with
  the number of real all-ins the agent may read as something else
  (:func:`.full_br.all_in_misreads`); :func:`format_convention_table` sets the two
  conventions side by side.
* :func:`best_sizes`: for no-limit Kuhn, the extra bet ``X`` (multiples of 0.1 pot, up to
  the stack) whose abstraction ``{fold, check, X, all-in}`` leaves the agent in seat P2
  least exploitable, per mapping and stack (the smallest ``X`` on ties within
  :data:`TIE`).

Each record's ``abstract_exploitability`` is the same agent's ``(br0 + br1) / 2`` in its
*abstract* game (the responder limited to the abstract actions, so no translation): the
part of the exploitability that is not the mapping's.

A :class:`Measurement` holds best-response values in both seats; the exploitability of
the agent in seat ``p`` is ``br[1-p] - v[1-p]`` with ``v`` the real game's value, and the
average over both seats is ``(br0 + br1) / 2``. Units: pots per hand in the half-street
games (the pot is 1), chips per hand in Leduc (ante 1).

The real value of no-limit Leduc (stacks 12, every whole-chip bet) is not known in closed
form; :data:`KNOWN_REAL_VALUES` stores a DCFR estimate with a rigorous bracket (regenerate
it with ``scripts/translation_tables.py --value-iterations N``), and
:func:`strategy_real_value` computes one for any other game.

Imports :mod:`agent` and :mod:`strategies`.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agent.abstraction.convention import (
    DEFAULT_SIZE_CONVENTION,
    SIZE_CONVENTIONS,
    parse_size_convention,
)
from agent.abstraction.translation import BUILTIN_MAPPINGS, get_mapping
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt
from agent.data import strategy_path
from agent.strategy.fileformat import Strategy, load_strategy
from agent.strategy.purification import Purification, parse_purification
from strategies.games import halfstreet as hs
from strategies.measure.best_response import exploitability
from strategies.measure.translation.full_br import (
    AgentLab,
    RealValue,
    purify_table,
    real_game_value,
)

STACKS: tuple[float, ...] = (1, 3, 5, 10, 20, 50, 100)
"""The stacks of the classic tables (pots)."""
MAPPINGS: tuple[str, ...] = tuple(BUILTIN_MAPPINGS)
"""The seven mappings, in the order of docs/background.md."""
PURIFICATIONS: tuple[str, ...] = ("none", "full", "threshold:0.15")
TIE = 1e-5
"""Exploitabilities this close count as a tie in :func:`best_sizes`: above the CFR+ noise
(the abstract equilibria are within ~1e-5 of exact, and on a flat stretch of the curve,
e.g. Det-Geo's for every ``X >= 1`` at stack 100, the measured values differ by ~2e-6)."""

KNOWN_REAL_VALUES: dict[str, RealValue] = {
    # leduc.nolimit.2p.game (stacks 12, ante 1), every whole-chip bet: DCFR(1.5, 0, 2),
    # 4000 iterations; best responses to its average bracket v[0] in
    # [-0.06926943816877151, -0.06910349752263574].
    "7650f96f0d2f9ce72834ac9a111253adccb2d82458aa2b202fd465cc24e9fcbd": RealValue(
        (-0.06918646784570362, 0.06918646784570362), 8.29703230678866e-05, 4000, "dcfr"),
}
"""The real game's value per seat by game fingerprint (see the module docstring)."""

ProgressFn = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Measurement:
    """One agent (game, abstraction, mapping, purification, stack) in both seats."""

    game: str
    abstraction: str
    mapping: str
    purification: str
    stack: float
    best_responses: tuple[float, float]
    """``[q]``: what a best responder in seat ``q`` wins against the agent in the other."""
    values: tuple[float, float] | None
    """The real game's value per seat (``None`` if unknown)."""
    value_error: float = 0.0
    units: str = "pots per hand"
    extra: dict[str, Any] = field(default_factory=dict)
    sizes_in: str = ""
    """The agent's size convention (strategy files; empty for the half-street games, where
    no earlier translation can make the pots differ)."""

    def seat(self, p: int) -> float:
        """Exploitability of the agent in seat ``p`` (NaN if the value is unknown)."""
        if self.values is None:
            return float("nan")
        return self.best_responses[1 - p] - self.values[1 - p]

    @property
    def average(self) -> float:
        """``(br0 + br1) / 2``."""
        return (self.best_responses[0] + self.best_responses[1]) / 2

    def to_json(self) -> dict[str, Any]:
        """A flat JSON-able record (also the CSV row)."""
        return {
            "game": self.game,
            "abstraction": self.abstraction,
            "mapping": self.mapping,
            "purification": self.purification,
            "stack": self.stack,
            **({"sizes_in": self.sizes_in} if self.sizes_in else {}),
            "exploitability_seat0": self.seat(0),
            "exploitability_seat1": self.seat(1),
            "exploitability_average": self.average,
            "best_response_seat0": self.best_responses[0],
            "best_response_seat1": self.best_responses[1],
            "value_seat0": None if self.values is None else self.values[0],
            "value_error": self.value_error,
            "units": self.units,
            **self.extra,
        }


def parse_list(text: str | None, default: Sequence[str]) -> list[str]:
    """Comma-separated names; ``all`` or nothing gives ``default``."""
    if text is None or text.strip().lower() in ("", "all"):
        return list(default)
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_mappings(text: str | None) -> list[str]:
    """Mapping names (``all`` = the seven); each checked with :func:`get_mapping`.

    Raises:
        ValueError: for an unknown mapping.
    """
    names = parse_list(text, MAPPINGS)
    for name in names:
        get_mapping(name)
    return names


def parse_stacks(text: str | None, default: Sequence[float] = STACKS) -> list[float]:
    """Comma-separated stacks in pots (multiples of 0.1).

    Raises:
        ValueError: for anything else.
    """
    if text is None or not text.strip():
        return [float(s) for s in default]
    out = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise UsageError(f"expected stacks like '1,3,5', got {text!r}") from None
        hs.grid_steps(value)
        out.append(value)
    return out


def parse_conventions(text: str | None) -> list[str]:
    """Comma-separated size conventions (``all`` = abstract, real; nothing = the default).

    Raises:
        ValueError: for an unknown one.
    """
    if text is None or not text.strip():
        return [DEFAULT_SIZE_CONVENTION]
    return [parse_size_convention(n) for n in parse_list(text, SIZE_CONVENTIONS)]


def parse_purifications(text: str | None, default: Sequence[str] = ("none",)) -> list[str]:
    """Comma-separated purifications (``all`` = none, full, threshold:0.15).

    Raises:
        ValueError: for a bad one.
    """
    if text is not None and text.strip().lower() == "all":
        return list(PURIFICATIONS)
    names = parse_list(text, default)
    return [str(parse_purification(n)) for n in names]


MAX_HALF_STREET_SIZES = 64
"""Most pot fractions a half-street abstraction may list (``every`` gives the whole grid)."""
HALF_STREET_PRESETS: dict[str, tuple[float, ...]] = {
    "pot": (1.0,),
    "fcpa": (1.0,),
    "fchpa": (0.5, 1.0),
}


def parse_sizes(spec: str) -> tuple[float, ...] | None:
    """A half-street abstraction's extra bet sizes (the all-in is always there).

    ``pot``/``fcpa``, ``fchpa``, comma-separated pot fractions (``0.4``, at most
    :data:`MAX_HALF_STREET_SIZES`), or ``every`` (``None``: every grid size, i.e. the real
    game).

    Raises:
        ValueError: for anything else.
    """
    key = spec.strip().lower()
    if key == "every":
        return None
    if key in HALF_STREET_PRESETS:
        return HALF_STREET_PRESETS[key]
    parts = key.split(",", MAX_HALF_STREET_SIZES)
    try:
        sizes = tuple(float(s) for s in parts)
    except ValueError:
        raise UsageError(f"expected an abstraction ({', '.join(HALF_STREET_PRESETS)}, "
                         f"'every' or pot fractions like '0.4'), got {excerpt(spec)}") from None
    if not sizes or len(sizes) > MAX_HALF_STREET_SIZES or any(
            not 0 < s < math.inf for s in sizes):
        raise UsageError(f"expected at most {MAX_HALF_STREET_SIZES} positive finite pot "
                         f"fractions, got {excerpt(spec)}")
    return sizes


def sizes_label(sizes: tuple[float, ...] | None) -> str:
    """``{fold, check, pot, all-in}``-style name of a half-street abstraction."""
    if sizes is None:
        return "{every bet}"
    names = ["pot" if s == 1.0 else f"{s:g}" for s in sizes]
    return "{fold, check, " + ", ".join(names) + ", all-in}"


# --------------------------------------------------------------------------- half-street


def half_street_strategy(
    game: hs.HalfStreetGame, sizes: tuple[float, ...] | None,
    iterations: int = hs.DEFAULT_ITERATIONS,
) -> hs.HalfStreetStrategy:
    """The abstract equilibrium of ``game``'s abstraction (``None``: every grid size)."""
    grid = game.bets() if sizes is None else hs.abstract_sizes(game, sizes)
    if sizes is None:
        grid = hs.abstract_sizes(game, [float(x) for x in grid])
    return hs.abstract_equilibrium(game, grid, iterations)


def measure_half_street(
    game_name: str,
    sizes: tuple[float, ...] | None,
    stacks: Iterable[float],
    mappings: Sequence[str],
    purifications: Sequence[str] = ("none",),
    *,
    iterations: int = hs.DEFAULT_ITERATIONS,
) -> list[Measurement]:
    """Every stack x purification x mapping of a half-street game (pots per hand).

    Raises:
        ValueError: for an unknown game, mapping or purification.
    """
    out = []
    label = sizes_label(sizes)
    for n in stacks:
        game = hs.make_game(game_name, n)
        strategy = half_street_strategy(game, sizes, iterations)
        for pur_name in purifications:
            pur = parse_purification(pur_name)
            played = strategy.purified(pur)
            extra = {"abstract_exploitability": hs.abstract_exploitability(game, played)}
            for name in mappings:
                fig = hs.full_best_responses(game, strategy, get_mapping(name), pur)
                out.append(Measurement(game_name, label, name, str(pur), float(n),
                                       fig.best_responses, fig.values, 0.0,
                                       "pots per hand", dict(extra)))
    return out


@dataclass(frozen=True)
class BestSize:
    """The best extra bet size of one mapping and stack."""

    stack: float
    mapping: str
    size: float
    """``X``: the abstraction is ``{fold, check, X, all-in}``."""
    exploitability: float
    """Of the agent in seat P2 (pots per hand)."""
    pot_exploitability: float
    """The same with ``X`` = pot, for comparison."""

    def to_json(self) -> dict[str, Any]:
        return {"game": "nl-kuhn", "stack": self.stack, "mapping": self.mapping,
                "best_size": self.size, "exploitability_seat1": self.exploitability,
                "pot_exploitability_seat1": self.pot_exploitability,
                "units": "pots per hand"}


PROGRESS_SECONDS = 10.0
"""``best_sizes`` reports at least this often within one stack (the largest takes ~40 s)."""


def best_sizes(
    stacks: Iterable[float],
    mappings: Sequence[str],
    purification: str = "none",
    *,
    iterations: int = hs.DEFAULT_ITERATIONS,
    progress: ProgressFn = _quiet,
) -> list[BestSize]:
    """For no-limit Kuhn: per stack and mapping, the ``X`` minimising P2's exploitability.

    Every ``X`` of the grid up to the stack is solved (CFR+, ``iterations``) and measured
    against every mapping; ties within :data:`TIE` go to the smallest ``X``.
    """
    pur = parse_purification(purification)
    fns = [get_mapping(m) for m in mappings]
    out: list[BestSize] = []
    for n in stacks:
        game = hs.nl_kuhn(n)
        bets = game.bets()
        value = hs.real_value(game)
        table = np.empty((len(fns), len(bets)))  # [mapping, X]
        start = shown = time.perf_counter()
        for j, x in enumerate(bets):
            strategy = hs.solve_abstract(game, hs.abstract_sizes(game, [float(x)]),
                                         iterations).purified(pur)
            brackets = hs.bet_brackets(strategy, bets)
            for i, fn in enumerate(fns):
                calls = hs.defender_calls(game, strategy, fn, bets, brackets)
                table[i, j] = float(hs.bettor_values(game, bets, calls).max(axis=1).sum()) - value
            now = time.perf_counter()
            if now - shown >= PROGRESS_SECONDS and j + 1 < len(bets):  # a big stack's sizes
                shown = now
                progress(f"best-size: stack {n:g}: {j + 1}/{len(bets)} sizes, "
                         f"{now - start:.0f} s")
        progress(f"best-size: stack {n:g}: {len(bets)} sizes in "
                 f"{time.perf_counter() - start:.1f} s")
        pot = int(np.argmin(np.abs(bets - 1.0)))
        for i, name in enumerate(mappings):
            j = int(np.flatnonzero(table[i] <= table[i].min() + TIE)[0])
            out.append(BestSize(float(n), name, float(bets[j]), float(table[i, j]),
                                float(table[i, pot]) if bets[pot] == 1.0 else math.nan))
    return out


# --------------------------------------------------------------------------- strategy files


def bundled_strategy_path(preset: str) -> Path:
    """The bundled no-limit Leduc file of an abstraction preset (``fcpa``, ``fchpa``).

    Raises:
        ValueError: if there is no such bundled file.
    """
    path = strategy_path(f"leduc.nolimit.2p.{preset}.strat")
    if not _exists(path):
        raise UsageError(f"expected a bundled no-limit Leduc abstraction (fcpa, fchpa), got "
                         f"{excerpt(preset)}")
    return path


def _exists(path: Path) -> bool:
    """``path.exists()``, False for a name the system refuses (too long, ...)."""
    try:
        return path.exists()
    except OSError:
        return False


def strategy_real_value(game: Game, iterations: int | None = None) -> RealValue | None:
    """The real game's value: the stored one when ``iterations`` is None (``None`` if not
    stored), else a fresh DCFR estimate (``iterations`` 0 gives ``None``)."""
    if iterations is None:
        return KNOWN_REAL_VALUES.get(game.fingerprint)
    if iterations <= 0:
        return None
    return real_game_value(game, iterations)


def measure_strategy(
    strategy: Strategy,
    mappings: Sequence[str],
    purifications: Sequence[str] = ("none",),
    *,
    value: RealValue | None = None,
    game_name: str = "nl-leduc",
    progress: ProgressFn = _quiet,
    conventions: Sequence[str] = (DEFAULT_SIZE_CONVENTION,),
) -> list[Measurement]:
    """Every size convention x purification x mapping of a strategy file in the real game,
    both seats (chips per hand); each record's ``all_in_misreads`` is
    :meth:`.full_br.AgentLab.misreads`."""
    start = time.perf_counter()
    lab = AgentLab(strategy)
    stack = float(strategy.game.stack[0])
    out = []
    for sizes_in in conventions:
        models = lab.models_for(sizes_in)
        progress(f"{game_name} {strategy.betting.name}: real tree {lab.real.num_nodes} "
                 f"nodes, agent pairs {models[0].num_pairs}/{models[1].num_pairs} (sizes in "
                 f"{sizes_in}), built in {time.perf_counter() - start:.1f} s")
        for pur_name in purifications:
            pur: Purification = parse_purification(pur_name)
            played = purify_table(lab.agent, lab.table, pur)
            abstract = exploitability(lab.agent, played).exploitability
            for name in mappings:
                fn = get_mapping(name)
                fig = lab.measure(fn, pur, value, sizes_in=sizes_in)
                extra = {"abstract_exploitability": abstract,
                         "all_in_misreads": lab.misreads(fn, pur, sizes_in=sizes_in)}
                out.append(Measurement(game_name, strategy.betting.name, name, str(pur),
                                       stack, fig.best_responses, fig.values,
                                       fig.value_error, "chips per hand", extra, sizes_in))
    return out


def load_leduc(spec: str) -> Strategy:
    """A bundled preset name (``fcpa``, ``fchpa``) or a strategy file path."""
    path = Path(spec)
    if not _exists(path):
        path = bundled_strategy_path(spec)
    return load_strategy(path)


# --------------------------------------------------------------------------- output


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "nan"
    return f"{0.0 if abs(v) < 5e-13 else v:.4f}"


def format_stack_table(rows: Sequence[Measurement], seat: int = 1) -> str:
    """Mappings x stacks of the agent's exploitability in ``seat`` (one block per game,
    abstraction and purification)."""
    blocks: dict[tuple[str, str, str], list[Measurement]] = {}
    for r in rows:
        blocks.setdefault((r.game, r.abstraction, r.purification), []).append(r)
    lines: list[str] = []
    for (game, abstraction, pur), items in blocks.items():
        stacks = sorted({r.stack for r in items})
        mappings = list(dict.fromkeys(r.mapping for r in items))
        units = items[0].units
        lines.append(f"{game} {abstraction}, purification {pur}: exploitability of the agent "
                     f"in seat P{seat + 1} ({units}), mappings x stacks; then the agent in "
                     f"seat P{2 - seat} and (br0 + br1) / 2 in the abstract game")
        lines.append(f"{'mapping':12}" + "".join(f"{f'n={s:g}':>10}" for s in stacks))
        by = {(r.mapping, r.stack): r for r in items}
        for m in mappings:
            lines.append(f"{m:12}" + "".join(f"{_fmt(by[(m, s)].seat(seat)):>10}"
                                             if (m, s) in by else f"{'-':>10}"
                                             for s in stacks))
        first = [by[(mappings[0], s)] for s in stacks if (mappings[0], s) in by]
        lines.append(f"{f'(seat P{2 - seat})':12}" + "".join(f"{_fmt(r.seat(1 - seat)):>10}"
                                                           for r in first))
        lines.append(f"{'(abstract)':12}" + "".join(
            f"{_fmt(r.extra.get('abstract_exploitability', math.nan)):>10}" for r in first))
        lines.append("")
    return "\n".join(lines)


def format_seat_table(rows: Sequence[Measurement]) -> str:
    """Mappings x (seat 0, seat 1, average) per game, abstraction and purification."""
    blocks: dict[tuple[str, str, float, str], list[Measurement]] = {}
    for r in rows:
        blocks.setdefault((r.game, r.abstraction, r.stack, r.sizes_in), []).append(r)
    lines: list[str] = []
    for (game, abstraction, stack, sizes_in), items in blocks.items():
        purs = list(dict.fromkeys(r.purification for r in items))
        units = items[0].units
        err = max(r.value_error for r in items)
        sizes = f", sizes in {sizes_in}" if sizes_in else ""
        lines.append(f"{game} {abstraction} (stacks {stack:g}{sizes}): exploitability per seat "
                     f"of the agent and average ({units}; per-seat figures use the real game's "
                     f"value +- {err:.2g})")
        head = f"{'mapping':12}"
        for p in purs:
            head += f" | {p:^32}"
        lines.append(head)
        lines.append(f"{'':12}" + "".join(f" | {'seat 0':>10}{'seat 1':>11}{'average':>11}"
                                          for _ in purs))
        by = {(r.mapping, r.purification): r for r in items}
        for m in dict.fromkeys(r.mapping for r in items):
            line = f"{m:12}"
            for p in purs:
                cell = by.get((m, p))
                if cell is None:
                    line += f" | {'-':>32}"
                else:
                    line += (f" | {_fmt(cell.seat(0)):>10}{_fmt(cell.seat(1)):>11}"
                             f"{_fmt(cell.average):>11}")
            lines.append(line)
        line = f"{'(abstract)':12}"
        for p in purs:
            cell = next((r for r in items if r.purification == p), None)
            value = math.nan if cell is None else cell.extra.get("abstract_exploitability",
                                                                  math.nan)
            line += f" | {'':>10}{'':>11}{_fmt(value):>11}"
        lines.append(line)
        lines.append("")
    return "\n".join(lines)


def format_convention_table(rows: Sequence[Measurement]) -> str:
    """Mappings x size conventions x (seat 0, seat 1, average, all-in misreads), one block
    per game, abstraction and purification; the last column names the convention with the
    lower average (``=`` within 1e-9)."""
    blocks: dict[tuple[str, str, float, str], list[Measurement]] = {}
    for r in rows:
        blocks.setdefault((r.game, r.abstraction, r.stack, r.purification), []).append(r)
    lines: list[str] = []
    for (game, abstraction, stack, pur), items in blocks.items():
        conventions = list(dict.fromkeys(r.sizes_in for r in items))
        lines.append(f"{game} {abstraction} (stacks {stack:g}), purification {pur}: "
                     f"exploitability by size convention ({items[0].units}; 'mis' = real "
                     f"all-ins read as something else)")
        lines.append(f"{'mapping':12}" + "".join(f" | {f'sizes in {c}':^33}"
                                                 for c in conventions) + " | lower")
        lines.append(f"{'':12}" + "".join(f" | {'seat 0':>9}{'seat 1':>9}{'average':>9}"
                                          f"{'mis':>6}" for _ in conventions) + " |")
        by = {(r.mapping, r.sizes_in): r for r in items}
        totals = dict.fromkeys(conventions, 0.0)
        for m in dict.fromkeys(r.mapping for r in items):
            line = f"{m:12}"
            avgs: dict[str, float] = {}
            for c in conventions:
                cell = by.get((m, c))
                if cell is None:
                    line += f" | {'-':>33}"
                    continue
                avgs[c] = cell.average
                totals[c] += cell.average
                line += (f" | {_fmt(cell.seat(0)):>9}{_fmt(cell.seat(1)):>9}"
                         f"{_fmt(cell.average):>9}{cell.extra.get('all_in_misreads', '-'):>6}")
            if len(avgs) > 1:
                low = min(avgs.values())
                best = [c for c, v in avgs.items() if v <= low + 1e-9]
                line += " | " + ("=" if len(best) == len(avgs) else ",".join(best))
            lines.append(line)
        lines.append(f"{'(sum avg)':12}" + "".join(f" | {'':>18}{_fmt(totals[c]):>9}{'':>6}"
                                                   for c in conventions) + " |")
        lines.append("")
    return "\n".join(lines)


def format_best_sizes(rows: Sequence[BestSize]) -> str:
    """Mappings x stacks of the best ``X`` (and its exploitability)."""
    stacks = sorted({r.stack for r in rows})
    mappings = list(dict.fromkeys(r.mapping for r in rows))
    by = {(r.mapping, r.stack): r for r in rows}
    lines = ["nl-kuhn {fold, check, X, all-in}: best X for the agent in seat P2, and its "
             "exploitability (pots per hand)",
             f"{'mapping':12}" + "".join(f"{f'n={s:g}':>17}" for s in stacks)]
    for m in mappings:
        cells = []
        for s in stacks:
            r = by.get((m, s))
            cells.append(f"{'-':>17}" if r is None else
                         f"{f'{r.size:g} ({r.exploitability:.4f})':>17}")
        lines.append(f"{m:12}" + "".join(cells))
    return "\n".join(lines) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (np.floating, np.integer)):
        return _clean(value.item())
    return value


def write_records(records: Sequence[dict[str, Any]], out_dir: Path, stem: str) -> list[Path]:
    """``stem.csv`` and ``stem.json`` in ``out_dir`` (created); returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [{k: _clean(v) for k, v in r.items()} for r in records]
    keys: list[str] = []
    for r in rows:
        keys.extend(k for k in r if k not in keys)
    csv_path = out_dir / f"{stem}.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: "" if r.get(k) is None else r.get(k) for k in keys})
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return [csv_path, json_path]
