"""The reference's limit raise by a short stack, state by state, derived by hand from game.c.

Game ``lim4p_stack.game``: 4 players, limit, stacks 35 / 60 / 200 / 90 by position, blinds
5 / 10 / 0 / 0, raise sizes 10 / 10 / 20 / 20 by round, at most 3 / 4 / 4 / 4 raises,
first to act position 2 preflop and position 0 after.

The C rules (game.c), as these derivations apply them:

* ``raiseIsValid`` (limit): a raise is valid while the round has fewer than ``maxRaises``
  raises, room for it and every call (64 actions), and more than one player can act. It
  never looks at stacks.
* ``doAction`` raise (limit): ``maxSpent = stack[p]`` if ``maxSpent + raiseSize[round] >
  stack[p]`` (which *lowers* the bet when the stack does not cover it), else ``maxSpent +=
  raiseSize[round]``; then ``spent[p] = maxSpent``.
* ``doAction`` call: ``spent[p] = min(maxSpent, stack[p])`` (a bigger earlier bet is
  lowered to a lowered ``maxSpent``).
* fold (``isValidAction``): valid unless ``spent[p] == maxSpent`` or ``spent[p] ==
  stack[p]``, so a player whose bet is *above* a lowered ``maxSpent`` may fold.
* The round ends when ``numCalled`` (walking back over the round's actions: every call and
  the last raise by a player not all-in, up to that raise) reaches the number of players
  who can act; with fewer than two the hand runs out. Next to act: the next player after
  the last actor who has not folded and is not all-in.
* ``valueOfState`` at a showdown: each player still in collects, pot level by pot level up
  to its own contribution, an even share of every level it wins; a folded player loses its
  whole spent. Chips a folded player put in above every showdown player's contribution
  (possible only after a lowered bet) go to nobody, so the values need not sum to zero.

Preflop, a stack of 35 can never face a bet above 35 here (40 needs three raises, the cap),
so the preflop hand shows the ordinary short all-in raise; the flop, turn and river hands
show the raise by a stack that does not cover the current bet. The hands are those of
``tests/data/logs/limit_short_raise.log``, written by the reference dealer with
``scripts/script_client.py`` playing ``tests/data/limit_short_raise.script`` (the dealer's
byte-for-byte replay of that log is in ``tests/dealer/test_dealer.py``, ``acpc-log verify``
of it in ``tests/evaluation/test_logtool.py``).
"""

from __future__ import annotations

import dataclasses

import pytest

from agent.abstraction.actions import PRESETS, build_tree
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, ActionKind, BettingState, fix_action
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from tests.support import DATA, LOGS

LOG = LOGS / "limit_short_raise.log"
_ACTIONS = {"c": CALL, "f": FOLD, "r": LIMIT_RAISE}


@pytest.fixture(scope="module")
def game() -> Game:
    return load_game("lim4p_stack.game")


def walk(game: Game, betting: str) -> list[tuple[tuple[int, ...], int, int, int]]:
    """``(spent, max_spent, player to act, round)`` after each action of ``betting``."""
    state = BettingState.initial(game)
    seen = []
    for char in betting.replace("/", ""):
        state = state.apply(_ACTIONS[char])
        seen.append((state.spent, state.max_spent, state.player, state.round))
    return seen


def test_the_game_is_the_issue_s(game: Game) -> None:
    assert game.stack == (35, 60, 200, 90) and game.blind == (5, 10, 0, 0)
    assert game.raise_size == (10, 10, 20, 20) and game.max_raises == (3, 4, 4, 4)
    assert game.first_player == (2, 0, 0, 0)  # 0-based positions


def test_preflop_ordinary_short_all_in(game: Game) -> None:
    # "rrrccc/ccc/ccc/ccc": p2 raises 10 -> 20, p3 20 -> 30; p0 (stack 35, spent 5) raises:
    # 30 + 10 = 40 > 35, so maxSpent = 35 and p0 is all-in (the 3rd raise, the cap); p1,
    # p2, p3 call to 35 (p1 from 10, p2 from 20, p3 from 30); numCalled = 3 (p3, p2, p1;
    # the raise is p0's, all-in) = players able to act -> the flop, first able after p0: p1.
    assert walk(game, "rrrccc") == [
        ((5, 10, 20, 0), 20, 3, 0),
        ((5, 10, 20, 30), 30, 0, 0),
        ((35, 10, 20, 30), 35, 1, 0),
        ((35, 35, 20, 30), 35, 2, 0),
        ((35, 35, 35, 30), 35, 3, 0),
        ((35, 35, 35, 35), 35, 1, 1),
    ]


