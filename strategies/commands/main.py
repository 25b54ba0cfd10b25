"""The work behind ``acpc-strategy``'s commands (:mod:`strategies.cli` parses and
dispatches; this module is imported only when a command needs numpy, numba or a strategy
file, so ``acpc-strategy --help`` and ``list`` start without them).

Commands: :func:`solve`, :func:`inspect`, :func:`exploit`, :func:`cards`.
"""


from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from agent.abstraction.actions import ALL_IN
from agent.abstraction.buckets import card_abstraction_from_spec
from agent.abstraction.holdem_spec import FLOP_RIVERS_PER_TURN
from agent.acpc.betting import ActionKind
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.limits import check_json, excerpt
from agent.data import manifest_path, strategy_path
from agent.strategy.fileformat import Strategy, load_strategy
from agent.strategy.purification import Purification, parse_purification
from strategies.commands.defaults import (
    DEFAULT_TEST_DEALS,
    DEFAULT_TRAIN_DEALS,
    DEFAULT_Z,
    PROG,
    TEST_SEED,
    TRAIN_SEED,
)
from strategies.games.abstract import AbstractGame, build_abstract_game, check_enumerable
from strategies.recipes import Recipe, get_recipe, load_manifest, update_manifest

if TYPE_CHECKING:  # numba: imported by the commands that measure (inspect needs none)
    from strategies.measure.best_response import Exploitability
    from strategies.measure.sampled_br import SampledExploitability

# --------------------------------------------------------------------------- helpers


def _game_for_strategy(strategy: Strategy) -> AbstractGame:
    """The flat abstract game of a loaded strategy file.

    Raises:
        ValueError: if its card abstraction cannot be rebuilt or its deals enumerated.
    """
    check_enumerable(strategy.game)  # before rebuilding possibly costly card tables
    cards = card_abstraction_from_spec(strategy.game, strategy.cards, strategy.checked_cards)
    return build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)


def _describe_cards(strategy: Strategy) -> str:
    """The card abstraction in a line, from what the load's card check accepted and decoded
    (``Strategy.checked_cards``): hold'em thresholds summarised per round (a file has one
    per bucket boundary: 150 numbers for 50 buckets a round); potential-aware tables by
    their size."""
    cards = strategy.cards
    checked = strategy.checked_cards
    parts = checked.parts_for(strategy.game, cards) if checked is not None else None
    if parts is None:  # not a hold'em kind (or not from load_strategy): its spec as is
        return str(cards)
    if cards["kind"] == "holdem-pa":
        small = {"kind": "holdem-pa", "buckets": list(checked.buckets) if checked else [],
                 "clusters": list(parts["clusters"]), "recall": parts["recall"],
                 "bins": parts["bins"], "samples": parts["samples"], "seed": parts["seed"]}
        return (f"{small}; flop table {list(parts['flop'].shape)} (sha256 "
                f"{cards['flop']['sha256'][:16]}), {len(parts['turn_weights'])} turn "
                f"centroids, {len(parts['river_thresholds'])} river thresholds")
    rest = {k: v for k, v in cards.items() if k != "thresholds"}
    rounds = [f"round {r}: {len(values)} from {min(values):.4f} to {max(values):.4f}"
              for r, values in enumerate(parts["thresholds"], start=1) if values]
    return f"{rest}; E[HS^2] thresholds: {'; '.join(rounds)}"


def _bucket_label(cards: dict[str, Any], round_: int, bucket: int) -> str:
    """What a hold'em bucket holds: the preflop class (``AKs``) or the E[HS^2] range."""
    if cards.get("kind") != "holdem":
        return ""
    if round_ == 0:
        from agent.abstraction.holdem_spec import preflop_class_name

        return preflop_class_name(bucket)
    values = cards["thresholds"][round_ - 1]
    lo = 0.0 if bucket == 0 else values[bucket - 1]
    hi = 1.0 if bucket >= len(values) else values[bucket]
    return f"E[HS^2] in [{lo:.3f}, {hi:.3f})"


def _describe_game(game: Game) -> str:
    stacks = " ".join(str(s) for s in game.stack) if game.is_nolimit else "-"
    return (f"{game.betting_type.value}, {game.num_players} players, {game.num_rounds} rounds, "
            f"blinds {' '.join(str(b) for b in game.blind)}, stacks {stacks}, deck "
            f"{game.num_ranks} ranks x {game.num_suits} suits, {game.num_hole_cards} hole "
            f"card(s), board {' '.join(str(b) for b in game.num_board_cards)}")


