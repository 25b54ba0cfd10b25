"""Plot the running LBR estimate of ``acpc-strategy lbr --out`` results files.

    python scripts/lbr_plot.py scripts/results/lbr/holdem_default.json [MORE.json ...] \
        --png scripts/results/lbr/running.png

One line per file: mbb/h over the deals played so far (each deal's value is the mean of its
two hands, in deal order), with the 95% normal interval as a band. Needs matplotlib.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np


def running(path: Path) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """``(label, deals, mean mbb/h, half-width)`` after each complete deal."""
    data = json.loads(path.read_text())
    by_deal: dict[int, list[float]] = {}
    for deal, _, value in data["values"]:
        by_deal.setdefault(int(deal), []).append(float(value))
    pairs = np.array([sum(v) / 2 for _, v in sorted(by_deal.items()) if len(v) == 2])
    pairs *= 1000.0 / float(data["big_blind"])
    n = np.arange(1, pairs.size + 1)
    mean = np.cumsum(pairs) / n
    sq = np.cumsum(pairs**2)
    var = np.where(n > 1, (sq - n * mean**2) / np.maximum(n - 1, 1), np.nan)
    half = 1.96 * np.sqrt(np.maximum(var, 0)) / np.sqrt(n)
    label = f"{data['agent']}"
    if data.get("mapping"):
        label += f" ({data['mapping']}, {data['purify']})"
    label += f": {mean[-1]:.0f} +- {half[-1]:.0f}" if pairs.size else ""
    return label, 2 * n, mean, half


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--png", type=Path, required=True)
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(args.files), 1, figsize=(8, 3.2 * len(args.files)),
                             squeeze=False)
    for ax, path in zip(axes[:, 0], args.files, strict=True):
        label, hands, mean, half = running(path)
        ax.plot(hands, mean, label=label)
        ax.fill_between(hands, mean - half, mean + half, alpha=0.25)
        ax.axhline(750, color="grey", linestyle=":", label="always fold loses 750")
        ax.set_ylabel("LBR mbb/h")
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
        if not math.isnan(float(mean[-1])) and hands.size > 20:
            lo = float(np.nanmin((mean - half)[hands.size // 10 :]))
            hi = float(np.nanmax((mean + half)[hands.size // 10 :]))
            ax.set_ylim(min(lo, 0), hi * 1.1)
    axes[-1, 0].set_xlabel("hands (duplicate deals x 2)")
    fig.suptitle("Sampled local best response, running estimate with 95% interval")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
