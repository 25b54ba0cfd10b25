"""``acpc-match``'s default table: which variant to ship.

Two variants of one strategy file that differ only in the mapping never meet an off-tree
bet when they play each other (each bets only the abstraction's own sizes), so their
head-to-head result is exactly 0; and a large win against a weak opponent says little about
the agent's worst case. The table therefore shows, for each strategy-file variant of a
heads-up run:

* its result against each **opponent** (default ``builtin:offtree``,
  :class:`agent.builtin.OffTreePolicy`, whose raises the agent must translate), played
  and by AIVAT (:mod:`evaluation.estimators.aivat`, both agents known: the sampled walk
  with :data:`AIVAT_BOARDS` boards, or the exact value in Kuhn and Leduc), with 95%
  intervals over duplicate deals;
* its **exploitability**: the exact best response in the real game where the deals and
  betting enumerate (Kuhn, Leduc: :meth:`evaluation.estimators.exact.ExactArena.
  exploitability`), else local best response (:mod:`strategies.measure.sampled_lbr`, the
  published setting :data:`LBR_SETTING` (off-tree sizes), ``--lbr-hands`` hands in
  duplicate, a lower bound with its 95% interval); none in limit games too big to
  enumerate;
* a **head-to-head** row between two file variants only when it can differ from 0: a pair
  playing the same file with the same purification and size convention is not played, and
  the table says why (:func:`silent_reason`).

:func:`plan` adds the opponents and chooses the groups before anything is played;
:func:`build_table` computes the columns from the stored matches; :func:`format_table`
prints them and :meth:`DecisionTable.to_json` is ``--json``'s ``decision`` entry.
:func:`table_of_run` keeps the table in the run directory (:data:`TABLE_FILE`), so a run
with nothing left to play re-prints it without loading a strategy, as it re-prints the
played table.

Imports the stdlib and :mod:`evaluation.match.variants` at import time; the estimators and
:mod:`strategies` when the table is built.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from evaluation.match.variants import Variant, VariantError, parse_variant

DEFAULT_OPPONENTS: tuple[str, ...] = ("builtin:offtree",)
"""The opponents every strategy-file variant plays when ``--opponent`` is not given."""
DEFAULT_LBR_HANDS = 1000
"""LBR's hands per variant (``--lbr-hands``; in duplicate, both seats of each deal)."""
LBR_SETTING = "56-tr"
"""LBR's published setting (Lisý and Bowling 2017; :data:`strategies.measure.sampled_lbr.
SETTINGS`): check/call preflop and on the flop; fold, call, all-in and 56 pot fractions
0.05 x 1.15^k on the turn and river. Not ``fcpa-tr`` (the fastest): its pot and all-in bets
are on the bundled files' trees, so every mapping meets the same bets and gets the same
figure (measured: identical to the digit for rand-pshar and det-arith), which cannot tell
mappings apart."""
AIVAT_BOARDS = 16
"""Boards of AIVAT's sampled walk in the table (``--estimator aivat`` uses 128): a sixth of
the CPU per hand for about the same hands-per-CPU to a given interval (AIVAT report)."""

TABLE_FILE = "decision.json"
"""The table of a finished run, in its run directory (:func:`table_of_run`)."""

Note = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Silent:
    """A head-to-head pair left out, and why."""

    a: str
    b: str
    why: str


@dataclass(frozen=True, slots=True)
class Plan:
    """What the run plays for the table."""

    variants: list[Variant]
    """The user's variants, then the opponents added."""
    groups: list[tuple[str, ...]]
    files: list[str]
    """The strategy-file variants (the table's rows)."""
    opponents: list[str]
    silent: list[Silent]
    head_to_head: list[tuple[str, str]]
    """File-variant pairs that are played (informative)."""