def _action_label(strategy: Strategy, node: int, index: int) -> str:
    act = strategy.tree.nodes[node].actions[index]
    text = str(act.action)
    if act.kind is ActionKind.RAISE and strategy.game.is_nolimit:
        text += "[all-in]" if act.fraction == ALL_IN else f"[{act.fraction:g}p]"
    return text


def _print_exploitability(result: Exploitability, out: TextIO) -> None:
    n = len(result.values)
    for p in range(n):
        print(f"  position {p}: value {result.values[p]:+.6f}, best response "
              f"{result.best_responses[p]:+.6f}, gain {result.gains[p]:.6g}", file=out)
    print(f"  NashConv {result.nash_conv:.6g} chips/hand", file=out)
    if n == 2:
        print(f"  exploitability {result.exploitability:.6g} chips/hand "
              f"((br0 + br1) / 2, {result.exploitability * 1000:.4g} milli-chips/hand)",
              file=out)
    else:
        print(f"  {n} players: NashConv (the sum of the best-response gains) is the figure "
              f"reported", file=out)


# --------------------------------------------------------------------------- commands


def solve(args: argparse.Namespace) -> int:
    from strategies.solvers.recipe import solve_recipe

    if args.recipe is not None:  # options that do not apply: refused by strategies.cli
        recipe = get_recipe(args.recipe)
        if args.solver is not None:  # egt, the one solver a recipe may be run with instead
            recipe = dataclasses.replace(recipe, solver=args.solver)
    else:
        recipe = custom_recipe(args)
    return solve_recipe(recipe, iterations=args.iterations,
                        minutes=args.minutes, resume=args.resume, out=args.out,
                        checkpoint=args.checkpoint, bundle=args.bundle,
                        progress=not args.no_progress, workers=args.workers or 1,
                        checkpoint_minutes=args.checkpoint_minutes or 10.0)


def custom_recipe(args: argparse.Namespace) -> Recipe:
    """The recipe of ``solve --game G --abstraction SPEC --solver S``: lossless cards, deals
    enumerated; named after ``--out`` (its checkpoint is ``OUT-stem.ckpt.npz``).

    Raises:
        UsageError: for a game whose deals cannot be enumerated, or bad specs.
    """
    from agent.abstraction.actions import parse_betting_abstraction
    from agent.acpc.gamefiles import load_game
    from strategies.solvers.cfr import solver_config
    from strategies.solvers.egt import is_egt

    game = load_game(args.game)
    betting = parse_betting_abstraction(args.betting or "fcpa", "--abstraction")
    cards = parse_cards_option(args.cards)
    name = Path(args.out).stem if args.out else f"{Path(args.game).stem}.{betting.name}"
    if cards["kind"] == "lossless":
        check_enumerable(game)
        solver = args.solver or "cfr+"
        if not is_egt(solver):
            solver_config(solver)
        return Recipe(name, args.game, json.dumps(betting.to_json()), solver,
                      args.iterations or 10_000,
                      description=f"{args.game} with betting {betting.name!r} ({solver})")
    from agent.abstraction.holdem_spec import check_holdem_game

    check_holdem_game(game)
    solver = args.solver or "mccfr-es-pool"
    if solver != "mccfr-es-pool":
        raise UsageError(f"expected --solver mccfr-es-pool with hold'em buckets (the deals "
                         f"are sampled), got {solver!r}")
    return Recipe(name, args.game, json.dumps(betting.to_json()), solver,
                  args.iterations or 1_000_000, cards="holdem", buckets=cards["buckets"],
                  card_samples=cards["samples"], pool_deals=cards["pool_deals"],
                  discount_interval=cards["discount_interval"],
                  discount_until=cards["discount_until"],
                  description=f"{args.game} with betting {betting.name!r}, hold'em buckets "
                  f"{list(cards['buckets'])} ({solver})")


CARDS_KEYS = {"kind", "buckets", "samples", "pool_deals", "discount_interval", "discount_until"}
MAX_CARDS_CHARS = 4096
"""Longest ``solve --cards`` JSON accepted (a real one is under 200 characters); its nesting
is bounded by :data:`agent.acpc.limits.MAX_JSON_DEPTH`."""
MAX_CARDS_BUCKETS = 10_000
"""Most E[HS^2] buckets a postflop round a ``--cards`` spec may ask for (the bundled recipe
has 50; a larger table is the solver's memory: 60,000 a round needs 1.5 GB for one array)."""
MAX_CARDS_DEALS = 10_000_000
"""Most ``samples`` and ``pool_deals`` of a ``--cards`` spec (the bundled recipe: 50,000
and 2,000,000; a pool deal is 56 bytes)."""


