"""``acpc-match``: duplicate matches between agent variants, with statistics you can trust.

::

    acpc-match [--variant NAME=SPEC]... [--variants FILE.toml] [--game GAME]
               [--hands N] [--matches M] [--seed S] [--pair A:B]...
               [--transport tcp|inproc] [--workers J] [--backend local|ray] [--address ADDR]
               [--run-dir DIR] [--unit seed|hand] [--allin-ev]
               [--estimator played|exact-agents|sampled-agents|aivat]
               [--json FILE] [--csv FILE] [--plot FILE] [--quiet] [--debug]

Every group of variants (a pair heads-up, or every combination: round robin) plays
``--matches`` duplicate units of ``--hands`` hands; unit ``k`` deals from a seed derived
from ``--seed`` and is played in every seat rotation. ``--transport tcp`` (the default)
runs ``acpc-dealer`` and one agent process per seat over loopback; ``inproc`` runs the same
engine and agent code in the worker process (same logs, much faster; not for external
commands). Results go to a SQLite store in the run directory the moment each match ends;
running the same command again resumes (the default run directory is named by a hash of
the settings, under ``./acpc-match-runs``). The final table gives each variant's mbb/h
with a 95% confidence interval over duplicate units, the standard error, the number of
hands and whether the difference is significant; ``--allin-ev`` adds the all-in EV figure.

With no variants, the default setup (:func:`default_setup`) is played and named; a
``--variants`` file that gives none (and no ``-v``) is an error, not the default setup.
Settings from the file are checked by the same :class:`evaluation.match.variants.Setting` that
is their flag's argparse ``type=`` (:data:`evaluation.match.variants.RUN_SETTINGS`).

``--estimator aivat`` plays the run, then values every stored log's hands by AIVAT with the
known agents' policies (:mod:`evaluation.estimators.aivat`) and prints that table too.

``--estimator exact-agents|sampled-agents`` plays no match: each deal of the same seeds is
valued in both seatings by a walk of the real betting tree with the agents' randomness
integrated out or sampled with common random numbers (:mod:`evaluation.estimators.estimator`).

Same seed, same result: the agents load their kernels before connecting, and a decision
that falls back on an agent's time guard (the one way timing can change a result) is
counted per variant (:attr:`evaluation.match.report.Summary.time_guard`): the table's last line
and ``acpc-match: warning:`` on stderr say the results depend on timing.

Exit status: 0 when every planned match is stored, 1 on any error (``acpc-match: error:``
lines name the variant, file or setting at fault; everything finished is kept), 2 for a
usage error caught by the argument parser (a flag's bad value: the same check and message
as the same value in a ``--variants`` file, which exits 1), 130 when interrupted (Ctrl-C).

Imports the stdlib and :mod:`dealer` (agent policy code only inside the workers).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.acpc.errors import AcpcError, GameDefError, whole_lines
from agent.acpc.gamefiles import bundled_games, load_game
from agent.agents import BotSpecError, builtin_specs
from agent.console import deprecated_alias, positive_float, positive_int
from agent.data import manifest_path, strategy_path
from evaluation.match.decision import DEFAULT_LBR_HANDS, DEFAULT_OPPONENTS
from evaluation.match.variants import RUN_SETTINGS, TRANSPORTS, UNITS, VariantUsageError, exists
from jobs import BACKENDS

PROG = "acpc-match"
DEFAULT_HANDS = 500
DEFAULT_MATCHES = 4
DEFAULT_SEED = 1
DEFAULT_RUNS_DIR = Path("acpc-match-runs")

DEFAULT_STRATEGIES: tuple[tuple[str, str], ...] = (
    # (bundled strategy file, game), tried in order: the heads-up no-limit hold'em strategy,
    # then (if it is missing or does not match the manifest) the no-limit Leduc one.
    ("holdem.nolimit.2p.strat", "holdem.nolimit.2p.reverse_blinds.game"),
    ("leduc.nolimit.2p.fcpa.strat", "leduc.nolimit.2p.game"),
)
"""Bundled strategies the default run plays (rand-pshar against det-arith), in order."""

DEFAULT_YARDSTICK = "offtree=builtin:offtree"
"""The third variant of the default run. Two copies of one strategy only ever bet the
abstraction's own sizes, so against each other no bet is off the tree, no mapping is
consulted and their duplicate result is exactly 0 (the default table does not play that
pair and says why: :mod:`evaluation.match.decision`). ``builtin:offtree`` raises sizes
between the abstractions' sizes: what each mapping wins against it is where the mappings
differ; the table sets it beside each variant's exploitability."""

