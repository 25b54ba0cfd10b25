"""The agents a ``--strategy`` spec names: one registry shared by every command.

A spec is a strategy file (a path, or the name of a file bundled with acpc-arena such as
``leduc.limit.2p.strat``: :func:`agent.data.bundled_strategies`), a built-in,
``builtin:NAME`` with NAME in :data:`BUILTINS`, or the user's own bot, ``module:Class``
(:func:`load_bot`; the protocol and helpers are :mod:`agent.bot`'s). :func:`strategy_kind`
tells them apart: ``builtin:`` first, then a path that exists, then the ``module:Class``
syntax (:data:`BOT_SPEC`); anything else is a strategy file (or a bundled one) and loading
it says what is missing. :func:`make_policy` turns a spec and its options into a policy,
the same way for ``acpc-agent``, ``acpc-match`` (in-process seats, variant checks, the
estimators) and any other caller, so every command accepts the same agents with the same
behaviour.

A ``module:Class`` spec is code, so only a user names it: on a command line or in their
own ``acpc-match --variants`` file, never in a strategy file (whose ``default_mapping`` may
name built-ins and entry points only). The module is imported with a directory first on
``sys.path`` (the current one, or a variants file's: what ``uvicorn --app-dir`` does), so a
``mybot.py`` beside the command is found also when ``acpc-agent`` runs as an installed
script.

Imports the stdlib, :mod:`agent.acpc` and :mod:`agent.builtin` at import time; a strategy
file's machinery (numpy, numba, msgpack: :mod:`agent.policy`, :mod:`agent.strategy`) and
structlog (traces) are imported when a file is played.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from agent.acpc.betting import Action
from agent.acpc.errors import AcpcError, IllegalActionError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt
from agent.acpc.matchstate import MatchState
from agent.builtin import (
    CallPolicy,
    EquityPolicy,
    FoldPolicy,
    MinRaisePolicy,
    OffTreePolicy,
    Policy,
    RandomPolicy,
)
from agent.data import bundled_strategies, strategy_path

if TYPE_CHECKING:
    from agent.exploitconfig import ExploitConfig
    from agent.resolve import ResolveConfig

BUILTIN_PREFIX = "builtin:"


@dataclass(frozen=True, slots=True)
class Builtin:
    """A built-in agent: how to make it, and one line that says what it does."""

    make: Callable[[Game, int | None], Policy]
    """``make(game, seed)``; may raise ``ValueError`` for a game it cannot play."""
    summary: str


BUILTINS: dict[str, Builtin] = {
    "random": Builtin(lambda game, seed: RandomPolicy(seed),
                      "a legal random action, like the reference example player"),
    "call": Builtin(lambda game, seed: CallPolicy(), "always check or call"),
    "fold": Builtin(lambda game, seed: FoldPolicy(), "fold facing a bet, else check"),
    "minraise": Builtin(lambda game, seed: MinRaisePolicy(),
                        "raise the minimum whenever legal, else call"),
    "offtree": Builtin(lambda game, seed: OffTreePolicy(seed),
                       "raise 0.3, 0.75, 1.5 or 3 pots, off the abstractions' sizes"),
    "equity": Builtin(lambda game, seed: EquityPolicy(game),
                      "hold'em only: raise, call or fold by equity against a random hand"),
}
"""Every built-in agent, by name (``builtin:NAME``)."""


BOT_SPEC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""``module:Class``: a dotted module name, a colon, a (dotted) attribute of the module."""

StrategyKind = Literal["builtin", "bot", "file"]


class BotSpecError(UsageError):
    """A ``module:Class`` spec that names no bot: no such module, no such attribute, or
    not a bot (no ``act`` method). Every command exits with status 2 for it."""


class BotError(AcpcError, RuntimeError):
    """The user's bot failed while playing: it raised, or returned something that is not
    a legal :class:`~agent.acpc.betting.Action` (the message names the bot and the state)."""


def is_bot_spec(spec: str) -> bool:
    """True if ``spec`` has the ``module:Class`` syntax (:data:`BOT_SPEC`) and is not a
    built-in (``builtin:NAME`` has it too)."""
    return not is_builtin(spec) and BOT_SPEC.fullmatch(spec) is not None


def strategy_kind(spec: str) -> StrategyKind:
    """``builtin``, ``bot`` or ``file`` (module docstring): a path that exists is a file
    even when it looks like ``module:Class``."""
    if is_builtin(spec):
        return "builtin"
    if is_bot_spec(spec):
        try:
            if not Path(spec).exists():
                return "bot"
        except (OSError, ValueError):
            return "bot"
    return "file"


