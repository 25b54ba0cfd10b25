"""Replay the re-solving agent's hold'em river decisions from dealer logs: CPU time per
decision and per hand, a fingerprint of every decision (to show a speed-up changed no
result), and optionally a cProfile of the whole replay.

Reads ACPC dealer logs (``STATE:hand:betting:cards:scores:names`` lines, e.g. the
head-to-head's ``scripts/results/resolving-agent/holdem-h2h/logs/*.log``), takes the seat
named ``--name`` (default ``rs``), and for every hand in which that seat acted on the
river calls :meth:`agent.resolve.HandResolver.decide` at each of its river decisions, in
order, with the real state and board (the opponent's actions and its own from the log).
One :class:`agent.resolve.Resolver` serves every hand, as in a match (its caches carry
over). The settings are the head-to-head's: the file's mapping and purification,
``--resolve round``, ``reach-maxmargin``, ``--resolve-iterations`` (default 50).

Prints per decision and per hand CPU seconds (``time.process_time``; min / median / max)
and the load average; ``--fingerprints FILE`` writes one JSON line per decision (hand,
betting, source, iterations, the SHA-256 of the decision's ``probs`` bytes);
``--check FILE`` compares them with an earlier run's file and exits 1 on any difference.

    .venv/bin/python scripts/profile_resolve_river.py \\
        scripts/results/resolving-agent/holdem-h2h/logs/rs-vs-tr.k0.log --hands 30 \\
        --fingerprints /tmp/fp_before.jsonl
    .venv/bin/python scripts/profile_resolve_river.py LOG --hands 30 --check /tmp/fp_before.jsonl
    .venv/bin/python scripts/profile_resolve_river.py LOG --hands 30 --profile /tmp/river.prof

Not a test (timings depend on the machine and its load); run it with ``nice -n 19``.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def river_hands(paths: list[Path], name: str) -> list[tuple[str, int, str, str]]:
    """``(log:hand, seat, betting, cards)`` of every hand where ``name`` acted on the
    river."""
    out = []
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.startswith("STATE:"):
                continue
            _, hand, betting, cards, _, names = line.split(":")
            seats = names.split("|")
            if name not in seats or betting.count("/") < 3:
                continue
            out.append((f"{path.name}:{hand}", seats.index(name), betting, cards))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("logs", type=Path, nargs="+")
    p.add_argument("--name", default="rs")
    p.add_argument("--hands", type=int, default=30, help="river hands to replay")
    p.add_argument("--strategy", default="holdem.nolimit.2p.strat")
    p.add_argument("--resolve-iterations", type=int, default=50)
    p.add_argument("--fingerprints", type=Path, default=None)
    p.add_argument("--check", type=Path, default=None)
    p.add_argument("--profile", type=Path, default=None)
    args = p.parse_args(argv)

    from agent.acpc.betting import BettingState, parse_action_prefix
    from agent.acpc.cards import parse_cards
    from agent.acpc.gamefiles import load_game
    from agent.agents import make_policy
    from agent.resolve import ResolveConfig
    from agent.resolving import ResolvingPolicy

    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    t0 = time.process_time()
    policy = make_policy(f"{args.strategy}", game, seed=1,
                         resolve=ResolveConfig(iterations=args.resolve_iterations))
    assert isinstance(policy, ResolvingPolicy)
    policy.warm_up()
    resolver = policy.resolver
    print(f"policy built and warmed up: {time.process_time() - t0:.1f} CPU s")
    hands = river_hands(args.logs, args.name)[: args.hands]
    records: list[dict[str, Any]] = []
    per_hand: list[float] = []
    per_decision: list[tuple[str, float]] = []
    prof = cProfile.Profile() if args.profile else None
    load0 = os.getloadavg()[0]
    for label, seat, betting, cards in hands:
        hole_text, board_text = cards.split("/", 1)
        holes = hole_text.split("|")
        board = parse_cards(board_text.replace("/", ""))
        hand = resolver.new_hand(seat)
        state = BettingState.initial(game)
        spent = 0.0
        i = 0
        while i < len(betting):
            if betting[i] == "/":
                i += 1
                continue
            got = parse_action_prefix(betting, i, game)
            assert got is not None, (label, betting, i)
            action, i = got
            if state.round == game.num_rounds - 1 and state.player == seat:
                t = time.process_time()
                if prof is not None:
                    prof.enable()
                decision = hand.decide(state, board)
                if prof is not None:
                    prof.disable()
                dt = time.process_time() - t
                spent += dt
                per_decision.append((decision.stats.source, dt))
                records.append({"hand": label, "betting": state.betting,
                                "hole": holes[seat],
                                "source": decision.stats.source,
                                "iterations": decision.stats.iterations,
                                "actions": [str(a) for a in decision.actions],
                                "probs": hashlib.sha256(decision.probs.tobytes()).hexdigest()})
            state = state.apply(action)
        per_hand.append(spent)
    load1 = os.getloadavg()[0]

    def trio(v: list[float]) -> str:
        return (f"{min(v):.3f} / {statistics.median(v):.3f} / {max(v):.3f}" if v else "-")

    resolves = [dt for src, dt in per_decision if src == "resolve"]
    print(f"{len(hands)} river hands, {len(per_decision)} river decisions "
          f"({len(resolves)} re-solves); load average {load0:.2f} before, {load1:.2f} after")
    print(f"CPU s per re-solving decision min / median / max: {trio(resolves)}")
    print(f"CPU s per decision            min / median / max: "
          f"{trio([d for _, d in per_decision])}")
    print(f"CPU s per hand (river)        min / median / max: {trio(per_hand)}; "
          f"total {sum(per_hand):.2f}")
    if prof is not None:
        prof.dump_stats(str(args.profile))
        print(f"profile: {args.profile}")
    if args.fingerprints is not None:
        args.fingerprints.write_text("".join(json.dumps(r) + "\n" for r in records))
        print(f"fingerprints: {args.fingerprints}")
    if args.check is not None:
        old = [json.loads(x) for x in args.check.read_text().splitlines()]
        bad = [(a, b) for a, b in zip(old, records, strict=False) if a != b]
        if bad or len(old) != len(records):
            print(f"DIFFERENT: {len(bad)} of {len(records)} decisions differ "
                  f"({len(old)} in {args.check}); first: {bad[:1]!r}")
            return 1
        print(f"same: all {len(records)} decisions equal {args.check} bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
