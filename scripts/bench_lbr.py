"""Benchmark sampled LBR: today's hole-by-hole path against the fast path, same run, same deals.

    python scripts/bench_lbr.py [--strategy holdem.nolimit.2p.strat] [--rounds 5]
                                [--chunks 5] [--setting NAME] [--peer]

Each round plays the same ``--chunks`` chunks (10 deals, 20 hands each) with both paths,
interleaved, each in its own :class:`strategies.measure.sampled_lbr.ChunkPlayer` (own
caches, both kept across rounds as in a long run): **slow** (``fast=False``: the agent's
bucket of every hole computed hole by hole, as before the fast path) and **fast**
(``fast=True``: every hole's bucket per board at once, the flop from the cached strength
table when there, each hole's bucket read once per round and hand and the agent's purified
rows once per node, every candidate raise's fold weights in one batch). It checks that both
give the very same value for every hand (exit 1 otherwise), and prints hands/s of each and
the ratio fast/slow per round (min / median / max), by the clock and per CPU second of the
process (less sensitive to the load of a shared machine), and the load average before and
after. ``--setting`` plays a published setting instead of today's default (0.5, 1, 2 pot and
all-in, preflop call); ``--peer`` adds the same deals played by the agent against
``builtin:call`` alone (what a match costs in process). Kernels are compiled and the file
loaded before the clock starts (one warm-up chunk each, not counted).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from agent.acpc.betting import BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.matchstate import view_of
from agent.builtin import CallPolicy
from strategies.measure.sampled_lbr import CHUNK_DEALS, ChunkPlayer, LbrConfig, _derived


def plain(player: ChunkPlayer, chunk: int) -> int:
    """The chunk's hands, agent against an always-caller; hands played."""
    policy = player.policy(_derived(player.config.seed, chunk, 1))
    caller = CallPolicy()
    dealer = deal_hands(player.game, _derived(player.config.seed, chunk, 0))
    hands = 0
    for i in range(CHUNK_DEALS):
        deal = next(dealer)
        for position in (0, 1):
            state = BettingState.initial(player.game)
            while not state.finished:
                ms = view_of(state.player, 2 * i + position, state, deal.hole, deal.board)
                act = policy.act(ms) if state.player != position else caller.act(ms)
                state = state.apply(act)
            hands += 1
    return hands


def load_line(before: tuple[float, ...], after: tuple[float, ...]) -> str:
    """The load averages before and after a benchmark, and the cores."""
    return (f"load average before {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}, after "
            f"{after[0]:.2f} {after[1]:.2f} {after[2]:.2f} ({os.cpu_count()} cores)")


def spread(values: list[float], digits: int = 2) -> str:
    """Min, median and max, each 9 wide."""
    return " ".join(f"{v:9.{digits}f}" for v in (min(values), statistics.median(values),
                                                  max(values)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strategy", default="holdem.nolimit.2p.strat")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--chunks", type=int, default=5)
    p.add_argument("--setting", default=None)
    p.add_argument("--peer", action="store_true")
    args = p.parse_args()
    values = "played" if args.setting is None else "imaginary"
    slow = ChunkPlayer(LbrConfig(args.strategy, setting=args.setting, values=values,
                                 fast=False))
    fast = ChunkPlayer(LbrConfig(args.strategy, setting=args.setting, values=values,
                                 fast=True, flop_table=True))
    warm = 1_000_000
    slow.play(warm)  # kernels, caches of the loaded file
    fast.play(warm)
    if args.peer:
        plain(fast, warm)
    load0 = os.getloadavg()
    rates: dict[str, list[float]] = {"slow": [], "fast": [], "peer": [], "slow cpu": [],
                                     "fast cpu": []}
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    mismatches = 0
    for r in range(args.rounds):
        chunks = range(r * args.chunks, (r + 1) * args.chunks)
        start, cpu = time.perf_counter(), time.process_time()
        rows_slow = [row for c in chunks for row in slow.play(c)]
        rates["slow"].append(len(rows_slow) / (time.perf_counter() - start))
        rates["slow cpu"].append(len(rows_slow) / (time.process_time() - cpu))
        start, cpu = time.perf_counter(), time.process_time()
        rows_fast = [row for c in chunks for row in fast.play(c)]
        rates["fast"].append(len(rows_fast) / (time.perf_counter() - start))
        rates["fast cpu"].append(len(rows_fast) / (time.process_time() - cpu))
        ratios.append(rates["fast"][-1] / rates["slow"][-1])
        cpu_ratios.append(rates["fast cpu"][-1] / rates["slow cpu"][-1])
        mismatches += sum(a != b for a, b in zip(rows_slow, rows_fast, strict=True))
        if args.peer:
            start = time.perf_counter()
            hands = sum(plain(fast, c) for c in chunks)
            rates["peer"].append(hands / (time.perf_counter() - start))
        print(f"  round {r + 1}/{args.rounds}: slow {rates['slow'][-1]:.2f}, fast "
              f"{rates['fast'][-1]:.2f} hands/s", flush=True)
    load1 = os.getloadavg()
    hands = args.chunks * 2 * CHUNK_DEALS
    print(f"{args.strategy}, setting {args.setting or 'default (0.5,1,2 + all-in, preflop '}"
          f"{'' if args.setting else 'call)'}: {args.rounds} rounds x {hands} hands, the same "
          f"deals on both paths; flop table: {fast.flop_table_path or 'not cached'}")
    print(f"{'hands/s':<30} {'min':>9} {'median':>9} {'max':>9}")
    print(f"{'slow (hole by hole, today)':<30} {spread(rates['slow'])}")
    print(f"{'fast':<30} {spread(rates['fast'])}")
    if args.peer:
        print(f"{'peer (agent vs call)':<30} {spread(rates['peer'])}")
    print(f"{'ratio fast / slow, per round':<30} {spread(ratios)}")
    print(f"{'per CPU second: slow':<30} {spread(rates['slow cpu'])}")
    print(f"{'per CPU second: fast':<30} {spread(rates['fast cpu'])}")
    print(f"{'CPU ratio fast / slow':<30} {spread(cpu_ratios)}")
    print(f"hands whose value differs between the paths: {mismatches} of "
          f"{args.rounds * hands}")
    print(load_line(load0, load1))
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
