"""Card abstraction: map the cards a player sees to a bucket for the current round.

:class:`LosslessCards` is exact up to suit isomorphism: two observations (own hole cards,
board cards by round) that differ only by a permutation of suits get the same bucket. It
enumerates every observation of every round once, so it is for small games (Kuhn, Leduc,
small custom decks); hold'em uses :mod:`agent.abstraction.holdem_buckets` (canonical preflop classes
and E[HS^2] buckets). Buckets are numbered in the sorted order of the canonical forms, so
they are the same on every machine.

Every card abstraction has a JSON-able ``spec`` (stored in strategy files as ``cards``) with
``kind`` and ``buckets`` (per round), and :func:`card_abstraction_from_spec` rebuilds it.
Other kinds: ``holdem-pa`` (:mod:`agent.abstraction.holdem_pa`, potential-aware EMD
clusters), ``rank-groups`` (:mod:`agent.abstraction.rank_cards`, Leduc's private-rank
groups) and ``graft`` (:mod:`agent.abstraction.graft_cards`, a grafted strategy's buckets).

:func:`check_card_spec` is the one validation of a spec read from a file: the kind, the
bucket counts (ints in 1..:data:`MAX_BUCKETS`, one per round), the keys, and every kind's own
parameters and tables, with what :func:`card_abstraction_from_spec` would build, without
building it (no numba, no enumeration: a lossless spec's counts are computed by Burnside's
lemma). :func:`agent.strategy.fileformat.load_strategy` runs it on every file it loads, so
every reader accepts the same specs. A kind is one of the names above: a spec never names
code. :func:`checked_card_spec` is the same check keeping what it decoded (the hold'em
thresholds, a potential-aware spec's tables) as a :class:`CheckedCards`; given that record,
:func:`card_abstraction_from_spec` builds those very spec objects from it instead of
checking and decoding them again (a spec given without it is checked in full).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.acpc.cards import deck_for
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt

MAX_OBSERVATIONS = 2_000_000
MAX_BUCKETS = 2**32
"""Largest bucket count of a round a spec may declare (a table that large is > 16 GB)."""
KINDS = ("lossless", "blind", "holdem", "holdem-pa", "rank-groups", "graft")
_KEYS: dict[str, frozenset[str]] = {
    "lossless": frozenset({"kind", "buckets"}),
    "blind": frozenset({"kind", "buckets"}),
    "rank-groups": frozenset({"kind", "buckets", "groups"}),
    "graft": frozenset({"kind", "buckets", "base", "grafts"}),
}


class CardAbstraction(Protocol):
    """What the policy and the solver need from a card abstraction."""

    @property
    def buckets(self) -> tuple[int, ...]:
        """Buckets per round."""
        ...

    @property
    def spec(self) -> dict[str, Any]:
        """JSON-able description (``kind``, ``buckets``, parameters)."""
        ...

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """Bucket of own ``hole`` cards and the ``board`` visible in ``round_``."""
        ...


def _round_shape(game: Game, round_: int) -> list[int]:
    """Sizes of the card groups a player sees in ``round_``: hole, then board by round."""
    return [game.num_hole_cards] + [game.num_board_cards[i] for i in range(round_ + 1)]


def _check_small(game: Game, round_: int) -> None:
    """Raise unless ``round_`` has at most :data:`MAX_OBSERVATIONS` observations."""
    left = game.num_suits * game.num_ranks
    total = 1
    for size in _round_shape(game, round_):
        total *= math.comb(max(left, 0), size)
        left -= size
    if total > MAX_OBSERVATIONS:
        raise AbstractionError(
            f"expected a small game for lossless card abstraction, round {round_} has "
            f"more than {MAX_OBSERVATIONS} observations: use bucketing"
        )


def lossless_counts(game: Game) -> tuple[int, ...]:
    """The bucket counts of :class:`LosslessCards` for ``game``, without enumerating: the
    number of suit-isomorphism classes of each round's observations, by Burnside's lemma
    (the mean over suit permutations of the observations each leaves unchanged; an
    observation is unchanged when each of its groups is a union of the permutation's cycles
    on the cards).

    Raises:
        AbstractionError: for a game too big for lossless cards (as :class:`LosslessCards`).
    """
    perms = list(itertools.permutations(range(game.num_suits)))
    counts = []
    for r in range(game.num_rounds):
        _check_small(game, r)
        shape = tuple(_round_shape(game, r))
        fixed = 0
        for perm in perms:
            cycles = _cycle_lengths(perm) * game.num_ranks
            ways: dict[tuple[int, ...], int] = {shape: 1}
            for length in cycles:
                step: dict[tuple[int, ...], int] = {}
                for left, n in ways.items():
                    step[left] = step.get(left, 0) + n  # the cycle in no group
                    for i, need in enumerate(left):
                        if need >= length:
                            key = (*left[:i], need - length, *left[i + 1:])
                            step[key] = step.get(key, 0) + n
                ways = step
            fixed += ways.get((0,) * len(shape), 0)
        counts.append(fixed // len(perms))
    return tuple(counts)


def _cycle_lengths(perm: Sequence[int]) -> list[int]:
    seen = [False] * len(perm)
    out = []
    for start in range(len(perm)):
        length, i = 0, start
        while not seen[i]:
            seen[i] = True
            i = perm[i]
            length += 1
        if length:
            out.append(length)
    return out


class LosslessCards:
    """Suit-isomorphic lossless buckets, enumerated up front (small games only).

    Each round's observations (hole cards, then each round's board cards; order within a
    group free) are enumerated once with numpy, each with its canonical form: the smallest,
    over the 24 relabellings of the four suits, of its groups each sorted (compared group by
    group, which for groups of fixed sizes is the order of the flat card sequence, so a form
    is one integer, :data:`_KEY_BASE` per card). Buckets number the distinct forms in sorted
    order. A query looks its observation up directly (no relabelling), so Royal's 155,040
    flop observations take a fraction of a second, not seconds of Python."""

    def __init__(self, game: Game) -> None:
        import numpy as np

        self.game = game
        deck = np.array(sorted(deck_for(game)), dtype=np.int64)
        if len(deck) and int(deck.max()) >= _KEY_BASE:
            raise AbstractionError(f"expected card indices below {_KEY_BASE}, the deck has "
                                   f"{int(deck.max())}")
        self._lookup: list[tuple[Any, Any]] = []
        counts = []
        for r in range(game.num_rounds):
            _check_small(game, r)
            shape = _round_shape(game, r)
            obs = _observation_array(deck, shape)
            raw = _form_keys(obs, shape, np.arange(_KEY_BASE))
            canon = raw.copy()
            for perm in itertools.permutations(range(4)):
                relabel = np.array([(c // 4) * 4 + perm[c % 4] for c in range(_KEY_BASE)])
                np.minimum(canon, _form_keys(obs, shape, relabel), out=canon)
            forms = np.unique(canon)
            order = np.argsort(raw)
            self._lookup.append((raw[order], np.searchsorted(forms, canon[order])))
            counts.append(len(forms))
        self._buckets = tuple(counts)
        self._cache: dict[tuple[int, tuple[int, ...], tuple[int, ...]], int] = {}

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {"kind": "lossless", "buckets": list(self._buckets)}

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        key = (round_, tuple(hole), tuple(board))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        game = self.game
        groups: list[Sequence[int]] = [hole]
        found = -1
        if 0 <= round_ < len(self._lookup):
            for r in range(round_ + 1):
                groups.append(board[game.board_start(r) : game.board_cards_through(r)])
        if len(groups) > 1 and all(
                len(g) == n for g, n in zip(groups, _round_shape(game, round_), strict=True)):
            flat = [int(c) for g in groups for c in sorted(g)]
            if all(0 <= c < _KEY_BASE for c in flat):
                raw = 0
                for c in flat:
                    raw = raw * _KEY_BASE + c
                keys, values = self._lookup[round_]
                at = int(keys.searchsorted(raw))
                if at < len(keys) and int(keys[at]) == raw:
                    found = int(values[at])
        if found < 0:
            raise AbstractionError(
                f"expected cards of this game for round {round_}, got hole {list(hole)!r} "
                f"board {list(board)!r}"
            )
        if len(self._cache) < 100_000:
            self._cache[key] = found
        return found


_KEY_BASE = 64
"""Cards are encoded in base 64 in :class:`LosslessCards`' keys (every card index is below
52): a round sees at most 10 cards in any game small enough to enumerate, 60 bits."""


def _observation_array(deck: Any, shape: Sequence[int]) -> Any:
    """``[observation, card]``: every way to deal groups of sizes ``shape`` from ``deck``
    (disjoint; each group's cards in increasing order, the groups side by side)."""
    import numpy as np

    obs = np.zeros((1, 0), dtype=np.int64)
    used = np.zeros(1, dtype=np.uint64)
    for size in shape:
        if size == 0:  # an empty group: one way
            continue
        combos = np.array(list(itertools.combinations(deck.tolist(), size)),
                          dtype=np.int64).reshape(-1, size)
        masks = np.zeros(len(combos), dtype=np.uint64)
        for j in range(size):
            masks |= np.left_shift(np.uint64(1), combos[:, j].astype(np.uint64))
        ok = (used[:, None] & masks[None, :]) == 0
        rows, cols = np.nonzero(ok)
        obs = np.concatenate([obs[rows], combos[cols]], axis=1)
        used = used[rows] | masks[cols]
    return obs


def _form_keys(obs: Any, shape: Sequence[int], relabel: Any) -> Any:
    """Each observation's cards relabelled by ``relabel`` (a card -> card table), each
    group sorted, as one integer (base :data:`_KEY_BASE`, the groups' cards in order)."""
    import numpy as np

    cards = relabel[obs]
    start = 0
    for size in shape:
        cards[:, start : start + size].sort(axis=1)
        start += size
    keys = np.zeros(len(cards), dtype=np.int64)
    for j in range(cards.shape[1]):
        keys = keys * _KEY_BASE + cards[:, j]
    return keys


class BlindCards:
    """One bucket per round: the cards are ignored (a baseline, and for tests)."""

    def __init__(self, game: Game) -> None:
        self._buckets = (1,) * game.num_rounds

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {"kind": "blind", "buckets": list(self._buckets)}

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        return 0


def check_buckets(game: Game, buckets: Any, where: str = "cards") -> tuple[int, ...]:
    """``buckets`` as one int in 1..:data:`MAX_BUCKETS` per round of ``game``.

    Raises:
        AbstractionError: naming ``where`` and the bad value.
    """
    if (
        not isinstance(buckets, list | tuple)
        or len(buckets) != game.num_rounds
        or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_BUCKETS
               for b in buckets)
    ):
        raise AbstractionError(
            f"{where}.buckets: expected {game.num_rounds} ints in 1..{MAX_BUCKETS} (one per "
            f"round), got {excerpt(buckets)}"
        )
    return tuple(int(b) for b in buckets)


