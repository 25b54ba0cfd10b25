"""The re-solving lab in Royal (:mod:`strategies.measure.resolve_royal`) on a reduced Royal:
8 cards (ranks A and K in four suits), 2 hole cards, a flop of 3, blinds 1/2 reversed,
stacks 6, re-solved as the agent re-solves Royal: its preflop over one flop per suit class
and its flop from the real history or, after a preflop re-solve, from it (nested).

The blueprints are external-sampling MCCFR solutions of the ``fcpa`` abstraction with three
seeds; the settings are the responder limited to the blueprint's own sizes (pot, all-in)
and to those plus the half pot the agent's abstraction lacks (the published experiment's
shape)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.abstraction.actions import parse_betting_abstraction
from agent.abstraction.buckets import LosslessCards
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game, parse_gamedef
from agent.resolve import ResolveConfig, Resolver
from agent.strategy.fileformat import Strategy, dump_strategy, load_strategy
from strategies.games.abstract import build_abstract_game
from strategies.measure import resolve_lab as rl
from strategies.measure import resolve_royal as rr
from strategies.measure.best_response import best_response
from strategies.solvers.cfr import Solver

SEEDS = (1, 2, 3)
SAFE = ("resolve", "maxmargin", "reach-maxmargin")
REDUCED = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 2
stack = 6 6
blind = 2 1
firstPlayer = 2 1
numSuits = 4
numRanks = 2
numHoleCards = 2
numBoardCards = 0 3
END GAMEDEF
"""


def reduced() -> Game:
    return parse_gamedef(REDUCED, "reduced-royal")


@pytest.fixture(scope="module")
def blueprints(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Strategy]:
    game = reduced()
    betting = parse_betting_abstraction("fcpa")
    cards = LosslessCards(game)
    agame = build_abstract_game(game, betting, cards)
    out = {}
    for seed in SEEDS:
        solver = Solver(agame, "mccfr-es", seed=seed)
        solver.iterate(200)
        path = tmp_path_factory.mktemp("bp") / f"reduced-{seed}.strat"
        dump_strategy(path, game, betting, cards.spec, solver.average_strategy(),
                      tree=agame.tree)
        out[seed] = load_strategy(path)
    return out


def royal_resolver(strategy: Strategy, gadget: str, iterations: int,
                   cards: LosslessCards | None = None) -> Resolver:
    """A resolver that re-solves as for Royal (the reduced game is small enough for the
    whole-game re-solver: forced): its preflop over suit classes, its flop rooted on the
    real history unless a preflop re-solve holds it."""
    resolver = Resolver(strategy, ResolveConfig(gadget=gadget, iterations=iterations),
                        cards=cards)
    resolver.last_round_only = True
    resolver.first_round_by_suits = True
    return resolver


def test_translating_agent_matches_the_enumerated_lab(blueprints: dict[int, Strategy]) -> None:
    """In the setting with the half pot, the translating blueprint's best responses by
    boards on the agent-limited tree equal the enumerated lab's (agent free), both seats."""
    bp = blueprints[1]
    setting = rl.blueprint_setting(bp, "own+0.5", (0.5,))
    lab = rr.RoyalResolveLab.build(bp, "fcpa", setting)
    row = lab.translate("rand-pshar", "none")
    games = (rl.responder_game(bp.game, setting, 0), rl.responder_game(bp.game, setting, 1))
    tables = [rl.translating_table(bp, games[p], p, "rand-pshar", "none") for p in (0, 1)]
    want = (best_response(games[1], tables[1], 0).value,
            best_response(games[0], tables[0], 1).value)
    np.testing.assert_allclose(row.best_responses, want, atol=1e-9)
    assert row.average > 0.01  # the half pot costs the translating agent