class BotPolicy:
    """The user's bot as a policy: asks ``bot.act`` and checks its answer, so that a bot
    that raises or answers wrongly fails with one line naming it (:class:`BotError`) in
    every command (the client, ``acpc-match``'s in-process seats, the estimators)."""

    def __init__(self, bot: Any, spec: str) -> None:
        self.bot = bot
        self.spec = spec
        self._act: Callable[[MatchState], object] = bot.act

    def act(self, ms: MatchState) -> Action:
        try:
            action = self._act(ms)
        except Exception as exc:  # the user's code: one line (--debug: the traceback)
            raise BotError(f"bot {self.spec!r} raised {type(exc).__name__}: {exc} in "
                           f"{str(ms)!r}") from exc
        if type(action) is not Action:
            raise BotError(f"expected bot {self.spec!r} to return an Action (agent.bot.CALL, "
                           f"FOLD, raise_to(...)) in {str(ms)!r}, got {excerpt(action)}")
        try:
            ms.state.check_action(action)
        except IllegalActionError as exc:
            raise BotError(f"bot {self.spec!r} returned an illegal action in {str(ms)!r}: "
                           f"{exc}") from None
        return action


def module_file(name: str, where: str | Path) -> str | None:
    """The source file of module ``name`` as an import from the folder ``where`` finds it
    (None if it is not there: an installed module, or none), without running anything."""
    from importlib.machinery import PathFinder

    locations: list[str] | None = [str(where)]
    origin = None
    for part in name.split("."):
        if locations is None:
            return None
        try:
            spec = PathFinder.find_spec(part, locations)
        except (ImportError, OSError, ValueError):
            return None
        if spec is None:
            return None
        origin = spec.origin
        search = spec.submodule_search_locations
        locations = list(search) if search is not None else None
    return origin if origin is not None and Path(origin).is_file() else None


