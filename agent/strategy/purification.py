"""Purification: post-process a strategy's action distribution before sampling.

Modes (docs/background.md): ``none`` plays the distribution as computed; ``full`` plays the most
probable action, ties split uniformly; ``threshold:T`` zeroes every probability below ``T``
and renormalises (if every probability is below ``T``, the most probable actions are kept,
as ``full`` would). Probabilities of actions outside the node are always 0 and stay 0, so
purification can never pick an action the node does not have.

One definition of each rule, :func:`purify_row` and :func:`sample_index_in`: plain Python
over a list or an array that numba can compile. The policy and the estimators call them
through :meth:`Purification.apply` and :func:`sample_index`; the compiled walk of
``acpc-match --estimator sampled-agents`` (:mod:`evaluation.estimators.fastwalk`) compiles
the same functions (:func:`share_rules`).

Stdlib only at import; :func:`share_rules` loads numba.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent.acpc.errors import AbstractionError
from agent.acpc.limits import excerpt

TIE = 1e-12



class Probs(Protocol):
    """Probabilities by index: a list or a numpy array (so a kernel can pass its own)."""

    def __getitem__(self, i: int, /) -> float: ...


class Row(Probs, Protocol):
    """:class:`Probs` that can be written in place."""

    def __setitem__(self, i: int, value: float, /) -> None: ...


KINDS = ("none", "full", "threshold")
"""The purification kinds by index (the ``kind`` of :func:`purify_row`)."""


@dataclass(frozen=True, slots=True)
class Purification:
    """A purification mode: ``kind`` is ``none``, ``full`` or ``threshold``."""

    kind: str
    threshold: float = 0.0

    def __str__(self) -> str:
        return f"threshold:{self.threshold:g}" if self.kind == "threshold" else self.kind

    def apply(self, probs: Sequence[float]) -> list[float]:
        """The purified distribution (sums to 1 over the actions that had mass;
        :func:`purify_row`).

        Raises:
            AbstractionError: for a row without positive mass (unless ``none``).
        """
        row = list(probs)
        if not purify_row(row, len(row), KINDS.index(self.kind), self.threshold):
            raise AbstractionError(f"expected a distribution with positive mass, got "
                                   f"{list(probs)!r}")
        return row


def purify_row(row: Row, k: int, kind: int, threshold: float) -> bool:
    """Purify the first ``k`` probabilities of ``row`` in place (``kind``: the index in
    :data:`KINDS`, ``threshold`` for ``threshold``); False, with ``row`` unchanged, for a
    row without positive mass (``none`` never fails).

    ``full`` keeps the most probable actions (within :data:`TIE`), uniformly;
    ``threshold`` zeroes every probability below ``threshold`` and renormalises, or does
    as ``full`` if nothing is left. Sums run left to right.
    """
    if kind == 0:
        return True
    best = row[0]
    for i in range(1, k):
        best = max(best, row[i])
    if best <= 0.0:
        return False
    if kind == 2:
        total = 0.0
        for i in range(k):
            if row[i] >= threshold:
                total += row[i]
        if total > 0.0:
            for i in range(k):
                row[i] = row[i] / total if row[i] >= threshold else 0.0
            return True
    n = 0.0
    for i in range(k):
        if row[i] > 0.0 and row[i] >= best - TIE:
            n += 1.0
    for i in range(k):
        row[i] = (1.0 if row[i] > 0.0 and row[i] >= best - TIE else 0.0) / n
    return True


def share_rules() -> None:
    """Let numba kernels call :func:`purify_row` and :func:`sample_index_in`, compiled from
    these same functions (:func:`agent.jit.share`). Loads numba."""
    from agent.jit import share

    share(purify_row, sample_index_in)


NONE = Purification("none")
FULL = Purification("full")


def parse_purification(spec: str) -> Purification:
    """Parse ``none``, ``full`` or ``threshold:T`` (``0 < T <= 1``).

    Raises:
        ValueError: for anything else.
    """
    text = spec.strip().lower()
    if text in ("none", "full"):
        return Purification(text)
    if text.startswith("threshold:"):
        try:
            t = float(text.partition(":")[2])
        except ValueError:
            t = float("nan")
        if 0.0 < t <= 1.0:
            return Purification("threshold", t)
    raise AbstractionError(f"expected a purification 'none', 'full' or 'threshold:T' with "
                           f"0 < T <= 1, got {excerpt(spec)}")


def sample_index(probs: Sequence[float], u: float) -> int:
    """The action a draw ``u`` in [0, 1) picks from ``probs``: the first whose cumulative
    probability exceeds ``u`` times the total (zero-probability actions are never picked;
    rounding past the end gives the last positive one). The agent's rule, and the trace
    reader's (:mod:`agent.explain`) to say which action a recorded draw chose."""
    return sample_index_in(probs, len(probs), u)


def sample_index_in(probs: Probs, k: int, u: float) -> int:
    """:func:`sample_index` over the first ``k`` of ``probs`` (a list or an array; the
    compiled walk calls it too, :func:`share_rules`). Sums run left to right."""
    total = 0.0
    for i in range(k):
        total += probs[i]
    acc = 0.0
    target = u * total
    last = 0
    for i in range(k):
        p = probs[i]
        if p <= 0.0:
            continue
        last = i
        acc += p
        if target < acc:
            return i
    return last