FALLBACK_GAME = "leduc.limit.2p.game"
FALLBACK_VARIANTS = ("random=builtin:random", "call=builtin:call")


@dataclass(frozen=True, slots=True)
class DefaultSetup:
    """What ``acpc-match`` plays when no variant is given."""

    game: str
    variants: tuple[str, ...]
    hands: int
    matches: int
    why: str


def _manifest_rejects(name: str, path: Path) -> str | None:
    """Why the strategies manifest says not to use ``path`` (a checksum mismatch), or None."""
    manifest = manifest_path()
    if not manifest.exists():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entries: list[dict[str, Any]] = []
    stack: list[Any] = [data]
    for _ in range(10_000):  # bounded walk of the JSON tree
        if not stack:
            break
        item = stack.pop()
        if isinstance(item, dict):
            if any(isinstance(v, str) and v.endswith(name) for v in item.values()):
                entries.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    for entry in entries:
        want = entry.get("file_sha256", entry.get("sha256"))
        if isinstance(want, str):
            from evaluation.match.variants import sha256_file

            if sha256_file(path) != want:
                return f"{path.name} does not match its sha256 in {manifest.name}"
    return None


def fallback_setup(why: str) -> DefaultSetup:
    """builtin:random against builtin:call on :data:`FALLBACK_GAME`."""
    return DefaultSetup(
        game=FALLBACK_GAME,
        variants=FALLBACK_VARIANTS,
        hands=DEFAULT_HANDS,
        matches=DEFAULT_MATCHES,
        why=f"builtin:random against builtin:call on {FALLBACK_GAME} ({why})",
    )


def default_setup() -> DefaultSetup:
    """The default run: the first bundled strategy of :data:`DEFAULT_STRATEGIES` that
    exists, rand-pshar against det-arith, both also against :data:`DEFAULT_YARDSTICK`
    (round robin); else builtin:random against builtin:call on Leduc hold'em (limit). The
    one place to switch the default."""
    missing = []
    for name, game in DEFAULT_STRATEGIES:
        path = strategy_path(name)
        if not path.is_file():
            missing.append(name)
            continue
        if game not in bundled_games() and not Path(game).exists():
            missing.append(f"{name} (game {game} missing)")
            continue
        bad = _manifest_rejects(name, path)
        if bad is not None:
            missing.append(bad)
            continue
        return DefaultSetup(
            game=game,
            variants=(f"rand-pshar={path},mapping=rand-pshar",
                      f"det-arith={path},mapping=det-arith", DEFAULT_YARDSTICK),
            hands=DEFAULT_HANDS,
            matches=DEFAULT_MATCHES,
            why=f"bundled strategy {name} on {game}, rand-pshar against det-arith, both "
                f"against {DEFAULT_YARDSTICK.partition('=')[2]} (off-tree bets)",
        )
    return fallback_setup(f"no bundled strategy yet: {', '.join(missing)} not found")