def parse_cards_option(text: str | None) -> dict[str, Any]:
    """``solve --cards``: ``lossless`` (default; deals enumerated) or a JSON object
    ``{"kind": "holdem", "buckets": [169, b1, b2, b3], "samples": N, "pool_deals": N,
    "discount_interval": N, "discount_until": N}`` (E[HS^2] buckets and a sampled deal pool,
    as the bundled hold'em recipe; the last four optional).

    Raises:
        UsageError: with what was expected and what came.
    """
    if text is None or text.strip() == "lossless":
        return {"kind": "lossless"}
    check_json(text, where="--cards", what="a JSON card spec", max_chars=MAX_CARDS_CHARS,
               error=UsageError)
    try:
        spec = json.loads(text)
    except ValueError:  # JSONDecodeError, or an integer over the conversion limit
        raise UsageError(f"expected --cards lossless or a JSON object such as "
                         f"'{{\"kind\": \"holdem\", \"buckets\": [169, 8, 8, 8]}}', got "
                         f"{excerpt(text)}") from None
    if not isinstance(spec, dict) or spec.get("kind") not in ("lossless", "holdem"):
        raise UsageError(f"expected --cards with kind 'lossless' or 'holdem', got "
                         f"{excerpt(text)}")
    unknown = sorted(set(spec) - CARDS_KEYS)
    if unknown:
        raise UsageError(f"expected --cards keys {sorted(CARDS_KEYS)}, got unknown "
                         f"{excerpt(unknown)}")
    if spec["kind"] == "lossless":
        return {"kind": "lossless"}
    buckets = spec.get("buckets")
    if (not isinstance(buckets, list) or len(buckets) != 4 or buckets[0] != 169
            or any(not isinstance(b, int) or isinstance(b, bool) or not 1 <= b <= MAX_CARDS_BUCKETS
                   for b in buckets)):
        raise UsageError(f"expected hold'em 'buckets' [169, b1, b2, b3] (integers in "
                         f"1..{MAX_CARDS_BUCKETS:,}), got {excerpt(buckets)}")
    out: dict[str, Any] = {"kind": "holdem", "buckets": tuple(buckets)}
    for key, default in (("samples", 50_000), ("pool_deals", 200_000),
                         ("discount_interval", 0), ("discount_until", 0)):
        value = spec.get(key, default)
        deals = key in ("samples", "pool_deals")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0 or (
            deals and not 1 <= value <= MAX_CARDS_DEALS
        ):
            kind = f"an integer in 1..{MAX_CARDS_DEALS:,}" if deals else "a non-negative integer"
            raise UsageError(f"expected {kind} as --cards {key!r}, got {excerpt(value)}")
        out[key] = value
    return out


def _inspect_sampled(file: str, strategy: Strategy, out: TextIO) -> None:
    """The sampled figures recorded in the manifest for this very file, if any."""
    name = _manifest_name(strategy)
    entry = load_manifest()["files"].get(name, {}) if name is not None else {}
    recorded = entry.get("sampled_best_response") if isinstance(entry, dict) else None
    if not isinstance(recorded, dict) or not recorded:
        print(f"abstract-game figures: not computed here (deals cannot be enumerated); "
              f"`{PROG} exploit {file}` measures a sampled lower bound", file=out)
        return
    print(f"abstract-game figures (sampled lower bound recorded in the manifest for checksum "
          f"{strategy.checksum}; `{PROG} exploit {file}` re-measures):", file=out)
    for purification, figures in recorded.items():
        print(f"  {purification} purification: exploitability >= "
              f"{figures['exploitability']:.4f} +- {figures['exploitability_ci95']:.4f} "
              f"chips/hand ({figures['exploitability_mbb']:.1f} +- "
              f"{figures['exploitability_ci95_mbb']:.1f} mbb/hand), value p0 "
              f"{figures['game_value'][0]:+.4f}; {figures['train_deals']:,} training and "
              f"{figures['test_deals']:,} test deals", file=out)


