"""``acpc-strategy lbr FILE``: local best response against a strategy file's agent, valued
exactly in a small no-limit game and set beside the exact best response.

For every mapping x purification asked for: LBR's value in each seat against the agent in
the other seat (the agent as :mod:`strategies.measure.translation.full_br` models the policy), their
average (a lower bound of the agent's exploitability over both seats, chips per hand and
mbb/h), and the exact best response's average (the exploitability itself), so that what LBR
finds can be read against what there is to find. The game must be one the translation lab
enumerates (no-limit, a real betting tree of at most 2,000,000 nodes, deals enumerable:
no-limit Kuhn and Leduc files).

Other games (hold'em), built-in agents (``builtin:call``, ...) and ``--sampled`` play hands
instead (:func:`sampled`, :mod:`strategies.measure.sampled_lbr`): ``--hands`` in duplicate from
``--seed``, one mapping and one purification, ``--workers`` processes, a progress line with
hands/s and the running mbb/h +- 95%; Ctrl-C keeps and reports the hands done; ``--out``
(``--json``) writes every hand's value.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from agent.abstraction.convention import parse_size_convention
from agent.abstraction.translation import choose_mapping, get_mapping
from agent.acpc.errors import UsageError
from agent.agents import resolve_strategy
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from strategies.commands.defaults import PROG
from strategies.games.abstract import check_enumerable
from strategies.measure.lbr import lbr_value, parse_fractions
from strategies.measure.translation.full_br import AgentLab
from strategies.measure.translation.lab import parse_mappings, parse_purifications

if TYPE_CHECKING:
    from agent.exploitconfig import ExploitConfig
    from agent.resolve import ResolveConfig


def lbr(args: argparse.Namespace) -> int:
    """Run ``acpc-strategy lbr``: exact in small games, else sampled (:func:`sampled`)."""
    if is_sampled(args):
        return sampled(args)
    _resolve(args)  # --resolve-iterations or --gadgets without --resolve: one line
    _exploit(args)  # --exploit-every etc. without --exploit: one line
    fractions = parse_fractions("0.5,1" if args.fractions is None else args.fractions)
    sizes_in = parse_size_convention(args.sizes_in)
    strategy = load_strategy(resolve_strategy(args.file))
    # typed names may be module:function; the file's default only a built-in or entry point
    fns = {name: get_mapping(name) for name in parse_mappings(args.mappings)} \
        if args.mappings else dict([choose_mapping(None, strategy.default_mapping,
                                                   strategy.source)])
    mappings = list(fns)
    purifications = parse_purifications(args.purify) if args.purify else [
        str(parse_purification(strategy.default_purification))]
    if not strategy.game.is_nolimit:
        raise UsageError(f"expected a strategy file of a no-limit game (LBR picks bet "
                         f"sizes), got one of a limit game: {args.file!r}")
    check_enumerable(strategy.game)  # hold'em and other big games: refused at once
    start = time.perf_counter()
    lab = AgentLab(strategy, sizes_in=sizes_in)
    lab.models_for(sizes_in)  # build them now, so the line below times them
    print(f"{PROG} lbr: real game {lab.real.num_nodes:,} nodes x {lab.real.num_deals:,} "
          f"deals, agent models built in {time.perf_counter() - start:.1f} s; LBR bets "
          f"{', '.join(f'{f:g}' for f in fractions) or 'none'} pot and all-in")
    big = strategy.game.big_blind or 1
    rows = []
    print(f"{'mapping':<11} {'purify':<14} {'LBR seat 0':>10} {'LBR seat 1':>10} "
          f"{'LBR avg':>9} {'BR avg':>9} {'LBR/BR':>7} {'LBR mbb/h':>10}")
    for pur_name in purifications:
        purification = parse_purification(pur_name)
        for name in mappings:
            fn = fns[name]
            # the agent in seat 1 is met by LBR in seat 0, and vice versa
            results = [lbr_value(lab.real, lab.behaviour(1 - q, fn, purification), q,
                                 fractions) for q in (0, 1)]
            lbr_avg = (results[0].value + results[1].value) / 2
            br_avg = (results[0].best_response + results[1].best_response) / 2
            ratio = lbr_avg / br_avg if br_avg > 0 else float("nan")
            print(f"{name:<11} {pur_name:<14} {results[0].value:>10.4f} "
                  f"{results[1].value:>10.4f} {lbr_avg:>9.4f} {br_avg:>9.4f} {ratio:>7.2f} "
                  f"{1000 * lbr_avg / big:>10.1f}")
            rows.append({"mapping": name, "purify": pur_name, "sizes_in": sizes_in,
                         "lbr": [r.value for r in results],
                         "best_response": [r.best_response for r in results],
                         "lbr_average": lbr_avg, "best_response_average": br_avg})
    print(f"(chips per hand; mbb/h with the big blind of {big:g} chips; LBR seat q "
          f"plays the agent in seat 1 - q; {time.perf_counter() - start:.1f} s)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"file": args.file, "fractions": fractions,
                                               "rows": rows}, indent=1))
        print(f"{PROG} lbr: wrote {args.json}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- sampled


def _one(text: str | None, what: str) -> str | None:
    if text is not None and ("," in text or text.strip() == "all"):
        raise UsageError(f"expected one {what} for sampled LBR, got {text!r}")
    return text


def is_sampled(args: argparse.Namespace) -> bool:
    """Sampled LBR for ``--sampled``, ``--resolve``, built-ins and games the lab cannot
    enumerate."""
    if args.sampled or args.file.startswith("builtin:") or getattr(args, "resolve", None) \
            or getattr(args, "exploit", None):
        return True
    from agent.acpc.gamedef import parse_gamedef
    from agent.strategy.fileformat import read_header

    path = resolve_strategy(args.file)
    try:
        check_enumerable(parse_gamedef(str(read_header(path)[0].get("game", "")), str(path)))
    except UsageError:
        return True
    return False


def _resolve(args: argparse.Namespace) -> ResolveConfig | None:
    """The re-solving agent's configuration from ``--resolve``, ``--resolve-iterations``,
    ``--gadgets``, ``--resolve-depth`` and ``--resolve-leaf`` (None without ``--resolve``;
    no time budget: LBR must model the agent's play exactly)."""
    mode = getattr(args, "resolve", None)
    iterations = getattr(args, "resolve_iterations", None)
    gadget = getattr(args, "gadget", None)
    depth = getattr(args, "resolve_depth", None)
    leaf = getattr(args, "resolve_leaf", None)
    if mode is None:
        given = [f for f, v in (("--resolve-iterations", iterations), ("--gadgets", gadget),
                                ("--resolve-depth", depth), ("--resolve-leaf", leaf))
                 if v is not None]
        if given:
            raise UsageError(f"expected --resolve with {', '.join(given)}, got no --resolve")
        return None
    if args.file.startswith("builtin:"):
        raise UsageError(f"expected a strategy file with --resolve, got {args.file!r}")
    from agent.resolve import ResolveConfig

    return ResolveConfig.from_flags(mode, iterations=iterations, gadget=gadget, depth=depth,
                                    leaf=leaf)


def _exploit(args: argparse.Namespace) -> ExploitConfig | None:
    """The exploiting agent's configuration from ``--exploit`` and its options (None
    without ``--exploit``), each value checked by :mod:`agent.exploitconfig` (one line)."""
    from agent import exploitconfig

    mode = getattr(args, "exploit", None)
    given = {name: getattr(args, f"exploit_{name}") for name in exploitconfig.OPTIONS
             if getattr(args, f"exploit_{name}", None) is not None}
    if mode is None:
        if given:
            flags = ", ".join(exploitconfig.flag(name) for name in given)
            raise UsageError(f"expected --exploit with {flags}, got no --exploit")
        return None
    exploitconfig.check_mode(mode)
    if args.file.startswith("builtin:"):
        raise UsageError(f"expected a strategy file with --exploit, got {args.file!r}")
    if getattr(args, "resolve", None):
        raise UsageError("expected one of --resolve and --exploit, got both")
    if args.workers != 1:
        raise UsageError(f"expected --workers 1 with --exploit (the agent learns from every "
                         f"hand before the next), got {args.workers}")
    options = {name: exploitconfig.parse_option(name, str(text))
               for name, text in given.items()}
    return exploitconfig.ExploitConfig(mode, **options)  # type: ignore[arg-type]


def describe(setting: str) -> str:
    """A published setting's menus, round by round, as the paper's table writes them."""
    from strategies.measure.sampled_lbr import SETTINGS, Menu

    def one(m: Menu) -> str:
        if not m.bets:
            return "C"
        if len(m.fractions) > 1:
            return "56 bets"
        return "F" + "C" + ("P" if m.fractions else "") + ("A" if m.all_in else "")

    if setting not in SETTINGS:
        raise UsageError(f"expected --setting among {', '.join(SETTINGS)}, got {setting!r}")
    return ", ".join(one(m) for m in SETTINGS[setting])


def sampled(args: argparse.Namespace) -> int:
    """``acpc-strategy lbr`` by playing hands (:mod:`strategies.measure.sampled_lbr`)."""
    import concurrent.futures as cf
    import math
    import multiprocessing

    from strategies.measure.resolving_lbr import ResolvingChunkPlayer, resolve_json
    from strategies.measure.resolving_lbr import play_chunk as play_resolving_chunk
    from strategies.measure.sampled_lbr import (
        CHUNK_DEALS,
        DEFAULT_FRACTIONS,
        PREFLOP_RULES,
        ChunkPlayer,
        LbrConfig,
        play_chunk,
        summarize,
    )

    if args.hands < 2:
        raise UsageError(f"expected --hands >= 2 (one deal in both seats), got {args.hands}")
    if args.workers < 1:
        raise UsageError(f"expected --workers >= 1, got {args.workers}")
    if args.preflop not in PREFLOP_RULES:
        raise UsageError(f"expected --preflop among {', '.join(PREFLOP_RULES)}, got "
                         f"{args.preflop!r}")
    if args.setting is not None and (args.fractions is not None or args.preflop != "call"):
        raise UsageError(f"expected either --setting or --fractions/--preflop, got "
                         f"--setting {args.setting!r} with both")
    fractions = DEFAULT_FRACTIONS if args.fractions is None else parse_fractions(args.fractions)
    values = args.values or ("imaginary" if args.setting is not None else "played")
    if args.file.startswith("builtin:"):
        game = args.game or "holdem.nolimit.2p.reverse_blinds.game"
    else:
        game = args.game
    config = LbrConfig(spec=args.file, game=game, mapping=_one(args.mappings, "mapping"),
                       purify=_one(args.purify, "purification"), sizes_in=args.sizes_in,
                       fractions=fractions, preflop=args.preflop, seed=args.seed,
                       setting=args.setting, values=values, fast=not args.slow,
                       flop_table=not args.slow, preflop_equity=args.preflop_equity)
    resolve = _resolve(args)
    exploit = _exploit(args)
    if exploit is not None:
        from strategies.measure.exploiting_lbr import ExploitingChunkPlayer

        local: ChunkPlayer = ExploitingChunkPlayer(config, exploit)
    else:
        local = ChunkPlayer(config) if resolve is None else \
            ResolvingChunkPlayer(config, resolve)  # validates everything before work starts
    base = local.base
    mapping = getattr(base, "mapping_name", None)
    purify = str(base.purification) if hasattr(base, "purification") else None
    big = local.game.big_blind or 1
    chunks = math.ceil(args.hands / (2 * CHUNK_DEALS))
    game_name = Path(game).name if game else "its game"
    print(f"{PROG} lbr: sampled, {args.file} in {game_name}"
          + (f", mapping {mapping}, purify {purify}, sizes-in {args.sizes_in}"
             if mapping else "")
          + (f"; LBR setting {args.setting} ({describe(args.setting)})" if args.setting
             else f"; LBR bets {', '.join(f'{f:g}' for f in fractions) or 'none'} pot and "
             f"all-in, preflop {args.preflop}")
          + ("" if resolve is None else
             f"; re-solving ({resolve.mode}, {resolve.gadget}, {resolve.iterations} "
             f"iterations" + ("" if resolve.depth is None else
                              f", depth {resolve.depth}, {resolve.leaf} leaves") + ")")
          + ("" if exploit is None else
             f"; exploiting agent {exploit.mode} (warm-up {exploit.warmup}, every "
             f"{exploit.every}, prior weight {exploit.prior_weight:g}"
             + (f", epsilon {exploit.epsilon:g}" if exploit.mode == "safe" else "") + ")")
          + (f"; preflop equities {args.preflop_equity}" if local.settings.menu(0).bets
             else "")
          + f"; values {values}; {chunks * 2 * CHUNK_DEALS} hands (duplicate), seed "
          f"{args.seed}, {args.workers} worker(s)", flush=True)
    rows: list[list[float]] = []
    interrupted = False
    last = time.perf_counter()
    played_start = time.perf_counter()

    def progress() -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last < args.progress:
            return
        last = now
        s = summarize(rows, big)
        rate = len(rows) / max(now - played_start, 1e-9)
        run = getattr(local, "run", None)
        print(f"  hands {len(rows):>7,}  {rate:6.2f} hands/s  LBR {s.mbb:9.1f} +- "
              f"{s.mbb_half_width:.1f} mbb/h"
              + ("" if run is None else f"  refits {run.refits}, best-response hands "
                 f"{run.best_response_hands:,}"), flush=True)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM keeps the hands done, as Ctrl-C does

    # a run started in the background by a shell ignores SIGINT: SIGTERM stops it too
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        if args.workers == 1:
            for c in range(chunks):
                rows += local.play(c)
                progress()
        else:
            text = config.to_json()
            rtext = None if resolve is None else resolve_json(resolve)
            ctx = multiprocessing.get_context("spawn")
            with cf.ProcessPoolExecutor(args.workers, mp_context=ctx) as pool:
                pending: set[cf.Future[str]] = set()
                next_chunk = 0
                try:
                    while next_chunk < chunks or pending:
                        while next_chunk < chunks and len(pending) < 2 * args.workers:
                            pending.add(
                                pool.submit(play_chunk, text, next_chunk) if rtext is None
                                else pool.submit(play_resolving_chunk, text, rtext,
                                                 next_chunk))
                            next_chunk += 1
                        done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                        for future in done:
                            rows += json.loads(future.result())
                        progress()
                except KeyboardInterrupt:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
    except KeyboardInterrupt:
        interrupted = True
        print(f"{PROG} lbr: interrupted; keeping the {len(rows)} hands done", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
    seconds = time.perf_counter() - played_start
    rows.sort()
    s = summarize(rows, big)
    print(f"LBR wins {s.mbb:.1f} +- {s.mbb_half_width:.1f} mbb/h (95%; {s.chips:.2f} chips "
          f"per hand over {s.deals:,} deals in both seats; big blind {big:g}); "
          f"{len(rows) / max(seconds, 1e-9):.2f} hands/s, {seconds:.0f} s"
          + (" (interrupted)" if interrupted else ""))
    if isinstance(local, ResolvingChunkPlayer) and args.workers == 1:
        m = local.resolving_model.stats
        solves = local.resolving_model.policy.resolver.solves
        print(f"re-solving agent: {solves} re-solves in all; the model "
              f"read {m.played} re-solved decisions the agent took, translated "
              f"{m.translated}, weighed {m.hypothetical} hypothetical ones "
              f"({m.hypothetical_resolves} re-solves, {m.hypothetical_seconds:.0f} s)")
    exploiting = None
    if exploit is not None:
        from strategies.measure.exploiting_lbr import ExploitingChunkPlayer

        assert isinstance(local, ExploitingChunkPlayer)
        run = local.run
        print(f"exploiting agent: told {run.hands:,} hands, {run.refits} refits, a best "
              f"response played in {run.best_response_hands:,} of them (the equilibrium in "
              f"the others), {run.tables} tables modelled")
        exploiting = {"mode": exploit.mode, "prior_weight": exploit.prior_weight,
                      "every": exploit.every, "warmup": exploit.warmup,
                      "epsilon": exploit.epsilon, "refits": run.refits,
                      "best_response_hands": run.best_response_hands,
                      "tables": run.tables, "refit_log": run.refit_log,
                      "best_response": run.best_response[: len(rows)]}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({
            "agent": args.file, "game": game_name, "mapping": mapping,
            "purify": purify, "sizes_in": args.sizes_in, "fractions": list(fractions),
            "preflop": args.preflop, "preflop_equity": args.preflop_equity,
            "setting": args.setting, "scoring": values,
            "path": "slow" if args.slow else "fast", "seed": args.seed, "hands": len(rows),
            "deals": s.deals, "chips_per_hand": s.chips, "half_width": s.half_width,
            "mbb_per_hand": s.mbb, "mbb_half_width": s.mbb_half_width,
            "big_blind": big, "seconds": round(seconds, 1), "workers": args.workers,
            "hands_per_second": round(len(rows) / max(seconds, 1e-9), 3),
            "interrupted": interrupted,
            "resolve": None if resolve is None else json.loads(resolve_json(resolve)),
            "model": (asdict(local.resolving_model.stats)
                      if isinstance(local, ResolvingChunkPlayer) and args.workers == 1
                      else None),
            "exploit": exploiting,
            "columns": ["deal", "lbr_position", "chips"], "values": rows,
        }, separators=(",", ":")))
        print(f"{PROG} lbr: wrote {args.json}", file=sys.stderr)
    return 130 if interrupted else 0
