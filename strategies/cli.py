"""``acpc-strategy``: build, inspect and measure strategy files.

Commands:

* ``solve --recipe NAME [--iterations N | --minutes M] [--resume]``: run the recipe's
  solver (:mod:`strategies.solvers.recipe`; recipes in :mod:`strategies.recipes`) and write the
  strategy file (``--out``, default ``NAME.strat`` here; ``--bundle`` writes the bundled
  file and its manifest entry). ``--iterations`` is the total to reach (default: the
  recipe's), ``--minutes`` a time budget for this run. A progress display (a rich bar on a
  terminal; plain lines otherwise) shows iterations/s and the exploitability whenever it is
  recomputed. Ctrl-C stops between chunks of iterations and writes a checkpoint
  (``--checkpoint``, default ``NAME.ckpt.npz`` here); ``--resume`` continues from it. A
  finished run removes the default checkpoint (it leaves only what it says it writes); with
  ``--checkpoint F`` it keeps ``F``, so a later ``--resume --checkpoint F --iterations MORE``
  extends it.
* ``inspect FILE``: game, abstractions, size, metadata, the abstract-game exploitability and
  a few information sets in readable form (betting, bucket with example cards, action
  probabilities).
* ``exploit FILE [--purify P]``: the abstract-game values, best responses and
  exploitability (:mod:`strategies.measure.best_response` conventions; chips per hand). Files whose
  deals cannot be enumerated (hold'em) get the sampled lower bound of
  :mod:`strategies.measure.sampled_br` (``--train-deals``, ``--test-deals``, seeds, ``--z``), for
  the stored strategy and the file's default purification; ``--record`` writes it into the
  manifest entry of a bundled file.
* ``graft --base FILE --partition SPEC --out FILE [--iterations N] [--workers W]``: strategy
  grafting (:mod:`strategies.grafting.exact`, work in :mod:`strategies.commands.graft`): solve each
  graft of the partition against the base and write the grafted strategy file.
* ``upgrade FILE...``: rewrite version 1 and 2 strategy files as version 3 in place
  (:func:`agent.strategy.fileformat.upgrade_strategy`: the header gains its checksum; the
  table bytes, the table checksum and ``meta`` are unchanged); a version 3 file is left as
  it is.
* ``list``: the bundled files with their manifest figures.
* ``cards [--round flop|turn|river|all] [--buckets N] [--file F]``: E[HS^2] of every
  lossless hold'em class of a round (:mod:`strategies.cards.tables`, cached), the exact
  percentile thresholds over all hands, and the share of all hands in each bucket of a
  strategy file's sampled thresholds (default: the bundled hold'em file).
* ``size GAME [--abstraction SPEC] [--json OUT]``: betting sequences, information sets and
  infoset-actions (raw and suit-isomorphic) and the memory of CFR and of a strategy, for
  the full game or a betting abstraction (:mod:`strategies.games.size`).
* ``translation exploit|best-size|plot``: full-game exploitability of translation mappings
  and purifications in small no-limit games (:mod:`strategies.commands.translation`).
* ``resolve-lab``: the re-solving agent (each gadget) against the translating blueprint in
  no-limit Leduc, best-responded exactly (:mod:`strategies.commands.resolve_lab`).
* ``export-openspiel FILE --out F.json [--check]`` and ``import-openspiel F.json --out
  F.strat [--game G] [--check]``: Kuhn and Leduc strategies to and from OpenSpiel tabular
  policies (:mod:`strategies.commands.interop`, :mod:`strategies.interop.openspiel`).

Errors (a bad or corrupt file, an unknown recipe, ...) print ``acpc-strategy: error: ...``
on stderr and exit 1; a bad flag or flag value exits 2 (argparse's one line); ``--debug``
shows the traceback. An interrupted ``solve`` exits 130. Every command that reads a strategy
file also takes a bundled strategy's name (``inspect leduc.limit.2p.strat``).

This module parses and dispatches and imports only light modules (stdlib, the core,
:mod:`strategies.recipes`, :mod:`strategies.commands.defaults`): ``--help`` and ``list`` run without
numpy or numba; the other commands' work is :mod:`strategies.commands.main`, imported when run.
Imported by nobody (the entry point of ``acpc-strategy``).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from agent import exploitconfig
from agent.acpc.errors import AcpcError, whole_lines
from agent.console import (
    deprecated_alias,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from agent.data import strategies_dir
from jobs import BACKENDS
from strategies.commands import interop as interop_commands
from strategies.commands import resolve_lab as resolve_lab_commands
from strategies.commands import translation as translation_commands
from strategies.commands.defaults import (
    DEFAULT_TEST_DEALS,
    DEFAULT_TRAIN_DEALS,
    DEFAULT_Z,
    PROG,
    SMOOTHING,
    TEST_SEED,
    TRAIN_SEED,
)
from strategies.recipes import RECIPES, load_manifest


def _list(args: argparse.Namespace) -> int:
    files = load_manifest().get("files", {})
    width = max([6, *(len(str(e.get("solver", ""))) for e in files.values()
                      if isinstance(e, dict))])
    names = max(len(name) for name in RECIPES)
    header = (f"{'name':{names}} {'solver':{width}} {'iterations':>10} {'seconds':>8} "
              f"{'exploitability':>22} {'value p0':>10} {'bytes':>8}")
    print(header)
    for name, recipe in RECIPES.items():
        entry = files.get(name)
        if not recipe.bundled:
            print(f"{name:{names}} (not bundled: acpc-strategy solve --recipe {name} writes "
                  f"{recipe.filename})")
            continue
        if entry is None or not recipe.bundled_path.exists():
            print(f"{name:{names}} (not built: acpc-strategy solve --recipe {name} --bundle)")
            continue
        kind = {"nash_conv": "NashConv ", "sampled_lower_bound": "expl >= "}.get(
            str(entry.get("exploitability_kind")), "expl ")
        if entry.get("exploitability") is None:
            figure = "expl n/a"
        else:
            figure = f"{kind}{entry['exploitability']:.3g}"
        value = entry.get("game_value")
        shown = f"{value[0]:>+10.5f}" if value else f"{'n/a':>10}"
        print(f"{name:{names}} {entry['solver']:{width}} {entry['iterations']:>10} "
              f"{entry['seconds']:>8.1f} {figure:>22} {shown} {entry['bytes']:>8}")
    print(f"(abstract-game figures in chips per hand, 'expl >=': a sampled lower bound; "
          f"files in {strategies_dir()})")
    return 0


def _size(args: argparse.Namespace) -> int:
    from strategies.games import size  # the command's whole logic; imported only when run

    return size.run(args.game, abstraction_spec=args.abstraction, json_out=args.json,
                    max_transitions=args.max_transitions, out=sys.stdout)


# --------------------------------------------------------------------------- entry point


def _add_learn_sizes(sub: Any) -> None:
    """The ``learn-sizes`` subcommand's options (work: :mod:`strategies.commands.learn_sizes`)."""
    p = sub.add_parser("learn-sizes", help="learn bet sizes (the betting-game transformation) "
                       "and write the learned betting abstraction")
    p.add_argument("--game", required=True, help="a bundled game name or a game file "
                   "(two-player no-limit, deals enumerable)")
    p.add_argument("--abstraction", required=True, metavar="SPEC",
                   help="the base betting abstraction (preset, JSON or FILE.json)")
    p.add_argument("--learn", action="append", required=True, metavar="POSITION[:KEYS]",
                   help="whose bets to learn: 0, 1 or both, optionally at some nodes only "
                   "(bare sequence keys, comma-separated, 'root' for the first decision); "
                   "repeatable")
    p.add_argument("--range", metavar="L,H", help="the low and high pot fractions of every "
                   "learned node (default: the node's own two sizes in the spec)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=positive_int,
                        help="iterations to reach (default 1,000,000)")
    budget.add_argument("--minutes", type=positive_float, help="time budget instead")
    p.add_argument("--solver", choices=["cfr", "cfr+"], default="cfr+",
                   help="the card players' regret matching (default cfr+)")
    p.add_argument("--smoothing", type=positive_int, default=SMOOTHING,
                   help=f"the sizing players' constant N (default {SMOOTHING:,})")
    p.add_argument("--skip-unstable", action="store_true",
                   help="learn only at nodes where L and H keep the tree's shape (a size "
                   "that reaches the stack changes it); the others keep their base sizes")
    p.add_argument("--min-bet", type=nonnegative_float, default=None, metavar="CHIPS",
                   help="smallest raise-by in chips (default: the big blind, as ACPC; 0 for "
                   "the textbook games whose bets may be any size)")
    p.add_argument("--out", required=True, help="the learned abstraction (JSON) to write")
    p.add_argument("--name", default=None, help="its name (default BASE-learned)")
    p.add_argument("--plot", metavar="PNG", help="plot the sizes over the iterations")
    p.add_argument("--checkpoint", help="checkpoint file, kept at the end too (default: "
                   "OUT-stem.ckpt.npz, written on Ctrl-C, removed by a finished run)")
    p.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    _quiet(p, "no progress bar")