def opponent_variant(text: str, taken: set[str]) -> Variant:
    """An ``--opponent`` (``SPEC`` or ``NAME=SPEC``, as after ``-v``) as a variant; a bare
    built-in is named after it (``builtin:offtree`` -> ``offtree``).

    Raises:
        VariantError: for a bad spec.
    """
    head = text.split(",", 1)[0]
    if "=" not in head or head.startswith("cmd="):
        name = head.removeprefix("builtin:") if head.startswith("builtin:") else "opponent"
        base = name
        k = 2
        while name in taken:
            name = f"{base}{k}"
            k += 1
        text = f"{name}={text}"
    return parse_variant(text)


def silent_reason(a: Variant, b: Variant) -> str | None:
    """Why ``a`` against ``b`` is exactly 0 in expectation (None if it may not be): the
    same strategy file, purification and size convention (mapping and seed may differ)."""
    if a.kind != "file" or b.kind != "file" or a.exploit is not None or b.exploit is not None:
        return None  # an exploiting agent's strategy changes as it plays
    assert a.strategy is not None and b.strategy is not None
    path = Path(a.strategy).resolve()
    if path != Path(b.strategy).resolve():
        return None

    def purify(text: str | None) -> str:
        from agent.strategy.fileformat import read_header
        from agent.strategy.purification import parse_purification

        if text is None:
            text = str(read_header(path)[0].get("default_purification") or "none")
        return str(parse_purification(text))

    def sizes(text: str | None) -> str:
        from agent.abstraction.convention import (
            DEFAULT_SIZE_CONVENTION,
            parse_size_convention,
        )

        return parse_size_convention(text or DEFAULT_SIZE_CONVENTION)

    if a.purify == b.purify:  # written alike: nothing to load (a re-printed run loads none)
        pur = a.purify or "the file's default"
    elif purify(a.purify) == purify(b.purify):
        pur = purify(a.purify)
    else:
        return None
    if a.sizes == b.sizes:
        size = a.sizes or "abstract (the default)"
    elif sizes(a.sizes) == sizes(b.sizes):
        size = sizes(a.sizes)
    else:
        return None
    return (f"not played: both play {path.name} with purification {pur} and size "
            f"convention {size}, so neither ever bets a size the other must translate "
            f"and the result is exactly 0; the mappings differ only against off-tree bets "
            f"(the opponent column)")


def plan(variants: Sequence[Variant], game: Game, opponents: Sequence[str]) -> Plan | None:
    """The run behind the table (module docstring), or None when the table does not apply
    (not heads-up, or no strategy-file variant). Round robin among the user's variants
    except the silent pairs, and each file variant against each opponent.

    Raises:
        VariantError: for a bad ``--opponent``.
    """
    if game.num_players != 2:
        return None
    files = [v.name for v in variants if v.kind == "file"]
    if not files:
        return None
    out = list(variants)
    taken = {v.name for v in out}
    opps: list[str] = []
    for text in opponents:
        v = opponent_variant(text, taken)
        same = next((u for u in out if u.kind == v.kind and u.strategy == v.strategy
                     and u.cmd == v.cmd and u.seed == v.seed and v.kind != "file"), None)
        if same is None and v.name in taken:
            raise VariantError(f"expected --opponent {text!r} to name a new variant or "
                               f"repeat one, got the name {v.name!r} of another variant")
        if same is None:
            out.append(v)
            taken.add(v.name)
            same = v
        if same.name not in opps:
            opps.append(same.name)
    by_name = {v.name: v for v in out}
    silent: list[Silent] = []
    h2h: list[tuple[str, str]] = []
    groups: list[tuple[str, ...]] = []
    user = [v.name for v in variants]
    for i, a in enumerate(user):
        for b in user[i + 1:]:
            why = silent_reason(by_name[a], by_name[b])
            if why is not None:
                silent.append(Silent(a, b, why))
                continue
            groups.append((a, b))
            if a in files and b in files:
                h2h.append((a, b))
    for f in files:
        for o in opps:
            if (f, o) not in groups and (o, f) not in groups:
                groups.append((f, o))
            elif (o, f) in groups:  # the file first: AIVAT's row is the group's first
                groups[groups.index((o, f))] = (f, o)
    return Plan(out, groups, files, opps, silent, h2h)


