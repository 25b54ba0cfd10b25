"""The table a user needs for the bundled hold'em strategies (issue 17, item 4).

For each strategy file (default: the two bundled hold'em files), each purification (mixed
``none`` and fully purified ``full``) and each mapping (``rand-pshar`` and ``det-arith``):

* **LBR**: local best response in the real game, mbb/h +- 95%
  (``acpc-strategy lbr FILE --mappings M --purify P --hands N``, real hands in process);
* **matches**: duplicate matches in process against ``builtin:call`` and
  ``builtin:equity`` (``acpc-match --transport inproc``), mbb/h +- 95%;
* **head to head**: each file against the first one, with the same mapping and
  purification;

and per file and purification the **sampled abstract-game bound** (``acpc-strategy
exploit FILE --purify P``: a lower bound on the abstract game's exploitability from best
responses learned on sampled deals and valued on others).

Every cell is one command, printed before it runs, whose JSON is kept in ``--out``; a
cell whose JSON exists is not run again (and ``--steps`` only limits what runs: the
tables show every cell there is), so Ctrl-C loses at most the running cell and a
second run resumes. At the end: ``tables.md``, ``results.json`` and ``lbr.png``.

    python scripts/holdem_table.py --out scripts/results/holdem-table --lbr-hands 3000 \\
        --match-hands 2000 --matches 10 --h2h-matches 20
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GAME = "holdem.nolimit.2p.reverse_blinds.game"
DEFAULT_FILES = ("old=agent/data/strategies/holdem.nolimit.2p.strat",
                 "new=agent/data/strategies/holdem.nolimit.2p.pa.strat")
MAPPINGS = ("rand-pshar", "det-arith")
PURIFICATIONS = ("none", "full")
BASELINES = {"call": "builtin:call", "equity": "builtin:equity"}


def run_cell(out: Path, name: str, command: list[str], result: Path,
             run: bool = True) -> dict[str, Any] | None:
    """Run ``command`` unless ``result`` exists (or ``run`` is false: a step not asked
    for); the JSON it wrote, or None."""
    if result.exists():
        print(f"[kept] {name}: {result}", flush=True)
        return dict(json.loads(result.read_text()))
    if not run:
        return None
    shown = shlex.join([Path(command[0]).name, *command[1:]])
    print(f"[run]  {name}: {shown}", flush=True)
    t0 = time.monotonic()
    rc = subprocess.run(command, check=False, cwd=ROOT).returncode
    if rc != 0 or not result.exists():
        print(f"[fail] {name}: exit status {rc}", file=sys.stderr, flush=True)
        return None
    data = dict(json.loads(result.read_text()))
    data["_command"] = shown
    data["_seconds"] = round(time.monotonic() - t0, 1)
    result.write_text(json.dumps(data))
    (out / "commands.txt").open("a").write(f"{name}\t{shown}\n")
    return data


def sampled_bound(path: str, purify: str, say: bool) -> dict[str, Any] | None:
    """The sampled abstract-game bound of a bundled file from its manifest entry (written
    by ``acpc-strategy exploit FILE --record``, the stored strategy and the file's default
    purification), or None."""
    from agent.strategy.fileformat import read_header
    from strategies.recipes import load_manifest

    header, _ = read_header(ROOT / path)
    for entry in load_manifest()["files"].values():
        if isinstance(entry, dict) and entry.get("checksum") == header.get("checksum"):
            figures = entry.get("sampled_best_response", {}).get(purify)
            if figures is not None:
                return {**figures, "_command": entry.get("sampled_best_response_command")}
    if say:
        print(f"[none] sampled bound of {path} ({purify}): run acpc-strategy exploit {path} "
              f"--record", flush=True)
    return None


def match_figures(data: dict[str, Any], variant: str) -> dict[str, dict[str, float]]:
    """``{opponent: {mean, half}}`` of ``variant`` in an ``acpc-match --json`` result."""
    figures = {}
    for result in data["results"]:
        if result["variant"] != variant:
            continue
        (opponent,) = result["opponents"]
        raw = result["raw"]
        figures[opponent] = {"mean": raw["mean"], "half": (raw["ci_high"] - raw["ci_low"]) / 2,
                             "hands": raw["hands"]}
    return figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--file", action="append", default=None, metavar="NAME=PATH",
                   help="a strategy file to measure (repeatable; default: the two bundled "
                   "hold'em files, old and new)")
    p.add_argument("--out", type=Path, default=Path("scripts/results/holdem-table"))
    p.add_argument("--lbr-hands", type=int, default=3000)
    p.add_argument("--match-hands", type=int, default=2000, help="hands per match")
    p.add_argument("--matches", type=int, default=10, help="duplicate seeds per baseline")
    p.add_argument("--h2h-matches", type=int, default=20, help="duplicate seeds, head to head")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--steps", default="lbr,matches,h2h,bound",
                   help="comma-separated: lbr, matches, h2h, bound")
    args = p.parse_args(argv)
    files: dict[str, str] = {}
    for spec in args.file or DEFAULT_FILES:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path or name in files:
            p.error(f"expected --file NAME=PATH with a new, non-empty NAME, got {spec!r}")
        if not (ROOT / path).is_file() and not Path(path).is_file():
            p.error(f"expected --file {name}=PATH to name a strategy file, got {path!r}: "
                    f"no such file")
        files[name] = path
    steps = set(args.steps.split(","))
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    print(f"load {os.getloadavg()}", flush=True)
    acpc_match, acpc_strategy = str(BIN / "acpc-match"), str(BIN / "acpc-strategy")
    cells: dict[str, Any] = {}
    for fname, path in files.items():
        for purify in PURIFICATIONS:
            cells[f"bound-{fname}-{purify}"] = sampled_bound(path, purify, "bound" in steps)
            for mapping in MAPPINGS:
                tag = f"{fname}-{purify}-{mapping}"
                key = f"lbr-{tag}"
                cells[key] = run_cell(out, key, [
                    acpc_strategy, "lbr", path, "--mappings", mapping, "--purify", purify,
                    "--hands", str(args.lbr_hands), "--seed", str(args.seed), "--workers",
                    str(args.workers), "--progress", "60", "--json", str(out / f"{key}.json")],
                    out / f"{key}.json", "lbr" in steps)
                key = f"matches-{tag}"
                cells[key] = run_cell(out, key, [
                    acpc_match, "--game", GAME,
                    "--variant", f"a={path},mapping={mapping},purify={purify}",
                    *[x for n, s in BASELINES.items() for x in ("--variant", f"{n}={s}")],
                    *[x for n in BASELINES for x in ("--pair", f"a:{n}")],
                    "--hands", str(args.match_hands), "--matches", str(args.matches),
                    "--seed", str(args.seed), "--workers", str(args.workers), "--transport",
                    "inproc", "--unit", "hand", "--run-dir", str(out / "runs" / key),
                    "--json", str(out / f"{key}.json")], out / f"{key}.json",
                    "matches" in steps)
    names = list(files)
    a = names[0]
    for b in names[1:]:
        for purify in PURIFICATIONS:
            for mapping in MAPPINGS:
                key = f"h2h-{b}-{purify}-{mapping}"
                cells[key] = run_cell(out, key, [
                    acpc_match, "--game", GAME,
                    "--variant", f"{b}={files[b]},mapping={mapping},purify={purify}",
                    "--variant", f"{a}={files[a]},mapping={mapping},purify={purify}",
                    "--pair", f"{b}:{a}", "--hands", str(args.match_hands), "--matches",
                    str(args.h2h_matches), "--seed", str(args.seed), "--workers", str(args.workers),
                    "--transport", "inproc", "--unit", "hand", "--run-dir",
                    str(out / "runs" / key), "--json", str(out / f"{key}.json")],
                    out / f"{key}.json", "h2h" in steps)
    write_tables(out, files, cells)
    return 0


def _fmt(mean: float | None, half: float | None) -> str:
    if mean is None or half is None:
        return "-"
    return f"{mean:+.0f} ± {half:.0f}"


def write_tables(out: Path, files: dict[str, str], cells: dict[str, Any]) -> None:
    """``tables.md``, ``results.json`` and ``lbr.png`` from the cells there are."""
    rows = []
    for fname in files:
        for purify in PURIFICATIONS:
            bound = cells.get(f"bound-{fname}-{purify}") or {}
            for mapping in MAPPINGS:
                tag = f"{fname}-{purify}-{mapping}"
                lbr = cells.get(f"lbr-{tag}") or {}
                matches = cells.get(f"matches-{tag}")
                base = match_figures(matches, "a") if matches else {}
                rows.append({
                    "file": fname, "purify": purify, "mapping": mapping,
                    "lbr": lbr.get("mbb_per_hand"), "lbr_half": lbr.get("mbb_half_width"),
                    "lbr_hands": lbr.get("hands"),
                    "bound": bound.get("exploitability_mbb"),
                    "bound_half": bound.get("exploitability_ci95_mbb"),
                    **{f"vs_{n}": base.get(n, {}).get("mean") for n in BASELINES},
                    **{f"vs_{n}_half": base.get(n, {}).get("half") for n in BASELINES},
                })
    lines = ["| file | purify | mapping | LBR mbb/h (hands) | sampled abstract bound mbb/h | "
             "vs call mbb/h | vs equity mbb/h |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        bound = "-" if r["bound"] is None else f">= {r['bound']:.0f} ± {r['bound_half']:.0f}"
        lines.append(f"| {r['file']} | {r['purify']} | {r['mapping']} | "
                     f"{_fmt(r['lbr'], r['lbr_half'])} ({r['lbr_hands'] or '-'}) | {bound} | "
                     f"{_fmt(r['vs_call'], r['vs_call_half'])} | "
                     f"{_fmt(r['vs_equity'], r['vs_equity_half'])} |")
    names = list(files)
    h2h = []
    if len(names) >= 2:
        lines += ["", f"Head to head (each file against {names[0]}, same mapping and "
                  "purification, mbb/h from the file's side):", "",
                  "| file | purify | mapping | mbb/h | hands |", "|---|---|---|---|---|"]
    for b in names[1:]:
        for purify in PURIFICATIONS:
            for mapping in MAPPINGS:
                data = cells.get(f"h2h-{b}-{purify}-{mapping}")
                fig = match_figures(data, b).get(names[0]) if data else None
                h2h.append({"file": b, "against": names[0], "purify": purify,
                            "mapping": mapping, "mean": fig and fig["mean"],
                            "half": fig and fig["half"], "hands": fig and fig["hands"]})
                lines.append(f"| {b} | {purify} | {mapping} | "
                             f"{_fmt(fig and fig['mean'], fig and fig['half'])} | "
                             f"{fig['hands'] if fig else '-'} |")
    (out / "tables.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps({"rows": rows, "head_to_head": h2h},
                                                 indent=1))
    print("\n".join(lines), flush=True)
    drawn = [r for r in rows if r["lbr"] is not None]
    if drawn:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4))
        labels = [f"{r['file']}\n{r['purify']}\n{r['mapping']}" for r in drawn]
        ax.bar(range(len(drawn)), [r["lbr"] for r in drawn],
               yerr=[r["lbr_half"] for r in drawn], capsize=4, color="tab:red")
        ax.axhline(750, color="grey", linestyle="--", label="always fold (750)")
        ax.set_xticks(range(len(drawn)), labels, fontsize=7)
        ax.set_ylabel("LBR, mbb/h (95%)")
        ax.set_title("Local best response against the hold'em agents")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "lbr.png", dpi=120)


if __name__ == "__main__":
    sys.exit(main())
