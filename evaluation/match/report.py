"""Results of a run: duplicate statistics per group and per variant, tables, exports, plot.

:func:`summarize` turns the stored matches into :class:`GroupResult` (a variant's result in
one group, e.g. one pair) and overall figures per variant (the average over its groups,
:func:`evaluation.stats.combine`). The statistical unit is the duplicate group of one deal seed
(every seat rotation of it), or with ``unit="hand"`` one hand of it (the same hand number
in every rotation holds the same cards): many more units and tighter intervals, valid when
the agents do not adapt from hand to hand (every built-in and strategy-file agent; not
necessarily an external one). Only complete units count: a seed whose rotations are not
all stored is left out (and reported as missing).

Decisions that fell back on an agent's time guard are summed per variant
(:attr:`Summary.time_guard`): the table's footnote and :func:`timing_note` say so (the
results then depend on timing), :func:`to_json` gives the counts.

Output: :func:`format_table` (plain text, deterministic, so two runs can be compared),
:func:`to_json` / :func:`write_csv`, :func:`write_plot` (matplotlib, the optional extra
``plot``), and the runner's progress display :class:`MatchProgress` (on the project's one
progress implementation, :func:`agent.console.make_progress`).

Imports the stdlib, :mod:`agent.console` and :mod:`dealer`; rich and matplotlib only when
asked for.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from agent import console
from agent.acpc.errors import AcpcError, UsageError
from evaluation.match import worker
from evaluation.match.store import StoredMatch
from evaluation.stats import CONFIDENCE, Estimate, combine, estimate, to_mbb

UNITS = ("seed", "hand")


@dataclass(frozen=True, slots=True)
class GroupResult:
    """One variant's result in one group."""

    group: tuple[str, ...]
    variant: str
    raw: Estimate | None
    """None when no unit of the group is complete."""
    allin: Estimate | None
    units_planned: int
    units_complete: int

    @property
    def opponents(self) -> tuple[str, ...]:
        """The other variants of the group."""
        return tuple(v for v in self.group if v != self.variant)


@dataclass
class Summary:
    """Everything the report shows."""

    game: str
    big_blind: int
    num_players: int
    unit: str
    hands_per_match: int
    confidence: float
    groups: list[GroupResult] = field(default_factory=list)
    overall: dict[str, tuple[Estimate | None, Estimate | None]] = field(default_factory=dict)
    """Variant -> (raw, all-in EV) averaged over its groups that have a result."""
    overall_groups: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Variant -> (groups with a result, groups played)."""
    variants: list[str] = field(default_factory=list)
    hands_played: int = 0
    matches_done: int = 0
    matches_planned: int = 0
    allin_requested: bool = False
    time_guard: dict[str, int] = field(default_factory=dict)
    """Variant -> its decisions that fell back on the agent's time guard, over the stored
    matches (counts the agents reported; an external command reports none)."""

    @property
    def timing_dependent(self) -> bool:
        """True if a decision fell back on a time guard: the results depend on timing."""
        return any(self.time_guard.values())

    def result(self, variant: str, group: Sequence[str]) -> GroupResult | None:
        """The result of ``variant`` in ``group`` (names in any order)."""
        key = frozenset(group)
        for g in self.groups:
            if g.variant == variant and frozenset(g.group) == key:
                return g
        return None


def _units(
    matches: Sequence[StoredMatch], variant: str, n_rot: int, bb: int, unit: str, allin: bool
) -> tuple[list[float], int] | None:
    """Unit values (mbb/h) of ``variant`` over the complete units of one group's matches."""
    by_unit: dict[int, dict[int, StoredMatch]] = {}
    for m in matches:
        by_unit.setdefault(m.unit, {})[m.rotation] = m
    values: list[float] = []
    hands = 0
    for k in sorted(by_unit):
        rots = by_unit[k]
        if len(rots) != n_rot:
            continue
        rows: list[list[float]] = []
        for r in range(n_rot):
            m = rots[r]
            table = m.allin_values if allin else m.values
            if table is None:
                return None
            seat = m.seats.index(variant)
            rows.append([row[seat] for row in table])
        per_match = len(rows[0])
        hands += per_match * n_rot
        if unit == "hand":
            for h in range(per_match):
                values.append(to_mbb(math.fsum(r[h] for r in rows) / n_rot, bb))
        else:
            total = math.fsum(math.fsum(r) for r in rows)
            values.append(to_mbb(total / (per_match * n_rot), bb))
    return values, hands


