"""``acpc-strategy resolve-lab``: re-solving against translation in no-limit Leduc and Royal,
exactly.

``acpc-strategy resolve-lab [--blueprint fcpa|fchpa|royal-fcpa|royal-fcha|FILE ...]
[--setting own|own+0.5|every-chip ...] [--mappings all] [--purify none,full] [--gadgets all]
[--resolve-iterations 1000] [--resolve round] [--resolve-depth none,1]
[--resolve-leaf blueprint,multi] [--value-iterations 2000] [--out DIR] [--agent-files DIR]``

For every blueprint and setting (what the best responder may bet: ``own`` = the blueprint's
own sizes, ``own+X,Y`` = those and the pot fractions ``X``, ``Y`` -- the published
experiment's shape, a size missing from the agent's abstraction --, ``every-chip`` = every
whole-chip bet), the exploitability of the translating blueprint (each mapping and
purification) and of the re-solving agent (each gadget; with ``--resolve-depth``, at each depth
limit and ``--resolve-leaf`` kind: :mod:`agent.resolve.depth`), both seats
(:mod:`strategies.measure.resolve_lab`; a Royal blueprint, whose preflop the agent
re-solves over suit classes of flops and its flop from the preflop or the real history:
:mod:`strategies.measure.resolve_royal`, no game value, no agent files). Prints
the table; with ``--out``, CSV, JSON and
``resolve_lab.png``; with ``--agent-files``, the assembled agents as JSON files. Ctrl-C
keeps (and writes) the rows done.

Registered by :mod:`strategies.cli` (:func:`add_parser`, :func:`run`).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.acpc.errors import UsageError
from agent.acpc.limits import excerpt
from agent.console import deprecated_alias, positive_int

if TYPE_CHECKING:
    from agent.acpc.gamedef import Game
    from agent.strategy.fileformat import Strategy

DEFAULT_SETTINGS = ("own", "own+0.5")
MAX_EXTRA = 8


def _progress(text: str) -> None:
    print(f"acpc-strategy resolve-lab: {text}", file=sys.stderr, flush=True)


def add_parser(sub: Any) -> None:
    """Add ``resolve-lab`` to ``acpc-strategy``'s subparsers."""
    r = sub.add_parser("resolve-lab", help="no-limit Leduc and Royal: the re-solving agent "
                       "(each gadget) against the translating blueprint, best-responded exactly")
    r.add_argument("--blueprint", action="append",
                   help="fcpa, fchpa (bundled no-limit Leduc files), royal-fcpa, "
                   "royal-fcha (bundled Royal files), a strategy file or a bundled strategy's "
                   "name (repeatable; default fcpa)")
    r.add_argument("--setting", action="append",
                   help="what the responder bets: own, own+X[,Y] (pot fractions added), or "
                   "every-chip (repeatable; default own and own+0.5)")
    r.add_argument("--mappings", default="all", help="translating agents' mappings or 'all'")
    r.add_argument("--purify", default="none,full",
                   help="translating agents' purifications, comma-separated")
    r.add_argument("--gadgets", default="all",
                   help="unsafe, resolve, maxmargin, reach-maxmargin, comma-separated, or all")
    r.add_argument("--resolve-iterations", type=positive_int, default=1000,
                   help="CFR+ iterations per re-solve (default 1000)")
    r.add_argument("--resolve", default="round", metavar="MODE",
                   help="round, off-tree or always (default round)")
    r.add_argument("--resolve-depth", default="none",
                   help="rounds each subgame spans, comma-separated, 'none' = to the end "
                   "(e.g. none,1: every gadget at both; default none)")
    r.add_argument("--resolve-leaf", default="multi",
                   help="with a depth: blueprint (single-valued leaves), multi (the opponent "
                   "picks among its blueprint and the fold-, call- and raise-biased "
                   "blueprint), or both comma-separated (default multi)")
    deprecated_alias(r, "--iterations", new="--resolve-iterations")
    deprecated_alias(r, "--mode", new="--resolve")
    r.add_argument("--value-iterations", type=positive_int, default=2000,
                   help="DCFR iterations of each setting's game value (default 2000; "
                   "not for Royal)")
    r.add_argument("--out", help="directory for CSV, JSON and resolve_lab.png")
    r.add_argument("--agent-files", help="directory for the assembled agents (JSON; "
                   "no-limit Leduc only)")


