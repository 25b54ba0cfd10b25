"""The card abstraction of a grafted strategy: which graft a hand is in, and its bucket there.

Strategy grafting (Waugh, Bard, Bowling 2009; docs/background.md) splits a player's histories into
a base part G_0, played by a base strategy, and grafts G_1..G_p, each played by its own
strategy with a finer card abstraction. A grafted strategy is an ordinary strategy file
whose card abstraction is of kind ``graft``::

    {"kind": "graft",
     "base": {"kind": "rank-groups", "groups": ["QK", "A"], "buckets": [2, 4]},
     "grafts": [{"ranks": "A", "from_round": 1,
                 "cards": {"kind": "lossless", "buckets": [3, 15]}}, ...],
     "buckets": [2, 19]}

A hand is in graft ``j`` in round ``r`` when the rank of its highest hole card is one of the
graft's ``ranks`` (or, in hold'em, when its preflop class is one of the graft's
``classes``) and ``r >= from_round`` (``from_round`` 0: the whole hand, a *preflop
graft*; 1: the rounds after the first, a *flop graft*, the base plays the first round).
Once a hand enters a graft it stays there, as a grafting partition requires. Buckets of a
round are numbered base first (``0 .. base - 1``: hands outside every graft, with their base
bucket), then each graft active in that round in spec order (``start + inner bucket``), so
``buckets[r]`` is the base's plus every active graft's inner count.

**Hold'em grafts** name preflop classes instead of ranks (the 169 suit-isomorphism classes of
:func:`agent.abstraction.holdem_buckets.preflop_class`: ``13 * row + col``, 0 = 22,
168 = AA)::

    {"kind": "graft",
     "base": {"kind": "holdem", "buckets": [169, 50, 50, 50], ...},
     "grafts": [{"classes": [168, 155, ...], "from_round": 1,
                 "cards": {"kind": "holdem", "buckets": [169, 100, 100, 100], ...}}, ...],
     "buckets": [169, 250, 250, 250]}

A graft has either ``ranks`` or ``classes`` (sorted distinct ints in 0..168, disjoint between
grafts; hold'em games only). Leduc files (``ranks``) read as before.

The same partition applies to every position (a card abstraction does not know the seat);
a position that was not grafted simply has the base's rows copied into its graft rows.

Imports :mod:`agent.abstraction.rank_cards` and the core only; :mod:`agent.abstraction.buckets`
passes its spec builder in (so there is no import circle).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent.abstraction.rank_cards import check_ranks
from agent.acpc.cards import RANK_CHARS, rank_of
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt

KIND = "graft"


class CardAbstraction(Protocol):
    """:class:`agent.abstraction.buckets.CardAbstraction`, restated (that module rebuilds
    this one from specs, so this one does not import it)."""

    @property
    def buckets(self) -> tuple[int, ...]: ...

    @property
    def spec(self) -> dict[str, Any]: ...

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int: ...


SpecBuilder = Callable[[Game, dict[str, Any]], CardAbstraction]
""":func:`agent.abstraction.buckets.card_abstraction_from_spec`, passed in."""


NUM_CLASSES = 169
"""Hold'em preflop classes (:func:`agent.abstraction.holdem_buckets.preflop_class`)."""


@dataclass(frozen=True, slots=True)
class GraftPart:
    """One graft of a partition: the hands whose highest hole card has one of ``ranks``
    (or, in hold'em, whose preflop class is one of ``classes``), from round ``from_round``
    on."""

    ranks: str
    from_round: int
    classes: tuple[int, ...] = ()
    """Hold'em: the preflop classes of the graft (then ``ranks`` is empty)."""

    def to_json(self) -> dict[str, Any]:
        if self.classes:
            return {"classes": list(self.classes), "from_round": self.from_round}
        return {"ranks": self.ranks, "from_round": self.from_round}

    @property
    def label(self) -> str:
        """``'A from round 1'`` or ``'12 preflop classes (AA, KK, ...) from round 1'``."""
        if self.classes:
            return f"{len(self.classes)} preflop classes ({_class_names(self.classes)}) " \
                   f"from round {self.from_round}"
        return f"{self.ranks} from round {self.from_round}"


def _class_names(classes: Sequence[int], most: int = 4) -> str:
    chars = "23456789TJQKA"
    names = []
    for index in sorted(classes, reverse=True)[:most]:
        row, col = divmod(index, 13)
        names.append(chars[row] * 2 if row == col else
                     chars[row] + chars[col] + "s" if row > col else chars[col] + chars[row] + "o")
    return ", ".join(names) + (", ..." if len(classes) > most else "")