def test_flop_raise_by_a_stack_below_the_bet_lowers_it(game: Game) -> None:
    # "cccc/crrrrccc": everyone puts in 10 preflop (p1 checks last). Flop, from p0: check,
    # p1 raises to 20, p2 to 30, p3 to 40. p0 (stack 35 < 40) raises: 40 + 10 > 35, so
    # maxSpent = 35 (lowered from 40), spent0 = 35, all-in (4 raises, the flop's cap).
    # p1 calls 20 -> 35, p2 30 -> 35, p3's call *lowers* its 40 to 35. numCalled = 3 =
    # the players able to act (p1, p2, p3) -> the turn, from p1 (p0 is all-in).
    steps = walk(game, "cccc/crrrrccc")
    assert steps[3] == ((10, 10, 10, 10), 10, 0, 1)
    assert steps[4:] == [
        ((10, 10, 10, 10), 10, 1, 1),
        ((10, 20, 10, 10), 20, 2, 1),
        ((10, 20, 30, 10), 30, 3, 1),
        ((10, 20, 30, 40), 40, 0, 1),
        ((35, 20, 30, 40), 35, 1, 1),
        ((35, 35, 30, 40), 35, 2, 1),
        ((35, 35, 35, 40), 35, 3, 1),
        ((35, 35, 35, 35), 35, 1, 2),
    ]


def test_a_bet_above_the_lowered_one_may_fold(game: Game) -> None:
    # "cccc/crrrrccf": as above up to p2's call; p3 has 40 in, maxSpent is 35: 40 != 35 and
    # 40 != 90, so folding is valid. numCalled = 2 (p2, p1) = players able to act (p1, p2)
    # -> the turn, from p1.
    state = BettingState.initial(game)
    for char in "cccc" "crrrrcc":
        state = state.apply(_ACTIONS[char])
    assert state.player == 3 and state.spent[3] == 40 and state.max_spent == 35
    assert state.can_fold()
    after = state.apply(FOLD)
    assert after.round == 2 and after.player == 1 and after.folded == (False,) * 3 + (True,)


def test_turn_raise_by_a_stack_below_the_bet(game: Game) -> None:
    # "cccc/cccc/crrrrccc": 10 each into the turn. Turn (raise 20), from p0: check; p1 to
    # 30, p2 to 50, p3 to 70; p0 (stack 35 < 70) raises: 70 + 20 > 35 -> maxSpent = 35,
    # spent0 = 35, all-in (4th raise). p1 calls 30 -> 35, p2 50 -> 35, p3 70 -> 35.
    # numCalled = 3 = able players -> the river, from p1.
    steps = walk(game, "cccc/cccc/crrrrccc")
    assert steps[8:] == [
        ((10, 10, 10, 10), 10, 1, 2),
        ((10, 30, 10, 10), 30, 2, 2),
        ((10, 30, 50, 10), 50, 3, 2),
        ((10, 30, 50, 70), 70, 0, 2),
        ((35, 30, 50, 70), 35, 1, 2),
        ((35, 35, 50, 70), 35, 2, 2),
        ((35, 35, 35, 70), 35, 3, 2),
        ((35, 35, 35, 35), 35, 1, 3),
    ]