def load_bot(spec: str, game: Game, *, seed: int | None = None,
             path: str | Path | None = None) -> BotPolicy:
    """The bot ``spec`` (``module:Class``) names, made for ``game``: the module is imported
    with ``path`` (default: the current directory) first on ``sys.path``, the attribute is
    called with the keywords its signature accepts among ``game`` and ``seed`` (none: no
    arguments), and what it returns must have a callable ``act``.

    Raises:
        BotSpecError: for a spec that is not ``module:Class``, a module that cannot be
            imported, a missing attribute, or something that is not a bot (one line with
            the ``!r`` of the spec).
        BotError: if making the bot raises.
    """
    if not is_bot_spec(spec):
        raise BotSpecError(f"expected a bot as module:Class (e.g. mybot:MyBot), got "
                           f"{excerpt(spec)}")
    module_name, _, attr = spec.partition(":")
    where = str(Path.cwd() if path is None else path)
    if where not in sys.path:
        sys.path.insert(0, where)
    loaded = sys.modules.get(module_name)
    here = module_file(module_name, where)
    if loaded is not None and here is not None and getattr(loaded, "__file__", None) != here:
        raise BotSpecError(f"expected one module {module_name!r} per process, got "
                           f"{getattr(loaded, '__file__', None) or module_name!r} imported "
                           f"already and {here!r} for the bot {spec!r} (rename one)")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
            raise BotSpecError(f"expected the module {module_name!r} of the bot {spec!r} to "
                               f"import, got ModuleNotFoundError: {exc}") from exc
        raise BotSpecError(f"expected an importable module {module_name!r} (from {where}) for "
                           f"the bot {spec!r}, got ModuleNotFoundError: {exc}") from None
    except Exception as exc:  # the user's module failed to import: say so in one line
        raise BotSpecError(f"expected the module {module_name!r} of the bot {spec!r} to "
                           f"import, got {type(exc).__name__}: {exc}") from exc
    found: Any = module
    for part in attr.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise BotSpecError(f"expected a class {attr!r} in module {module_name!r} "
                               f"({getattr(module, '__file__', None) or where}) for the bot "
                               f"{spec!r}, got no such name")
    if not callable(found):
        raise BotSpecError(f"expected {spec!r} to name a bot class, got {excerpt(found)}")
    if isinstance(found, type) and not callable(getattr(found, "act", None)):
        raise BotSpecError(f"expected {spec!r} to be a bot: a class with a method "
                           f"act(self, state) -> Action, got {found!r} without act")
    offered: dict[str, object] = {"game": game, "seed": seed}
    try:
        params = inspect.signature(found).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in offered.items() if takes_all or k in params}
    try:
        bot = found(**kwargs)
    except Exception as exc:
        raise BotError(f"could not make the bot {spec!r} with {sorted(kwargs) or 'no'} "
                       f"arguments: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(bot, "act", None)):
        raise BotSpecError(f"expected {spec!r} to make a bot (an object with a method "
                           f"act(state) -> Action), got {excerpt(bot)} without act")
    return BotPolicy(bot, spec)


def builtin_specs() -> tuple[str, ...]:
    """``builtin:NAME`` for every built-in, in registry order."""
    return tuple(BUILTIN_PREFIX + name for name in BUILTINS)


def is_builtin(spec: str) -> bool:
    """True if ``spec`` names a built-in (known or not: ``builtin:`` prefix)."""
    return spec.startswith(BUILTIN_PREFIX)


def check_builtin(spec: str) -> str:
    """The registry name of a ``builtin:NAME`` spec.

    Raises:
        ValueError: for an unknown built-in (the message lists the known ones).
    """
    name = spec.removeprefix(BUILTIN_PREFIX)
    if not is_builtin(spec) or name not in BUILTINS:
        raise UsageError(f"expected --strategy to be a file or one of "
                         f"{', '.join(builtin_specs())}, got {spec!r}")
    return name


def policy_kernels(spec: str, game: Game | None = None) -> list[Any]:
    """The numba kernels that building (and playing) the agent of ``spec`` in ``game``
    compiles, for :func:`agent.jit.compile_notice`; empty for built-ins without kernels
    (this imports the kernel modules only when there are some). The hold'em evaluator and
    strength kernels count only for games with the 52-card deck (or an unknown game): a
    kernel listed but never compiled would bring the first-use notice back on every run."""
    kind = strategy_kind(spec)
    if kind == "bot" or (kind == "builtin" and spec != BUILTIN_PREFIX + "equity"):
        return []
    found: list[Any] = []
    if game is None or (game.num_suits, game.num_ranks) == (4, 13):
        from agent import handeval
        from agent.abstraction import holdem_buckets

        found += [handeval._evaluate7_kernel, holdem_buckets.strength_moments]
    if not is_builtin(spec):
        from agent.strategy import kernels

        found += [kernels._checksum_words, kernels._float_rows_ok]
        if _card_kind(spec) == "holdem-pa":
            from agent.abstraction.holdem_pa import DECISION_KERNELS

            found += list(DECISION_KERNELS)
    return found


def _card_kind(spec: str) -> str | None:
    """The card abstraction kind in a strategy file's header (None if it cannot be read:
    loading the file reports why)."""
    from agent.strategy.fileformat import read_header

    try:
        header, _ = read_header(resolve_strategy(spec))
    except (AcpcError, OSError, ValueError):
        return None
    cards = header.get("cards")
    kind = cards.get("kind") if isinstance(cards, dict) else None
    return kind if isinstance(kind, str) else None


def resolve_strategy(spec: str, *, builtins: bool = True) -> Path:
    """The strategy file of a spec: the path itself if it exists, else the bundled file of
    that name (a path that exists wins over a bundled name, as for games). The one resolver
    of every command that reads a strategy file (``acpc-agent --strategy``, ``acpc-strategy
    inspect``, ...); ``builtins``: whether the error names the built-ins as an alternative
    (commands that take them).

    Raises:
        UsageError: if neither exists (the message lists the bundled files).
    """
    path = Path(spec)
    if path.exists():
        return path
    if spec in bundled_strategies():
        return strategy_path(spec)
    also = ", a built-in or a bot module:Class" if builtins else ""
    raise UsageError(f"expected a strategy file or a bundled strategy "
                     f"({', '.join(bundled_strategies()) or 'none installed'}){also}, "
                     f"got {spec!r}: no such file")


def json_logger(stream: TextIO) -> Any:
    """A structlog logger writing one JSON object per line to ``stream``."""
    import structlog

    return structlog.wrap_logger(
        structlog.PrintLogger(file=stream),
        processors=[
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(sort_keys=False),
        ],
    )


def make_policy(
    spec: str,
    game: Game,
    *,
    seed: int | None = None,
    mapping: str | None = None,
    purify: str | None = None,
    trace: TextIO | None = None,
    time_guard: float | None = None,
    sizes_in: str | None = None,
    verify: str = "auto",
    defer_kernels: bool = False,
    resolve: ResolveConfig | None = None,
    bot_path: str | Path | None = None,
    exploit: ExploitConfig | None = None,
) -> Policy:
    """The policy a spec names, with its options (``mapping``, ``purify``, ``sizes_in``
    (the size convention, :mod:`agent.abstraction.convention`; default
    :data:`~agent.abstraction.convention.DEFAULT_SIZE_CONVENTION`) and ``trace`` are for
    strategy files; ``seed`` seeds any randomness). ``verify`` is
    :func:`~agent.strategy.fileformat.load_strategy`'s (``auto`` trusts a table verified
    before, ``full`` checks it again). ``defer_kernels``: a hold'em file's card abstraction
    answers preflop at once and builds its numba part later (:mod:`agent.abstraction.
    deferred`; the caller starts it, e.g. in a background thread): only when the kernels
    are in numba's cache. ``resolve``: re-solve with this configuration, translation as the
    fallback (:class:`agent.resolving.ResolvingPolicy`; strategy files of the games
    :func:`agent.resolving.resolve_support` accepts). ``bot_path``: where a
    ``module:Class`` bot is imported from (:func:`load_bot`; default: the current
    directory); a bot takes only ``seed`` of the options. ``exploit``: exploit the opponent
    (:class:`agent.exploiting.ExploitingPolicy`; two-player games whose deals can be
    enumerated, or hold'em for ``dbbr``: :func:`agent.exploit.exploit_support`).

    Raises:
        ValueError: for an unknown built-in, a built-in that cannot play ``game`` (e.g.
            ``builtin:equity`` outside hold'em), a bad mapping/purification, or
            ``resolve`` with a built-in or a game the re-solver does not play.
        StrategyFileError: for a bad strategy file.
        BotSpecError, BotError: as :func:`load_bot`.
    """
    if strategy_kind(spec) == "bot":
        given = [name for name, value in (("mapping", mapping), ("purify", purify),
                                          ("trace", trace), ("sizes_in", sizes_in),
                                          ("resolve", resolve)) if value is not None]
        if given:
            raise UsageError(f"expected {', '.join(given)} with a strategy file, got the bot "
                             f"{spec!r}")
        return load_bot(spec, game, seed=seed, path=bot_path)
    if is_builtin(spec):
        if resolve is not None or exploit is not None:
            flag = "--resolve" if resolve is not None else "--exploit"
            raise UsageError(f"expected {flag} with a strategy file, got the built-in "
                             f"{spec!r}")
        return BUILTINS[check_builtin(spec)].make(game, seed)
    if resolve is not None and exploit is not None:
        raise UsageError("expected one of --resolve and --exploit, got both")
    if exploit is not None:
        from agent.exploit import exploit_support

        why = exploit_support(game, exploit.mode)
        if why is not None:  # before the file is loaded: one line, at once
            raise UsageError(why)
    if resolve is not None:
        from agent.resolving import resolve_support

        why = resolve_support(game)
        if why is not None:  # before the file is loaded: one line, at once
            raise UsageError(why)
    from agent.abstraction.convention import parse_size_convention
    from agent.abstraction.translation import choose_mapping
    from agent.policy import StrategyPolicy
    from agent.strategy.hotswap import load_for_game
    from agent.strategy.purification import parse_purification

    loaded = load_for_game(resolve_strategy(spec), game, verify=verify,
                           defer_cards=defer_kernels)
    mapping_name, mapping_fn = choose_mapping(mapping, loaded.strategy.default_mapping,
                                              loaded.strategy.source)
    trace_fn = None
    if trace is not None:
        logger = json_logger(trace)

        def trace_fn(record: dict[str, Any]) -> None:
            logger.info(record.pop("event", "decision"), **record)

    purification = parse_purification(purify or loaded.strategy.default_purification)
    if resolve is not None:
        from agent.resolving import ResolvingPolicy

        return ResolvingPolicy(loaded, mapping_fn, purification, resolve, seed=seed,
                               mapping_name=mapping_name, time_guard=time_guard,
                               trace=trace_fn, sizes_in=parse_size_convention(sizes_in))
    if exploit is not None:
        from agent.exploiting import ExploitingPolicy

        base = StrategyPolicy(loaded, mapping_fn, parse_purification("none"), seed=seed,
                              mapping_name=mapping_name, time_guard=time_guard,
                              trace=trace_fn, sizes_in=parse_size_convention(sizes_in))
        return ExploitingPolicy.build(base, purification, exploit)
    return StrategyPolicy(
        loaded,
        mapping_fn,
        purification,
        seed=seed,
        mapping_name=mapping_name,
        time_guard=time_guard,
        trace=trace_fn,
        sizes_in=parse_size_convention(sizes_in),
    )