def summarize(
    matches: Sequence[StoredMatch],
    *,
    groups: Sequence[tuple[str, ...]],
    variants: Sequence[str],
    units_planned: int,
    game: str,
    big_blind: int,
    num_players: int,
    hands_per_match: int,
    unit: str = "seed",
    allin: bool = False,
    confidence: float = CONFIDENCE,
) -> Summary:
    """Statistics of a run's stored matches (see the module docstring).

    Raises:
        ValueError: for an unknown ``unit``.
    """
    if unit not in UNITS:
        raise UsageError(f"expected a unit in {UNITS}, got {unit!r}")
    summary = Summary(game, big_blind, num_players, unit, hands_per_match, confidence,
                      variants=list(variants), allin_requested=allin)
    by_group: dict[tuple[str, ...], list[StoredMatch]] = {}
    for m in matches:
        by_group.setdefault(m.group, []).append(m)
    per_variant: dict[str, list[tuple[Estimate | None, Estimate | None]]] = {}
    summary.time_guard = dict.fromkeys(variants, 0)
    for group in groups:
        ms = [m for m in by_group.get(group, []) if m.unit < units_planned]
        for m in ms:
            for name, count in zip(m.seats, m.time_guard or (), strict=False):
                summary.time_guard[name] = summary.time_guard.get(name, 0) + (count or 0)
        summary.matches_done += len(ms)
        summary.hands_played += sum(m.hands for m in ms)
        summary.matches_planned += units_planned * len(group)
        rotations: dict[int, int] = {}
        for m in ms:
            rotations[m.unit] = rotations.get(m.unit, 0) + 1
        complete = sum(1 for c in rotations.values() if c == len(group))
        for variant in group:
            got = _units(ms, variant, len(group), big_blind, unit, False)
            raw = estimate(got[0], got[1], confidence) if got and got[0] else None
            adj = None
            if allin:
                got_a = _units(ms, variant, len(group), big_blind, unit, True)
                adj = estimate(got_a[0], got_a[1], confidence) if got_a and got_a[0] else None
            summary.groups.append(GroupResult(group, variant, raw, adj, units_planned, complete))
            per_variant.setdefault(variant, []).append((raw, adj))
    for variant in variants:
        parts = per_variant.get(variant, [])
        raws = [r for r, _ in parts if r is not None]
        adjs = [a for _, a in parts if a is not None]
        summary.overall[variant] = (
            combine(raws, confidence) if raws else None,
            combine(adjs, confidence) if adjs else None,
        )
        summary.overall_groups[variant] = (len(raws), len(parts))
    return summary


# ---------------------------------------------------------------------- text


def timing_note(summary: Summary) -> str | None:
    """One line saying which variants' decisions fell back on the time guard (the
    results then depend on timing), or None if none did: the table's footnote and the
    warning ``acpc-match`` prints."""
    if not summary.timing_dependent:
        return None
    counts = ", ".join(f"{v} {n}" for v, n in summary.time_guard.items() if n)
    return (f"time guard: {sum(summary.time_guard.values())} decision(s) checked or called "
            f"past the agents' {worker.TIME_GUARD_MS:g} ms time guard ({counts}): these results "
            f"depend on timing")


def _num(x: float, width: int = 9, signed: bool = True) -> str:
    if math.isnan(x) or math.isinf(x):
        return "n/a".rjust(width)
    return (f"{x:+.1f}" if signed else f"{x:.1f}").rjust(width)


def _ci(e: Estimate) -> str:
    return "n/a" if math.isinf(e.half_width) else f"{e.half_width:.1f}"


def _cell(e: Estimate | None) -> str:
    if e is None:
        return "-"
    return f"{e.mean:+.1f} ± {_ci(e)}"


def _sig(e: Estimate) -> str:
    if math.isnan(e.se) or math.isinf(e.half_width):
        return "?"
    return "yes" if e.significant else "no"


