"""The agent's and the offline tools' steps of ``acpc-arena warmup`` (the command itself is
:mod:`evaluation.arena`, which adds the arena's own kernel): compile every numba kernel ahead of
time.

numba compiles a kernel the first time it runs on an install and caches the machine code on
disk; with an empty cache the first strategy-playing agent or solve waits tens of seconds.
These steps run a small workload through every kernel family, one step at a time, so that
later commands start with the cache warm:

* the agent: the hand evaluator, hold'em buckets, suit isomorphism, strategy-file
  validation (loading every bundled strategy file, which also caches their abstract trees
  and records them as verified) and a policy playing the bundled hold'em and Leduc files;
  then it stamps the agent's kernels warm (:mod:`agent.kernelstamp`), so that
  ``acpc-agent`` answers its first decisions before loading them;
* the offline tools: every solver variant on Kuhn (full width and external sampling), the
  same solver over a small deal pool, the exact and the sampled best responses, the
  strength-table kernel, the translation lab's half-street games and the subgame
  re-solver (:mod:`agent.resolve`: one re-solve per gadget kind on no-limit Leduc).

Running them twice is cheap (everything loads from the cache). Imports everything (it is
meant to).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

Step = tuple[str, Callable[[], str | None]]
"""A step's name and its work, which may return a note (e.g. why it was skipped)."""