def inspect(args: argparse.Namespace) -> int:
    out = sys.stdout
    strategy = load_strategy(args.file)
    game = strategy.game
    print(f"file: {args.file} ({Path(args.file).stat().st_size} bytes, {strategy.table.dtype} "
          f"table)", file=out)
    print(f"game: {_describe_game(game)} (fingerprint {game.fingerprint[:12]})", file=out)
    print(f"betting: {strategy.betting.name} {strategy.betting.to_json()}", file=out)
    print(f"cards: {_describe_cards(strategy)}", file=out)
    layout = strategy.layout
    decision = int((layout.offsets >= 0).sum())
    print(f"table: {layout.total} values, {int(layout.rows.sum())} information sets, "
          f"{decision} decision nodes of {len(strategy.tree.nodes)}, checksum "
          f"{strategy.checksum}", file=out)
    print("meta:", file=out)
    for key, value in strategy.meta.items():
        print(f"  {key}: {value}", file=out)
    if strategy.cards.get("kind") == "graft":
        from strategies.commands.graft import print_grafts

        print_grafts(strategy, out)
    abstract: AbstractGame | None = None
    if _sampled(strategy):
        _inspect_sampled(args.file, strategy, out)
    else:
        try:
            abstract = _game_for_strategy(strategy)
        except ValueError as exc:
            print(f"abstract-game figures: not computed ({exc})", file=out)
    if abstract is not None:
        from strategies.measure.best_response import exploitability, strategy_table

        print("abstract-game figures (chips per hand):", file=out)
        _print_exploitability(exploitability(abstract, strategy_table(abstract, strategy)),
                              out)
    print("sample information sets:", file=out)
    shown = 0
    per_round: dict[int, int] = {}
    for node in strategy.tree.decision_nodes:
        if shown >= args.samples:
            break
        if per_round.get(node.round, 0) >= 2:
            continue
        per_round[node.round] = per_round.get(node.round, 0) + 1
        for bucket in range(min(int(layout.rows[node.id]), 3)):
            if shown >= args.samples:
                break
            row = strategy.row(node.id, bucket)
            probs = "  ".join(f"{_action_label(strategy, node.id, a)} {p:.3f}"
                              for a, p in enumerate(row))
            label = _bucket_label(strategy.cards, node.round, bucket) if abstract is None \
                else abstract.describe_bucket(node.round, bucket)
            example = f" ({label})" if label else ""
            betting = repr(node.state.betting) if node.state.betting else "(start)"
            print(f"  {betting:14} position {node.player} round {node.round} bucket "
                  f"{bucket}{example}: {probs}", file=out)
            shown += 1
    return 0


def _sampled(strategy: Strategy) -> bool:
    """True for files whose deals cannot be enumerated but a sampled best response can
    measure (two players, hold'em E[HS^2] or potential-aware cards, or hold'em grafts)."""
    try:
        check_enumerable(strategy.game)
    except ValueError:
        cards = strategy.cards
        holdem = cards.get("kind") in ("holdem", "holdem-pa") or (
            cards.get("kind") == "graft" and isinstance(cards.get("base"), dict)
            and cards["base"].get("kind") == "holdem")
        return strategy.game.num_players == 2 and holdem
    return False


_SAMPLED_OPTIONS = ("train_deals", "test_deals", "train_seed", "test_seed", "z", "workers")
"""``exploit`` options that only a sampled best response (hold'em files) uses."""


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _print_sampled(result: SampledExploitability, out: TextIO) -> None:
    mbb = 1000.0 / result.big_blind
    for p in range(2):
        print(f"  position {p}: value {result.values[p]:+.4f}, best response "
              f"{result.best_responses[p]:+.4f} (se {result.best_response_se[p]:.4f}; "
              f"{result.in_sample[p]:+.4f} on its training deals), gain "
              f"{result.gains[p]:+.4f}", file=out)
    print(f"  exploitability >= {result.exploitability:.4f} +- {result.ci95:.4f} chips/hand "
          f"(95%), {result.mbb:.1f} +- {result.ci95 * mbb:.1f} mbb/hand", file=out)
    print(f"  [{result.purification} purification; best responses learned on "
          f"{result.train_deals:,} deals (pool seed {result.train_seed}, z {result.z:g}), "
          f"evaluated exactly on {result.test_deals:,} other deals (pool seed "
          f"{result.test_seed}); {result.seconds:.1f} s]", file=out)
    if result.exploitability - result.ci95 <= 0.0:
        print(f"  warning: this bound is not significantly above 0 (its 95% interval reaches "
              f"{result.exploitability - result.ci95:+.4f}): it says nothing yet; more "
              f"--train-deals and --test-deals tighten it", file=out)


