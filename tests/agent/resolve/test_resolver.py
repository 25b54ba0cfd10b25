"""The re-solver's API on the bundled no-limit Leduc ``fcpa`` file: the round-0 plan is the
translating blueprint's rows, an off-tree bet is re-solved with the bet in the subgame,
decisions are deterministic, a time budget is counted, and bad calls get one line."""

from __future__ import annotations

import numpy as np
import pytest

from agent.abstraction.buckets import card_abstraction_from_spec
from agent.acpc.betting import CALL, Action, ActionKind, BettingState, parse_betting
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.data import strategy_path
from agent.resolve import ResolveConfig, Resolver
from agent.resolve.gadgets import solve
from agent.strategy.fileformat import Strategy, load_strategy
from agent.strategy.purification import parse_purification
from tests.agent.resolve.test_gadgets import subgame


@pytest.fixture(scope="module")
def fcpa() -> Strategy:
    return load_strategy(strategy_path("leduc.nolimit.2p.fcpa.strat"))


def test_round_zero_plays_the_blueprint_rows(fcpa: Strategy) -> None:
    """On the blueprint's tree, the round-0 decision is the file's row for the hand's bucket
    (no re-solve)."""
    resolver = Resolver(fcpa, ResolveConfig(iterations=20))
    hand = resolver.new_hand(1)
    state = BettingState.initial(fcpa.game).apply(CALL)
    decision = hand.decide(state, ())
    assert decision.stats.source == "blueprint" and resolver.solves == 0
    cards = card_abstraction_from_spec(fcpa.game, fcpa.cards)
    node = fcpa.tree.nodes[fcpa.tree.nodes[0].children[0]]  # after the call
    for hole in resolver.hands.cards:
        row = parse_purification("none").apply(list(fcpa.row(node.id,
                                                             cards.bucket(0, hole, ()))))
        got = decision.for_hole(hole)
        assert [got[a.action] for a in node.actions] == pytest.approx(row, abs=1e-7)


def test_an_off_tree_bet_is_resolved_with_the_bet_in_the_subgame(fcpa: Strategy) -> None:
    """The opponent's half-pot bet (not in fcpa) triggers a re-solve; the decision is a
    distribution over the legal real actions for every hand; the same call again gives the
    same numbers (deterministic iterations); the next round re-solves from this plan."""
    game = fcpa.game
    state = BettingState.initial(game).apply(CALL).apply(Action(ActionKind.RAISE, 2))
    runs = []
    for _ in range(2):
        resolver = Resolver(fcpa, ResolveConfig(gadget="maxmargin", iterations=60))
        hand = resolver.new_hand(0)
        hand.decide(BettingState.initial(game), ())
        decision = hand.decide(state, ())
        assert decision.stats.source == "resolve" and decision.stats.iterations == 60
        assert decision.stats.nodes > 100 and decision.stats.hands == 6
        assert [str(a) for a in decision.actions] == ["f", "c", "r6", "r12"]
        np.testing.assert_allclose(decision.probs.sum(axis=1), 1.0)
        runs.append(decision.probs)
        later = hand.decide(state.apply(CALL), (deck_for(game)[0],))
        assert later.stats.source == "resolve" and later.stats.exploitability >= 0
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_time_budget_is_counted() -> None:
    """Under a time budget the iterations run are counted (whole chunks) and reported."""
    sub = subgame(0, 0, 1)
    sol = solve(sub, "resolve", 1_000_000, seconds=0.001)
    assert 16 <= sol.iterations < 1_000_000 and sol.iterations % 16 == 0
    assert sol.seconds > 0


def test_bad_calls_get_one_line(fcpa: Strategy) -> None:
    resolver = Resolver(fcpa)
    hand = resolver.new_hand(0)
    with pytest.raises(UsageError, match="expected the agent \\(seat 0\\) to act"):
        hand.decide(BettingState.initial(fcpa.game).apply(CALL), ())
    with pytest.raises(UsageError, match="expected 1 board cards"):
        hand.decide(BettingState.initial(fcpa.game).apply(CALL).apply(CALL), ())
    with pytest.raises(UsageError, match="expected a gadget"):
        ResolveConfig(gadget="safe")
    with pytest.raises(UsageError, match="expected a re-solve mode"):
        ResolveConfig(mode="sometimes")
    with pytest.raises(UsageError, match="expected the agent's seat"):
        resolver.new_hand(2)
    bet = BettingState.initial(fcpa.game).apply(CALL).apply(Action(ActionKind.RAISE, 2))
    with pytest.raises(UsageError, match="expected the agent's decision at ''"):
        resolver.new_hand(0).decide(bet, ())  # its first decision was never recorded


def test_a_fallback_action_is_recorded(fcpa: Strategy) -> None:
    """An action the agent took without the resolver (a time-guard call) is recorded for
    every hand and held fixed by the next re-solve."""
    resolver = Resolver(fcpa, ResolveConfig(iterations=20))
    hand = resolver.new_hand(0)
    start = BettingState.initial(fcpa.game)
    hand.played(start, CALL)
    decision = hand.decide(start.apply(CALL).apply(Action(ActionKind.RAISE, 2)), ())
    assert decision.stats.source == "resolve"
    with pytest.raises(UsageError, match="expected a legal action"):
        hand.played(start, Action(ActionKind.RAISE, 99))


@pytest.mark.parametrize(("actions", "seat"), [("cr4c", 0), ("r3c", 1), ("cc", 1),
                                               ("cr3r8c", 1)])
def test_a_root_walked_along_the_real_history_matches_the_history_tree(
        fcpa: Strategy, actions: str, seat: int) -> None:
    """The last-round root of a big game (hold'em) is walked along the real history only
    (:meth:`Resolver.path_root`); in Leduc, where the history tree over every board is
    affordable, both give the same ranges and counterfactual values (per unit of their
    scale): checks, an on-tree bet, off-tree ones the mapping splits, a re-raise."""
    game = fcpa.game
    resolver = Resolver(fcpa, ResolveConfig(iterations=20))
    state = parse_betting(game, actions)
    assert state.round == 1
    board = (deck_for(game)[2],)
    want = resolver.root_info(seat, state, board, {})
    got, _ = resolver.path_root(seat, state, board)
    assert want.agent_reach.max() > 0 and np.abs(want.cbv).max() > 0
    np.testing.assert_allclose(got.agent_reach, want.agent_reach, atol=1e-12)
    np.testing.assert_allclose(got.opp_reach, want.opp_reach, atol=1e-12)
    np.testing.assert_allclose(got.cbv / got.scale, want.cbv / want.scale, atol=1e-9)