def test_river_raise_by_the_second_short_stack(game: Game) -> None:
    # "cccc/cccc/cccc/ccrrfcrcrcc": 10 each into the river (raise 20), from p0: check,
    # check; p2 to 30, p3 to 50; p0 folds (10 in); p1 calls 10 -> 50; p2 raises to 70 (3rd
    # raise); p3 calls 50 -> 70; p1 (stack 60 < 70, spent 50) raises: 70 + 20 > 60 ->
    # maxSpent = 60 (lowered), spent1 = 60, all-in (4th raise); p2's call lowers 70 to 60,
    # p3's too. numCalled = 2 (p3, p2; the raise is all-in) = able players -> the end.
    steps = walk(game, "cccc/cccc/cccc/ccrrfcrcrcc")
    assert steps[12:] == [
        ((10, 10, 10, 10), 10, 1, 3),
        ((10, 10, 10, 10), 10, 2, 3),
        ((10, 10, 30, 10), 30, 3, 3),
        ((10, 10, 30, 50), 50, 0, 3),
        ((10, 10, 30, 50), 50, 1, 3),
        ((10, 50, 30, 50), 50, 2, 3),
        ((10, 50, 70, 50), 70, 3, 3),
        ((10, 50, 70, 70), 70, 1, 3),
        ((10, 60, 70, 70), 60, 2, 3),
        ((10, 60, 60, 70), 60, 3, 3),
        ((10, 60, 60, 60), 60, -1, 3),
    ]


def test_turn_lowered_bet_then_a_full_raise(game: Game) -> None:
    # "cccc/cccc/crrcrrcc": turn from p0: check; p1 to 30, p2 to 50; p3 calls 50; p0
    # (stack 35 < 50) raises: maxSpent = 35 (3rd raise), all-in; p1 (30 in) raises: 35 + 20
    # = 55 <= 60 -> maxSpent = 55 (4th raise); p2 calls 50 -> 55, p3 50 -> 55. numCalled
    # = 3 (p3, p2 and p1's raise, not all-in) = able players -> the river, from p1.
    steps = walk(game, "cccc/cccc/crrcrrcc")
    assert steps[8:] == [
        ((10, 10, 10, 10), 10, 1, 2),
        ((10, 30, 10, 10), 30, 2, 2),
        ((10, 30, 50, 10), 50, 3, 2),
        ((10, 30, 50, 50), 50, 0, 2),
        ((35, 30, 50, 50), 35, 1, 2),
        ((35, 55, 50, 50), 55, 2, 2),
        ((35, 55, 55, 50), 55, 3, 2),
        ((35, 55, 55, 55), 55, 1, 3),
    ]


def test_folds_after_a_lowered_bet_run_the_hand_out(game: Game) -> None:
    # "cccc/crrrrfcf//": flop as in the flop hand up to p0's lowering raise (35); p1 folds
    # (20 in), p2 calls 30 -> 35, p3 folds (40 in). Able to act: p2 only (p0 all-in), and
    # numCalled = 1 >= 1 -> fewer than two can act: the hand runs out (empty turn and
    # river) to a showdown of p0 and p2.
    state = BettingState.initial(game)
    for char in "cccc" "crrrrfcf":
        state = state.apply(_ACTIONS[char])
    assert state.finished and state.round == 3 and state.betting == "cccc/crrrrfcf//"
    assert state.spent == (35, 20, 35, 40) and state.folded == (False, True, False, True)


