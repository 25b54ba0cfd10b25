"""``acpc-agent GAME HOST PORT [options]``: play one match against an ACPC dealer.

The reference example player's positional arguments come first. ``--strategy`` is a
strategy file, a built-in of :data:`agent.agents.BUILTINS` (``builtin:random``, legal
random actions like the reference example player; ``builtin:call``; ``builtin:fold``;
``builtin:minraise``; ``builtin:equity``, hold'em only: raise, call or fold by the hand's
equity against a random hand) or the user's own bot, ``module:Class`` (:mod:`agent.bot`;
imported from the current directory; a spec that names no bot exits with status 2).
With a file: ``--mappings`` (one of the seven classic
translation mappings, ``module:function`` or an entry point; default: the file's),
``--purify none|full|threshold:T`` (default: the file's), ``--sizes-in abstract|real``
(where translation measures the abstract sizes ``A`` and ``B``: in the abstract node's
state or re-expressed in the real state, :mod:`agent.abstraction.convention`; default
``abstract``), ``--seed`` (the agent's private
randomness: same seed, same inputs, same actions), ``--trace FILE`` (one JSON line per
decision), ``--reload`` (watch the file and SIGHUP: validated off the event loop, swapped in
between hands, a bad file is rejected and play goes on), ``--verify auto|full`` (trust a
table verified before and unchanged since, or check every byte: :mod:`agent.strategy.
verified`), ``--event-loop auto|asyncio|uvloop`` (default ``auto``: uvloop when
installed). Start-up: when the agent's kernels are known to be in numba's cache
(:mod:`agent.kernelstamp`) a strategy file's hold'em kernels load in a background thread
and the first, preflop, decisions are answered without them
(:mod:`agent.abstraction.deferred`); otherwise they are loaded (compiled on a fresh
install, with a notice) before the handshake, as always with ``--preload``. ``--stats
FILE`` writes the policy's counters (:class:`agent.policy.PolicyStats`) as JSON at the end
(``acpc-match`` reads its time-guard count). A summary line (hands, chips won, decision
times, fallbacks) goes to stderr when the dealer closes the connection.

``--resolve off-tree|round|always`` (with ``--resolve-iterations N``, ``--resolve-ms MS``,
``--gadgets NAME``, ``--resolve-depth N`` and ``--resolve-leaf blueprint|multi``) re-solves
subgames instead of translating, translation as the counted fallback
(:mod:`agent.resolving`; two-player no-limit Leduc); the re-solver's plans and kernels are
built before connecting. ``--resolve-depth N`` stops each subgame after N rounds (its own
counted) and values the rest of the game at the leaves (:mod:`agent.resolve.depth`).

``--exploit dbbr|safe`` (with ``--exploit-prior-weight N``, ``--exploit-every N``,
``--exploit-warmup M`` and ``--exploit-epsilon CHIPS``) exploits the opponent: a model of it
from its actions, the equilibrium as prior, and a best response to it, safely or not
(:mod:`agent.exploiting`, :mod:`agent.exploit`; two-player Kuhn and Leduc).

``acpc-agent explain TRACE [--hand N] [--limit K]`` tells a trace as a story, hand by hand
(:mod:`agent.explain`).

``--human`` plays the seat from the terminal instead (:mod:`agent.human`): it shows each
hand (cards, board, pot, stacks, every action, whose turn, the legal actions, the result) and
reads typed actions (``f``, ``c``, ``r 600``, ``min``, ``half``, ``pot``, ``allin``, ``?``,
``quit``); ``--opponent TEXT`` names the opponent in each hand's header. It takes none of the
strategy options.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent import exploitconfig
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, SIZE_CONVENTIONS
from agent.acpc.describe import cards_text
from agent.acpc.errors import AcpcError, UsageError, whole_lines
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState
from agent.agents import (
    BotSpecError,
    builtin_specs,
    json_logger,
    make_policy,
    policy_kernels,
    strategy_kind,
)
from agent.builtin import Policy
from agent.client import EVENT_LOOPS, final_value, play, run
from agent.console import (
    compile_notice,
    deprecated_alias,
    port_number,
    positive_float,
    positive_int,
)
from agent.fileio import write_atomic
from agent.human import HumanPlayer, PlayerLeft
from agent.kernelstamp import kernels_known_warm, mark_kernels_warm

if TYPE_CHECKING:
    from agent.exploitconfig import ExploitConfig
    from agent.resolve import ResolveConfig

VERIFY_MODES = ("auto", "full")
"""``--verify``: :data:`agent.strategy.fileformat.VERIFY_MODES` (not imported: numpy)."""
RESOLVE_MODES = ("off-tree", "round", "always")
"""``--resolve``: :data:`agent.resolve.MODES` (not imported: numpy)."""
GADGETS = ("unsafe", "resolve", "maxmargin", "reach-maxmargin")
"""``--gadgets``: :data:`agent.resolve.GADGETS` (not imported: numpy)."""
RESOLVE_LEAVES = ("blueprint", "multi")
"""``--resolve-leaf``: :data:`agent.resolve.depth.LEAVES` (not imported: numpy)."""
RESOLVE_FLAGS = ("resolve_iterations", "resolve_ms", "gadget", "resolve_depth",
                 "resolve_leaf")
"""The options that only apply with ``--resolve``."""
EXPLOIT_FLAGS = tuple(exploitconfig.key(name) for name in exploitconfig.OPTIONS)
"""The options that only apply with ``--exploit``: their ``dest`` (``exploit_every``...),
which is also their key in ``acpc-match``'s variants (:mod:`agent.exploitconfig`)."""