def _is_holdem(game: Game) -> bool:
    return (game.num_ranks, game.num_suits, game.num_hole_cards, game.num_rounds) == \
        (13, 4, 2, 4) and tuple(game.num_board_cards) == (0, 3, 1, 1)


def check_classes(game: Game, classes: object, where: str) -> tuple[int, ...]:
    """Validated preflop classes of a hold'em graft (a non-empty list of distinct ints in
    0..168), sorted.

    Raises:
        AbstractionError: for another game or a bad list.
    """
    if not _is_holdem(game):
        raise AbstractionError(f"{where}: expected a hold'em game for a graft by preflop "
                               f"'classes' (use 'ranks')")
    if isinstance(classes, str) or not isinstance(classes, Sequence) or not classes or any(
        isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < NUM_CLASSES
        for c in classes
    ):
        raise AbstractionError(f"{where}: expected 'classes' to be a non-empty list of "
                               f"preflop classes in 0..168, got {excerpt(classes)}")
    if len(set(classes)) != len(classes):
        raise AbstractionError(f"{where}: expected distinct preflop classes, got "
                               f"{excerpt(classes)}")
    return tuple(sorted(int(c) for c in classes))


def check_parts(game: Game, parts: Sequence[object], where: str = "graft") -> tuple[GraftPart, ...]:
    """Validated graft parts from their JSON (``{"ranks": ..., "from_round": ...}`` or,
    hold'em, ``{"classes": [...], "from_round": ...}``).

    Raises:
        AbstractionError: for a missing or bad key, or two grafts sharing a rank or class.
    """
    if isinstance(parts, str) or not isinstance(parts, Sequence) or not parts:
        raise AbstractionError(f"{where}: expected a non-empty list of grafts, got "
                               f"{excerpt(parts)}")
    out: list[GraftPart] = []
    seen: dict[str, int] = {}
    seen_class: dict[int, int] = {}
    for j, part in enumerate(parts):
        here = f"{where} {j}"
        if not isinstance(part, dict):
            raise AbstractionError(f"{here}: expected an object with 'ranks' (or 'classes') "
                                   f"and 'from_round', got {excerpt(part)}")
        extra = set(part) - {"ranks", "classes", "from_round", "cards"}
        if extra:
            raise AbstractionError(f"{here}: expected keys 'ranks' or 'classes', "
                                   f"'from_round', 'cards', got {excerpt(sorted(map(str, extra)))}")
        if ("ranks" in part) == ("classes" in part):
            raise AbstractionError(f"{here}: expected exactly one of 'ranks' and 'classes', "
                                   f"got {excerpt(part)}")
        start = part.get("from_round", 0)
        if "classes" in part:
            classes = check_classes(game, part["classes"], here)
            if isinstance(start, bool) or not isinstance(start, int) \
                    or not 0 <= start < game.num_rounds:
                raise AbstractionError(f"{here}: expected 'from_round' in "
                                       f"0..{game.num_rounds - 1}, got {excerpt(start)}")
            for index in classes:
                if index in seen_class:
                    raise AbstractionError(f"{here}: preflop class {index} is already in "
                                           f"graft {seen_class[index]}: expected disjoint "
                                           f"grafts")
                seen_class[index] = j
            out.append(GraftPart("", start, classes))
            continue
        ranks = check_ranks(game, part.get("ranks"), here)
        if isinstance(start, bool) or not isinstance(start, int) \
                or not 0 <= start < game.num_rounds:
            raise AbstractionError(f"{here}: expected 'from_round' in 0..{game.num_rounds - 1}, "
                                   f"got {excerpt(start)}")
        for c in ranks:
            if c in seen:
                raise AbstractionError(f"{here}: rank {c!r} is already in graft {seen[c]}: "
                                       f"expected disjoint grafts")
            seen[c] = j
        out.append(GraftPart(ranks, start))
    return tuple(out)