class _Checked:
    """A checked spec standing in for its abstraction (what a graft needs of its parts)."""

    def __init__(self, spec: dict[str, Any], buckets: tuple[int, ...]) -> None:
        self._spec = spec
        self._buckets = buckets

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return self._spec

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        raise AbstractionError("a checked card spec does not bucket cards")


@dataclass(frozen=True, eq=False)
class CheckedCards:
    """A card spec as :func:`checked_card_spec` accepted it for ``game``: its buckets, and
    the constructor arguments it decoded for each hold'em (``holdem``, ``holdem-pa``) spec
    inside it, the spec itself or a graft's part, keyed by that spec dict's identity.

    Only the very dicts that were checked are trusted (``is``, not ``==``): a spec built or
    copied elsewhere is checked again. The dicts must not be changed after the check (a
    loaded :class:`~agent.strategy.fileformat.Strategy`'s ``cards`` never are)."""

    game: Game
    spec: dict[str, Any]
    buckets: tuple[int, ...]
    decoded: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = field(default=(), repr=False)

    def parts_for(self, game: Game, spec: Any) -> dict[str, Any] | None:
        """The checked constructor arguments of ``spec`` if it is one of the dicts checked
        here for ``game``, else ``None``."""
        if game != self.game:
            return None
        for checked, parts in self.decoded:
            if checked is spec:
                return parts
        return None