def parse_depths(text: str) -> list[int | None]:
    """``none,1`` -> [None, 1] (distinct, in order).

    Raises:
        UsageError: for anything but ``none`` and positive whole numbers.
    """
    out: list[int | None] = []
    for part in str(text).split(",", MAX_EXTRA):
        key = part.strip().lower()
        value: int | None
        if key == "none":
            value = None
        elif key.isdigit() and 0 < int(key) < 100:
            value = int(key)
        else:
            raise UsageError(f"expected --resolve-depth as 'none' or rounds (1, 2, ...), "
                             f"comma-separated, got {excerpt(text)}")
        if value not in out:
            out.append(value)
    return out


def resolve_configs(args: argparse.Namespace, gadgets: list[str]) -> list[Any]:
    """The re-solving agents to measure: every gadget at every ``--resolve-depth``, a depth
    limit with every ``--resolve-leaf`` kind."""
    from agent.resolve import ResolveConfig
    from agent.resolve.depth import parse_leaf

    depths = parse_depths(args.resolve_depth)
    leaves = [parse_leaf(x) for x in str(args.resolve_leaf).split(",", MAX_EXTRA) if x.strip()]
    if not leaves:
        raise UsageError(f"expected --resolve-leaf blueprint, multi or both, got "
                         f"{excerpt(args.resolve_leaf)}")
    out = []
    for gadget in gadgets:
        for depth in depths:
            for leaf in ([leaves[0]] if depth is None else leaves):
                out.append(ResolveConfig(gadget=gadget, mode=args.resolve,
                                         iterations=args.resolve_iterations, depth=depth,
                                         leaf=leaf))
    return out


def parse_setting(text: str) -> tuple[str, tuple[float, ...] | None]:
    """``own`` -> ("own", ()), ``own+0.5,0.75`` -> ("own+0.5,0.75", (0.5, 0.75)),
    ``every-chip`` -> ("every-chip", None).

    Raises:
        UsageError: for anything else.
    """
    key = text.strip().lower()
    if key == "every-chip":
        return key, None
    if key == "own":
        return key, ()
    if key.startswith("own+"):
        parts = key[4:].split(",", MAX_EXTRA)
        try:
            extra = tuple(float(p) for p in parts)
        except ValueError:
            extra = ()
        if extra and len(extra) <= MAX_EXTRA and all(0 < x < math.inf for x in extra):
            return key, extra
    raise UsageError(f"expected a setting (own, own+X[,Y], every-chip), got {excerpt(text)}")


ROYAL_PRESETS = {"royal-fcpa": "royal.nolimit.2p.fcpa.strat",
                 "royal-fcha": "royal.nolimit.2p.fcha.strat"}
"""The bundled Royal blueprints by their ``--blueprint`` names."""


def load_blueprint(spec: str) -> Strategy:
    """A preset (``fcpa``, ``fchpa``: the bundled no-limit Leduc files; ``royal-fcpa``,
    ``royal-fcha``: the bundled Royal files), a strategy file or a bundled strategy's name
    (:func:`agent.agents.resolve_strategy`, the one resolver of every command).

    Raises:
        UsageError: for anything else.
    """
    from agent.agents import resolve_strategy
    from agent.data import strategy_path
    from agent.strategy.fileformat import load_strategy
    from strategies.measure.translation import lab as tl

    key = spec.strip().lower()
    if key in ROYAL_PRESETS:
        return load_strategy(strategy_path(ROYAL_PRESETS[key]))
    if key in ("fcpa", "fchpa"):
        return tl.load_leduc(key)
    return load_strategy(resolve_strategy(spec, builtins=False))


def last_round_only(game: Game) -> bool:
    """True for a game above the whole-game re-solver's bound (Royal: the Royal lab)."""
    from agent.resolve.resolver import MAX_WHOLE_DEALS, whole_deals

    return whole_deals(game) > MAX_WHOLE_DEALS


def _royal(args: argparse.Namespace, strategy: Strategy, name: str,
           settings: list[tuple[str, tuple[float, ...] | None]], mappings: list[str],
           purifications: list[str], gadgets: list[str], rows: list[Any]) -> None:
    """Append the rows of one Royal blueprint (:mod:`strategies.measure.resolve_royal`) to
    ``rows`` as they are done."""
    from strategies.measure import resolve_lab as rl
    from strategies.measure import resolve_royal as rr

    for label, extra in settings:
        setting = (rl.Setting(label, None) if extra is None else
                   rl.blueprint_setting(strategy, label, extra))
        _progress(f"{name}, responder {setting.label}: building the real trees (Royal: "
                  f"best responses by boards, no game value)")
        lab = rr.RoyalResolveLab.build(strategy, name, setting)
        for pur in purifications:
            for mapping in mappings:
                rows.append(lab.translate(mapping, pur))
                _progress(f"  translate {mapping} {pur}: {rows[-1].average:.5f}")
        for cfg in resolve_configs(args, gadgets):
            rows.append(lab.resolve(cfg, progress=_progress))
            _progress(f"  resolve {rl.resolve_name(cfg.gadget, rows[-1].extra)}: "
                      f"{rows[-1].average:.5f} "
                      f"({rows[-1].extra['resolves']} re-solves, "
                      f"{rows[-1].extra['assembly_seconds']:.1f} s)")