class GraftCards:
    """Base buckets outside the grafts, each graft's own buckets inside (module docstring)."""

    def __init__(
        self, game: Game, base: CardAbstraction, parts: Sequence[GraftPart],
        inner: Sequence[CardAbstraction],
    ) -> None:
        """
        Raises:
            AbstractionError: if ``parts`` and ``inner`` differ in length.
        """
        if len(parts) != len(inner) or not parts:
            raise AbstractionError(f"expected one inner card abstraction per graft, got "
                                   f"{len(parts)} grafts and {len(inner)} abstractions")
        self.game = game
        self.base = base
        self.parts = tuple(parts)
        self.inner = tuple(inner)
        self._graft_of_rank: dict[int, int] = {
            RANK_CHARS.index(c): j for j, p in enumerate(self.parts) for c in p.ranks
        }
        self._graft_of_class: tuple[int, ...] | None = None
        if any(p.classes for p in self.parts):
            if any(not p.classes for p in self.parts):
                raise AbstractionError("expected every graft to name 'classes', or none")
            of = [-1] * NUM_CLASSES
            for j, p in enumerate(self.parts):
                for c in p.classes:
                    of[c] = j
            self._graft_of_class = tuple(of)
        starts: list[list[int]] = []
        counts: list[int] = []
        for r in range(game.num_rounds):
            total = int(base.buckets[r])
            row = []
            for part, cards in zip(self.parts, self.inner, strict=True):
                row.append(total if r >= part.from_round else -1)
                if r >= part.from_round:
                    total += int(cards.buckets[r])
            starts.append(row)
            counts.append(total)
        self._starts = tuple(tuple(s) for s in starts)
        self._buckets = tuple(counts)

    @classmethod
    def from_spec(cls, game: Game, spec: dict[str, Any], build: SpecBuilder) -> GraftCards:
        """Rebuild from :attr:`spec`, validating the base and every graft (``build`` rebuilds
        the inner specs: :func:`agent.abstraction.buckets.card_abstraction_from_spec`).

        Raises:
            AbstractionError: for a missing or bad key, a nested graft, overlapping grafts.
        """
        base_spec = spec.get("base")
        if not isinstance(base_spec, dict) or base_spec.get("kind") == KIND:
            raise AbstractionError(f"expected 'base' to be a card abstraction spec other than "
                                   f"{KIND!r}, got {excerpt(base_spec)}")
        base = build(game, base_spec)
        grafts = spec.get("grafts")
        parts = check_parts(game, grafts if isinstance(grafts, list) else [])
        inner: list[CardAbstraction] = []
        for j, item in enumerate(grafts or []):
            cards = item.get("cards")
            if not isinstance(cards, dict) or cards.get("kind") == KIND:
                raise AbstractionError(f"graft {j}: expected 'cards' to be a card abstraction "
                                       f"spec other than {KIND!r}, got {excerpt(cards)}")
            inner.append(build(game, cards))
        return cls(game, base, parts, inner)

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "base": dict(self.base.spec),
            "grafts": [{**p.to_json(), "cards": dict(c.spec)}
                       for p, c in zip(self.parts, self.inner, strict=True)],
            "buckets": list(self._buckets),
        }

    @property
    def graft_of_class(self) -> tuple[int, ...] | None:
        """Hold'em grafts: the graft of each preflop class (-1: none); else None."""
        return self._graft_of_class

    def part_of(self, hole: Sequence[int]) -> int:
        """The graft whose ranks hold the highest hole card, or whose classes hold the
        hand's preflop class (-1: none)."""
        if self._graft_of_class is not None:
            if len(hole) != 2 or hole[0] == hole[1]:
                raise AbstractionError(f"expected two distinct hole cards, got {list(hole)!r}")
            a, b = int(hole[0]), int(hole[1])
            hi, lo = max(a // 4, b // 4), min(a // 4, b // 4)
            index = 13 * hi + lo if a % 4 == b % 4 else 13 * lo + hi
            return self._graft_of_class[index]
        return self._graft_of_rank.get(max(rank_of(c) for c in hole), -1)

    def graft_of(self, round_: int, hole: Sequence[int]) -> int:
        """The graft playing ``hole`` in ``round_`` (-1: the base)."""
        j = self.part_of(hole)
        return j if j >= 0 and round_ >= self.parts[j].from_round else -1

    def graft_range(self, round_: int, graft: int) -> tuple[int, int]:
        """Buckets ``[start, stop)`` of ``graft`` in ``round_`` (empty before it starts)."""
        start = self._starts[round_][graft]
        if start < 0:
            return (0, 0)
        return (start, start + int(self.inner[graft].buckets[round_]))

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        j = self.graft_of(round_, hole)
        if j < 0:
            return self.base.bucket(round_, hole, board)
        return self._starts[round_][j] + self.inner[j].bucket(round_, hole, board)
