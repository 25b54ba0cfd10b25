"""Benchmark sampled LBR's speed (hands/s) against its peer, the plain hands.

    python scripts/bench_lbr.py [--strategy holdem.nolimit.2p.strat] [--rounds 5]
                                [--chunks 1]

Each round plays the same ``--chunks`` chunks (10 deals, 20 hands each) twice, interleaved:
**LBR** (:meth:`strategies.measure.sampled_lbr.ChunkPlayer.play`: range tracking, equities, the
agent's real policy) and the **peer**, the same deals with the same agent against
``builtin:call`` and nothing else (what a match costs in process, without the dealer). It
prints hands/s of each (min / median / max over the rounds), LBR's cost relative to the
peer, and the load average before and after. Kernels are compiled (and the file loaded)
before the clock starts.
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strategy", default="holdem.nolimit.2p.strat")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--chunks", type=int, default=1)
    args = p.parse_args()
    player = ChunkPlayer(LbrConfig(args.strategy))
    player.play(10_000)  # warm: kernels, caches of the loaded file
    plain(player, 10_000)
    load0 = os.getloadavg()
    lbr_rates: list[float] = []
    peer_rates: list[float] = []
    for r in range(args.rounds):
        chunks = range(r * args.chunks, (r + 1) * args.chunks)
        start = time.perf_counter()
        hands = sum(len(player.play(c)) for c in chunks)
        lbr_rates.append(hands / (time.perf_counter() - start))
        start = time.perf_counter()
        hands = sum(plain(player, c) for c in chunks)
        peer_rates.append(hands / (time.perf_counter() - start))
    load1 = os.getloadavg()

    def row(name: str, rates: list[float]) -> str:
        return (f"{name:<28} {min(rates):9.2f} {statistics.median(rates):9.2f} "
                f"{max(rates):9.2f}")

    print(f"{args.strategy}: {args.rounds} rounds x {args.chunks * 2 * CHUNK_DEALS} hands")
    print(f"{'hands/s':<28} {'min':>9} {'median':>9} {'max':>9}")
    print(row("LBR (range, equities)", lbr_rates))
    print(row("peer (agent vs call)", peer_rates))
    ratio = statistics.median(peer_rates) / statistics.median(lbr_rates)
    print(f"LBR costs {ratio:.1f}x the peer's time per hand (medians)")
    print(f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} (2 cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