@dataclass(frozen=True, slots=True)
class Exploit:
    """One variant's exploitability, mbb/h."""

    mbb: float
    half_width: float
    """95% half-width (0 for the exact best response)."""
    method: str
    hands: int = 0
    cpu_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"mbb_per_hand": self.mbb, "half_width": self.half_width,
                "method": self.method, "hands": self.hands,
                "cpu_seconds": round(self.cpu_seconds, 2)}


def exploitability_method(game: Game) -> str | None:
    """``exact``, ``lbr`` or None (a limit game too big to enumerate)."""
    from strategies.games.abstract import check_enumerable

    if game.num_players != 2:
        return None
    try:
        check_enumerable(game)
        return "exact"
    except UsageError:
        return "lbr" if game.is_nolimit else None


def exploitabilities(game: Game, game_spec: str, variants: Sequence[Variant],
                     lbr_hands: int, seed: int, note: Note | None = None
                     ) -> dict[str, Exploit]:
    """Each variant's exploitability (module docstring); empty when the game allows none.
    A variant that exploits its opponent (``exploit=``) has none: its strategy changes as
    it plays.

    Raises:
        UsageError: for a file the measure cannot read (e.g. another game).
    """
    method = exploitability_method(game)
    out: dict[str, Exploit] = {}
    big = game.big_blind or 1
    variants = [v for v in variants if v.exploit is None]  # no one strategy to best respond to
    if method == "exact":
        from evaluation.estimators.exact import ExactArena, Player

        arena = ExactArena(game)
        for v in variants:
            start = time.process_time()
            chips = arena.exploitability(Player(v.name, v.strategy or "", v.mapping,
                                                v.purify, v.sizes))
            out[v.name] = Exploit(1000.0 * chips / big, 0.0, "exact best response",
                                  cpu_seconds=time.process_time() - start)
    elif method == "lbr":
        from strategies.measure.sampled_lbr import (
            CHUNK_DEALS,
            ChunkPlayer,
            LbrConfig,
            summarize,
        )

        chunks = max(1, math.ceil(lbr_hands / (2 * CHUNK_DEALS)))
        for v in variants:
            start = time.process_time()
            player = ChunkPlayer(LbrConfig(
                spec=v.strategy or "", game=game_spec, mapping=v.mapping, purify=v.purify,
                sizes_in=v.sizes, setting=LBR_SETTING, values="imaginary", seed=seed,
                fast=True, flop_table=True))
            rows: list[list[float]] = []
            last = time.perf_counter()
            for c in range(chunks):
                rows += player.play(c)
                if note is not None and time.perf_counter() - last > 10:
                    last = time.perf_counter()
                    note(f"LBR {v.name}: {len(rows)} of {2 * CHUNK_DEALS * chunks} hands")
            s = summarize(rows, big)
            out[v.name] = Exploit(s.mbb, s.mbb_half_width, f"LBR {LBR_SETTING}", s.hands,
                                  time.process_time() - start)
    return out


@dataclass
class Row:
    """One variant against one opponent (or another file variant)."""

    variant: str
    opponent: str
    played: Any = None
    """:class:`evaluation.stats.Estimate` (mbb/h over duplicate units) or None."""
    aivat: Any = None
    """:class:`evaluation.estimators.aivat.AivatRow` or None."""

    def to_dict(self) -> dict[str, Any]:
        return {"variant": self.variant, "opponent": self.opponent,
                "played": None if self.played is None else self.played.to_dict(),
                "aivat": None if self.aivat is None else self.aivat.to_dict()}