def run(args: argparse.Namespace) -> int:
    """Run ``resolve-lab``; returns the exit status."""
    from agent.resolve import GADGETS, MODES, parse_gadget
    from strategies.measure import resolve_lab as rl
    from strategies.measure.translation import lab as tl

    if args.resolve not in MODES:
        raise UsageError(f"expected --resolve {', '.join(MODES)}, got "
                         f"{excerpt(args.resolve)}")
    mappings = tl.parse_mappings(args.mappings)
    purifications = tl.parse_purifications(args.purify)
    gadgets = list(GADGETS) if args.gadgets.strip().lower() == "all" else [
        parse_gadget(g) for g in args.gadgets.split(",") if g.strip()]
    settings = [parse_setting(s) for s in (args.setting or DEFAULT_SETTINGS)]
    blueprints = args.blueprint or ["fcpa"]
    rows: list[rl.Row] = []
    start = time.perf_counter()
    try:
        for spec in blueprints:
            strategy = load_blueprint(spec)
            name = Path(spec).stem if Path(spec).suffix else spec
            if last_round_only(strategy.game):
                if args.agent_files:
                    raise UsageError(f"expected --agent-files only with no-limit Leduc "
                                     f"blueprints, got {excerpt(name)} (Royal's assembled "
                                     f"agents are not written)")
                _royal(args, strategy, name, settings, mappings, purifications, gadgets,
                       rows)
                continue
            for label, extra in settings:
                setting = (rl.Setting(label, None) if extra is None else
                           rl.blueprint_setting(strategy, label, extra))
                _progress(f"{name}, responder {setting.label}: building the real games and "
                          f"the value ({args.value_iterations} DCFR iterations)")
                lab = rl.Lab.build(strategy, name, setting, args.value_iterations)
                for pur in purifications:
                    for mapping in mappings:
                        rows.append(lab.translate(mapping, pur))
                        _progress(f"  translate {mapping} {pur}: {rows[-1].average:.5f}")
                for cfg in resolve_configs(args, gadgets):
                    rows.append(lab.resolve(cfg, progress=_progress))
                    agent = rl.resolve_name(cfg.gadget, rows[-1].extra)
                    _progress(f"  resolve {agent}: {rows[-1].average:.5f} "
                              f"({rows[-1].extra['resolves']} re-solves, "
                              f"{rows[-1].extra['assembly_seconds']:.1f} s)")
                    if args.agent_files:
                        stem = agent.replace(" ", "-")
                        path = Path(args.agent_files) / f"{name}-{label}-{stem}.json"
                        n = rl.agent_file(path, lab.games, lab.tables[rl.resolve_key(cfg,
                                                                                     "none")],
                                          {"blueprint": name, "setting": label,
                                           "agent": "resolve", "gadget": cfg.gadget,
                                           "iterations": args.resolve_iterations,
                                           "mode": args.resolve,
                                           **rl.depth_extra(cfg)})
                        _progress(f"  wrote {path} ({n} information sets)")
                if args.agent_files and mappings:
                    key = ("translate", mappings[0], purifications[0])
                    path = Path(args.agent_files) / f"{name}-{label}-translate-{mappings[0]}.json"
                    n = rl.agent_file(path, lab.games, lab.tables[key],
                                      {"blueprint": name, "setting": label,
                                       "agent": "translate", "mapping": mappings[0],
                                       "purification": purifications[0]})
                    _progress(f"  wrote {path} ({n} information sets)")
    except KeyboardInterrupt:
        _progress(f"interrupted: keeping the {len(rows)} rows done")
    print(rl.format_table(rows))
    _progress(f"{len(rows)} rows in {time.perf_counter() - start:.1f} s")
    if args.out and rows:
        out = Path(args.out)
        for path in tl.write_records([r.to_json() for r in rows], out, "resolve_lab"):
            _progress(f"wrote {path}")
        _progress(f"wrote {rl.plot_table(out / 'resolve_lab.png', rows)}")
    return 0