def format_table(summary: Summary) -> str:
    """The final table as plain text (one line per variant per group, then the overall)."""
    pct = f"{summary.confidence * 100:g}%"
    unit_text = "duplicate seed" if summary.unit == "seed" else "duplicate hand"
    lines = [
        f"game {summary.game} (big blind {summary.big_blind}); {summary.matches_done} of "
        f"{summary.matches_planned} matches, {summary.hands_played} hands; mbb/h with {pct} "
        f"confidence intervals over {unit_text}s",
    ]
    name_w = max([len("variant")] + [len(v) for v in summary.variants])
    opp_w = max([len("vs")] + [len(" ".join(g.opponents)) for g in summary.groups])
    head = (f"{'variant':<{name_w}}  {'vs':<{opp_w}}  {'mbb/h':>9}  {'±' + pct:>9}  "
            f"{'se':>8}  {'units':>5}  {'hands':>8}  {'sig':>3}")
    if summary.allin_requested:
        head += f"  {'all-in EV':>9}  {'±' + pct:>9}  {'sig':>3}"
    lines += ["", head, "-" * len(head)]
    shown: set[frozenset[str]] = set()
    for g in summary.groups:
        if summary.num_players == 2:
            key = frozenset(g.group)
            if key in shown:
                continue  # heads-up: the second variant's line is the negation
            shown.add(key)
        opp = " ".join(g.opponents)
        if g.raw is None:
            line = f"{g.variant:<{name_w}}  {opp:<{opp_w}}  {'no complete unit yet':>9}"
        else:
            e = g.raw
            line = (f"{g.variant:<{name_w}}  {opp:<{opp_w}}  {_num(e.mean)}  "
                    f"{_ci(e):>9}  {_num(e.se, 8, False)}  {e.units:>5}  {e.hands:>8}  "
                    f"{_sig(e):>3}")
            if summary.allin_requested:
                a = g.allin
                line += (f"  {_num(a.mean)}  {_ci(a):>9}  {_sig(a):>3}" if a is not None
                         else f"  {'-':>9}  {'-':>9}  {'-':>3}")
        if g.units_complete < g.units_planned:
            line += f"  ({g.units_planned - g.units_complete} unit(s) missing)"
        lines.append(line)
    if len(summary.variants) > summary.num_players or summary.num_players > 2:
        lines += ["", f"overall (average over groups, {pct} CI):"]
        for v in summary.variants:
            raw, adj = summary.overall.get(v, (None, None))
            text = f"  {v:<{name_w}}  {_cell(raw):>18}"
            if summary.allin_requested:
                text += f"   all-in EV {_cell(adj):>18}"
            have, played = summary.overall_groups.get(v, (0, 0))
            if have < played:
                text += f"   ({have} of {played} groups have a result)"
            lines.append(text)
    if summary.num_players == 2 and len(summary.variants) > 2:
        lines += ["", "round robin (row's mbb/h against column):"]
        cells = [[""] + summary.variants]
        for row in summary.variants:
            out = [row]
            for col in summary.variants:
                if row == col:
                    out.append("·")
                    continue
                r = summary.result(row, (row, col))
                out.append(_cell(r.raw if r else None))
            cells.append(out)
        widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
        for c in cells:
            lines.append("  " + "  ".join(x.rjust(w) for x, w in zip(c, widths, strict=True)))
    note = timing_note(summary)
    if note is not None:
        lines += ["", note]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- exports


def to_json(summary: Summary, failures: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The summary as a JSON-able dict."""

    def est(e: Estimate | None) -> dict[str, Any] | None:
        return None if e is None else e.to_dict()

    return {
        "game": summary.game,
        "big_blind": summary.big_blind,
        "num_players": summary.num_players,
        "unit": summary.unit,
        "figures": "mbb/h",
        "confidence": summary.confidence,
        "hands_per_match": summary.hands_per_match,
        "matches_done": summary.matches_done,
        "matches_planned": summary.matches_planned,
        "hands_played": summary.hands_played,
        "results": [
            {
                "group": list(g.group),
                "variant": g.variant,
                "opponents": list(g.opponents),
                "units_planned": g.units_planned,
                "units_complete": g.units_complete,
                "raw": est(g.raw),
                "allin_ev": est(g.allin),
            }
            for g in summary.groups
        ],
        "overall": {
            v: {"raw": est(raw), "allin_ev": est(adj)}
            for v, (raw, adj) in summary.overall.items()
        },
        "time_guard": dict(summary.time_guard),
        "timing_dependent": summary.timing_dependent,
        "failures": list(failures),
    }


CSV_FIELDS = ("group", "variant", "opponents", "mbb_per_hand", "se", "ci_low", "ci_high",
              "units", "hands", "significant", "p_value", "allin_mbb_per_hand",
              "allin_ci_low", "allin_ci_high")


def write_csv(summary: Summary, out: TextIO) -> None:
    """One CSV row per variant per group."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)

    def f(x: float | None) -> str:
        return "" if x is None or math.isnan(x) or math.isinf(x) else repr(float(x))

    for g in summary.groups:
        e, a = g.raw, g.allin
        writer.writerow([
            " ".join(g.group), g.variant, " ".join(g.opponents),
            f(e.mean if e else None), f(e.se if e else None),
            f(e.ci_low if e else None), f(e.ci_high if e else None),
            e.units if e else 0, e.hands if e else 0,
            "" if e is None else str(e.significant).lower(),
            f(e.p_value if e else None),
            f(a.mean if a else None), f(a.ci_low if a else None), f(a.ci_high if a else None),
        ])


class PlotUnavailable(AcpcError, ImportError):
    """matplotlib is not installed."""


PLOT_SUFFIXES = (".png", ".pdf", ".svg")
"""Files ``--plot`` can write (matplotlib's Agg canvas)."""


def check_plot_target(path: Path) -> None:
    """Check, before any match is played, that :func:`write_plot` can write ``path``.

    Raises:
        PlotUnavailable: if matplotlib is not installed.
        UsageError: for a file type it does not write.
    """
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"expected --plot to name a {', '.join(PLOT_SUFFIXES)} file, got "
                         f"{str(path)!r}")
    if importlib.util.find_spec("matplotlib") is None:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'acpc-arena[plot]'")