def check_card_spec(game: Game, spec: Any, where: str = "cards") -> tuple[int, ...]:
    """Validate a card abstraction spec read from a file for ``game`` (module docstring):
    accept exactly what :func:`card_abstraction_from_spec` builds, without building it (no
    numba; a potential-aware flop table is decoded, bounded by its declared shape). Return
    the buckets per round.

    Raises:
        AbstractionError: naming ``where`` and the first bad key or value.
    """
    return checked_card_spec(game, spec, where).buckets


def checked_card_spec(game: Game, spec: Any, where: str = "cards") -> CheckedCards:
    """:func:`check_card_spec`, keeping what the check decoded (:class:`CheckedCards`).

    Raises:
        AbstractionError: naming ``where`` and the first bad key or value.
    """
    decoded: list[tuple[dict[str, Any], dict[str, Any]]] = []
    try:
        buckets = _check_spec(game, spec, where, decoded)
    except AbstractionError as exc:
        text = str(exc)
        raise AbstractionError(text if text.startswith(where) else f"{where}: {text}") from None
    return CheckedCards(game, spec, buckets, tuple(decoded))


def _check_spec(game: Game, spec: Any, where: str,
                decoded: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[int, ...]:
    if not isinstance(spec, dict):
        raise AbstractionError(f"expected a card abstraction spec (a map), got {excerpt(spec)}")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise AbstractionError(f"expected card abstraction kind {', '.join(map(repr, KINDS))}, "
                               f"got {excerpt(kind)}")
    buckets = check_buckets(game, spec.get("buckets"), where)
    allowed = _KEYS.get(str(kind))
    if allowed is not None and set(spec) - allowed:
        raise AbstractionError(f"expected {kind} card spec keys among {sorted(allowed)}, got "
                               f"unknown {excerpt(sorted(map(str, set(spec) - allowed)))}")
    want: tuple[int, ...]
    if kind == "lossless":
        want = lossless_counts(game)
    elif kind == "blind":
        want = BlindCards(game).buckets
    elif kind == "holdem":
        from agent.abstraction.holdem_spec import check_holdem_spec

        decoded.append((spec, check_holdem_spec(game, spec)))
        want = buckets
    elif kind == "holdem-pa":
        from agent.abstraction.holdem_pa_spec import buckets_for, check_pa_spec

        parts = check_pa_spec(game, spec)
        decoded.append((spec, parts))
        want = buckets_for(parts["clusters"], parts["recall"])
    elif kind == "rank-groups":
        from agent.abstraction.rank_cards import RankGroupCards

        want = RankGroupCards.from_spec(game, spec).buckets
    else:
        from agent.abstraction.graft_cards import GraftCards

        def inner(game: Game, inner_spec: dict[str, Any]) -> _Checked:
            return _Checked(inner_spec, _check_spec(game, inner_spec, where, decoded))

        want = GraftCards.from_spec(game, spec, inner).buckets
    if want != buckets:
        raise AbstractionError(f"expected buckets {list(want)} for this game, the spec says "
                               f"{list(buckets)}")
    return buckets


def card_abstraction_from_spec(game: Game, spec: dict[str, Any],
                               checked: CheckedCards | None = None) -> CardAbstraction:
    """Rebuild the card abstraction a strategy file describes. With ``checked`` (what
    :func:`checked_card_spec` kept, e.g. a loaded strategy's ``checked_cards``), the hold'em
    specs it checked are built from what it decoded; any other spec is checked here.

    Raises:
        ValueError: for an unknown kind or a spec that does not match the game.
    """
    parts = checked.parts_for(game, spec) if checked is not None else None
    if not isinstance(spec, dict):
        raise AbstractionError(f"expected a card abstraction spec (a JSON object), got "
                               f"{excerpt(spec)}")
    kind = spec.get("kind")
    cards: CardAbstraction
    if kind == "lossless":
        cards = LosslessCards(game)
    elif kind == "blind":
        cards = BlindCards(game)
    elif kind == "holdem":
        from agent.abstraction.holdem_buckets import HoldemCards  # numba: only when needed

        cards = HoldemCards(**parts) if parts is not None else HoldemCards.from_spec(game, spec)
    elif kind == "holdem-pa":
        from agent.abstraction.holdem_pa import PotentialAwareCards  # numba: only when needed

        cards = (PotentialAwareCards(**parts) if parts is not None
                 else PotentialAwareCards.from_spec(game, spec))
    elif kind == "rank-groups":
        from agent.abstraction.rank_cards import RankGroupCards

        cards = RankGroupCards.from_spec(game, spec)
    elif kind == "graft":
        from agent.abstraction.graft_cards import GraftCards

        def build(game: Game, inner_spec: dict[str, Any]) -> CardAbstraction:
            return card_abstraction_from_spec(game, inner_spec, checked)

        cards = GraftCards.from_spec(game, spec, build)
    else:
        raise AbstractionError(
            f"expected card abstraction kind 'lossless', 'blind', 'holdem', 'holdem-pa', "
            f"'rank-groups' or 'graft', got {excerpt(kind)}"
        )
    want = check_buckets(game, spec.get("buckets"))
    if want != cards.buckets:
        raise AbstractionError(f"expected buckets {list(cards.buckets)} for this game, the "
                               f"spec says "
                               f"{list(want)}")
    return cards