def test_safe_gadgets_are_never_more_exploitable_than_the_translating_blueprint(
        blueprints: dict[int, Strategy]) -> None:
    """Over three blueprints and both settings, in each seat, a best responder wins no more
    against the re-solving agent (each safe gadget; preflop over suit classes where the
    responder's half pot leaves the plan, and the flop) than against the translating
    blueprint, up to what the re-solves' own accuracy estimates leave on the table."""
    gains = []
    for bp in blueprints.values():
        for extra in ((), (0.5,)):
            setting = rl.blueprint_setting(bp, "own+0.5" if extra else "own", extra)
            lab = rr.RoyalResolveLab.build(bp, "fcpa", setting)
            translating = lab.translate("rand-pshar", "none")
            for gadget in SAFE:
                resolver = royal_resolver(lab.strategy, gadget, 40, lab.cards)
                row = lab.resolve(resolver.config, resolver=resolver)
                assert row.extra["resolves"] > 0
                # the half pot preflop is re-solved there (off the blueprint's plan)
                assert (row.extra["preflop_resolves"] > 0) == bool(extra)
                allowance = (row.extra["total_subgame_exploitability_seat1"],
                             row.extra["total_subgame_exploitability_seat0"])
                for q in (0, 1):
                    assert row.best_responses[q] <= (translating.best_responses[q] +
                                                     allowance[q] + 1e-9), (
                        bp.path, extra, gadget, q, row.best_responses, translating)
                gains.append(2 * (translating.average - row.average))
    assert max(gains) > 0.01  # with the half pot the re-solving agent gains


def test_preflop_over_suit_classes_plays_as_over_every_flop(
        blueprints: dict[int, Strategy]) -> None:
    """After the opponent's off-tree half pot preflop, the agent's re-solve over one flop per
    suit class and its nested flop re-solve (a flop its class stands for, not the class's
    own) decide as the same re-solves over every flop do (the whole-game re-solver)."""
    from agent.abstraction.convention import realise_raise_to
    from agent.acpc.betting import CALL, Action, ActionKind, BettingState
    from agent.acpc.cards import deck_for

    bp = blueprints[2]
    game = bp.game
    # one raise cap for both; the resolve gadget (maxmargin's choice among hands with zero
    # regret turns the full tree's rounding into asymmetric play; the classes stay exact)
    config = ResolveConfig(gadget="resolve", iterations=30, max_raises=9)
    merged = royal_resolver(bp, config.gadget, config.iterations)
    merged.config = config
    every = Resolver(bp, config)
    assert not every.last_round_only and not every.first_round_by_suits
    start = BettingState.initial(game)
    opened = start.apply(Action(ActionKind.RAISE, realise_raise_to(start, 0.5)))
    flop = opened.apply(CALL)
    deck = deck_for(game)
    board = (deck[1], deck[2], deck[7])  # a flop whose class has another representative
    got = []
    for resolver in (merged, every):
        hand = resolver.new_hand(opened.player)
        pre = hand.decide(opened, ())
        assert pre.stats.source == "resolve"
        assert hand.plan is not None
        _, perm = hand.plan.tree.follow_perm(list(flop.actions[0]), board)
        got.append((pre, hand.decide(flop, board), perm is not None))
    (pre_m, flop_m, crossed), (pre_e, flop_e, _) = got
    assert crossed  # the merged plan stands for this flop by another board of its class
    assert pre_m.stats.nodes < pre_e.stats.nodes
    np.testing.assert_allclose(pre_m.probs, pre_e.probs, atol=1e-9)
    assert flop_m.stats.source == flop_e.stats.source == "resolve"
    np.testing.assert_allclose(flop_m.probs, flop_e.probs, atol=1e-9)


def test_refuses_a_whole_game_resolver(blueprints: dict[int, Strategy]) -> None:
    """The Royal lab assembles flop re-solving only: one line for anything else."""
    bp = blueprints[1]
    lab = rr.RoyalResolveLab.build(bp, "fcpa", rl.blueprint_setting(bp, "own"))
    with pytest.raises(UsageError, match="last round only"):
        lab.resolve(ResolveConfig(iterations=5))


def test_the_command_sends_royal_to_the_royal_lab() -> None:
    """``resolve-lab`` runs the Royal lab for the games the agent re-solves on their last
    round only (Royal), the enumerated lab otherwise (no-limit Leduc, the reduced Royal)."""
    from agent.acpc.gamefiles import load_game
    from strategies.commands.resolve_lab import last_round_only

    assert last_round_only(load_game("royal.nolimit.2p.game"))
    assert not last_round_only(load_game("leduc.nolimit.2p.game"))
    assert not last_round_only(reduced())