def write_plot(summary: Summary, path: Path) -> None:
    """A PNG of every variant's result with its confidence interval.

    Raises:
        PlotUnavailable: if matplotlib is not installed.
    """
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise PlotUnavailable(
            "--plot needs matplotlib: pip install 'acpc-arena[plot]'"
        ) from None
    matplotlib.use("Agg")
    plt = importlib.import_module("matplotlib.pyplot")
    rows: list[tuple[str, Estimate, Estimate | None]] = []
    seen: set[frozenset[str]] = set()
    for g in summary.groups:
        if g.raw is None:
            continue
        if summary.num_players == 2:
            if frozenset(g.group) in seen:
                continue
            seen.add(frozenset(g.group))
        rows.append((f"{g.variant} vs {' '.join(g.opponents)}", g.raw, g.allin))
    if len(summary.variants) > summary.num_players or summary.num_players > 2:
        for v in summary.variants:
            raw, adj = summary.overall.get(v, (None, None))
            if raw is not None:
                rows.append((f"{v} (overall)", raw, adj))
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.5 * max(1, len(rows))))
    for i, (_label, e, a) in enumerate(rows):
        y = len(rows) - 1 - i
        half = 0.0 if math.isinf(e.half_width) or math.isnan(e.half_width) else e.half_width
        ax.errorbar([e.mean], [y], xerr=[[half], [half]], fmt="o", color="C0", capsize=4,
                    label="raw" if i == 0 else None)
        if a is not None:
            ha = 0.0 if math.isinf(a.half_width) or math.isnan(a.half_width) else a.half_width
            ax.errorbar([a.mean], [y - 0.2], xerr=[[ha], [ha]], fmt="s", color="C1",
                        capsize=4, label="all-in EV" if i == 0 else None)
    ax.axvline(0.0, color="grey", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in reversed(rows)])
    ax.set_ylim(-0.6, max(1, len(rows)) - 0.4)  # each all-in EV bar just under its row
    ax.set_xlabel(f"mbb/hand ({summary.confidence * 100:g}% CI)")
    ax.set_title(f"{summary.game}: {summary.hands_played} hands")
    if rows:
        ax.legend(loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------- progress


class Progress(Protocol):
    """What the runner reports while it plays."""

    def start(self, total_hands: int, done_hands: int, total_matches: int,
              done_matches: int) -> None: ...

    def advance(self, label: str, hands: int, seconds: float, ok: bool) -> None: ...

    def note(self, text: str) -> None: ...

    def close(self) -> None: ...


class MatchProgress:
    """The runner's :class:`Progress` on :func:`agent.console.make_progress`: hands done of
    all, hands/s, matches, ETA; a plain line per finished match without a terminal."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.stream = stream
        self.total = self.done = self.matches = self.matches_done = 0
        self.played = 0
        self.start_time = time.monotonic()
        self.bar: console.Progress | None = None

    def start(self, total_hands: int, done_hands: int, total_matches: int,
              done_matches: int) -> None:
        self.total, self.done = total_hands, done_hands
        self.matches, self.matches_done = total_matches, done_matches
        self.start_time = time.monotonic()
        self.bar = console.make_progress(
            enabled=self.enabled, description="acpc-match", total=total_hands,
            completed=done_hands, fields=("count", "rate", "matches"), stream=self.stream,
            line=self._line, plain_every=0.0,
        )

    @staticmethod
    def _line(completed: float, fields: Mapping[str, str]) -> str:
        return (f"[{fields['matches']}] {fields['label']}: {fields['status']}; "
                f"{fields['count']}, {fields['rate']}, ETA {fields['eta']}")

    def advance(self, label: str, hands: int, seconds: float, ok: bool) -> None:
        self.matches_done += 1
        self.done += hands
        self.played += hands
        elapsed = max(1e-9, time.monotonic() - self.start_time)
        rate = self.played / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        assert self.bar is not None, "start() comes first"
        self.bar.update(
            self.done, count=f"{self.done}/{self.total} hands", rate=f"{rate:,.0f} hands/s",
            matches=f"{self.matches_done}/{self.matches}", label=label,
            status=f"{hands} hands in {seconds:.1f} s" if ok else "FAILED",
            eta=f"{eta:.0f} s" if math.isfinite(eta) else "?",
        )

    def note(self, text: str) -> None:
        if self.bar is None:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(text + "\n")
            stream.flush()
        else:
            self.bar.note(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def make_progress(enabled: bool, stream: TextIO | None = None) -> Progress:
    """The runner's progress: a rich bar on a terminal with rich installed, else plain
    lines (only notes and errors if not ``enabled``)."""
    return MatchProgress(enabled, stream)
