"""LBR of the re-solving agent beside the translating blueprint's, deal by deal.

    python scripts/lbr_resolving.py scripts/results/lbr/published/holdem_fc.json \\
        scripts/results/lbr/resolving/holdem_fc_resolve.json \\
        --png docs/reports/resolving-lbr.png

Reads two ``acpc-strategy lbr --json`` results of the same seed and setting, the first
against the translating agent (``BLUEPRINT``), the second against the re-solving one
(``acpc-strategy lbr --resolve``, ``RESOLVING``). A run's chunks of deals come from the seed
alone, so deal ``d`` has the same cards in both; the hands before the river are played by
the same translating strategy (the agents' private draws can differ). Prints, in mbb/h
with 95% normal intervals over duplicate deals: each run on its own, the blueprint on the
deals the re-solving run played, and the paired difference (re-solving minus blueprint)
over those deals with its per-deal SD, and the hands an interval of +-50 and +-25 mbb/h
on the difference would need. The PNG draws the estimates with their intervals. Needs
matplotlib for ``--png``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def per_deal(path: Path) -> tuple[dict[int, float], float]:
    """Each complete deal's value (mean of its two hands, chips) and the big blind."""
    data = json.loads(path.read_text())
    by: dict[int, list[float]] = {}
    for deal, _, value in data["values"]:
        by.setdefault(int(deal), []).append(float(value))
    return {d: sum(v) / 2 for d, v in by.items() if len(v) == 2}, float(data["big_blind"])


def mean_half(values: list[float]) -> tuple[float, float, float]:
    """Mean, 95% normal half-width and SD."""
    n = len(values)
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
    return m, 1.96 * sd / math.sqrt(n), sd


def compare(blueprint: Path, resolving: Path) -> dict[str, tuple[float, float]]:
    """The figures (mbb/h, half-width), printed as they come."""
    a, big = per_deal(blueprint)
    b, big_b = per_deal(resolving)
    if big != big_b:
        raise SystemExit(f"expected the same big blind, got {big} and {big_b}")
    scale = 1000.0 / big
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        raise SystemExit(f"expected at least 2 deals in both files, got {len(common)}")
    out: dict[str, tuple[float, float]] = {}
    for name, values in (("blueprint, all its deals", [a[d] * scale for d in sorted(a)]),
                         ("re-solving", [b[d] * scale for d in common]),
                         ("blueprint, the same deals", [a[d] * scale for d in common])):
        m, h, sd = mean_half(values)
        out[name] = (m, h)
        print(f"{name:<28} {m:9.1f} +- {h:6.1f} mbb/h  ({2 * len(values):,} hands, SD per "
              f"deal {sd:,.0f})")
    diff = [(b[d] - a[d]) * scale for d in common]
    m, h, sd = mean_half(diff)
    out["re-solving minus blueprint"] = (m, h)
    same = sum(1 for d in common if b[d] == a[d])
    print(f"{'re-solving minus blueprint':<28} {m:+9.1f} +- {h:6.1f} mbb/h  (paired over "
          f"{len(common):,} deals; SD per deal {sd:,.0f}; {same:,} deals identical)")
    for target in (50.0, 25.0):
        need = 2 * math.ceil((1.96 * sd / target) ** 2)
        print(f"  hands for +-{target:g} mbb/h on the difference: {need:,}")
    return out


def plot(figures: dict[str, tuple[float, float]], png: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(figures)
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    for i, name in enumerate(names):
        m, h = figures[name]
        ax.errorbar([m], [i], xerr=[h], fmt="o", capsize=4,
                    color="tab:red" if "minus" in name else "tab:blue")
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("LBR's winnings, mbb/hand (95% interval)")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("blueprint", type=Path)
    p.add_argument("resolving", type=Path)
    p.add_argument("--png", type=Path, default=None)
    args = p.parse_args()
    figures = compare(args.blueprint, args.resolving)
    if args.png is not None:
        setting = json.loads(args.resolving.read_text()).get("setting")
        plot(figures, args.png, f"LBR ({setting}): re-solving agent vs the same file "
             f"translating")
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