# Values: from the reference log (cards by position; ranks by the ordinary evaluator).
VALUES = [
    # 0: all four at 35. Board Td8h3s Kh 7c: p1's 9d6c makes the straight 6-T: p1 takes
    #    4 x 35: +105, everyone else -35.
    ("rrrccc/ccc/ccc/ccc", (-35, 105, -35, -35)),
    # 1: all at 35. Board 3d4hKh 5c 2d: p3's 6d7d makes the straight 3-7: +105.
    ("cccc/crrrrccc/ccc/ccc", (-35, -35, -35, 105)),
    # 2: p3 folded with 40 in; p0, p1, p2 at 35. Board 2s8c9s 2c Qc: p1 (9dJs) has two pair
    #    nines and deuces, best. The one pot level, 35, holds 4 x 35: p1 +105; p0, p2 -35;
    #    p3 loses its 40, and its 5 above the level go to nobody (the values sum to -5).
    ("cccc/crrrrccf/cc/cc", (-35, 105, -35, -40)),
    # 3: all at 35. Board Js2c2d Qc 4h: p1 (7hQs) and p2 (QdTc) both have queens and deuces
    #    with the jack: a split of the 140 between two: +35 each, p0 and p3 -35.
    ("cccc/cccc/crrrrccc/ccc", (-35, 35, 35, -35)),
    # 4: p0 folded with 10; p1, p2, p3 at 60. Board 9sJcAd Kc Qs: p1 (Td2d) has the
    #    straight T-A: the level 10 holds 4 x 10 (+30), the level 10..60 3 x 50 (+100):
    #    +130; p2 and p3 -60, p0 -10.
    ("cccc/cccc/cccc/ccrrfcrcrcc", (-10, 130, -60, -60)),
    # 5: p0 all-in at 35, the others at 55. Board 9sAc3s 9h 7d: p0 (2sAd) and p2 (3cAs)
    #    both play A A 9 9 7 (p2's pair of threes does not count), better than p1's nines
    #    and sevens and p3's nines. The level 35 (4 x 35) is split by p0 and p2: +35 each;
    #    the level 35..55 (p1, p2, p3: 3 x 20) is p2's alone: +40, so p2 +75; p1, p3 -55.
    ("cccc/cccc/crrcrrcc/ccc", (35, -55, 75, -55)),
    # 6: p2 folded with 30; p0, p1, p3 at 35. Board JcAcQh 3h Kd: p3 (6hTh) has the straight
    #    T-A: the level 30 holds 4 x 30 (+90), the level 30..35 3 x 5 (+10): +100; p0, p1
    #    -35, p2 -30.
    ("cccc/crrrrcfc/cc/cc", (-35, -35, -30, 100)),
    # 7: p1 folded with 20, p3 with 40; showdown p0 (6h4h) vs p2 (7sQd), 35 each. Board
    #    9hJsKh Td Ks: p2 has the straight 9-K: the level 20 holds 4 x 20 (+60), the level
    #    20..35 3 x 15 (+30): +90; p0 -35, p1 -20, p3 -40 (its 5 above 35 go to nobody).
    ("cccc/crrrrfcf//", (-35, -20, 90, -40)),
]


def test_values_derived_by_hand_equal_the_reference_log() -> None:
    lines = [line for line in LOG.read_text().splitlines() if line.startswith("STATE:")]
    assert len(lines) == len(VALUES)
    for line, (betting, values) in zip(lines, VALUES, strict=True):
        _, _, logged_betting, _, logged_values, _ = line.split(":")
        assert logged_betting == betting
        assert tuple(float(v) for v in logged_values.split("|")) == values


def test_the_script_is_the_log_s_betting() -> None:
    script = (DATA / "limit_short_raise.script").read_text().split()
    assert script == [betting for betting, _ in VALUES]


def test_agents_are_never_offered_the_short_raise(game: Game) -> None:
    state = BettingState.initial(game)
    for char in "cccc" "crrr":
        state = state.apply(_ACTIONS[char])
    assert state.player == 0 and state.max_spent == 40 and game.stack[0] == 35
    # the wire accepts it (the dealer keeps it, verify accepts it) ...
    assert state.is_legal(LIMIT_RAISE)
    assert fix_action(state, LIMIT_RAISE) == (LIMIT_RAISE, ())
    # ... but an agent never chooses it
    assert state.raise_bounds() is None
    assert state.legal_actions() == (ActionKind.FOLD, ActionKind.CALL)


def _two_rounds(game: Game, later: int) -> Game:
    """Preflop, then round ``later``'s betting (raise size and cap) as the second round: the
    abstract tree of the whole four-round game has about a million nodes (70 s), while every
    short-stack raise situation arises within two rounds."""
    return dataclasses.replace(
        game, num_rounds=2, raise_size=(game.raise_size[0], game.raise_size[later]),
        first_player=(game.first_player[0], game.first_player[later]),
        max_raises=(game.max_raises[0], game.max_raises[later]),
        num_board_cards=game.num_board_cards[:2])


@pytest.mark.parametrize("later", [1, 2], ids=["flop", "turn-river"])
def test_the_abstract_tree_has_no_short_limit_raise(game: Game, later: int) -> None:
    tree = build_tree(_two_rounds(game, later), PRESETS["fcpa"])
    assert len(tree.nodes) > 1000
    short = 0
    for node in tree.decision_nodes:
        state = node.state
        if game.stack[state.player] <= state.max_spent:
            short += 1
            assert all(a.kind is not ActionKind.RAISE for a in node.actions), node.id
    assert short > 100  # the situation is there to be checked