def _sampled_purifications(strategy: Strategy, spec: str | None) -> list[Purification]:
    """``--purify`` if given, else the stored strategy and the file's default."""
    if spec is not None:
        return [parse_purification(spec)]
    found = [parse_purification("none")]
    default = parse_purification(strategy.default_purification)
    if default != found[0]:
        found.append(default)
    return found


def _exploit_sampled(strategy: Strategy, args: argparse.Namespace) -> int:
    from strategies.measure.sampled_br import KIND, sampled_exploitability

    def say(text: str) -> None:
        print(f"{PROG}: {text}", file=sys.stderr, flush=True)

    if args.record and args.purify is not None and \
            parse_purification(args.purify).kind != "none":
        raise UsageError(f"expected --record without --purify (it records the stored "
                         f"strategy and the file's default purification), got --purify "
                         f"{args.purify!r}")
    say(f"{args.file}: deals cannot be enumerated: sampled abstract-game best response "
        f"(a lower bound on the exploitability; see docs/reference/acpc-strategy.md)")
    results: dict[str, dict[str, Any]] = {}
    for purification in _sampled_purifications(strategy, args.purify):
        result = sampled_exploitability(
            strategy, purification=purification, train_deals=_or(args.train_deals,
                                                                 DEFAULT_TRAIN_DEALS),
            test_deals=_or(args.test_deals, DEFAULT_TEST_DEALS),
            train_seed=_or(args.train_seed, TRAIN_SEED), test_seed=_or(args.test_seed, TEST_SEED),
            z=_or(args.z, DEFAULT_Z), workers=_or(args.workers, os.cpu_count() or 1), log=say)
        print(f"{args.file}: sampled abstract-game figures ({strategy.betting.name}, "
              f"{strategy.cards.get('kind')} cards), chips per hand:")
        _print_sampled(result, sys.stdout)
        results[str(purification)] = result.to_json()
    if args.record:
        name = _manifest_name(strategy)
        if name is None:
            raise UsageError(f"expected a bundled strategy file (its checksum in "
                             f"{manifest_path()}) for --record, got "
                             f"{args.file!r} with checksum {strategy.checksum}")
        entry = dict(load_manifest()["files"][name])
        stored = results["none"]
        entry.update({
            "exploitability": stored["exploitability"],
            "exploitability_kind": KIND,
            "exploitability_ci95": stored["exploitability_ci95"],
            "game_value": stored["game_value"],
            "sampled_best_response": results,
            "sampled_best_response_command": " ".join([PROG, *sys.argv[1:]]),
        })
        print(f"{PROG}: manifest updated: {update_manifest(name, entry)}")
    return 0


def _manifest_name(strategy: Strategy) -> str | None:
    """The manifest entry of a bundled file with ``strategy``'s checksum, or None."""
    for name, entry in load_manifest().get("files", {}).items():
        if isinstance(entry, dict) and entry.get("checksum") == strategy.checksum:
            return str(name)
    return None


def exploit(args: argparse.Namespace) -> int:
    strategy = load_strategy(args.file)
    if _sampled(strategy):
        return _exploit_sampled(strategy, args)
    if args.record:
        raise UsageError(f"expected a file measured by sampling for --record (enumerated "
                         f"files get their figures from solve --bundle), got {args.file!r}")
    given = [f"--{name.replace('_', '-')}" for name in _SAMPLED_OPTIONS
             if getattr(args, name) is not None]
    if given:
        raise UsageError(f"{', '.join(given)} apply to hold'em files measured by sampling; "
                         f"{args.file!r} is measured exactly")
    from strategies.measure.best_response import exploitability, purify_table, strategy_table

    abstract = _game_for_strategy(strategy)
    purification = parse_purification(args.purify) if args.purify is not None else None
    table = purify_table(abstract.layout, strategy_table(abstract, strategy), purification)
    result = exploitability(abstract, table)
    how = "" if purification is None else f", {purification} purification"
    print(f"{args.file}: abstract-game figures ({strategy.betting.name}, "
          f"{strategy.cards.get('kind')} cards{how}), chips per hand:")
    _print_exploitability(result, sys.stdout)
    return 0


# --------------------------------------------------------------------------- cards

_ROUNDS = {"flop": 1, "turn": 2, "river": 3}
_BUNDLED_HOLDEM = "holdem.nolimit.2p.strat"