class CliError(AcpcError, ValueError):
    """A usage problem: printed as ``acpc-match: error: ...``."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Duplicate matches between agent variants, with confidence intervals.",
        epilog=f"Variant SPEC: a strategy file, {', '.join(builtin_specs())} or module:Class "
        f"(your bot), with options "
        ",mapping=M ,purify=none|full|threshold:T ,sizes=abstract|real ,seed=S "
        ",exploit=dbbr|safe (with ,exploit_prior_weight=N ,exploit_every=N "
        ",exploit_warmup=M ,exploit_epsilon=CHIPS: acpc-agent's --exploit-* options); or "
        "cmd=COMMAND ARGS (started with HOST PORT appended).",
    )
    p.add_argument("--variant", "-v", action="append", default=[], metavar="NAME=SPEC",
                   help="an agent variant (repeatable)")
    p.add_argument("--variants", type=Path, default=None, metavar="FILE.toml",
                   help="variants (and settings) from a TOML file")
    p.add_argument("--game", type=RUN_SETTINGS["game"], default=None,
                   help="game definition file or bundled game name (default: the default "
                   "setup's)")
    p.add_argument("--hands", type=RUN_SETTINGS["hands"], default=None,
                   help=f"hands per match (default {DEFAULT_HANDS})")
    p.add_argument("--matches", type=RUN_SETTINGS["matches"], default=None,
                   help=f"duplicate units (seeds) per group (default {DEFAULT_MATCHES}); "
                   "each is played in every seat rotation")
    p.add_argument("--seed", type=RUN_SETTINGS["seed"], default=None,
                   help=f"master seed: every deal and agent seed derives from it "
                   f"(default {DEFAULT_SEED})")
    p.add_argument("--pair", action="append", default=[], metavar="A:B",
                   help="play only these groups (repeatable; default: round robin)")
    p.add_argument("--transport", type=RUN_SETTINGS["transport"], default=None,
                   metavar="{" + ",".join(TRANSPORTS) + "}",
                   help="tcp: acpc-dealer and agent processes over loopback (default); "
                   "inproc: the same engine and agent code in one process")
    p.add_argument("--workers", type=RUN_SETTINGS["workers"], default=None,
                   help="matches in parallel (default: the number of cores)")
    deprecated_alias(p, "--jobs", "-j", new="--workers")
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local process pool (default) or Ray tasks (extra 'cluster')")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (default: a private Ray on 127.0.0.1)")
    p.add_argument("--run-dir", type=Path, default=None,
                   help=f"results store, logs and manifest (default: "
                   f"{DEFAULT_RUNS_DIR}/<hash of the settings>)")
    p.add_argument("--unit", type=RUN_SETTINGS["unit"], default=None,
                   metavar="{" + ",".join(UNITS) + "}",
                   help="statistical unit: a duplicate seed (default) or a duplicate hand "
                   "(valid for agents that do not adapt between hands)")
    p.add_argument("--allin-ev", action="store_true", default=None,
                   help="also report all-in EV adjusted figures")
    p.add_argument("--allin-evaluator", choices=("auto", "python", "numba"), default="auto",
                   help="hand evaluator for --allin-ev (default auto: numba for big "
                   "enumerations)")
    p.add_argument("--inproc-clock", choices=("fake", "real"), default="fake",
                   help="clock of in-process matches (default fake: no time limits bite)")
    p.add_argument("--t-response-ms", type=positive_int, default=10_000,
                   help="dealer --t_response (default 10000)")
    p.add_argument("--t-hand-ms", type=positive_int, default=600_000,
                   help="dealer --t_hand (default 600000)")
    p.add_argument("--t-per-hand-ms", type=positive_int, default=7_000,
                   help="dealer --t_per_hand (default 7000)")
    p.add_argument("--start-timeout-ms", type=positive_int, default=30_000,
                   help="how long agents may take to connect, strategy loading included "
                   "(default 30000)")
    p.add_argument("--match-timeout", type=positive_float, default=None, metavar="SECONDS",
                   help="wall-clock limit per match (default 120 + 0.1 s per hand)")
    p.add_argument("--exact", action="store_true",
                   help="no matches: the exact result of each group over every deal and "
                   "rotation, the agents' randomness integrated out (games whose deals and "
                   "betting enumerate: Kuhn, Leduc; strategy files and the built-ins random, "
                   "call, fold, minraise)")
    p.add_argument("--estimator", choices=("played", "exact-agents", "sampled-agents",
                                           "aivat"),
                   default="played",
                   help="played: play the matches (default); exact-agents: no matches, value "
                   "each deal of the same seeds in both seatings with the agents' randomness "
                   "integrated out; sampled-agents: the same walk with the agents' draws "
                   "sampled by common random numbers (both heads-up, strategy files and "
                   "built-ins; unbiased, smaller intervals per CPU-second); aivat: play the "
                   "matches, then value every logged hand by AIVAT with the known agents' "
                   "policies (heads-up; unbiased, variance-reduced)")
    p.add_argument("--opponent", action="append", default=[], metavar="SPEC",
                   help="the default table's opponent of every strategy-file variant "
                   "(repeatable; SPEC or NAME=SPEC as after -v; default builtin:offtree; "
                   "'none': no opponent and no table)")
    p.add_argument("--no-exploitability", dest="exploitability", action="store_false",
                   help="leave the default table's exploitability column out (exact best "
                   "response in Kuhn and Leduc, else LBR)")
    p.add_argument("--lbr-hands", type=RUN_SETTINGS["hands"], default=None, metavar="N",
                   help=f"LBR's hands per variant for the exploitability column where it "
                   f"is not exact (default {DEFAULT_LBR_HANDS})")
    p.add_argument("--json", type=Path, default=None, metavar="FILE",
                   help="write the results as JSON")
    p.add_argument("--csv", type=Path, default=None, metavar="FILE",
                   help="write the results as CSV")
    p.add_argument("--plot", type=Path, default=None, metavar="FILE.png",
                   help="chart of each variant's result and interval (extra 'plot')")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress output")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _status(exc: BaseException) -> int:
    """The exit status of an error: 2 for a usage error (a bot's spec, a ``-v`` or
    ``--opponent`` that cannot be parsed, an option the game refuses), 1 for the rest."""
    return 2 if isinstance(exc, BotSpecError | VariantUsageError) else 1


def _resolve_game_spec(spec: str) -> str:
    """The game as the dealer and agents get it: a bundled name, or an absolute path."""
    path = Path(spec)
    if not exists(path) and spec in bundled_games():
        return spec
    return str(path.resolve())


def _load_variants(args: argparse.Namespace, *, announce: bool = True, default_ok: bool = True
                   ) -> tuple[list[Any], dict[str, Any], DefaultSetup | None]:
    """The run's variants (``--variants`` file, then ``-v``), the file's checked settings,
    and the default setup when neither gives a variant and ``default_ok`` (else the list is
    empty). A ``--variants`` file that gives none, with no ``-v``, is an error: the default
    setup is played only when no file is named.

    Raises:
        VariantError, CliError: one line naming the file, the variant or the setting.
    """
    from evaluation.match.variants import Variant, load_toml, parse_variant

    toml_settings: dict[str, Any] = {}
    variants: list[Variant] = []
    if args.variants is not None:
        variants, toml_settings = load_toml(args.variants)
    variants += [parse_variant(text) for text in args.variant]
    default: DefaultSetup | None = None
    if not variants and default_ok:
        if args.variants is not None:
            raise CliError(f"{args.variants}: expected at least one [variants.NAME] table "
                           f"(or -v NAME=SPEC), got none (the default setup is played only "
                           f"without --variants)")
        default = default_setup()
        variants = [parse_variant(text) for text in default.variants]
        if announce:
            print(f"{PROG}: default: {default.why}", file=sys.stderr)
    return variants, toml_settings, default


def _toml_game(args: argparse.Namespace, toml_settings: dict[str, Any]) -> str | None:
    """The file's ``game``: a path relative to the file's folder if it exists there, else
    as written (a bundled name)."""
    if "game" not in toml_settings:
        return None
    game_text = str(toml_settings["game"])
    assert args.variants is not None
    candidate = args.variants.resolve().parent / game_text
    return str(candidate) if exists(candidate) else game_text


def _config_from_args(args: argparse.Namespace, argv: Sequence[str]) -> Any:
    from evaluation.match.runner import RunConfig, settings_key
    from evaluation.match.schedule import make_groups
    from evaluation.match.variants import check_variant
    from evaluation.match.worker import MatchSettings

    variants, toml_settings, default = _load_variants(args)

    def pick(name: str, fallback: Any) -> Any:
        value = getattr(args, name)
        if value is not None:
            return value
        return toml_settings.get(name, fallback)

    toml_game = _toml_game(args, toml_settings)
    if args.game is not None:
        game_text = str(args.game)
    elif toml_game is not None:
        game_text = toml_game
    else:
        game_text = (default or default_setup()).game
        if default is None:
            print(f"{PROG}: game {game_text} (the default; --game to choose)", file=sys.stderr)
    game_spec = _resolve_game_spec(str(game_text))
    try:
        game = load_game(game_spec)
    except GameDefError as exc:
        raise CliError(f"game: {exc}") from None
    # every value was checked where it came from (argparse type= or load_toml)
    hands: int = pick("hands", default.hands if default else DEFAULT_HANDS)
    matches: int = pick("matches", default.matches if default else DEFAULT_MATCHES)
    master: int = pick("seed", DEFAULT_SEED)
    transport: str = pick("transport", "tcp")
    unit: str = pick("unit", "seed")
    allin: bool = pick("allin_ev", False)
    jobs: int = pick("workers", os.cpu_count() or 1)
    groups = make_groups(variants, game.num_players, args.pair)
    the_plan = None
    if _table_wanted(args):
        from evaluation.match.decision import plan

        the_plan = plan(variants, game, args.opponent or DEFAULT_OPPONENTS)
        if the_plan is not None:
            variants, groups = the_plan.variants, the_plan.groups
    used = {name for g in groups for name in g}
    variants = [v for v in variants if v.name in used]
    adapting = [v.name for v in variants if v.exploit is not None]
    if unit == "hand" and adapting:
        raise CliError(f"expected --unit seed with variants that exploit their opponent "
                       f"({', '.join(adapting)}: they adapt between hands, so a match's "
                       f"hands are not independent units), got unit hand")
    for v in variants:
        check_variant(v, game_spec, transport, deep=False)
    match_timeout = args.match_timeout or 120.0 + 0.1 * hands
    settings = MatchSettings(
        game_spec=game_spec, transport=transport, t_response_ms=args.t_response_ms,
        t_hand_ms=args.t_hand_ms, t_per_hand_ms=args.t_per_hand_ms,
        start_timeout_ms=args.start_timeout_ms, match_timeout_s=match_timeout,
        inproc_clock=args.inproc_clock, allin=allin, allin_method=args.allin_evaluator,
    )
    config = RunConfig(
        variants=variants, groups=groups, game=game, settings=settings, hands=hands,
        matches=matches, master_seed=master, run_dir=Path("."), unit=unit, jobs=jobs,
        backend=args.backend, address=args.address, argv=[PROG, *argv],
    )
    config.run_dir = args.run_dir or DEFAULT_RUNS_DIR / settings_key(config)
    return config, the_plan


def _table_flags(args: argparse.Namespace) -> list[str]:
    """The default table's flags that were given (usage errors without the table)."""
    return [flag for flag, given in (("--opponent", bool(args.opponent)),
                                     ("--no-exploitability", not args.exploitability),
                                     ("--lbr-hands", args.lbr_hands is not None)) if given]


