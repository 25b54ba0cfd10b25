"""Purification: post-process a strategy's action distribution before sampling.

Modes (docs/background.md): ``none`` plays the distribution as computed; ``full`` plays the most
probable action, ties split uniformly; ``threshold:T`` zeroes every probability below ``T``
and renormalises (if every probability is below ``T``, the most probable actions are kept,
as ``full`` would). Probabilities of actions outside the node are always 0 and stay 0, so
purification can never pick an action the node does not have.

Stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.acpc.errors import AbstractionError
from agent.acpc.limits import excerpt

TIE = 1e-12


@dataclass(frozen=True, slots=True)
class Purification:
    """A purification mode: ``kind`` is ``none``, ``full`` or ``threshold``."""

    kind: str
    threshold: float = 0.0

    def __str__(self) -> str:
        return f"threshold:{self.threshold:g}" if self.kind == "threshold" else self.kind

    def apply(self, probs: Sequence[float]) -> list[float]:
        """The purified distribution (sums to 1 over the actions that had mass)."""
        if self.kind == "none":
            return list(probs)
        best = max(probs)
        if best <= 0.0:
            raise AbstractionError(f"expected a distribution with positive mass, got "
                                   f"{list(probs)!r}")
        if self.kind == "threshold":
            kept = [p if p >= self.threshold else 0.0 for p in probs]
            total = sum(kept)
            if total > 0.0:
                return [p / total for p in kept]
        ties = [1.0 if p > 0.0 and p >= best - TIE else 0.0 for p in probs]
        n = sum(ties)
        return [t / n for t in ties]


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
    total = sum(probs)
    acc = 0.0
    target = u * total
    last = 0
    for i, p in enumerate(probs):
        if p <= 0.0:
            continue
        last = i
        acc += p
        if target < acc:
            return i
    return last

