"""PNG plots of the translation experiments (matplotlib, the ``plot`` extra).

* :func:`plot_mappings`: the seven mapping curves ``f_{A,B}(x)`` on ``[A, B]``, one panel
  per ``(A, B)`` (e.g. ``A = 0.01, B = 1`` and ``A = 1, B = 4``).
* :func:`plot_exploitability`: exploitability against the stack size, one line per mapping
  and one panel per game, abstraction and purification (log-scaled stacks, symlog
  exploitability so that zeros show).
* :func:`plot_conventions`: the average exploitability of a strategy file per mapping under
  each size convention (grouped bars), one panel per abstraction and purification.

matplotlib is imported inside the functions, with the non-interactive Agg backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent.abstraction.translation import get_mapping
from agent.acpc.errors import UsageError
from strategies.measure.translation.lab import Measurement


def pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UsageError("plots need matplotlib: pip install 'acpc-arena[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_mappings(
    path: Path, pairs: Sequence[tuple[float, float]], mappings: Sequence[str], points: int = 801
) -> Path:
    """The curves ``f(x)`` of ``mappings`` for each ``(A, B)`` in ``pairs``; returns ``path``.

    Raises:
        ValueError: for ``A >= B``, ``A < 0``, an unknown mapping or no matplotlib.
    """
    plt = pyplot()
    for a, b in pairs:
        if not 0 <= a < b:
            raise UsageError(f"expected 0 <= A < B, got A={a!r}, B={b!r}")
    fig, axes = plt.subplots(1, len(pairs), figsize=(6 * len(pairs), 4.5), squeeze=False)
    for ax, (a, b) in zip(axes[0], pairs, strict=True):
        xs = np.linspace(a, b, points)
        for name in mappings:
            fn = get_mapping(name)
            ys = [fn(a, b, float(x)) for x in xs]
            style = "--" if name.startswith("det") else "-"
            ax.plot(xs, ys, style, label=name, linewidth=1.4)
        ax.set_title(f"f(x): probability of reading x as A  (A = {a:g}, B = {b:g})")
        ax.set_xlabel("bet x (pot fractions)")
        ax.set_ylabel("f(x)")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_exploitability(path: Path, rows: Sequence[Measurement], seat: int = 1) -> Path:
    """Exploitability of the agent in ``seat`` against the stack, per mapping; one panel
    per (game, abstraction, purification). Returns ``path``.

    Raises:
        ValueError: if there is nothing to plot or no matplotlib.
    """
    blocks: dict[tuple[str, str, str], list[Measurement]] = {}
    for r in rows:
        blocks.setdefault((r.game, r.abstraction, r.purification), []).append(r)
    if not blocks:
        raise UsageError("expected measurements to plot, got none")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(blocks), figsize=(6 * len(blocks), 4.5), squeeze=False)
    for ax, ((game, abstraction, pur), items) in zip(axes[0], blocks.items(), strict=True):
        for name in dict.fromkeys(r.mapping for r in items):
            pts = sorted((r.stack, r.seat(seat)) for r in items if r.mapping == name)
            style = "--o" if name.startswith("det") else "-o"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=name,
                    markersize=3, linewidth=1.3)
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_ylim(bottom=0.0)
        suffix = "" if pur == "none" else f", {pur}"
        ax.set_title(f"{game} {abstraction}{suffix}", fontsize=10)
        ax.set_xlabel("stack n (pots)")
        ax.set_ylabel(f"exploitability of seat P{seat + 1} ({items[0].units})")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_conventions(path: Path, rows: Sequence[Measurement]) -> Path:
    """Average exploitability per mapping, one bar per size convention; one panel per
    (game, abstraction, purification). Returns ``path``.

    Raises:
        ValueError: if there is nothing to plot or no matplotlib.
    """
    blocks: dict[tuple[str, str, str], list[Measurement]] = {}
    for r in rows:
        blocks.setdefault((r.game, r.abstraction, r.purification), []).append(r)
    if not blocks:
        raise UsageError("expected measurements to plot, got none")
    plt = pyplot()
    cols = min(2, len(blocks))
    nrows = (len(blocks) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(7 * cols, 4.2 * nrows), squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax, ((game, abstraction, pur), items) in zip(flat, blocks.items(), strict=False):
        mappings = list(dict.fromkeys(r.mapping for r in items))
        conventions = list(dict.fromkeys(r.sizes_in for r in items))
        by = {(r.mapping, r.sizes_in): r.average for r in items}
        width = 0.8 / max(1, len(conventions))
        xs = np.arange(len(mappings))
        for j, c in enumerate(conventions):
            ax.bar(xs + (j - (len(conventions) - 1) / 2) * width,
                   [by.get((m, c), np.nan) for m in mappings], width,
                   label=f"sizes in {c or '-'}")
        ax.set_xticks(xs, mappings, rotation=30, fontsize=8)
        ax.set_title(f"{game} {abstraction}, purification {pur}", fontsize=10)
        ax.set_ylabel(f"(br0 + br1) / 2 ({items[0].units})")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
    for ax in flat[len(blocks):]:
        ax.axis("off")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