def _table_wanted(args: argparse.Namespace) -> bool:
    """The default table (:mod:`evaluation.match.decision`) is built for played runs
    without ``--pair`` and without ``--opponent none``."""
    return (args.estimator == "played" and not args.pair
            and [o.strip().lower() for o in args.opponent] != ["none"])


EXACT_EXCLUDES = ("hands", "matches", "seed", "transport", "workers", "address", "run_dir",
                  "unit", "allin_ev", "match_timeout", "csv", "plot")
"""Options that only apply to played matches: errors with ``--exact``."""


def _exact(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``acpc-match --exact``: every pair's exact result (:mod:`evaluation.estimators.exact`)."""
    given = [f"--{n.replace('_', '-')}" for n in EXACT_EXCLUDES if getattr(args, n) is not None]
    if args.backend != "local":
        given.append("--backend")
    given += _table_flags(args)
    if args.estimator != "played":
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: expected either --exact or --estimator, got both (--exact "
              f"values every deal, --estimator {args.estimator} samples deals)",
              file=sys.stderr)
        return 2
    if given:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: {', '.join(given)} apply to played matches, not to --exact",
              file=sys.stderr)
        return 2
    from evaluation.match.schedule import make_groups

    try:
        variants, settings, _ = _load_variants(args, default_ok=False)
        game_text = args.game or _toml_game(args, settings)
        if game_text is None or not variants:
            raise CliError("expected --game and variants (-v NAME=SPEC) with --exact")
        game = load_game(_resolve_game_spec(str(game_text)))
        groups = make_groups(variants, game.num_players, args.pair)
        for v in variants:
            if v.kind in ("cmd", "bot"):
                raise CliError(f"expected strategy files or built-ins with --exact (an "
                               f"external command or a bot cannot be valued exactly: "
                               f"--estimator exact-agents can), got {v.spec!r}")
            if v.exploit is not None:
                raise CliError(f"expected agents that play one fixed strategy with --exact, "
                               f"got {v.spec!r} (exploit= changes its strategy as it plays: "
                               f"duplicate matches measure it)")
        from evaluation.estimators.exact import Player, exact_results

        players = [Player(v.name, v.strategy or "", v.mapping, v.purify, v.sizes)
                   for v in variants]
        start = time.perf_counter()
        results = exact_results(game, players, groups)
    except (AcpcError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return _status(exc)
    width = max(len(",".join(r.group)) for r in results)
    lines = [f"{'group':<{width}}  {'variant':<10} {'mbb/h':>10}  {'chips/hand':>11}  "
             f"per rotation (chips/hand)"]
    for r in results:
        per = "  ".join(f"{v:+.6f}" for v in r.positions)
        lines.append(f"{','.join(r.group):<{width}}  {r.variant:<10} {r.mbb:>+10.2f}  "
                     f"{r.chips:>+11.6f}  {per}")
    lines.append(f"(exact: every deal, every rotation of each group, the agents' randomness "
                 f"integrated out; {time.perf_counter() - start:.1f} s)")
    sys.stdout.write("\n".join(lines) + "\n")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"game": str(game_text), "exact": [
            {"group": list(r.group), "variant": r.variant, "mbb_per_hand": r.mbb,
             "chips_per_hand": r.chips, "per_rotation": list(r.positions)}
            for r in results]}, indent=2) + "\n", encoding="utf-8")
    return 0


