"""CPU-seconds to a fixed 95% half-width: ``acpc-match --transport inproc`` (played hands)
against ``--estimator sampled-agents`` (or ``exact-agents``), on the same seeds (issue 18,
item 4).

For each method and repeat, in this one process (``time.process_time``): every group's
per-deal duplicate values (the mean of both seatings of a deal, in chips) on the deals of
the same master seed, and the CPU time they took. The CPU to reach a half-width ``h`` is
``c * (z * sd / h) ** 2`` (``c`` CPU per deal, ``sd`` the per-deal standard deviation);
the script prints it for the half-width the played method reaches in ``--hands`` deals,
for (a) each variant against the common opponent and (b) the paired difference of the two
variants, and the ratio old / new, with min / median / max over interleaved repeats and
the load average.

    python scripts/bench_inproc.py [--hands 400] [--repeats 3] [--seed 1] [--game G]
        [-v NAME=SPEC ...] [--estimator exact-agents|sampled-agents] [--separate]
        [--control] [--commands DEALS] [--walk auto|reference]

The new difference is one joint walk of both variants (``joint_group_values``; with
``--separate``, the sum of both variants' own reference walks, as before), and each
variant's figure its own walk by the same function; ``--walk`` picks how
``joint_group_values`` walks (``auto``: the numba kernel of ``evaluation/estimators/fastwalk.py``
where it applies, the default; ``reference``: the Python reference walk); ``--control``
adds the AIVAT-style terms at random's decisions (``FEATURES``) and their cross-fitted
correction to the new method, its CPU included.

With no variants: the default run's (rand-pshar and det-arith on the bundled hold'em file,
each against builtin:random).
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from evaluation.cli import default_setup
from evaluation.estimators.estimator import (
    Model,
    class_probabilities,
    difference,
    group_values,
    joint_group_values,
    make_model,
)
from evaluation.match.schedule import plan_jobs
from evaluation.match.variants import Variant, make_seat_policy, parse_variant
from evaluation.match.worker import MatchSettings, run_job

Z = 1.96


def played_values(game: Game, game_spec: str, variants: Sequence[Variant],
                  group: tuple[str, str], seed: int, hands: int,
                  unit: int) -> tuple[list[float], float]:
    """Per-deal duplicate chips of group[0] from two played in-process matches."""
    by = {v.name: v for v in variants}
    settings = MatchSettings(game_spec=game_spec, transport="inproc")
    jobs = plan_jobs([by[group[0]], by[group[1]]], [group], master_seed=seed,
                     matches=unit + 1, hands=hands)
    jobs = [j for j in jobs if j.unit == unit]
    make_seat_policy(by[group[0]], game, 0)  # the strategy load is not the played hands'
    start = time.process_time()
    outs = [run_job(j, by, settings) for j in jobs]
    cpu = time.process_time() - start
    for o in outs:
        if not o.ok:
            raise SystemExit(f"bench_inproc: error: {o.error}")
    r0 = next(o for j, o in zip(jobs, outs, strict=True) if j.rotation == 0)
    r1 = next(o for j, o in zip(jobs, outs, strict=True) if j.rotation == 1)
    return [0.5 * (a[0] + b[1]) for a, b in zip(r0.values, r1.values, strict=True)], cpu


def command_cpu(argv: Sequence[str]) -> float:
    """User + system CPU seconds of a child command (and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "evaluation.cli", *argv],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench_inproc: error: {' '.join(argv)}: {proc.stderr[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cost(values: Sequence[float], cpu: float, half: float) -> float:
    """CPU seconds to reach half-width ``half`` at this per-deal cost and spread."""
    sd = statistics.stdev(values)
    return cpu / len(values) * (Z * sd / half) ** 2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=400, help="deals per method and repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--game", default=None)
    p.add_argument("-v", "--variant", action="append", default=[])
    p.add_argument("--estimator", choices=("exact-agents", "sampled-agents"),
                   default="sampled-agents", help="the new method (default sampled-agents)")
    p.add_argument("--separate", action="store_true",
                   help="new difference: the sum of the two variants' own walks (as "
                   "before), not one joint walk of both")
    p.add_argument("--control", action="store_true",
                   help="new: with the AIVAT-style control variates at random's decisions "
                   "(estimator FEATURES, cross-fitted), their CPU included")
    p.add_argument("--walk", choices=("auto", "reference"), default="auto",
                   help="how the new method walks (default auto: the numba kernel where it "
                   "applies)")
    p.add_argument("--commands", type=int, default=0, metavar="DEALS",
                   help="also time both whole commands (acpc-match --transport inproc --workers 1 "
                   "and --estimator exact-agents) on DEALS deals per group, each repeat")
    args = p.parse_args()
    setup = default_setup()
    # the default run's two variants against builtin:random (what the kernel walks)
    texts = args.variant or [*setup.variants[:2], "random=builtin:random"]
    game_spec = args.game or setup.game
    game = load_game(game_spec)
    variants = [parse_variant(t) for t in texts]
    if len(variants) != 3:
        raise SystemExit("bench_inproc: error: expected three variants: A, B and the common "
                         f"opponent last, got {len(variants)}")
    a, b, c = (v.name for v in variants)
    models: dict[str, Model] = {v.name: make_model(v, game) for v in variants}
    # the joint walk gets its own load of the file (so its card buckets are not cached
    # by the separate walks of the same deals)
    shared: dict[tuple[str, str | None], object] = {}
    joint_models = [make_model(v, game, shared=shared) for v in variants]
    big = game.big_blind or 1
    probs = class_probabilities(game)
    sample = args.estimator == "sampled-agents"
    print(f"game {game_spec}; {a} and {b} against {c}; {args.hands} deals per method and "
          f"repeat (each in both seatings); seed {args.seed}; old: played in-process, new: "
          f"--estimator {args.estimator}"
          f"{' with the control variates' if args.control else ''}; the difference "
          f"{'as the sum of both walks' if args.separate else 'by one joint walk'}; "
          f"walk {args.walk}")
    # warm both paths (strategy load, numba kernels) off the clock
    played_values(game, game_spec, variants, (a, c), args.seed, 2, 10_000)
    group_values(game, (models[a], models[c]), master_seed=args.seed + 10_000, units=1,
                 hands=2, group=(a, c))
    joint_group_values(game, joint_models[:2], joint_models[2],
                       master_seed=args.seed + 10_000, units=1, hands=2,
                       groups=[(a, c), (b, c)], sample=sample, walk=args.walk)
    for i, name in enumerate((a, b)):
        joint_group_values(game, [joint_models[i]], joint_models[2],
                           master_seed=args.seed + 10_000, units=1, hands=2,
                           groups=[(name, c)], sample=sample, walk=args.walk)
    ratios: dict[str, list[float]] = {}
    figures: dict[str, list[tuple[float, float]]] = {}
    for rep in range(args.repeats):
        load = os.getloadavg()[0]
        old: dict[str, tuple[list[float], float]] = {}
        new: dict[str, tuple[list[float], float]] = {}
        for name in (a, b):  # interleaved: old, new, old, new
            old[name] = played_values(game, game_spec, variants, (name, c), args.seed,
                                      args.hands, rep)
            if args.control:
                start = time.process_time()
                g = joint_group_values(game, [models[name]], models[c],
                                       master_seed=args.seed, units=1, hands=args.hands,
                                       groups=[(name, c)], first_unit=rep, sample=sample,
                                       features=True)[0]
                new[name] = (g.controlled(probs), time.process_time() - start)
            elif args.separate:
                g = group_values(game, (models[name], models[c]), master_seed=args.seed,
                                 units=1, hands=args.hands, group=(name, c),
                                 first_unit=rep, sample=sample)
                new[name] = (g.values, g.cpu_seconds)
            else:
                start = time.process_time()
                g = joint_group_values(game, [joint_models[(a, b).index(name)]],
                                       joint_models[2], master_seed=args.seed, units=1,
                                       hands=args.hands, groups=[(name, c)], first_unit=rep,
                                       sample=sample, walk=args.walk)[0]
                new[name] = (g.values, time.process_time() - start)
        old["diff"] = ([x - y for x, y in zip(old[a][0], old[b][0], strict=True)],
                       old[a][1] + old[b][1])
        if args.separate:
            new["diff"] = ([x - y for x, y in zip(new[a][0], new[b][0], strict=True)],
                           new[a][1] + new[b][1])
        else:
            start = time.process_time()
            ga, gb = joint_group_values(
                game, joint_models[:2], joint_models[2], master_seed=args.seed, units=1,
                hands=args.hands, groups=[(a, c), (b, c)], first_unit=rep, sample=sample,
                features=args.control, walk=args.walk)
            d = difference(ga, 1.0, gb, 1.0)
            new["diff"] = (d.controlled(probs, by_class=False) if args.control else d.values,
                           time.process_time() - start)
        cmd_line = ""
        if args.commands and not args.control:  # the command has no control variates
            common = [*(x for t in texts for x in ("-v", t)), "--game", game_spec,
                      "--pair", f"{a}:{c}", "--pair", f"{b}:{c}", "--hands",
                      str(args.commands), "--matches", "1", "--seed", str(args.seed + rep),
                      "--quiet"]
            with tempfile.TemporaryDirectory() as tmp:
                cmd_old = command_cpu([*common, "--transport", "inproc", "--workers", "1",
                                       "--run-dir", tmp])
            cmd_new = command_cpu([*common, "--estimator", args.estimator])
            cmd_line = (f"  whole commands, {args.commands} deals per group: old {cmd_old:.1f} "
                        f"cpu s ({1e3 * cmd_old / (2 * args.commands):.2f} ms/deal/group), "
                        f"new {cmd_new:.1f} cpu s "
                        f"({1e3 * cmd_new / (2 * args.commands):.2f} ms/deal/group)")
            for name in (a, b):
                old[name + "@cmd"] = (old[name][0], cmd_old / 2 * len(old[name][0])
                                      / args.commands)
                new[name + "@cmd"] = (new[name][0], cmd_new / 2 * len(new[name][0])
                                      / args.commands)
            old["diff@cmd"] = (old["diff"][0], cmd_old * len(old["diff"][0]) / args.commands)
            new["diff@cmd"] = (new["diff"][0], cmd_new * len(new["diff"][0]) / args.commands)
        print(f"repeat {rep + 1} (load {load:.2f} -> {os.getloadavg()[0]:.2f}):")
        if cmd_line:
            print(cmd_line)
        keys = [k for k in (a, b, "diff") for k in (k, k + "@cmd") if k in old]
        for key in keys:
            ov, oc = old[key]
            nv, nc = new[key]
            half = Z * statistics.stdev(ov) / math.sqrt(len(ov))
            co, cn = cost(ov, oc, half), cost(nv, nc, half)
            base, _, how = key.partition("@")
            label = f"{a} - {b}" if base == "diff" else f"{base} vs {c}"
            label += " (commands)" if how else " (engine)"
            print(f"  {label:<28} half-width {1000 * half / big:9.1f} mbb/h: old "
                  f"{co:8.2f} cpu s (mean {1000 * statistics.fmean(ov) / big:+9.1f}, sd "
                  f"{1000 * statistics.stdev(ov) / big:8.1f}, {1e3 * oc / len(ov):.2f} ms/deal)"
                  f"  new {cn:8.3f} cpu s (mean {1000 * statistics.fmean(nv) / big:+9.1f}, sd "
                  f"{1000 * statistics.stdev(nv) / big:8.1f}, {1e3 * nc / len(nv):.2f} ms/deal)"
                  f"  ratio {co / cn:7.1f}")
            ratios.setdefault(label, []).append(co / cn)
            figures.setdefault(label, []).append((co, cn))
    print("ratio old/new CPU to the same half-width, min / median / max over repeats:")
    for label, rs in ratios.items():
        print(f"  {label:<28} {min(rs):7.1f} / {statistics.median(rs):7.1f} / {max(rs):7.1f}")
    print(f"load average now {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