def steps() -> list[Step]:
    """The agent's and the offline tools' steps, in order."""
    import numpy as np

    def evaluator() -> None:
        from agent import handeval

        handeval.warm_up()

    def buckets() -> None:
        from agent.abstraction import holdem_buckets

        holdem_buckets.warm_up()

    def isomorphism() -> None:
        from agent.abstraction.isomorphism import holdem_indexer

        indexer = holdem_indexer("board", 1)
        hands = np.array([[0, 1, 2, 3, 4]], dtype=np.int64)
        indexer.unindex_batch(1, indexer.index_batch(hands))

    def strategy_files() -> None:
        from agent.acpc.gamefiles import load_game
        from agent.agents import make_policy
        from agent.kernelstamp import mark_kernels_warm
        from agent.strategy import kernels
        from agent.strategy.fileformat import load_strategy
        from strategies.recipes import RECIPES

        kernels.warm_up()  # the checks of a strategy file, as a swap runs them

        for recipe in RECIPES.values():
            if recipe.bundled_path.exists():
                load_strategy(recipe.bundled_path)
        for name in ("holdem.nolimit.2p", "leduc.nolimit.2p.fcpa"):
            recipe = RECIPES[name]
            if recipe.bundled_path.exists():
                make_policy(str(recipe.bundled_path), load_game(recipe.game), seed=0)
        mark_kernels_warm()  # acpc-agent may now answer before loading them (agent.kernelstamp)

    def solvers() -> None:
        from strategies.measure.best_response import exploitability
        from strategies.recipes import RECIPES
        from strategies.solvers.cfr import VARIANTS, Solver

        game = RECIPES["leduc.limit.2p"].abstract_game()
        for name in VARIANTS:
            if name == "mccfr-es-pool":
                continue
            solver = Solver(game, name, seed=0)
            solver.iterate(2)
        exploitability(game, solver.average_strategy())
        from strategies.games.kuhn100 import build_kuhn
        from strategies.solvers.egt import EGTSolver

        EGTSolver(build_kuhn(3)).iterate(2)  # Kuhn: the kernels' types, a tiny sequence form

    def pool_solver() -> None:
        from agent.abstraction.actions import build_tree, parse_betting_abstraction
        from agent.abstraction.holdem_buckets import HoldemCards
        from agent.acpc.gamefiles import load_game
        from strategies.games.abstract import flatten_tree
        from strategies.solvers.cfr import Solver
        from strategies.solvers.dealpool import PoolGame, build_pool

        game = load_game("holdem.nolimit.2p.reverse_blinds.game")
        cards = HoldemCards.build((169, 2, 2, 2), samples=20, seed=0)
        abstraction = parse_betting_abstraction(
            '{"name": "w", "fractions": [[[1.0]]], "max_raises": [1, 1, 1, 1]}')
        flat = flatten_tree(build_tree(game, abstraction), cards.buckets)
        pool = build_pool(cards, 8, seed=0)
        Solver(PoolGame(flat, pool), "mccfr-es-pool", seed=0).iterate(2)

    def sampled_best_response() -> None:
        from strategies.recipes import RECIPES

        recipe = RECIPES["holdem.nolimit.2p"]
        if not recipe.bundled_path.exists():
            return
        from agent.strategy.fileformat import load_strategy
        from agent.strategy.purification import parse_purification
        from strategies.measure.sampled_br import sampled_exploitability

        sampled_exploitability(load_strategy(recipe.bundled_path),
                               purification=parse_purification("none"), train_deals=16,
                               test_deals=16, workers=1)

    def strength_tables() -> None:
        from strategies.cards.tables import strength_values

        for round_ in (1, 2, 3):
            strength_values(round_, 0, 2)

    def translation_lab() -> None:
        from agent.abstraction.translation import get_mapping
        from agent.strategy.purification import parse_purification
        from strategies.games import halfstreet as games

        game = games.make_game("nl-kuhn", 2.0)
        strategy = games.solve_abstract(game, games.abstract_sizes(game, [1.0]), 10)
        games.full_best_responses(game, strategy, get_mapping("rand-pshar"),
                                  parse_purification("none"))

    def subgame_resolving() -> None:
        from agent.acpc.betting import CALL, Action, ActionKind, BettingState
        from agent.data import strategy_path
        from agent.resolve import ResolveConfig, Resolver
        from agent.strategy.fileformat import load_strategy

        blueprint = load_strategy(strategy_path("leduc.nolimit.2p.fcpa.strat"))
        for gadget in ("unsafe", "resolve", "maxmargin"):
            hand = Resolver(blueprint, ResolveConfig(gadget=gadget, iterations=2)).new_hand(0)
            start = BettingState.initial(blueprint.game)
            hand.decide(start, ())
            hand.decide(start.apply(CALL).apply(Action(ActionKind.RAISE, 2)), ())

    def potential_aware() -> None:
        from agent.abstraction.holdem_pa import PotentialAwareCards, board_tables
        from strategies.cards.potential import build

        build([2, 2, 2, 2], ranks=4, bins=4, samples=20, seed=0, workers=1)
        boards = board_tables(13, 3).boards.shape[0]
        PotentialAwareCards(
            clusters=(1, 1, 1, 1), recall="imperfect", bins=2, preflop=[0] * 169,
            flop=np.zeros((boards, 1326), np.uint8), turn_sums=np.zeros((1, 1), np.int64),
            turn_weights=np.ones(1, np.int64), river_thresholds=[],
        ).warm_up_batch()

    def learned_sizes() -> None:
        from agent.abstraction.actions import parse_betting_abstraction
        from agent.acpc.gamefiles import load_game
        from strategies.sizes.learned import SizeLearner, build_sizing_game, parse_learn

        game = build_sizing_game(load_game("kuhn.nolimit.2p.game"),
                                 parse_betting_abstraction('{"fractions": [[[0.5]]], '
                                                           '"max_raises": [1]}'),
                                 learn=parse_learn(["0"], "0.2,0.8"))
        SizeLearner(game).iterate(2)

    return [
        ("hand evaluator", evaluator),
        ("hold'em buckets", buckets),
        ("potential-aware buckets", potential_aware),
        ("suit isomorphism", isomorphism),
        ("strategy files and policies", strategy_files),
        ("solvers and best response (Leduc)", solvers),
        ("learned bet sizes", learned_sizes),
        ("deal-pool solver", pool_solver),
        ("sampled best response", sampled_best_response),
        ("strength tables", strength_tables),
        ("translation lab", translation_lab),
        ("subgame re-solving", subgame_resolving),
    ]


def warm_up(
    todo: Sequence[Step] | None = None, *, say: Callable[[str], None] | None = None
) -> float:
    """Run the steps (default :func:`steps`), saying each one's time; returns the total
    seconds."""
    start = time.perf_counter()
    for name, step in steps() if todo is None else todo:
        t = time.perf_counter()
        note = step()
        if say is not None:
            say(f"{name}: {time.perf_counter() - t:.1f} s" + (f" ({note})" if note else ""))
    return time.perf_counter() - start