ESTIMATE_EXCLUDES = ("transport", "workers", "address", "run_dir", "unit", "allin_ev",
                     "match_timeout", "csv", "plot")
"""Options of played matches that are errors with ``--estimator`` other than ``played``."""


def _estimate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``acpc-match --estimator exact-agents|sampled-agents``
    (:mod:`evaluation.estimators.estimator`)."""
    given = [f"--{n.replace('_', '-')}" for n in ESTIMATE_EXCLUDES
             if getattr(args, n) is not None]
    if args.backend != "local":
        given.append("--backend")
    given += _table_flags(args)
    if given:
        parser.print_usage(sys.stderr)
        print(f"{PROG}: error: {', '.join(given)} apply to played matches, not to "
              f"--estimator {args.estimator}", file=sys.stderr)
        return 2
    from evaluation.estimators.estimator import estimate_run, format_rows, rows_json
    from evaluation.match.schedule import make_groups

    try:
        variants, toml, default = _load_variants(args, announce=not args.quiet)
        game_text = args.game or _toml_game(args, toml) or (default or default_setup()).game
        game = load_game(_resolve_game_spec(str(game_text)))
        if game.num_players != 2:
            raise CliError(f"expected a heads-up game with --estimator {args.estimator}, got "
                           f"{game.num_players} players in {game_text}")
        # checked where they came from (argparse type= or load_toml)
        hands: int = args.hands or toml.get("hands", DEFAULT_HANDS)
        matches: int = args.matches or toml.get("matches", DEFAULT_MATCHES)
        master: int = args.seed if args.seed is not None else toml.get("seed", DEFAULT_SEED)
        groups = make_groups(variants, 2, args.pair)
        start = time.process_time()
        sample = args.estimator == "sampled-agents"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = estimate_run(game, variants, groups, master_seed=master, units=matches,
                                hands=hands, sample=sample)
        for note in dict.fromkeys(str(w.message) for w in caught):  # e.g. a plug-in mapping
            print(f"{PROG}: warning: {note}", file=sys.stderr)
    except (AcpcError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return _status(exc)
    sys.stdout.write(format_rows(rows, sample))
    if not args.quiet:
        print(f"{PROG}: {hands * matches} deals per group in both seatings, "
              f"{time.process_time() - start:.1f} CPU s", file=sys.stderr)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"game": str(game_text), "estimator": args.estimator,
                                         "master_seed": master, "deals_per_group":
                                         hands * matches, "rows": rows_json(rows)},
                                        indent=2) + "\n", encoding="utf-8")
    return 0


def _aivat(config: Any, quiet: bool) -> dict[str, Any]:
    """``--estimator aivat``: the stored matches' logs valued by AIVAT
    (:mod:`evaluation.estimators.aivat`); prints the table, returns its JSON.

    Raises:
        UsageError: for hands a known agent could not have played.
    """
    from evaluation.estimators.aivat import format_aivat_rows, log_lines, match_rows
    from evaluation.match.store import planned_matches

    stored = planned_matches(config)
    start = time.process_time()
    def note(text: str) -> None:
        if not quiet:
            print(f"{PROG}: {text}", file=sys.stderr, flush=True)

    rows, kinds = match_rows(config.game, config.variants, config.groups, stored,
                             config.run_dir, log_lines, note=note)
    sys.stdout.write(format_aivat_rows(rows, kinds))
    sys.stdout.flush()
    cpu = time.process_time() - start
    if not quiet:
        print(f"{PROG}: AIVAT of {sum(r.hands for r in rows)} hands, {cpu:.1f} CPU s",
              file=sys.stderr)
    return {"rows": [r.to_dict() for r in rows], "value_functions": kinds,
            "cpu_seconds": cpu}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-match``; returns the exit status."""
    whole_lines()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), as every command does
        return int(exc.code or 0)
    from evaluation.match.report import (
        check_plot_target,
        format_table,
        make_progress,
        timing_note,
        to_json,
        write_csv,
        write_plot,
    )
    from evaluation.match.runner import run

    config = None
    fresh = False  # whether this run made the run directory (a failed run removes it)
    if args.exact:
        return _exact(args, parser)
    if args.estimator not in ("played", "aivat"):
        return _estimate(args, parser)
    try:
        if args.plot is not None:
            check_plot_target(args.plot)  # before any match is played
        if args.estimator != "played" or args.pair:
            flags = _table_flags(args)
            if flags:
                raise CliError(f"expected {', '.join(flags)} only with the default table "
                               f"(played runs without --pair), got --estimator "
                               f"{args.estimator}" + (" with --pair" if args.pair else ""))
        config, the_plan = _config_from_args(args, argv)
        if args.estimator == "aivat" and config.game.num_players != 2:
            raise CliError(f"expected a heads-up game with --estimator aivat, got "
                           f"{config.game.num_players} players")
        progress = make_progress(not args.quiet)
        if not args.quiet:
            print(f"{PROG}: run directory {config.run_dir}", file=sys.stderr)
        fresh = not exists(config.run_dir)
        result = run(config, progress)
        if result.already_done:
            print(f"{PROG}: resumed: {result.already_done} of {result.planned} matches were "
                  f"already stored in {config.run_dir} and were not played again; "
                  f"{result.played} played now", file=sys.stderr)
        table = format_table(result.summary)
        sys.stdout.write(table)
        sys.stdout.flush()
        report = to_json(result.summary, result.failures)
        if args.estimator == "aivat":
            report["aivat"] = _aivat(config, args.quiet)
        if the_plan is not None and result.complete:
            from evaluation.match.decision import table_of_run

            def say(text: str) -> None:
                if not args.quiet:
                    print(f"{PROG}: {text}", file=sys.stderr, flush=True)

            text, report["decision"] = table_of_run(
                the_plan, config, result.summary, exploit=args.exploitability,
                lbr_hands=args.lbr_hands or DEFAULT_LBR_HANDS, fresh=result.played > 0,
                note=say)
            sys.stdout.write("\n" + text)
            sys.stdout.flush()
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        if args.csv is not None:
            args.csv.parent.mkdir(parents=True, exist_ok=True)
            with open(args.csv, "w", encoding="utf-8", newline="") as f:
                write_csv(result.summary, f)
        if args.plot is not None:
            write_plot(result.summary, args.plot)
    except (AcpcError, OSError) as exc:  # every project error (CliError, VariantError, ...)
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        if config is not None and fresh:
            _leftovers(config.run_dir, None)
        return _status(exc)
    except KeyboardInterrupt:
        print(f"{PROG}: error: interrupted; finished matches are stored, run the same "
              "command again to resume", file=sys.stderr)
        return 130
    status = 0
    note = timing_note(result.summary)
    if note is not None:  # also when --quiet: the table alone would not say it
        print(f"{PROG}: warning: {note}", file=sys.stderr)
    for failure in result.failures:
        print(f"{PROG}: error: {failure['match']}: {failure['error']}", file=sys.stderr)
        status = 1
    if result.skipped:
        print(f"{PROG}: error: {len(result.skipped)} match(es) skipped after a variant "
              f"failed; fix it and run the same command again to play them", file=sys.stderr)
        status = 1
    if not result.complete and status == 0:
        status = 1
    if status != 0:
        _leftovers(config.run_dir, result.summary.matches_done if fresh else -1)
    return status


def _leftovers(run_dir: Path, done: int | None) -> None:
    """After a failed run: remove, silently, the run directory this run made if it holds no
    finished match (``done`` 0, or None: not known, count them), else say what it left."""
    if not exists(run_dir):
        return
    if done is None:
        from evaluation.match.store import ResultStore

        try:
            store = ResultStore(run_dir)
            try:
                done = len(store.matches())
            finally:
                store.close()
        except (AcpcError, OSError):
            done = -1  # unreadable: keep it, say so
    if done == 0:  # nothing left behind: the error line stays the only line
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    what = "finished match(es) are" if done < 0 else f"{done} finished match(es) are"
    print(f"{PROG}: left {run_dir}: its {what} stored there; run the same command again to "
          f"play the rest", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
