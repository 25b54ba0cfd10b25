"""The LBR table as published: our files under each published setting, beside the paper.

    python scripts/lbr_published.py scripts/results/lbr/published/*.json \
        --png scripts/results/lbr/published/table.png

Reads ``acpc-strategy lbr --setting NAME --out FILE.json`` results (one per file and
setting), or the log of a run stopped before it wrote them (``.log``: its last progress
line, the summary of the deals complete at that time) and prints a Markdown table: per
setting, the paper's row (Lisý and Bowling 2017, Table 1), our figure with its 95%
interval and the hands behind it, and the published
figures of the 2016 competition agents where the project quotes them (the ``fc`` and
``fcpa-tr`` rows). The PNG draws the same: our points with their intervals, the published
agents beside them, and the 750 mbb/h that always folding loses. ``--pair PLAYED
IMAGINARY`` compares the two scorings of the same hands (per-deal spread, mean difference).
Needs matplotlib.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

PAPER_ROWS = {
    "fc": "FC, FC, FC, FC",
    "fcpa-tr": "C, C, FCPA, FCPA",
    "56-tr": "C, C, 56 bets, 56 bets",
    "56-all": "56 bets on every round",
}
"""The paper's row for each ``--setting`` (LBR's actions preflop, flop, turn, river)."""

PUBLISHED: dict[str, dict[str, tuple[float, float | None]]] = {
    "fc": {"Hyperborean 2014": (721, None), "Slumbot 2016": (522, None),
           "Act1 2016": (407, None)},
    "fcpa-tr": {"Hyperborean 2014": (3852, 141), "Slumbot 2016": (4020, 115),
                "Act1 2016": (2597, 140)},
}
"""Published mbb/h (95% half-width where quoted), Lisý and Bowling 2017."""


def from_log(path: Path) -> dict[str, object]:
    """A run's figures from its log (a run stopped without writing ``--out``): the header
    line and the last progress line, which is the summary of the deals complete then."""
    lines = path.read_text().splitlines()
    head = lines[0]
    last = [ln for ln in lines if ln.strip().startswith("hands ")][-1].split()
    agent = head.split("sampled, ")[1].split(" in ")[0]
    setting = head.split("LBR setting ")[1].split(" ")[0] if "LBR setting" in head else None
    return {"agent": agent, "setting": setting,
            "mapping": head.split("mapping ")[1].split(",")[0],
            "purify": head.split("purify ")[1].split(",")[0],
            "hands": int(last[1].replace(",", "")), "hands_per_second": float(last[2]),
            "mbb_per_hand": float(last[5]), "mbb_half_width": float(last[7]),
            "seconds": None, "interrupted": True,
            "scoring": head.split("values ")[1].split(";")[0]}


def load(paths: list[Path]) -> list[dict[str, object]]:
    rows = []
    for path in paths:
        if path.suffix == ".log":
            rows.append(from_log(path))
            continue
        data = json.loads(path.read_text())
        row = {k: data.get(k) for k in ("agent", "setting", "mapping", "purify", "hands",
                                        "mbb_per_hand", "mbb_half_width", "seconds",
                                        "hands_per_second", "interrupted")}
        # "scoring": played or imaginary (files written before it had the key: a setting
        # meant imaginary, the command's default)
        row["scoring"] = data.get("scoring", "imaginary" if data.get("setting") else "played")
        rows.append(row)
    order = list(PAPER_ROWS)
    rows.sort(key=lambda r: (str(r["agent"]),
                             order.index(str(r["setting"])) if r["setting"] in order else 99))
    return rows


def table(rows: list[dict[str, object]]) -> str:
    agents = ["Slumbot 2016", "Act1 2016", "Hyperborean 2014"]
    out = ["| file (mapping, purify) | `--setting` | paper's row | ours, mbb/h (95%) | hands | "
           + " | ".join(f"{a} (published)" for a in agents) + " |",
           "|---|---|---|---|---|" + "---|" * len(agents)]
    for r in rows:
        setting = str(r["setting"])
        pub = PUBLISHED.get(setting, {})
        cells = []
        for a in agents:
            if a in pub:
                v, h = pub[a]
                cells.append(f"{v:,.0f}" + (f" +- {h:,.0f}" if h is not None else ""))
            else:
                cells.append("not quoted")
        hands = int(r["hands"] or 0)  # type: ignore[call-overload]
        out.append(f"| {r['agent']} ({r['mapping']}, {r['purify']}) | `{setting}` | "
                   f"{PAPER_ROWS.get(setting, '?')} | {float(r['mbb_per_hand'] or 0):,.0f} +- "  # type: ignore[arg-type]
                   f"{float(r['mbb_half_width'] or 0):,.0f} | {hands:,}"  # type: ignore[arg-type]
                   + (" (stopped)" if r["interrupted"] else "") + " | "
                   + " | ".join(cells) + " |")
    return "\n".join(out)


def plot(rows: list[dict[str, object]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5))
    settings = [s for s in PAPER_ROWS if any(r["setting"] == s for r in rows)]
    markers = {"Slumbot 2016": "s", "Act1 2016": "^", "Hyperborean 2014": "D"}
    colors: dict[str, str] = {}
    labelled: set[str] = set()
    for i, s in enumerate(settings):
        mine = [r for r in rows if r["setting"] == s]
        for j, r in enumerate(mine):
            x = i - 0.3 + 0.1 * j
            name = str(r["agent"])
            ax.errorbar([x], [float(r["mbb_per_hand"])], yerr=[float(r["mbb_half_width"])],  # type: ignore[arg-type]
                        fmt="o", color=colors.setdefault(name, f"C{len(colors) + 4}"),
                        capsize=4, label=None if name in labelled else f"{name} (ours)")
            labelled.add(name)
        for k, (agent, (v, h)) in enumerate(PUBLISHED.get(s, {}).items()):
            ax.errorbar([i + 0.1 + 0.08 * k], [v], yerr=None if h is None else [h],
                        fmt=markers[agent], color=f"C{k + 1}", capsize=4,
                        label=f"{agent} (published)" if s == "fcpa-tr" else None)
    ax.axhline(750, color="grey", linestyle=":", label="always folding loses 750")
    ax.set_xticks(range(len(settings)))
    ax.set_xticklabels([f"{s}\n({PAPER_ROWS[s]})" for s in settings], fontsize=8)
    ax.set_ylabel("LBR wins, mbb/hand (95% interval)")
    ax.set_title("Local best response as published (Lisy and Bowling 2017 settings)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def paired(played: Path, imaginary: Path) -> str:
    """Per-deal standard deviation of the played and the imaginary scores over the deals
    both files hold (the same seed plays the same hands: LBR's actions do not depend on
    the scoring), and the mean of their difference with its 95% interval."""
    import math

    def per_deal(path: Path) -> dict[int, float]:
        by: dict[int, list[float]] = {}
        for deal, _, value in json.loads(path.read_text())["values"]:
            by.setdefault(int(deal), []).append(float(value))
        return {d: sum(v) / 2 for d, v in by.items() if len(v) == 2}

    a, b = per_deal(played), per_deal(imaginary)
    common = sorted(set(a) & set(b))
    x = [a[d] * 10 for d in common]  # chips -> mbb with the big blind of 100
    y = [b[d] * 10 for d in common]
    n = len(common)

    def sd(v: list[float]) -> float:
        m = sum(v) / len(v)
        return math.sqrt(sum((t - m) ** 2 for t in v) / (len(v) - 1))

    diff = [q - p_ for p_, q in zip(x, y, strict=True)]
    return (f"{n:,} deals ({2 * n:,} hands) scored both ways: per-deal SD played "
            f"{sd(x):,.0f} mbb, imaginary {sd(y):,.0f} mbb (ratio {sd(y) / sd(x):.2f}, "
            f"{(sd(x) / sd(y)) ** 2:.2f}x fewer hands for the same interval); mean played "
            f"{sum(x) / n:,.0f}, imaginary {sum(y) / n:,.0f}, difference "
            f"{sum(diff) / n:+,.0f} +- {1.96 * sd(diff) / math.sqrt(n):,.0f} mbb/h")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--png", type=Path, default=None)
    p.add_argument("--pair", nargs=2, type=Path, metavar=("PLAYED", "IMAGINARY"),
                   help="also compare the two scorings of the same hands")
    args = p.parse_args()
    rows = load(args.files)
    print(table(rows))
    if args.pair:
        print(paired(*args.pair))
    for r in rows:
        print(f"{r['agent']} {r['setting']}: {r['hands']} hands in {r['seconds']} s "
              f"({r['hands_per_second']} hands/s), scoring {r['scoring']}")
    if args.png is not None:
        plot(rows, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
