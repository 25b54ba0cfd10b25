"""Duplicate scheduling: which matches a run plays, with which seeds, in which seats.

A run plays *groups* of variants (a pair in heads-up; ``n`` variants in an ``n``-player
game): the groups named with ``--pair``, else every combination of the variants (round
robin), in the order given. Each group plays ``matches`` duplicate *units*; unit ``k`` uses
the deal seed :func:`deal_seed` ``(master, k)`` (the same cards for every group) and is
played once in every seat rotation of the group (2 seatings heads-up, ``n`` rotations for
``n`` players), so every variant holds every position's cards once.

Every seed is derived from the master seed by hashing (:func:`derive_seed`), so any match
can be replayed alone and a run can be extended (more units) without changing the matches
already played. An agent's private seed depends on the master seed, the variant (its
``seed`` option if given, else its name) and the unit, not on the seating: a variant meets
the same cards with the same randomness in both seatings.

Stdlib only.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent.acpc.limits import excerpt
from evaluation.match.variants import Variant, VariantError


def derive_seed(*parts: object, bits: int = 32) -> int:
    """A seed of ``bits`` bits from the sha256 of the parts' ``repr``."""
    digest = hashlib.sha256(repr(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - bits)


def deal_seed(master: int, unit: int) -> int:
    """The dealer's uint32 seed for duplicate unit ``unit``."""
    return derive_seed("deal", master, unit)


def agent_seed(master: int, variant: Variant, unit: int) -> int:
    """A variant's private seed in unit ``unit`` (31 bits, positive)."""
    key: object = variant.seed if variant.seed is not None else variant.name
    return derive_seed("agent", master, key, unit, bits=31)


@dataclass(frozen=True, slots=True)
class MatchJob:
    """One dealer match of a run: everything a worker needs, JSON-able."""

    match_id: str
    """``<group>/k<unit>/r<rotation>``, unique in a run."""
    group: tuple[str, ...]
    """The group's variant names in base order."""
    unit: int
    rotation: int
    deal_seed: int
    seats: tuple[str, ...]
    """Variant names in seat order (the group rotated by ``rotation``)."""
    agent_seeds: tuple[int, ...]
    """Private seeds by seat."""
    match_name: str
    hands: int

    @property
    def group_key(self) -> str:
        """The group as text: names joined by commas."""
        return ",".join(self.group)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :meth:`from_json` reads back."""
        return {
            "match_id": self.match_id,
            "group": list(self.group),
            "unit": self.unit,
            "rotation": self.rotation,
            "deal_seed": self.deal_seed,
            "seats": list(self.seats),
            "agent_seeds": list(self.agent_seeds),
            "match_name": self.match_name,
            "hands": self.hands,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchJob:
        """The inverse of :meth:`to_json`."""
        return cls(
            match_id=str(data["match_id"]),
            group=tuple(data["group"]),
            unit=int(data["unit"]),
            rotation=int(data["rotation"]),
            deal_seed=int(data["deal_seed"]),
            seats=tuple(data["seats"]),
            agent_seeds=tuple(int(x) for x in data["agent_seeds"]),
            match_name=str(data["match_name"]),
            hands=int(data["hands"]),
        )


MAX_GROUPS = 10_000
"""A run plays at most 10,000 groups (a round robin of 141 variants heads-up): every match
is planned before the first is played."""


def make_groups(
    variants: Sequence[Variant], num_players: int, pairs: Sequence[str] = ()
) -> list[tuple[str, ...]]:
    """The groups to play: ``pairs`` (``A:B[:C..]``) if given, else round robin.

    Raises:
        VariantError: for an unknown name, a group of the wrong size, a repeated name,
            more than :data:`MAX_GROUPS` groups.
    """
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise VariantError(f"variant {dup[0]!r} is defined twice: expected unique names")
    if not pairs:
        if len(names) < num_players:
            raise VariantError(
                f"expected at least {num_players} variants for a {num_players}-player game, "
                f"got {len(names)}: {', '.join(names) or 'none'}"
            )
        count = math.comb(len(names), num_players)
        if count > MAX_GROUPS:
            raise VariantError(
                f"expected at most {MAX_GROUPS:,} groups, got {count:,} (a round robin of "
                f"{len(names)} variants, {num_players} a group); choose groups with --pair"
            )
        return list(itertools.combinations(names, num_players))
    if len(pairs) > MAX_GROUPS:
        raise VariantError(f"expected at most {MAX_GROUPS:,} groups, got {len(pairs):,} --pair")
    groups: list[tuple[str, ...]] = []
    for text in pairs:
        group = tuple(x.strip() for x in text.split(":"))
        if len(group) != num_players:
            raise VariantError(
                f"expected --pair with {num_players} variant names joined by ':', got "
                f"{excerpt(text)}"
            )
        for name in group:
            if name not in names:
                raise VariantError(
                    f"variant {excerpt(name)} in --pair {excerpt(text)} is not defined (known: "
                    f"{excerpt(', '.join(names))})"
                )
        if len(set(group)) != len(group):
            raise VariantError(f"expected distinct variants in --pair {excerpt(text)}")
        if group not in groups:
            groups.append(group)
    return groups


def plan_jobs(
    variants: Sequence[Variant],
    groups: Sequence[tuple[str, ...]],
    *,
    master_seed: int,
    matches: int,
    hands: int,
) -> list[MatchJob]:
    """Every match of a run, unit by unit (so an interrupted run has whole units first)."""
    by_name = {v.name: v for v in variants}
    jobs: list[MatchJob] = []
    for unit in range(matches):
        seed = deal_seed(master_seed, unit)
        for group in groups:
            n = len(group)
            for rotation in range(n):
                seats = group[rotation:] + group[:rotation]
                jobs.append(MatchJob(
                    match_id=f"{','.join(group)}/k{unit}/r{rotation}",
                    group=tuple(group),
                    unit=unit,
                    rotation=rotation,
                    deal_seed=seed,
                    seats=tuple(seats),
                    agent_seeds=tuple(agent_seed(master_seed, by_name[s], unit) for s in seats),
                    match_name=f"{'-vs-'.join(seats)}.k{unit}",
                    hands=hands,
                ))
    return jobs