PROG = "acpc-agent"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Play a match against an ACPC dealer.",
        epilog="acpc-agent explain TRACE [--hand N] [--limit K]: tell a --trace file as a "
        "story, hand by hand (acpc-agent explain --help)")
    p.add_argument("game", help="game definition file (or the name of a bundled game)")
    p.add_argument("host", help="dealer host, e.g. 127.0.0.1")
    p.add_argument("port", type=port_number, help="this seat's port, as printed by the dealer")
    p.add_argument("--human", action="store_true",
                   help="play the seat yourself from this terminal (typed actions)")
    p.add_argument("--opponent", default=None, metavar="TEXT",
                   help="with --human: who the opponent is, shown with each hand")
    p.add_argument("--strategy", default=None,
                   help=f"a strategy file, one of {', '.join(builtin_specs())}, or your "
                   "own bot as module:Class (imported from the current directory) "
                   "(default builtin:random)")
    p.add_argument("--mappings", default=None,
                   help="the translation mapping (one here): det-arith, rand-arith, det-geo, "
                   "rand-geo-1, rand-geo-2, det-pshar, rand-pshar, module:function or an entry "
                   "point (default: the strategy file's)")
    deprecated_alias(p, "--mapping", new="--mappings")
    p.add_argument("--purify", default=None,
                   help="none, full or threshold:T (default: the strategy file's)")
    p.add_argument("--sizes-in", default=None, choices=SIZE_CONVENTIONS,
                   help="size convention of translation: measure the abstract sizes A, B in "
                   "the abstract node's state ('abstract') or re-expressed in the real "
                   f"state ('real'; a real all-in is the abstract all-in) (default "
                   f"{DEFAULT_SIZE_CONVENTION})")
    p.add_argument("--seed", type=int, default=None, help="seed for the agent's randomness")
    p.add_argument("--trace", type=Path, default=None,
                   help="write one JSON line per decision to this file")
    p.add_argument("--reload", action="store_true",
                   help="watch the strategy file (and SIGHUP) and swap it in between hands")
    p.add_argument("--verify", default="auto", choices=VERIFY_MODES,
                   help="auto: trust a strategy table that passed the checksum and row "
                   "checks before and cannot have changed since (same inode, size, mtime, "
                   "ctime); full: check every byte of every file, at start and at every swap "
                   "(default auto)")
    p.add_argument("--resolve", default=None, choices=RESOLVE_MODES, metavar="MODE",
                   help="re-solve subgames instead of translating (two-player no-limit "
                   "Leduc): off-tree (when the opponent leaves the subgame abstraction), "
                   "round (at the agent's first decision of every round after the first), "
                   "always (every decision); translation is the fallback")
    p.add_argument("--resolve-iterations", type=positive_int, default=None, metavar="N",
                   help="with --resolve: CFR+ iterations per re-solve (default 200)")
    p.add_argument("--resolve-ms", type=positive_float, default=None, metavar="MS",
                   help="with --resolve: time budget per decision; a re-solve that does not "
                   "finish its iterations within it falls back to translation (counted; "
                   "default: no budget)")
    p.add_argument("--gadgets", dest="gadget", default=None, choices=GADGETS,
                   help="with --resolve: the re-solving gadget (default reach-maxmargin)")
    deprecated_alias(p, "--gadget", new="--gadgets")
    p.add_argument("--resolve-depth", type=positive_int, default=None, metavar="N",
                   help="with --resolve: rounds a subgame spans, counting its own (default: "
                   "to the end of the game); the rest of the game is valued at the leaves")
    p.add_argument("--resolve-leaf", default=None, choices=RESOLVE_LEAVES,
                   help="with --resolve-depth: blueprint (the opponent continues with its "
                   "blueprint) or multi (it picks, per hand, among its blueprint and the "
                   "fold-, call- and raise-biased blueprint; default multi)")
    p.add_argument("--exploit", default=None, choices=exploitconfig.MODES, metavar="MODE",
                   help="exploit the opponent (two-player Kuhn or Leduc): dbbr (best respond "
                   "to a model of it built from its actions, the equilibrium as prior), "
                   "safe (exploit only as much as it has provably given away, plus "
                   "--exploit-epsilon)")
    p.add_argument("--exploit-prior-weight", type=float, default=None, metavar="N",
                   help="with --exploit: observations the equilibrium prior is worth at each "
                   "information set (default 5)")
    p.add_argument("--exploit-every", type=positive_int, default=None, metavar="N",
                   help="with --exploit: hands between refits of the model after the "
                   "warm-up (default 50)")
    p.add_argument("--exploit-warmup", type=int, default=None, metavar="M",
                   help="with --exploit: hands played as the equilibrium before the first "
                   "refit (default 1000)")
    p.add_argument("--exploit-epsilon", type=float, default=None, metavar="CHIPS",
                   help="with --exploit safe: the budget it may lose before winning "
                   "anything, chips per match (default 0)")
    p.add_argument("--time-guard-ms", type=positive_float, default=1000.0,
                   help="a decision slower than this checks/calls instead (default 1000)")
    p.add_argument("--preload", action="store_true",
                   help="load a strategy file's kernels before connecting, even when they "
                   "are known to be cached (acpc-match's agents: nothing loads during play)")
    p.add_argument("--stats", type=Path, default=None, metavar="FILE",
                   help="write the end-of-match counters (decisions, translations, "
                   "fallbacks, time-guard 'timeouts') to FILE as one JSON object")
    p.add_argument("--event-loop", choices=EVENT_LOOPS, default="auto",
                   help="auto: uvloop when installed, else asyncio (default auto)")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line at the end")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


