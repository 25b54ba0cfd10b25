"""Hot-swap: reload a changed strategy file off the event loop and swap it in between hands.

:class:`StrategyReloader` watches a strategy file (modification time, size and inode,
polled) and reacts to :meth:`StrategyReloader.request` (the agent wires SIGHUP to it). A
reload loads and validates the file in a worker thread (the event loop keeps serving the
dealer), for the game being played: in full, or, with ``verify="auto"`` (the default), with
the checksum and row checks skipped for a table that passed them before and is unchanged
since (:mod:`agent.strategy.verified`; a file written by ``dump_strategy`` above 64 MB is
recorded as it is written, so a retrained file swaps in without a pass over its bytes); a
good file is handed to the policy, which plays it from the next hand on; a bad file, or a
file for another game, is rejected with an error line and the current strategy stays.
Every outcome is one structured log line (the swap line carries the new file's checksum).
The reloader cannot die of a file: *any* exception while loading one (not only the
documented errors: an ``OverflowError`` or a bug in a loader as well) is a rejection, and
the watch goes on; only cancellation ends :meth:`StrategyReloader.run` (or a bug of the
reloader itself, which it reports in a ``reloader_stopped`` line, never silently).

The reloader needs of the policy only what :class:`SwapTarget` says (the strategy it plays,
and a way to hand it the next one), so this module sits below :mod:`agent.policy`, which
plays a :class:`LoadedStrategy` and implements :class:`SwapTarget`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent.abstraction.actions import BettingTree
from agent.abstraction.buckets import CardAbstraction
from agent.acpc.errors import AbstractionError, AcpcError, StrategyFileError
from agent.acpc.gamedef import Game
from agent.strategy.fileformat import Strategy

LogFn = Callable[..., Any]


@dataclass(frozen=True)
class LoadedStrategy:
    """A strategy file with the card abstraction it names: what a policy plays."""

    strategy: Strategy
    cards: CardAbstraction

    @property
    def tree(self) -> BettingTree:
        return self.strategy.tree


class SwapTarget(Protocol):
    """What the reloader swaps strategies into (:class:`agent.policy.StrategyPolicy`)."""

    loaded: LoadedStrategy

    def swap(self, loaded: LoadedStrategy) -> None:
        """Play ``loaded`` from the next hand on."""


def load_for_game(
    path: Path, game: Game, current: LoadedStrategy | None = None, *,
    verify: str = "auto", defer_cards: bool = False,
) -> LoadedStrategy:
    """Load, validate and attach the card abstraction of a strategy file for ``game``.

    ``current`` (the strategy being played) lets a file with the same betting abstraction
    and card abstraction reuse its tree and card tables instead of rebuilding them (the
    common case when a retrained file replaces the old one); everything else is validated
    in full as usual. ``verify`` is :func:`~agent.strategy.fileformat.load_strategy`'s
    (``auto`` trusts a table verified before, :mod:`agent.strategy.verified`).
    ``defer_cards``: a hold'em card abstraction is a
    :class:`~agent.abstraction.deferred.DeferredCards` (preflop at once, the numba part
    built when :meth:`~agent.abstraction.deferred.DeferredCards.start` is called or a later
    round is first asked for).

    The file is validated by :func:`~agent.strategy.fileformat.load_strategy` alone (the
    one validation: header, card spec, mapping names, table), so the agent, the reloader
    and ``acpc-strategy inspect`` accept the same files; building the card abstraction
    then only does the work (from what the check decoded: ``Strategy.checked_cards``).

    Raises:
        StrategyFileError: if the file is invalid or for another game (one line naming it).
    """
    from agent.abstraction.buckets import card_abstraction_from_spec
    from agent.strategy.fileformat import load_strategy

    tree = current.tree if current is not None else None
    strategy = load_strategy(path, game, tree=tree, verify=verify)
    if current is not None and strategy.cards == current.strategy.cards:
        return LoadedStrategy(strategy, current.cards)
    try:
        if defer_cards:
            from agent.abstraction.deferred import deferred_card_abstraction

            deferred = deferred_card_abstraction(game, strategy.cards, strategy.checked_cards)
            if deferred is not None:
                return LoadedStrategy(strategy, deferred)
        return LoadedStrategy(strategy, card_abstraction_from_spec(game, strategy.cards,
                                                                   strategy.checked_cards))
    except AbstractionError as exc:  # checked by load_strategy: not expected
        raise StrategyFileError(f"{path}: cards: {exc}") from None


ERROR_CHARS = 300
"""The longest error message a log line carries (longer ones are cut, their length given)."""


def describe_error(exc: BaseException) -> str:
    """``str(exc)`` for the documented errors, ``'Type: message'`` for any other; at most
    :data:`ERROR_CHARS` characters."""
    text = str(exc)
    if not isinstance(exc, (AcpcError, ValueError, OSError)) or not text:
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if len(text) > ERROR_CHARS:
        text = f"{text[:ERROR_CHARS]}... ({len(text)} characters)"
    return text


@dataclass(frozen=True, slots=True)
class _Stamp:
    mtime_ns: int
    size: int
    inode: int


def _stamp(path: Path) -> _Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _Stamp(st.st_mtime_ns, st.st_size, st.st_ino)


class StrategyReloader:
    """Watches one strategy file for one policy (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        game: Game,
        policy: SwapTarget,
        log: LogFn,
        *,
        poll_seconds: float = 0.25,
        loader: Callable[[Path, Game, LoadedStrategy | None], LoadedStrategy] | None = None,
        verify: str = "auto",
    ) -> None:
        self.path = path
        self.game = game
        self.policy = policy
        self.log = log
        self.poll_seconds = poll_seconds
        self.loader = loader or functools.partial(load_for_game, verify=verify)
        """Loads a file (default :func:`load_for_game` with ``verify``: ``auto`` trusts a
        table verified before, ``full`` checks every byte of every file)."""
        self._stamp = _stamp(path)
        self._wake = asyncio.Event()
        self.swaps = 0
        self.rejections = 0
        self.last_swap_seconds: float | None = None
        self.stopped: str | None = None
        """Why :meth:`run` stopped watching (a bug, logged as ``reloader_stopped``), or
        ``None``."""

    def request(self) -> None:
        """Reload now (SIGHUP), even if the file looks unchanged."""
        self._stamp = None
        self._wake.set()

    async def run(self) -> None:
        """Poll and reload until cancelled; nothing a file does ends it (see :meth:`reload`).

        Should anything else fail here (a bug), the watch stops with a ``reloader_stopped``
        line and :attr:`stopped` set to the error, never silently and never raising: the
        match goes on with the strategy being played.
        """
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll_seconds)
                self._wake.clear()
                stamp = _stamp(self.path)
                if stamp is None or stamp == self._stamp:
                    continue
                # Let a writer finish: reload only once the file has stood still one poll.
                await asyncio.sleep(min(0.05, self.poll_seconds))
                if _stamp(self.path) != stamp:
                    continue
                self._stamp = stamp
                await self.reload()
        except Exception as exc:
            self.stopped = describe_error(exc)
            self.log("reloader_stopped", path=str(self.path), error=self.stopped,
                     effective="no more swaps; the current strategy plays on")

    async def reload(self) -> bool:
        """Load and validate in a worker thread; swap in on success. True if swapped.

        Any exception from the loader is a rejection (a ``strategy_rejected`` line; the
        strategy being played stays): the documented errors (:class:`AcpcError`,
        ``ValueError``, ``OSError``) with their message, anything else with its type name
        first (``OverflowError: ...``). Only cancellation (and ``KeyboardInterrupt``,
        ``SystemExit``, which are not ``Exception``) goes through.
        """
        start = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            loaded = await loop.run_in_executor(
                None, self.loader, self.path, self.game, self.policy.loaded
            )
        except Exception as exc:  # a file must never stop the reloader (issue 28)
            self.rejections += 1
            self.log("strategy_rejected", path=str(self.path), error=describe_error(exc))
            return False
        self.policy.swap(loaded)
        self.swaps += 1
        self.last_swap_seconds = time.perf_counter() - start
        self.log(
            "strategy_swapped",
            path=str(self.path),
            checksum=loaded.strategy.checksum,
            load_seconds=round(self.last_swap_seconds, 4),
            effective="next hand",
        )
        return True
