"""Where ``A`` and ``B`` are measured: the size convention of action translation, defined once.

An opponent's real raise is measured as a pot fraction ``x`` of the *real* state before it
(:func:`agent.acpc.betsize.pot_fraction`). The abstract sizes it is bracketed between (the
call, ``A = 0``, and the node's abstract raises) can be measured in two places, and once an
earlier translation has made the real and the abstract pots differ, the two give different
readings:

``abstract``
    Each abstract raise's size is its pot fraction in the *abstract node's* state (the
    ``x`` of :class:`~agent.abstraction.actions.AbstractAction`: the nominal fraction
    realised in the abstract state, rounded and clamped there). The real bet and the
    abstract sizes are measured against different pots: a real all-in into a pot larger
    than the abstract one measures smaller than the abstract all-in and may be read as a
    pot bet or even a check/call. The project's behaviour before the option existed.
``real``
    Each abstract raise is re-expressed in the *real* state: its nominal fraction is
    realised there exactly as the agent would realise its own action
    (:func:`realise_raise_to`: the raise-to for the fraction of the real pot, rounded to
    whole chips, clamped to the real raise bounds; the all-in is the real all-in), and its
    size is that raise-to as a pot fraction of the real state. Both ``x`` and the sizes are
    then in the same units, and a real all-in is always read as the node's abstract all-in
    when the node has one.

Duplicates after clamping (``real`` only; the abstract node's own sizes are distinct by
construction): abstract raises that land on the same real raise-to are merged with the
rule :func:`agent.abstraction.actions.node_actions` uses to build the tree -- the
smallest nominal fraction stands for the group, except that the abstract all-in stands for
every raise clamped to the real all-in. A bet at the merged size is read as that one
abstract action; the others at that size are not reachable by translation at this node
(the agent's own play still reaches them).

:func:`read_bets` is the one definition (:func:`read_bet`: one raise): the decision model
(:mod:`agent.decision`) calls it, and the live agent and every evaluator go through that
model.

Imports the stdlib, :mod:`agent.acpc` and :mod:`agent.abstraction` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.abstraction.actions import ALL_IN, Node
from agent.abstraction.translation import MappingFn, bracket
from agent.acpc.betsize import clamped_raise_to, pot_fraction
from agent.acpc.betting import ActionKind, BettingState
from agent.acpc.errors import AbstractionError

ABSTRACT = "abstract"
REAL = "real"
SIZE_CONVENTIONS: tuple[str, ...] = (ABSTRACT, REAL)
"""The conventions, by their command-line names (``--sizes-in``)."""
DEFAULT_SIZE_CONVENTION = ABSTRACT
"""The convention the agent and the lab use unless told otherwise (docs/reports/translation-lab.md
has the measurements behind the choice)."""


def parse_size_convention(text: str | None) -> str:
    """A convention name (``abstract`` or ``real``); ``None`` gives the default.

    Raises:
        AbstractionError: for anything else.
    """
    if text is None:
        return DEFAULT_SIZE_CONVENTION
    key = text.strip().lower()
    if key not in SIZE_CONVENTIONS:
        raise AbstractionError(f"expected a size convention ({', '.join(SIZE_CONVENTIONS)}), "
                               f"got {text!r}")
    return key


def realise_raise_to(state: BettingState, fraction: float) -> int | None:
    """The real raise-to of a no-limit raise of nominal pot ``fraction`` at ``state``.

    ``fraction`` of the pot (:func:`~agent.acpc.betsize.raise_to_from_pot_fraction`),
    rounded to whole chips and clamped to the raise bounds; :data:`ALL_IN` is the upper
    bound. ``None`` when no raise is legal. The agent realises its own raises with it
    (:func:`agent.decision.realise`).
    """
    if fraction == ALL_IN:
        bounds = state.raise_bounds()
        return None if bounds is None else bounds[1]
    return clamped_raise_to(state, fraction)


@dataclass(frozen=True, slots=True)
class BetReading:
    """How a real raise is bracketed at an abstract node (before the mapping's draw)."""

    convention: str
    x: float
    """The real raise, as a pot fraction of the real state."""
    sizes: tuple[float, ...]
    """The bracket's sizes, ascending: the call (0) first, then the abstract raises."""
    options: tuple[int, ...]
    """Per size: the index of its action in the node's actions (and children)."""
    low: int
    """Index of ``A`` in :attr:`sizes` (equal to :attr:`high` when the reading is certain)."""
    high: int
    """Index of ``B``."""
    all_in: bool = False
    """The all-in rule decided the reading (``real``: a real all-in read as the node's
    abstract all-in)."""

    @property
    def a(self) -> float:
        return self.sizes[self.low]

    @property
    def b(self) -> float:
        return self.sizes[self.high]

    @property
    def certain(self) -> bool:
        return self.low == self.high

    def prob_low(self, mapping: MappingFn) -> float:
        """``f(A, B, x)`` (1 when the reading is certain)."""
        if self.certain:
            return 1.0
        return float(mapping(self.a, self.b, self.x))

    def choose(self, mapping: MappingFn, u: float) -> tuple[float, int]:
        """``(f, action index)``: ``A``'s action when ``u < f``, else ``B``'s."""
        f = self.prob_low(mapping)
        if self.certain:
            return f, self.options[self.low]
        return f, self.options[self.low if u < f else self.high]


def bracket_sizes(
    real: BettingState, node: Node, convention: str
) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """``(sizes, options)``: the call and the abstract raises of ``node``, in ``convention``.

    ``real`` is the real state the opponent raises in (no-limit, a raise legal). See the
    module docstring for both conventions and the merging of duplicates.

    Raises:
        AbstractionError: for an unknown convention or a node without a call.
    """
    kinds = [a.kind for a in node.actions]
    if ActionKind.CALL not in kinds:
        raise AbstractionError(f"expected an abstract node with a call, got node {node.id} "
                               f"({node.state.betting!r})")
    call_index = kinds.index(ActionKind.CALL)
    raises = [i for i, k in enumerate(kinds) if k is ActionKind.RAISE]
    if convention == ABSTRACT:
        return ((0.0, *(node.actions[i].x for i in raises)),
                (call_index, *raises))
    if convention != REAL:
        raise AbstractionError(f"expected a size convention ({', '.join(SIZE_CONVENTIONS)}), "
                               f"got {convention!r}")
    bounds = real.raise_bounds()
    all_in = next((i for i in raises if node.actions[i].fraction == ALL_IN), None)
    seen: dict[int, int] = {}
    for i in raises:
        if i == all_in:
            continue
        to = realise_raise_to(real, node.actions[i].fraction)
        if to is None or bounds is None:
            continue
        if to == bounds[1] and all_in is not None:
            continue  # the all-in stands for it
        seen.setdefault(to, i)  # raises come by increasing fraction: the smallest stays
    if all_in is not None and bounds is not None:
        seen.setdefault(bounds[1], all_in)
    order = sorted(seen)
    return ((0.0, *(pot_fraction(real, to) for to in order)),
            (call_index, *(seen[to] for to in order)))


def read_bet(real: BettingState, node: Node, raise_to: int, convention: str) -> BetReading:
    """Bracket the real raise to ``raise_to`` at ``real`` among ``node``'s sizes.

    ``node`` must have at least one raise (a node without one reads every raise as a call:
    the policy's raise-cap fallback, decided before this).

    Raises:
        AbstractionError: as :func:`bracket_sizes`.
    """
    return read_bets(real, node, (raise_to,), convention)[0]


def read_bets(real: BettingState, node: Node, raise_tos: Sequence[int],
              convention: str) -> list[BetReading]:
    """:func:`read_bet` of each raise of ``raise_tos`` at the same ``real`` (the node's
    sizes bracketed once: an evaluator reading many candidate sizes).

    Raises:
        AbstractionError: as :func:`bracket_sizes`.
    """
    sizes, options = bracket_sizes(real, node, convention)
    all_in_to: int | None = None
    j = None
    if convention == REAL:
        bounds = real.raise_bounds()
        j = next((j for j, i in enumerate(options)
                  if node.actions[i].fraction == ALL_IN), None)
        if bounds is not None and j is not None:
            all_in_to = bounds[1]
    out = []
    for raise_to in raise_tos:
        x = pot_fraction(real, raise_to)
        if all_in_to is not None and raise_to == all_in_to and j is not None:
            out.append(BetReading(convention, x, sizes, options, j, j, all_in=True))
            continue
        lo, hi = bracket(sizes, x)
        out.append(BetReading(convention, x, sizes, options, lo, hi))
    return out
