"""Duplicate matches of the bundled hold'em strategy against the built-in baselines.

Runs ``acpc-match`` (``acpc-dealer`` and one ``acpc-agent`` per seat over loopback TCP):
the strategy file against ``builtin:call`` and against ``builtin:equity`` in heads-up
no-limit hold'em (reverse blinds), ``--matches`` duplicate seeds of ``--hands`` hands,
each played in both seat orders, and reports mbb/hand with 95% confidence intervals whose
unit is a duplicate pair of hands (the same cards dealt in both seat orders). With
``--update-manifest`` the figures go into the strategy's ``agent/data/strategies/manifest.json``
entry under ``matches`` (only if the file's checksum is the manifest's).

    python scripts/holdem_matches.py --hands 1000 --matches 20 --workers 2 --update-manifest
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.strategy.fileformat import read_header  # noqa: E402
from strategies.recipes import get_recipe, load_manifest, update_manifest  # noqa: E402

OPPONENTS = {"call": "builtin:call", "equity": "builtin:equity"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--recipe", default="holdem.nolimit.2p")
    p.add_argument("--strategy", help="strategy file (default: the recipe's bundled file)")
    p.add_argument("--hands", type=int, default=1000, help="hands per match")
    p.add_argument("--matches", type=int, default=20, help="duplicate seeds per opponent")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--mapping", default=None, help="the agent's translation mapping")
    p.add_argument("--run-dir", default=None)
    p.add_argument("--update-manifest", action="store_true")
    args = p.parse_args(argv)

    recipe = get_recipe(args.recipe)
    strategy = Path(args.strategy) if args.strategy else recipe.bundled_path
    spec = f"hp={strategy}" + (f",mapping={args.mapping}" if args.mapping else "")
    out_json = Path(tempfile.mkdtemp(prefix="holdem-matches-")) / "result.json"
    command = [
        str(Path(sys.executable).with_name("acpc-match")), "--game", recipe.game,
        "--variant", spec, *[x for name, s in OPPONENTS.items()
                             for x in ("--variant", f"{name}={s}")],
        *[x for name in OPPONENTS for x in ("--pair", f"hp:{name}")],
        "--hands", str(args.hands), "--matches", str(args.matches), "--seed", str(args.seed),
        "--workers", str(args.workers), "--transport", "tcp", "--unit", "hand",
    ]
    if args.run_dir:
        command += ["--run-dir", args.run_dir]
    with contextlib.suppress(ValueError):  # show a path inside the repository relatively
        relative = strategy.resolve().relative_to(ROOT)
        spec = spec.replace(str(strategy), str(relative), 1)
    shown = shlex.join(["acpc-match", *command[1:4], spec, *command[5:]])
    command += ["--json", str(out_json)]
    print(f"running: {shown}", flush=True)
    t0 = time.monotonic()
    rc = subprocess.run(command, check=False).returncode
    seconds = time.monotonic() - t0
    if rc != 0:
        print(f"acpc-match failed with exit status {rc}", file=sys.stderr)
        return rc
    data = json.loads(out_json.read_text())
    figures: dict[str, Any] = {}
    for result in data["results"]:
        if result["variant"] != "hp":
            continue
        (opponent,) = result["opponents"]
        raw = result["raw"]
        figures[OPPONENTS[opponent]] = {
            "mbb_per_hand": round(raw["mean"], 1),
            "ci95": round((raw["ci_high"] - raw["ci_low"]) / 2, 1),
            "ci95_low": round(raw["ci_low"], 1),
            "ci95_high": round(raw["ci_high"], 1),
            "se": round(raw["se"], 2),
            "p_value": raw["p_value"],
            "significant": bool(raw["significant"]) and raw["ci_low"] > 0,
            "units": raw["units"],
            "unit": "duplicate pair of hands (same cards, both seat orders)",
            "hands": raw["hands"],
            "hands_per_seat": raw["hands"] // 2,
        }
    for name, f in figures.items():
        print(f"hp vs {name}: {f['mbb_per_hand']:+.1f} mbb/hand +- {f['ci95']:.1f} (95%), "
              f"{f['hands']} hands, {f['units']} duplicate pairs, p = {f['p_value']:.3g}")
    if args.update_manifest:
        entry = dict(load_manifest()["files"][recipe.name])
        header, _ = read_header(strategy)
        if header.get("checksum") != entry.get("checksum"):
            print("not updating the manifest: the file's checksum is not the manifest's",
                  file=sys.stderr)
            return 1
        entry["matches"] = {
            **figures,
            "command": shown,
            "transport": "tcp (acpc-dealer + acpc-agent processes)",
            "seconds": round(seconds, 1),
            "seed": args.seed,
        }
        print(f"manifest updated: {update_manifest(recipe.name, entry)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
