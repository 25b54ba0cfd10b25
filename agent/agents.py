"""The agents a ``--strategy`` spec names: one registry shared by every command.

A spec is a strategy file (a path, or the name of a file bundled with acpc-arena such as
``leduc.limit.2p.strat``: :func:`agent.data.bundled_strategies`) or a built-in,
``builtin:NAME`` with NAME in :data:`BUILTINS`. :func:`make_policy` turns a spec and its
options into a policy, the same way for ``acpc-agent``, ``acpc-match`` (in-process seats
and variant checks) and any other caller, so every command accepts the same agents with
the same behaviour.

Imports the stdlib, :mod:`agent.acpc` and :mod:`agent.builtin` at import time; a strategy
file's machinery (numpy, numba, msgpack: :mod:`agent.policy`, :mod:`agent.strategy`) and
structlog (traces) are imported when a file is played.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game
from agent.builtin import (
    CallPolicy,
    EquityPolicy,
    FoldPolicy,
    MinRaisePolicy,
    Policy,
    RandomPolicy,
)
from agent.data import bundled_strategies, strategy_path

if TYPE_CHECKING:
    from agent.exploit import ExploitConfig
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
    "equity": Builtin(lambda game, seed: EquityPolicy(game),
                      "hold'em only: raise, call or fold by equity against a random hand"),
}
"""Every built-in agent, by name (``builtin:NAME``)."""


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
    if is_builtin(spec) and spec != BUILTIN_PREFIX + "equity":
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


def resolve_strategy(spec: str) -> Path:
    """The strategy file of a spec: the path itself if it exists, else the bundled file of
    that name (a path that exists wins over a bundled name, as for games).

    Raises:
        UsageError: if neither exists (the message lists the bundled files).
    """
    path = Path(spec)
    if path.exists():
        return path
    if spec in bundled_strategies():
        return strategy_path(spec)
    raise UsageError(f"expected a strategy file, a bundled strategy "
                     f"({', '.join(bundled_strategies()) or 'none installed'}) or a built-in, "
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
    :func:`agent.resolving.resolve_support` accepts). ``exploit``: exploit the opponent
    (:class:`agent.exploiting.ExploitingPolicy`; two-player games whose deals can be
    enumerated, :func:`agent.exploit.exploit_support`).

    Raises:
        ValueError: for an unknown built-in, a built-in that cannot play ``game`` (e.g.
            ``builtin:equity`` outside hold'em), a bad mapping/purification, or
            ``resolve`` with a built-in or a game the re-solver does not play.
        StrategyFileError: for a bad strategy file.
    """
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

        why = exploit_support(game)
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