def _add_lbr(sub: Any) -> None:
    """``lbr``'s options (the work is :mod:`strategies.commands.lbr`)."""
    p = sub.add_parser("lbr", help="local best response against a strategy file's agent, "
                       "exact in small no-limit games, beside the exact best response; "
                       "sampled (real hands) in hold'em")
    p.add_argument("file", help="a strategy file of a no-limit game (or its bundled "
                   "name), e.g. leduc.nolimit.2p.fcpa.strat, or builtin:NAME (sampled)")
    p.add_argument("--mappings", default=None,
                   help="comma-separated translation mappings, or all (default: the file's)")
    p.add_argument("--purify", default=None,
                   help="comma-separated purifications, or all (default: the file's)")
    p.add_argument("--sizes-in", default="abstract", help="the agent's size convention: "
                   "abstract (default) or real")
    p.add_argument("--fractions", default=None, help="LBR's bet sizes besides the "
                   "all-in, pot fractions (default 0.5,1 exact, 0.5,1,2 sampled)")
    p.add_argument("--json", metavar="OUT",
                   help="also write the figures as JSON (sampled: every hand's value)")
    deprecated_alias(p, "--out", new="--json")
    p.add_argument("--sampled", action="store_true",
                   help="play hands even in a game small enough to value exactly")
    p.add_argument("--hands", type=positive_int, default=2000,
                   help="sampled: hands to play, rounded up to 20 (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="sampled: deals and agent seeds")
    p.add_argument("--game", default=None, help="sampled: the game (default: the file's; "
                   "hold'em reverse blinds for built-ins)")
    p.add_argument("--preflop", default="call", help="sampled: LBR's preflop rule, call "
                   "(always check/call, default) or best")
    p.add_argument("--setting", default=None, help="sampled: a published LBR setting "
                   "(Lisy and Bowling 2017): fc, fcpa-tr, 56-tr or 56-all (replaces "
                   "--fractions and --preflop; imaginary observations by default)")
    p.add_argument("--preflop-equity", default="exact", choices=("exact", "sampled"),
                   help="sampled, hold'em, where LBR decides preflop: its equities from the "
                   "bundled exact table over every board (default) or from 2,000 boards "
                   "drawn per decision (the rule of runs before 2026-11-29)")
    p.add_argument("--values", default=None, help="sampled: how a hand is scored, played "
                   "(its chips) or imaginary (the expectation over the agent's range); "
                   "default imaginary with --setting, else played")
    p.add_argument("--slow", action="store_true", help="sampled: the hole-by-hole path "
                   "(same decisions and values, for comparisons)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="sampled: processes (default 1)")
    p.add_argument("--progress", type=positive_float, default=10.0,
                   help="sampled: seconds between progress lines (default 10)")
    p.add_argument("--resolve", default=None, metavar="MODE",
                   help="sampled: LBR against the file's re-solving agent (acpc-agent "
                   "--resolve MODE: off-tree, round or always; no time budget), its "
                   "range kept with its own re-solver")
    p.add_argument("--resolve-iterations", type=positive_int, default=None, metavar="N",
                   help="with --resolve: CFR+ iterations per re-solve (default 200)")
    p.add_argument("--gadgets", dest="gadget", default=None, metavar="G",
                   help="with --resolve: the re-solving gadget, unsafe, resolve, maxmargin "
                   "or reach-maxmargin (default reach-maxmargin)")
    deprecated_alias(p, "--gadget", new="--gadgets")
    p.add_argument("--resolve-depth", type=positive_int, default=None, metavar="N",
                   help="with --resolve: rounds a subgame spans, counting its own (acpc-agent "
                   "--resolve-depth; default: to the end of the game)")
    p.add_argument("--resolve-leaf", default=None, metavar="KIND",
                   help="with --resolve-depth: blueprint or multi (acpc-agent "
                   "--resolve-leaf; default multi)")
    p.add_argument(exploitconfig.flag("mode"), default=None, metavar="MODE",
                   help="sampled: LBR against the file's exploiting agent (acpc-agent "
                   "--exploit MODE: dbbr, or safe where deals can be enumerated), one agent "
                   "told every hand in order and refitting on its schedule (1 worker)")
    words = {"prior_weight": ("N", "observations the equilibrium prior is worth (default "
                              f"{exploitconfig.DEFAULT_PRIOR_WEIGHT:g})"),
             "every": ("N", f"hands between refits (default {exploitconfig.DEFAULT_EVERY})"),
             "warmup": ("M", "hands played as the equilibrium before the first refit "
                        f"(default {exploitconfig.DEFAULT_WARMUP})"),
             "epsilon": ("CHIPS", "safe exploitation's starting budget (default "
                         f"{exploitconfig.DEFAULT_EPSILON:g})")}
    for name in exploitconfig.OPTIONS:
        metavar, what = words[name]
        p.add_argument(exploitconfig.flag(name), default=None, metavar=metavar,
                       help=f"with --exploit: {what}, as acpc-agent's")


def _quiet(p: argparse.ArgumentParser, what: str) -> None:
    """``--quiet``: the one name of 'no progress output' (``--no-progress`` deprecated)."""
    p.add_argument("--quiet", "-q", dest="no_progress", action="store_true", help=what)
    deprecated_alias(p, "--no-progress", new="--quiet")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``acpc-strategy``."""
    p = argparse.ArgumentParser(prog=PROG, description="Build, inspect and measure strategy "
                                "files (abstract-game CFR solvers and best responses).")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="solve a recipe, or a game with the betting abstraction "
                       "you describe, and write its strategy file")
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument("--recipe", help=f"one of: {', '.join(RECIPES)}")
    what.add_argument("--game", help="solve this game (bundled name or file; deals "
                      "enumerable, lossless cards) with --abstraction instead of a recipe")
    s.add_argument("--abstraction", dest="betting", metavar="SPEC",
                   help="with --game: the betting abstraction (preset, JSON, or FILE.json such "
                   "as learn-sizes writes; default fcpa)")
    deprecated_alias(s, "--betting", new="--abstraction")
    s.add_argument("--solver", default=None, help="with --game: cfr, cfr+ (default), lcfr, "
                   "dcfr, mccfr-es, cfr-cs, pure-cfr, egt (the excessive gap technique, "
                   "two players); mccfr-es-pool for hold'em cards; with --recipe: egt only "
                   "(enumerated and Royal recipes)")
    s.add_argument("--cards", default=None, metavar="SPEC",
                   help="with --game: 'lossless' (default; deals enumerated) or hold'em "
                   "buckets as JSON, e.g. '{\"kind\": \"holdem\", \"buckets\": [169, 8, 8, "
                   "8], \"samples\": 20000, \"pool_deals\": 100000}'")
    budget = s.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=nonnegative_int, help="total iterations to reach")
    budget.add_argument("--minutes", type=positive_float, help="time budget for this run")
    s.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    s.add_argument("--out", help="strategy file to write (default: NAME.strat here)")
    s.add_argument("--checkpoint", help="checkpoint file, kept when the run finishes too "
                   "(default NAME.ckpt.npz here: written on Ctrl-C and every "
                   "--checkpoint-minutes in hold'em, removed when the run finishes)")
    s.add_argument("--bundle", action="store_true",
                   help="write the bundled file (agent/data/strategies) and its manifest entry")
    _quiet(s, "no progress bar")
    s.add_argument("--workers", type=positive_int, default=1,
                   help="threads building a hold'em deal pool (default 1)")
    s.add_argument("--checkpoint-minutes", type=positive_float, default=10.0,
                   help="hold'em recipes: also write the checkpoint every this many minutes")

    i = sub.add_parser("inspect", help="describe a strategy file")
    i.add_argument("file", help="a strategy file or a bundled strategy's name")
    i.add_argument("--samples", type=nonnegative_int, default=8,
                   help="information sets to show")

    u = sub.add_parser("upgrade", help="rewrite old strategy files as version 3 in place "
                       "(header checksum added, table unchanged)")
    u.add_argument("files", nargs="+", metavar="FILE")

    e = sub.add_parser("exploit", help="abstract-game exploitability of a strategy file")
    e.add_argument("file", help="a strategy file or a bundled strategy's name")
    e.add_argument("--purify", default=None, metavar="none|full|threshold:T",
                   help="measure the purified strategy (default: the stored one; hold'em "
                   "files: also the file's default purification)")
    e.add_argument("--train-deals", type=positive_int, default=None,
                   help=f"hold'em: deals the best responses learn on (default "
                   f"{DEFAULT_TRAIN_DEALS:,})")
    e.add_argument("--test-deals", type=positive_int, default=None,
                   help=f"hold'em: deals they are evaluated on (default {DEFAULT_TEST_DEALS:,})")
    e.add_argument("--train-seed", type=int, default=None,
                   help=f"hold'em: pool seed of the training deals (default {TRAIN_SEED})")
    e.add_argument("--test-seed", type=int, default=None,
                   help=f"hold'em: pool seed of the test deals (default {TEST_SEED})")
    e.add_argument("--z", type=float, default=None,
                   help=f"hold'em: standard errors a deviation must gain by (default "
                   f"{DEFAULT_Z:g})")
    e.add_argument("--workers", type=positive_int, default=None,
                   help="hold'em: threads (default: the number of cores)")
    e.add_argument("--record", action="store_true",
                   help="write the sampled figures into the manifest entry of this bundled "
                   "file")

    sub.add_parser("list", help="the bundled strategy files and their figures")

    gr = sub.add_parser("graft", help="strategy grafting: solve grafts with finer cards "
                        "against a base strategy and write the grafted strategy file")
    gr.add_argument("--base", required=True, help="the base strategy file or bundled name "
                    "(two players: Kuhn, Leduc, or a hold'em file with E[HS^2] buckets)")
    gr.add_argument("--partition", required=True, metavar="SPEC",
                    help="'preflop' or 'flop' (one graft per rank; 'flop:KA' for some "
                    "ranks), JSON or FILE.json: {\"grafts\": [{\"ranks\": \"A\", "
                    "\"from_round\": 1}], \"cards\": {\"kind\": \"lossless\"}, "
                    "\"players\": [0, 1]}")
    gr.add_argument("--out", required=True, help="the grafted strategy file to write")
    gr.add_argument("--iterations", type=nonnegative_int, default=None,
                    help="most iterations per graft (default 2000; hold'em: the iterations "
                    "of each graft, default 10,000,000)")
    gr.add_argument("--target", type=positive_float, default=1e-3,
                    help="stop a graft once its graft-game NashConv is at most this, chips "
                    "per hand (default 0.001)")
    gr.add_argument("--solver", choices=["cfr", "cfr+", "lcfr", "dcfr"], default="cfr+",
                    help="full-width solver of the graft games (default cfr+)")
    gr.add_argument("--workers", type=positive_int, default=1,
                    help="processes solving grafts in parallel (default 1)")
    gr.add_argument("--backend", choices=BACKENDS, default="local",
                    help="where grafts are solved: local processes (default) or Ray tasks")
    gr.add_argument("--address", default=None,
                    help="--backend ray: the cluster address (default: a private Ray on "
                    "127.0.0.1)")
    gr.add_argument("--pool-deals", type=positive_int, default=None,
                    help="hold'em: deals in the graft games' pool (default 1,000,000)")
    gr.add_argument("--pool-seed", type=int, default=11,
                    help="hold'em: the pool's seed (default 11)")
    gr.add_argument("--seed", type=int, default=0, help="hold'em: the solver's seed")
    gr.add_argument("--warm", type=nonnegative_float, default=None,
                    help="hold'em: start the free rows at the base (regrets and average sums "
                    "WARM x base; default 0: uniform)")
    gr.add_argument("--discount", default=None, metavar="INTERVAL,UNTIL",
                    help="hold'em: linear discounting every INTERVAL iterations up to UNTIL "
                    "(default none)")
    _quiet(gr, "no progress lines")

    c = sub.add_parser("cards", help="hold'em E[HS^2] tables over the lossless classes, "
                       "exact percentile thresholds, a file's bucket shares")
    c.add_argument("--round", choices=["flop", "turn", "river", "all"], default="flop",
                   help="postflop round (default flop; the river's table takes ~1.5 "
                   "minutes on 2 cores, ~6 GB of memory and 2.1 GB of cache)")
    c.add_argument("--buckets", type=positive_int, default=None,
                   help="buckets for the exact thresholds (default: the file's, else 50)")
    c.add_argument("--file", default=None,
                   help="strategy file (or bundled name) whose thresholds to measure "
                   "(default: the bundled hold'em file; 'none' for none)")
    c.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="threads building a table (default: the number of cores)")
    c.add_argument("--flop-rivers-per-turn", type=positive_int, default=None,
                   help="the flop estimator's river cards per turn card (default: the "
                   "file's, else the agent's estimator's)")
    c.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    _quiet(c, "no progress lines")

    pa = sub.add_parser("cards-pa", help="build a potential-aware hold'em card abstraction "
                        "(EMD k-means per round) and write its card spec")
    pa.add_argument("--buckets", default="169,50,50,50",
                    help="clusters per round n0,n1,n2,n3 (n0 = 169: the lossless classes; "
                    "default 169,50,50,50)")
    pa.add_argument("--recall", choices=["imperfect", "perfect"], default="imperfect",
                    help="imperfect: a round's own cluster; perfect: the clusters so far "
                    "(default imperfect)")
    pa.add_argument("--bins", type=positive_int, default=50,
                    help="equity bins of the turn histograms (default 50)")
    pa.add_argument("--samples", type=positive_int, default=50_000,
                    help="sampled hands per clustered round (default 50,000)")
    pa.add_argument("--seed", type=int, default=0, help="seed of the samples and k-means++")
    pa.add_argument("--workers", type=positive_int, default=2,
                    help="parallel chunks of boards (default 2)")
    pa.add_argument("--out", required=True, help="output card spec, FILE.json or FILE.msgpack")
    _quiet(pa, "no progress lines")

    _add_learn_sizes(sub)

    z = sub.add_parser("size", help="betting sequences, information sets, infoset-actions "
                       "and memory of a game (full or abstract)")
    z.add_argument("game", help="a bundled game name or a game definition file")
    z.add_argument("--abstraction", metavar="SPEC", help="a betting abstraction: a preset "
                   "(fcpa, fchpa, ...) or JSON (default: the full game, every legal action)")
    z.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    z.add_argument("--max-transitions", type=positive_int, default=None,
                   help="refuse counts needing more betting transitions (default 5,000,000)")

    _add_lbr(sub)
    translation_commands.add_parser(sub)
    resolve_lab_commands.add_parser(sub)
    interop_commands.add_parsers(sub)
    return p


def _upgrade(args: argparse.Namespace) -> int:
    """``upgrade FILE...``: each file checked in full, then rewritten as version 3."""
    from agent.strategy.fileformat import FORMAT_VERSION, upgrade_strategy

    for name in args.files:
        done = upgrade_strategy(name)
        print(f"{name}: {'upgraded to' if done else 'already'} version {FORMAT_VERSION}")
    return 0


def _refuse_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options that do not apply together are a usage error (status 2), as in every
    command: ``solve --recipe`` with ``--abstraction``, ``--solver`` (but ``egt``) or
    ``--cards`` (a recipe names its own), ``solve --recipe --solver egt --bundle`` (the
    bundled file is the recipe's solver's), ``solve --game`` with ``--bundle`` (bundled files
    have recipes)."""
    if args.command != "solve":
        return
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    solve = sub.choices["solve"]
    if args.recipe is not None:
        given = [flag for dest, flag in (("betting", "--abstraction"), ("solver", "--solver"),
                                         ("cards", "--cards")) if getattr(args, dest) is not None
                 and not (dest == "solver" and args.solver == "egt")]
        if given:
            solve.error(f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} with "
                        f"--game, not with --recipe (a recipe names its own; --solver egt "
                        f"is the one exception)")
        if args.solver == "egt" and args.bundle:
            solve.error("--bundle writes the recipe's own solver's file, not --solver egt's")
    elif args.bundle:
        solve.error("--bundle goes with --recipe (bundled files have recipes)")


def resolve_bundled(args: argparse.Namespace) -> None:
    """Strategy files given by bundled name, as ``acpc-agent --strategy`` takes them
    (:func:`agent.agents.resolve_strategy`, the one resolver): ``inspect``, ``exploit``,
    ``graft --base`` and ``cards --file``.

    Raises:
        UsageError: for a name that is neither a file nor a bundled strategy.
    """
    from agent.agents import resolve_strategy

    if args.command in ("inspect", "exploit"):
        args.file = str(resolve_strategy(args.file, builtins=False))
    elif args.command == "graft":
        args.base = str(resolve_strategy(args.base, builtins=False))
    elif args.command == "cards" and args.file not in (None, "none"):
        args.file = str(resolve_strategy(args.file, builtins=False))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-strategy``; returns the exit status."""
    whole_lines()
    parser = build_parser()
    args = parser.parse_args(argv)  # a bad flag or value: one line, status 2
    _refuse_combinations(parser, args)
    try:
        resolve_bundled(args)
        if args.command == "list":
            return _list(args)
        if args.command == "upgrade":
            return _upgrade(args)
        if args.command == "translation":
            return translation_commands.run(args)
        if args.command == "resolve-lab":
            return resolve_lab_commands.run(args)
        if args.command == "size":
            return _size(args)
        if args.command in interop_commands.COMMANDS:
            return interop_commands.COMMANDS[args.command](args)
        from strategies.commands import main as commands

        if args.command == "graft":
            from strategies.commands import graft as graft_cmd

            return graft_cmd.graft(args)
        if args.command == "lbr":
            from strategies.commands import lbr as lbr_run

            return lbr_run.lbr(args)
        if args.command == "cards-pa":
            from strategies.commands import cards_pa as cards_pa_cmd

            return cards_pa_cmd.cards_pa(args)
        if args.command == "learn-sizes":
            from strategies.commands import learn_sizes as learn_cmd

            return learn_cmd.learn_sizes(args)
        run = {"solve": commands.solve, "inspect": commands.inspect,
               "exploit": commands.exploit, "cards": commands.cards}[args.command]
        return run(args)
    except (AcpcError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # commands that keep partial work catch it themselves
        print(f"{PROG}: interrupted (Ctrl-C)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
