"""A card abstraction whose numba part loads in a background thread, so that an agent answers
its first decisions before numba is even imported.

Every hand starts preflop, and a hold'em preflop bucket is the lossless class, pure
arithmetic (:func:`agent.abstraction.holdem_spec.preflop_class`), or for the
potential-aware kind that class's cluster in the spec's preflop table.
:class:`DeferredCards` validates the spec at once (the checks of
:mod:`agent.abstraction.holdem_spec`, or all of :mod:`agent.abstraction.holdem_pa_spec`),
answers round-0 buckets itself, and builds the real abstraction
(:class:`agent.abstraction.holdem_buckets.HoldemCards` or
:class:`agent.abstraction.holdem_pa.PotentialAwareCards`, whose construction imports numba
and loads its cached kernels) in a daemon thread started by :meth:`DeferredCards.start`. A
later-round bucket asked for before that thread is done waits for it; it never compiles
(the agent defers only when :func:`agent.kernelstamp.kernels_known_warm` says the kernels
are in numba's cache; see :mod:`agent.cli`).

Imports the stdlib, :mod:`agent.abstraction.holdem_spec` and
:mod:`agent.abstraction.holdem_pa_spec` (numpy); never numba.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from agent.abstraction.buckets import CardAbstraction, CheckedCards
from agent.abstraction.holdem_pa_spec import buckets_for, check_pa_spec, preflop_cluster
from agent.abstraction.holdem_spec import check_board, check_holdem_spec, preflop_class
from agent.acpc.gamedef import Game

__all__ = ["DeferredCards", "deferred_card_abstraction"]


class DeferredCards:
    """Round 0 answered at once, the rest by an abstraction built in a background thread."""

    def __init__(self, spec: dict[str, Any], buckets: tuple[int, ...],
                 preflop: Callable[[Sequence[int], Sequence[int]], int],
                 build: Callable[[], CardAbstraction]) -> None:
        self._spec = dict(spec)
        self._buckets = buckets
        self._preflop = preflop
        self._build = build
        self._done = threading.Event()
        self._real: CardAbstraction | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self._spec)

    @property
    def ready(self) -> bool:
        """True once the real abstraction is built (or failed to build)."""
        return self._done.is_set()

    def start(self) -> None:
        """Build the real abstraction in a daemon thread (once; later calls do nothing)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._load, name="acpc-kernels",
                                                daemon=True)
                self._thread.start()

    def _load(self) -> None:
        try:
            self._real = self._build()
        except BaseException as exc:  # re-raised in the thread that needs the result
            self._error = exc
        finally:
            self._done.set()

    def wait(self) -> CardAbstraction:
        """The real abstraction, built now in this thread if :meth:`start` was not called.

        Raises:
            Exception: whatever building it raised.
        """
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._done.is_set():
                    self._load()
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._real is not None
        return self._real

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """Bucket of own ``hole`` cards and the visible ``board`` in ``round_``.

        Raises:
            ValueError: as the real abstraction's ``bucket``.
        """
        if round_ == 0 and self._real is None:
            check_board(0, board)
            return self._preflop(hole, board)
        return self.wait().bucket(round_, hole, board)

    def __getattr__(self, name: str) -> Any:
        # anything else (thresholds, metric, ...) is the real abstraction's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.wait(), name)


def deferred_card_abstraction(game: Game, spec: dict[str, Any],
                              checked: CheckedCards | None = None) -> DeferredCards | None:
    """A :class:`DeferredCards` for a hold'em spec, E[HS^2] or potential-aware (validated
    now, unless ``checked`` holds what :func:`~agent.abstraction.buckets.checked_card_spec`
    decoded from this very spec), or ``None`` for a kind that is not deferred (build it the
    usual way).

    Raises:
        ValueError: for a hold'em spec that is not valid for ``game``.
    """
    kind = spec.get("kind") if isinstance(spec, dict) else None
    parts = checked.parts_for(game, spec) if checked is not None else None
    if kind == "holdem-pa":
        return _deferred_pa(game, spec, parts)
    if kind != "holdem":
        return None
    kwargs = parts if parts is not None else check_holdem_spec(game, spec)

    def build() -> CardAbstraction:
        from agent.abstraction.holdem_buckets import HoldemCards

        return HoldemCards(**kwargs)

    def preflop(hole: Sequence[int], board: Sequence[int]) -> int:
        return preflop_class(hole)

    counts = tuple(int(b) for b in spec["buckets"])
    return DeferredCards(spec, counts, preflop, build)


def _deferred_pa(game: Game, spec: dict[str, Any],
                 checked: dict[str, Any] | None) -> DeferredCards:
    """The potential-aware kind: the whole spec is checked now (no numba) unless its
    ``checked`` parts are given, the preflop table answers round 0, and the thread builds
    :class:`~agent.abstraction.holdem_pa.PotentialAwareCards` from the checked parts."""
    parts = checked if checked is not None else check_pa_spec(game, spec)
    table = parts["preflop"]

    def build() -> CardAbstraction:
        from agent.abstraction.holdem_pa import PotentialAwareCards

        return PotentialAwareCards(**parts)

    def preflop(hole: Sequence[int], board: Sequence[int]) -> int:
        return preflop_cluster(table, hole)

    counts = buckets_for(parts["clusters"], parts["recall"])
    return DeferredCards(spec, counts, preflop, build)