@dataclass
class DecisionTable:
    """The default table (module docstring)."""

    rows: list[Row]
    head_to_head: list[Row]
    silent: list[Silent]
    exploit: dict[str, Exploit]
    exploit_method: str | None
    """``exact``, ``lbr``, ``off`` (switched off) or None (the game allows none)."""
    lbr_hands: int = 0
    aivat_kinds: dict[str, int] = field(default_factory=dict)
    aivat_cpu: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": [{**r.to_dict(), "exploitability":
                      self.exploit[r.variant].to_dict() if r.variant in self.exploit
                      else None} for r in self.rows],
            "head_to_head": [r.to_dict() for r in self.head_to_head],
            "not_played": [{"pair": [s.a, s.b], "why": s.why} for s in self.silent],
            "exploitability_method": self.exploit_method,
            "lbr_setting": LBR_SETTING if self.exploit_method == "lbr" else None,
            "lbr_hands": self.lbr_hands if self.exploit_method == "lbr" else None,
            "aivat_boards": AIVAT_BOARDS,
            "aivat_value_functions": self.aivat_kinds,
            "aivat_cpu_seconds": round(self.aivat_cpu, 2),
        }


def build_table(the_plan: Plan, config: Any, summary: Any, *, exploit: bool,
                lbr_hands: int, note: Note | None = None) -> DecisionTable:
    """The table's columns from the run's stored matches (``config``:
    :class:`evaluation.match.runner.RunConfig`; ``summary``:
    :class:`evaluation.match.report.Summary`)."""
    from evaluation.estimators.aivat import log_lines, match_rows
    from evaluation.match.store import planned_matches

    pairs = [(f, o) for f in the_plan.files for o in the_plan.opponents]
    groups = pairs + list(the_plan.head_to_head)
    stored = planned_matches(config)
    start = time.process_time()
    aivat_rows, kinds = match_rows(config.game, config.variants, groups, stored,
                                   config.run_dir, log_lines, note=note,
                                   walk_samples=AIVAT_BOARDS)
    by_label = {r.label: r for r in aivat_rows}
    cpu = time.process_time() - start

    def row(a: str, b: str) -> Row:
        got = summary.result(a, (a, b))
        return Row(a, b, None if got is None else got.raw, by_label.get(f"{a} vs {b}"))

    method: str | None = "off"
    found: dict[str, Exploit] = {}
    if exploit:
        method = exploitability_method(config.game)
        files = [v for v in config.variants if v.name in the_plan.files]
        found = exploitabilities(config.game, config.settings.game_spec, files, lbr_hands,
                                 config.master_seed, note)
    return DecisionTable([row(a, b) for a, b in pairs],
                         [row(a, b) for a, b in the_plan.head_to_head], the_plan.silent,
                         found, method, lbr_hands, kinds, cpu)


def _pm(e: Any) -> str:
    if e is None:
        return "-"
    half = e.half_width
    return f"{e.mean:+.1f} +- {half:.1f}" if math.isfinite(half) else f"{e.mean:+.1f} +- inf"


