"""``builtin:offtree``: it really bets off the abstraction's tree, deterministically."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.abstraction.convention import realise_raise_to
from agent.acpc.betting import ActionKind, BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState
from agent.agents import make_policy, resolve_strategy
from agent.builtin import OffTreePolicy, RandomPolicy
from agent.strategy.fileformat import read_header


def play(game: Game, other: Any, hands: int, seed: int,
         check: Callable[[BettingState, int], None]) -> tuple[int, int]:
    """Hands of ``offtree`` against ``other`` in both seats; ``check(state, raise_to)`` at
    each of offtree's raises. Returns (its decisions, its raises)."""
    offtree = make_policy("builtin:offtree", game, seed=seed)
    decisions = raises = 0
    dealer = deal_hands(game, seed)
    for hand in range(hands):
        deal = next(dealer)
        position = hand % 2
        state = BettingState.initial(game)
        while not state.finished:
            p = state.player
            ms = MatchState(p, hand, state, deal.hole,
                            deal.board[: game.board_cards_through(state.round)])
            if p == position:
                action = offtree.act(ms)
                decisions += 1
                # deterministic: the same view gives the same action, whatever the hand
                # number, the seed or the order its cards are listed in (LBR's model asks
                # it with holes in its own order)
                hole = tuple(tuple(reversed(h)) for h in deal.hole)
                again = OffTreePolicy(seed + 1).act(MatchState(p, hand + 7, state, hole,
                                                               ms.board))
                assert again == action
                if action.kind is ActionKind.RAISE:
                    raises += 1
                    check(state, action.raise_to)
            else:
                action = other.act(ms)
            state = state.apply(action)
    return decisions, raises


def test_offtree_bets_off_the_files_tree() -> None:
    """Against the half-pot/pot/all-in Leduc file as it plays (rand-pshar): no raise of
    offtree is a size the file's abstraction bets at that state, nor the min-raise."""
    game = load_game("leduc.nolimit.2p.game")
    name = "leduc.nolimit.2p.fchpa.strat"
    fractions = read_header(resolve_strategy(name))[0]["betting"]["fractions"][0][0]
    assert fractions == [0.5, 1.0]
    agent = make_policy(name, game, seed=3, mapping="rand-pshar")

    def check(state: BettingState, to: int) -> None:
        lo, hi = state.raise_bounds() or (0, 0)
        tree = {realise_raise_to(state, f) for f in fractions} | {lo, hi}
        assert to not in tree, (state.betting, to, tree)

    decisions, raises = play(game, agent, 400, 5, check)
    assert raises >= 0.2 * decisions and raises >= 100


def test_offtree_in_holdem_avoids_half_pot_pot_and_twice() -> None:
    """In hold'em (200 big blinds) every raise is strictly inside the bounds and none is
    0.5, 1 or 2 pots (the bundled hold'em files' sizes)."""
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")

    def check(state: BettingState, to: int) -> None:
        lo, hi = state.raise_bounds() or (0, 0)
        assert lo < to < hi
        assert to not in {realise_raise_to(state, f) for f in OffTreePolicy.ON_TREE}
        assert to in OffTreePolicy.candidates(state)

    decisions, raises = play(game, RandomPolicy(2), 300, 9, check)
    assert raises >= 0.2 * decisions