def _holdem_spec(file: str | None) -> tuple[str, dict[str, Any]] | None:
    """The hold'em card spec of ``file`` (default: the bundled hold'em file, if present)."""
    if file is None:
        path = strategy_path(_BUNDLED_HOLDEM)
        if not path.exists():
            return None
        file = str(path)
    elif file == "none":
        return None
    strategy = load_strategy(file)
    if strategy.cards.get("kind") != "holdem":
        raise UsageError(
            f"expected a strategy file with a holdem card abstraction, got kind "
            f"{strategy.cards.get('kind')!r} in {file}"
        )
    return file, strategy.cards


def cards(args: argparse.Namespace) -> int:
    """Strength tables over the lossless classes; exact thresholds; a file's bucket shares."""
    from strategies.cards.tables import bucket_shares, cached_strength_table, exact_thresholds

    out = sys.stdout
    rounds = list(_ROUNDS.values()) if args.round == "all" else [_ROUNDS[args.round]]
    spec = _holdem_spec(args.file)
    report: dict[str, Any] = {}
    for r in rounds:
        name = next(k for k, v in _ROUNDS.items() if v == r)
        buckets = args.buckets
        if buckets is None:
            buckets = int(spec[1]["buckets"][r]) if spec is not None else 50
        bar = _PlainTableProgress(name) if not args.no_progress else None
        estimator = args.flop_rivers_per_turn
        if estimator is None:
            estimator = (spec[1].get("flop_rivers_per_turn", FLOP_RIVERS_PER_TURN)
                         if spec is not None else FLOP_RIVERS_PER_TURN)
        table, path, cached = cached_strength_table(
            r, workers=args.workers, progress=bar, flop_rivers_per_turn=estimator
        )
        where = f"from the cache {path}" if cached else (
            f"built in {table.seconds:.1f} s on {args.workers} thread(s), cached in {path}")
        values, weights = table.ehs2, table.hands
        print(f"{name}: {table.classes:,} classes, {table.total_hands:,} hands; E[HS^2] table "
              f"{where}", file=out)
        mean = float(np.dot(values, weights) / table.total_hands)
        print(f"  E[HS^2] over all hands: mean {mean:.6f}, min {values.min():.6f}, max "
              f"{values.max():.6f}, {np.unique(values).size:,} distinct values", file=out)
        exact = exact_thresholds(values, weights, buckets)
        shares = bucket_shares(values, weights, exact)
        print(f"  exact thresholds for {buckets} buckets: {_few(exact)}", file=out)
        print(f"    their shares of all hands: {_share_range(shares, buckets)}", file=out)
        entry: dict[str, Any] = {"classes": table.classes, "hands": table.total_hands,
                                 "buckets": buckets, "thresholds": exact,
                                 "shares": shares.tolist()}
        if spec is not None:
            file, cards = spec
            theirs = [float(x) for x in cards["thresholds"][r - 1]]
            file_shares = bucket_shares(values, weights, theirs)
            print(f"  {Path(file).name} ({len(theirs) + 1} buckets from "
                  f"{cards.get('samples', '?'):,} sampled deals): shares "
                  f"{_share_range(file_shares, len(theirs) + 1)}", file=out)
            entry["file"] = {"path": file, "thresholds": theirs,
                             "shares": file_shares.tolist()}
        report[name] = entry
    if args.json:
        target = Path(args.json)
        target.parent.mkdir(parents=True, exist_ok=True)  # as every --json and --out
        target.write_text(json.dumps(report, indent=1) + "\n")
        print(f"{PROG}: wrote {args.json}", file=sys.stderr)
    return 0


class _PlainTableProgress:
    """A line on stderr about every 10 seconds while a table builds."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.start = time.monotonic()
        self.last = self.start

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last >= 10 or done == total:
            self.last = now
            rate = done / max(now - self.start, 1e-9)
            print(f"{PROG}: {self.name} table {done:,}/{total:,} classes ({rate:,.0f}/s)",
                  file=sys.stderr, flush=True)


def _few(values: Sequence[float]) -> str:
    shown = [f"{v:.5f}" for v in values]
    if len(shown) > 8:
        shown = [*shown[:4], "...", *shown[-3:]]
    return " ".join(shown)


def _share_range(shares: np.ndarray[Any, Any], buckets: int) -> str:
    ideal = 1 / buckets
    worst = float(np.abs(shares - ideal).max())
    return (f"{shares.min():.3%} .. {shares.max():.3%} (ideal {ideal:.3%}; largest "
            f"deviation {worst / ideal:.1%} of the ideal)")


