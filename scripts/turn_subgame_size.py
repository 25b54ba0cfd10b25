"""How big a hold'em turn subgame solved to the end would be, beside a river one.

    python scripts/turn_subgame_size.py [--iterations 50] [--depth-limited]

The re-solver (:mod:`agent.resolve`) plays hold'em's river only; the turn is not built
(a depth-limited subgame is the method for it). This measures what a turn re-solve
*without* a depth limit would hold: the public tree from the start of the turn (checks and
calls to there, the deck's last cards as the board), with the subgame's stated actions and
raise cap as the agent builds them (:func:`agent.resolve.tree.build_tree`), every river
card a chance branch; and beside it a river subgame (the same board plus a river card),
which it also solves with ``--iterations`` CFR+ iterations (the cost the agent pays). CFR+
work per iteration is proportional to public nodes x private hands (1,326), so the river's
measured seconds per node and iteration, times the turn tree's nodes, estimate a turn
re-solve's cost; the turn tree itself is not solved (its strategy, regret and average
arrays, hands x edges, would take gigabytes each). For a turn subgame depth-limited at the
river (leaves valued by the blueprint), it counts the turn's nodes and leaves and times one
evaluation pass of the river tree under a fixed strategy: a leaf's value needs one per
river card, a lower bound of the leaf values' cost. Prints nodes, edges, boards, build
seconds, the river solve's seconds, and the estimate; with ``--depth-limited``, the turn tree
the re-solver builds with ``depth=1`` (:mod:`agent.resolve.depth`: a copy of the river per
continuation at each leaf), with one and with four continuations. CPU seconds
(``time.process_time``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agent.acpc.betting import CALL, BettingState
from agent.acpc.cards import deck_for
from agent.agents import resolve_strategy
from agent.resolve import ResolveConfig, Resolver, Subgame, solve
from agent.resolve.gadgets import evaluate
from agent.resolve.tree import CHANCE, build_tree
from agent.strategy.fileformat import load_strategy


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strategy", default="holdem.nolimit.2p.strat")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--depth-limited", action="store_true",
                   help="also build the turn subgame with the re-solver's depth limit at the "
                   "river (single- and multi-valued leaves) and estimate its cost")
    args = p.parse_args()
    strategy = load_strategy(resolve_strategy(args.strategy))
    game = strategy.game
    res = Resolver(strategy, ResolveConfig(iterations=args.iterations))
    deck = deck_for(game)
    board = tuple(deck[len(deck) - game.total_board_cards:])
    out: dict[str, tuple[float, float]] = {}
    for name, round_ in (("river", game.num_rounds - 1), ("turn", game.num_rounds - 2)):
        state = BettingState.initial(game)
        while state.round < round_:
            state = state.apply(CALL)
        t = time.process_time()
        tree = build_tree(game, state, board[: game.board_cards_through(round_)],
                          res.fractions, hands=res.hands, max_nodes=5_000_000,
                          max_raises=res.raise_cap(round_))
        built = time.process_time() - t
        out[name] = (tree.num_nodes, built)
        print(f"{name}: {tree.num_nodes:,} public nodes, {tree.num_edges:,} edges, "
              f"{len(tree.boards)} boards, built in {built:.1f} CPU s", flush=True)
        if name == "river":
            b = int(tree.board_of[0])
            valid = tree.valid[b].astype(np.float64)
            scale = 1.0 / float(tree.compat[b].sum())
            sub = Subgame(tree, 0, valid, valid, np.zeros(len(res.hands)),
                          np.zeros(len(res.hands)), scale)
            t = time.process_time()
            sol = solve(sub, "unsafe", args.iterations)
            spent = time.process_time() - t
            out["solve"] = (sol.iterations, spent)
            t = time.process_time()
            for _ in range(10):  # a leaf value: the blueprint's river play, valued once
                evaluate(tree, 1, False, sol.strategy, (valid, valid), scale)
            out["pass"] = ((time.process_time() - t) / 10, 0.0)
            print(f"river: {sol.iterations} CFR+ iterations in {spent:.2f} CPU s "
                  f"({spent / sol.iterations / tree.num_nodes * 1e6:.1f} us per node and "
                  f"iteration)", flush=True)
        if name == "turn":
            n_leaves = int((tree.kind == CHANCE).sum())
            n_turn = sum(1 for st in tree.states if st.round == round_)
            out["depth"] = (float(n_leaves), float(n_turn))
            out["rivers"] = (float(len(tree.boards) - 1), 0.0)
        del tree
    iters, spent = out["solve"]
    per = spent / iters / out["river"][0]
    turn_nodes = int(out["turn"][0])
    print(f"turn to the end, estimated: {per * turn_nodes * args.iterations:,.0f} CPU s for "
          f"{args.iterations} iterations ({turn_nodes / out['river'][0]:,.0f}x the river's "
          f"nodes), besides building its tree ({out['turn'][1]:.0f} CPU s)")
    leaves, turn_only = out["depth"]
    one = out["pass"][0]
    rivers = int(out["rivers"][0])
    print(f"depth-limited at the river: {int(turn_only)} turn nodes and {int(leaves)} leaves; "
          f"valuing each leaf by the blueprint's river play over the {rivers} river cards "
          f"(one evaluation pass of a river tree: {one * 1e3:.1f} CPU ms) takes about "
          f"{leaves * rivers * one:,.0f} CPU s per turn re-solve, one continuation "
          f"strategy per leaf, besides building {int(leaves) * rivers:,} river trees and "
          f"reading the blueprint on them")
    if args.depth_limited:
        # the re-solver's own depth limit (agent.resolve.depth): each leaf holds one copy of
        # the river per continuation, so the tree is the whole turn's per continuation
        state = BettingState.initial(game)
        while state.round < game.num_rounds - 2:
            state = state.apply(CALL)
        for labels in (("blueprint",), ("blueprint", "fold", "call", "raise")):
            t = time.process_time()
            tree = build_tree(game, state, board[: game.board_cards_through(state.round)],
                              res.fractions, hands=res.hands, max_nodes=5_000_000,
                              max_raises=res.raise_cap(state.round), depth=1,
                              continuations=labels, leaf_player=1)
            built = time.process_time() - t
            per_iteration = per * tree.num_nodes
            print(f"depth 1, {len(labels)} continuation(s) per leaf (agent.resolve.depth): "
                  f"{tree.num_nodes:,} public nodes, {int(tree.leaf.sum())} leaves, built in "
                  f"{built:.1f} CPU s; about {per_iteration:.1f} CPU s per CFR+ iteration "
                  f"at the river's rate ({per_iteration * args.iterations:,.0f} CPU s for "
                  f"{args.iterations})", flush=True)
            del tree
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