async def _run(args: argparse.Namespace, game: Game, policy: Policy) -> str:
    if isinstance(policy, HumanPlayer):
        # Ctrl-C while the player types: interrupt the blocking read at once (asyncio's own
        # handler would wait for the event loop, which the read holds)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        await play(args.host, args.port, game, policy, observer=policy.observe)
        return f"hands {policy.hands}, chips won {policy.total:g}"
    reloader = None
    task = None
    loop = asyncio.get_running_loop()
    if args.reload:
        from agent.policy import StrategyPolicy
        from agent.strategy.hotswap import StrategyReloader

        if not isinstance(policy, StrategyPolicy):
            raise UsageError("expected --reload with a strategy file, got a built-in strategy")
        log = json_logger(sys.stderr)
        reloader = StrategyReloader(Path(args.strategy), game, policy, log.info,
                                    verify=args.verify)
        task = asyncio.create_task(reloader.run())
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGHUP, reloader.request)
    observer = None
    trace = getattr(policy, "trace", None)
    if trace is not None:
        def observer(ms: MatchState) -> None:  # the trace's hand results
            if ms.state.finished:
                trace({"event": "result", "hand": ms.hand_number, "position": ms.position,
                       "betting": ms.state.betting,
                       "hole_cards": [cards_text(h) for h in ms.hole_cards],
                       "board": cards_text(ms.board), "chips": final_value(ms)})
    try:
        summary = await play(args.host, args.port, game, policy, observer=observer)
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGHUP)
    text = summary.describe()
    stats = getattr(policy, "stats", None)
    if stats is not None:
        text += (f", translations {stats.translations}, fallbacks raise-cap "
                 f"{stats.raise_cap_fallbacks} off-tree hands {stats.off_tree_fallbacks} "
                 f"(decisions {stats.off_tree_decisions}) waiting "
                 f"{stats.waiting_fallbacks} "
                 f"time-guard {stats.timeouts}")
        describe = getattr(stats, "describe", None)
        if describe is not None:
            text += ", " + describe()
    if reloader is not None:
        text += f", swaps {reloader.swaps}, rejected {reloader.rejections}"
        if reloader.stopped is not None:
            text += f" (the reloader stopped: {reloader.stopped})"
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-agent``; returns the exit status."""
    whole_lines()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["explain"]:
        from agent.explain import main as explain_main

        return explain_main(argv[1:], sys.stdout, sys.stderr)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.human:
        given = [f"--{name.replace('_', '-')}" for name in ("strategy", "mappings", "purify",
                                                            "trace", "seed")
                 if getattr(args, name) is not None] + (["--reload"] if args.reload else []) + (
                     ["--verify"] if args.verify != "auto" else []) + (
                     ["--resolve"] if args.resolve is not None else []) + (
                     ["--exploit"] if args.exploit is not None else [])
        if given:
            parser.error(f"{', '.join(given)} apply to an agent, not to --human (you play)")
        return _main_human(args)
    if args.opponent is not None:
        parser.error("--opponent applies to --human only")
    if args.resolve is None:
        given = [f"--{name.replace('_', '-')}" for name in RESOLVE_FLAGS
                 if getattr(args, name) is not None]
        if given:
            parser.error(f"{', '.join(given)} apply only with --resolve MODE")
    if args.exploit is not None and args.reload:
        parser.error("--reload does not apply with --exploit (the exploiter swaps its own "
                     "tables)")
    if args.exploit is None:
        given = [f"--{name.replace('_', '-')}" for name in EXPLOIT_FLAGS
                 if getattr(args, name) is not None]
        if given:
            parser.error(f"{', '.join(given)} apply only with --exploit MODE")
    if args.strategy is None:
        args.strategy = "builtin:random"
    kind = strategy_kind(args.strategy)
    if kind != "file":
        given = [f"--{name.replace('_', '-')}" for name in ("mappings", "purify", "trace",
                                                          "sizes_in", "resolve", "exploit")
                 if getattr(args, name) is not None] + (["--reload"] if args.reload else []) + (
                     ["--verify"] if args.verify != "auto" else [])
        if given:
            parser.error(f"{', '.join(given)} apply to strategy files, not to the "
                         f"{'built-in' if kind == 'builtin' else 'bot'} {args.strategy!r}")
    trace = None
    try:
        game = load_game(args.game)
        if args.trace is not None:
            trace = open(args.trace, "w", encoding="utf-8")  # noqa: SIM115
        options = {"seed": args.seed, "mapping": args.mappings, "purify": args.purify,
                   "trace": trace, "time_guard": args.time_guard_ms / 1000.0,
                   "sizes_in": args.sizes_in, "verify": args.verify}
        if args.exploit is not None:
            options["exploit"] = _exploit_config(args, game)
            from agent.exploit import is_sampled_holdem
            from agent.strategy import best_response, sampled_deals

            sampling = sampled_deals.KERNELS if is_sampled_holdem(game) else ()
            with compile_notice(PROG, [*policy_kernels(args.strategy, game),
                                       *best_response.KERNELS, *sampling]):
                policy = make_policy(args.strategy, game, **options)
        elif args.resolve is not None:
            options["resolve"] = _resolve_config(args, game)
            from agent.resolve import kernels as resolve_kernels

            with compile_notice(PROG, [*policy_kernels(args.strategy, game),
                                       resolve_kernels.cfr_plus]):
                policy = make_policy(args.strategy, game, **options)
                _load_kernels(policy, True)
                policy.warm_up()  # type: ignore[attr-defined]
        elif kind == "file" and kernels_known_warm():
            # the kernels are in numba's cache: play at once, load them in the background
            # (with --preload: now, before connecting)
            policy = make_policy(args.strategy, game, defer_kernels=not args.preload,
                                 **options)
            if args.preload:
                _load_kernels(policy, args.reload)
            else:
                threading.Thread(target=_load_kernels, args=(policy, args.reload),
                                 name="acpc-kernels", daemon=True).start()
        else:
            with compile_notice(PROG, policy_kernels(args.strategy, game)):
                policy = make_policy(args.strategy, game, **options)
                if kind == "file":
                    _load_kernels(policy, True)
        text = run(_run(args, game, policy), args.event_loop)
        if args.stats is not None:
            stats = getattr(policy, "stats", None)
            counters = dataclasses.asdict(stats) if stats is not None else {}
            write_atomic(args.stats, json.dumps(counters).encode())
    except (AcpcError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, BotSpecError) else 1
    except KeyboardInterrupt:  # Ctrl-C while loading or playing: one line, as the dealer
        if args.debug:
            traceback.print_exc()
        kept = ""
        if trace is not None:
            trace.close()  # every decision so far is in the file
            kept = f"; the trace {args.trace} holds every decision made"
        print(f"{PROG}: interrupted (Ctrl-C){kept}", file=sys.stderr)
        return 130
    finally:
        if trace is not None:
            trace.close()
    if not args.quiet:
        print(f"{PROG}: {text}", file=sys.stderr)
    return 0


def _resolve_config(args: argparse.Namespace, game: Game) -> ResolveConfig:
    """The re-solver's configuration from ``--resolve``, ``--resolve-iterations``,
    ``--resolve-ms``, ``--gadgets``, ``--resolve-depth`` and ``--resolve-leaf``
    (:class:`agent.resolve.ResolveConfig`), after checking
    that it can play ``game`` (before anything compiles).

    Raises:
        UsageError: for a bad value or a game :func:`agent.resolving.resolve_support`
            refuses (one line).
    """
    from agent.resolve import ResolveConfig
    from agent.resolving import resolve_support

    why = resolve_support(game)
    if why is not None:
        raise UsageError(why)

    ms = args.resolve_ms
    if ms is not None and not (ms > 0 and ms < float("inf")):
        raise UsageError(f"expected --resolve-ms to be a positive number of milliseconds, "
                         f"got {ms!r}")
    return ResolveConfig.from_flags(args.resolve, iterations=args.resolve_iterations,
                                    gadget=args.gadget,
                                    seconds=None if ms is None else ms / 1000.0,
                                    depth=args.resolve_depth, leaf=args.resolve_leaf)


def _exploit_config(args: argparse.Namespace, game: Game) -> ExploitConfig:
    """The exploiter's configuration from ``--exploit`` and its options
    (:class:`agent.exploit.ExploitConfig`, which checks them: one line for a bad value),
    after checking that it can play ``game`` (before anything compiles).

    Raises:
        UsageError: for a bad value or a game :func:`agent.exploit.exploit_support` refuses.
    """
    from agent.exploit import exploit_support
    from agent.exploitconfig import OPTIONS, ExploitConfig

    why = exploit_support(game, args.exploit)
    if why is not None:
        raise UsageError(why)
    given = {name: getattr(args, f"exploit_{name}") for name in OPTIONS
             if getattr(args, f"exploit_{name}") is not None}
    return ExploitConfig(mode=args.exploit, **given)


def _load_kernels(policy: Policy, validation: bool) -> None:
    """Load the numba kernels a strategy policy plays with (its card abstraction's, and with
    ``validation`` those that check a strategy file at a swap), then stamp them warm
    (:mod:`agent.kernelstamp`). Run in a background thread when they are known to be in
    numba's cache, before connecting otherwise."""
    loaded = getattr(policy, "loaded", None)
    wait = getattr(getattr(loaded, "cards", None), "wait", None)
    try:
        if wait is not None:
            wait()
        if validation:
            from agent.strategy.kernels import warm_up

            warm_up()
    except Exception:  # a decision that needs them reports the error
        return
    mark_kernels_warm()


def _main_human(args: argparse.Namespace) -> int:
    """``--human``: the terminal player (prints to stdout, reads stdin)."""
    player = None
    try:
        game = load_game(args.game)
        player = HumanPlayer(game, sys.stdin, sys.stdout, opponent=args.opponent)
        print(f"{PROG}: connecting to {args.host}:{args.port} as a human player "
              f"(? for help, quit to leave)", flush=True)
        # the terminal player blocks the loop reading stdin: the stdlib loop lets its Ctrl-C
        # (KeyboardInterrupt) out of the protocol callback; speed does not matter here
        loop = "asyncio" if args.event_loop == "auto" else args.event_loop
        text = run(_run(args, game, player), loop)
    except (PlayerLeft, KeyboardInterrupt) as exc:
        why = str(exc) if isinstance(exc, PlayerLeft) else "you left the match (Ctrl-C)"
        hands, total = (player.hands, player.total) if player is not None else (0, 0.0)
        print(f"{PROG}: {why} after {hands} hand{'' if hands == 1 else 's'}, chips won "
              f"{total:g}", file=sys.stderr)
        return 0
    except (AcpcError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"{PROG}: {text}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