def format_table(table: DecisionTable, timing: str | None = None) -> str:
    """The table as plain text; ``timing``: the run's time-guard note
    (:func:`evaluation.match.report.timing_note`), repeated at its end."""
    lines = ["which variant to ship (mbb/h, 95% intervals):"]
    head = ["variant", "vs", "played", "AIVAT", "exploitability"]
    cells = [head]
    seen: set[str] = set()
    for r in table.rows:
        ex = table.exploit.get(r.variant)
        if r.variant in seen:
            ex_text = '"'
        elif ex is None:
            ex_text = "-"
        elif ex.half_width > 0:
            ex_text = f"{ex.mbb:.1f} +- {ex.half_width:.1f}"
        else:
            ex_text = f"{ex.mbb:.1f}"
        seen.add(r.variant)
        cells.append([r.variant, r.opponent, _pm(r.played),
                      _pm(None if r.aivat is None else r.aivat.aivat), ex_text])
    for r in table.head_to_head:
        cells.append([r.variant, r.opponent, _pm(r.played),
                      _pm(None if r.aivat is None else r.aivat.aivat), ""])
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    for k, c in enumerate(cells):
        lines.append("  ".join(x.ljust(w) if i < 2 else x.rjust(w)
                               for i, (x, w) in enumerate(zip(c, widths, strict=True))))
        if k == 0:
            lines.append("-" * len(lines[-1]))
    for s in table.silent:
        lines.append(f"{s.a} vs {s.b}: {s.why}")
    aivat_deals = sorted({r.aivat.deals for r in table.rows if r.aivat is not None})
    used = ", ".join(f"{n} {k}" for n, k in sorted(table.aivat_kinds.items()))
    walk = f", {AIVAT_BOARDS} boards per sampled walk" \
        if "sampled-walk" in table.aivat_kinds else ""
    exact = "; exact: each seating valued exactly, no variance left" \
        if set(table.aivat_kinds) == {"exact"} else ""
    lines.append(f"(played: over duplicate units; AIVAT: over duplicate deals "
                 f"({'/'.join(map(str, aivat_deals)) or 0} per row), value functions by "
                 f"seatings valued: {used or 'none'}{walk}{exact}; {table.aivat_cpu:.1f} "
                 f"CPU s)")
    if table.exploit_method == "exact":
        lines.append("(exploitability: exact best response in the real game, the mean over "
                     "both seats of what it wins)")
    elif table.exploit_method == "lbr":
        hands = sorted({e.hands for e in table.exploit.values()})
        cpu = sum(e.cpu_seconds for e in table.exploit.values())
        lines.append(f"(exploitability: local best response, setting {LBR_SETTING} (check/"
                     f"call preflop and flop; fold, call, all-in and 56 pot fractions on "
                     f"turn and river), "
                     f"{'/'.join(map(str, hands))} hands in duplicate per variant "
                     f"(--lbr-hands), a lower bound; {cpu:.1f} CPU s)")
    elif table.exploit_method == "off":
        lines.append("(exploitability: off, --no-exploitability)")
    else:
        lines.append("(exploitability: none for this game: not enumerable, and LBR needs "
                     "a no-limit game)")
    unmeasured = sorted({r.variant for r in table.rows if r.variant not in table.exploit})
    if table.exploit_method in ("exact", "lbr") and unmeasured:
        lines.append(f"(no exploitability for {', '.join(unmeasured)}: an agent that exploits "
                     f"its opponent changes its strategy as it plays)")
    if timing is not None:  # the columns come from those matches: the same caveat
        lines += ["", timing]
    return "\n".join(lines) + "\n"


def table_of_run(the_plan: Plan, config: Any, summary: Any, *, exploit: bool, lbr_hands: int,
                 fresh: bool, note: Note | None = None) -> tuple[str, dict[str, Any]]:
    """The table's text (with the run's time-guard note) and JSON: re-read from the run
    directory's :data:`TABLE_FILE` when no match was played now (``fresh`` False) and it
    was made with the same ``exploit`` and ``lbr_hands``; else built and written there."""
    from evaluation.match.report import timing_note

    path = Path(config.run_dir) / TABLE_FILE
    key = {"exploit": exploit, "lbr_hands": lbr_hands, "version": 1}
    if not fresh and path.is_file():
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            if kept.get("key") == key and isinstance(kept.get("text"), str):
                return kept["text"], dict(kept["json"])
        except (OSError, ValueError, TypeError, KeyError):
            pass  # an unreadable file: build the table again
    table = build_table(the_plan, config, summary, exploit=exploit, lbr_hands=lbr_hands,
                        note=note)
    text = format_table(table, timing_note(summary))
    data = table.to_json()
    path.write_text(json.dumps({"key": key, "text": text, "json": data}) + "\n",
                    encoding="utf-8")
    return text, data
