"""The LBR table as published: our files under each published setting, beside the paper.

    python scripts/lbr_published.py scripts/results/lbr/published/*.json \
        --png scripts/results/lbr/published/table.png

Reads ``acpc-strategy lbr --setting NAME --out FILE.json`` results (one per file and
setting) and prints a Markdown table: per setting, the paper's row (Lisý and Bowling 2017,
Table 1), our figure with its 95% interval and the hands behind it, and the published
figures of the 2016 competition agents where the project quotes them (the ``fc`` and
``fcpa-tr`` rows). The PNG draws the same: our points with their intervals, the published
agents beside them, and the 750 mbb/h that always folding loses. Needs matplotlib.
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


def load(paths: list[Path]) -> list[dict[str, object]]:
    rows = []
    for path in paths:
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
    for i, s in enumerate(settings):
        mine = [r for r in rows if r["setting"] == s]
        for j, r in enumerate(mine):
            x = i - 0.15 + 0.1 * j
            ax.errorbar([x], [float(r["mbb_per_hand"])], yerr=[float(r["mbb_half_width"])],  # type: ignore[arg-type]
                        fmt="o", color="C0", capsize=4,
                        label="bundled holdem.nolimit.2p.strat (ours)" if i == j == 0 else None)
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
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--png", type=Path, default=None)
    args = p.parse_args()
    rows = load(args.files)
    print(table(rows))
    for r in rows:
        print(f"{r['agent']} {r['setting']}: {r['hands']} hands in {r['seconds']} s "
              f"({r['hands_per_second']} hands/s), scoring {r['scoring']}")
    if args.png is not None:
        plot(rows, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
