from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.acpc.betting import (
    CALL,
    FOLD,
    LIMIT_RAISE,
    ActionKind,
    BettingState,
    fix_action,
    format_action,
    parse_action,
    parse_action_prefix,
    parse_betting,
)
from agent.acpc.cscan import scan_c_int
from agent.acpc.errors import IllegalActionError, RemoteProtocolError
from agent.acpc.gamedef import Game, parse_gamedef
from agent.acpc.gamefiles import load_game
from tests.support import games, perft, r, random_playout


def play(game: Game, betting: str) -> BettingState:
    return parse_betting(game, betting)


def nl_game(players: int, stacks: str, blinds: str, first: str, rounds: int = 1,
            board: str = "0") -> Game:
    return parse_gamedef(
        f"nolimit\nnumPlayers = {players}\nnumRounds = {rounds}\nstack = {stacks}\n"
        f"blind = {blinds}\nfirstPlayer = {first}\nnumSuits = 4\nnumRanks = 13\n"
        f"numHoleCards = 2\nnumBoardCards = {board}\n"
    )


# --------------------------------------------------------------------------- perft


def heads_up_limit_round(raises_left: int, to_call: bool, call_closes: bool) -> tuple[int, int]:
    """Independent count for one heads-up limit round: (decision nodes, round ends).

    A call closes the round unless it is the first check of the round or the small blind's
    call of the big blind (``call_closes=False``); a raise always hands the opponent a bet.
    """
    decisions, ends = 1, 0
    if to_call:
        ends += 1  # fold
    if call_closes:
        ends += 1
    else:
        d, e = heads_up_limit_round(raises_left, False, True)
        decisions, ends = decisions + d, ends + e
    if raises_left:
        d, e = heads_up_limit_round(raises_left - 1, True, True)
        decisions, ends = decisions + d, ends + e
    return decisions, ends


def test_perft_pinned_counts() -> None:
    assert perft(BettingState.initial(load_game("kuhn.limit.3p.game"))) == (12, 13)
    assert perft(BettingState.initial(load_game("leduc.limit.2p.game"))) == (36, 49)
    lhe = BettingState.initial(load_game("holdem.limit.2p.reverse_blinds.game"))
    assert perft(lhe, only_round=0) == (8, 14)
    assert perft(lhe) == (6378, 10206)
    assert perft(BettingState.initial(load_game("holdem.limit.3p.game")), only_round=0) == (
        90, 130)


def test_perft_agrees_with_independent_count() -> None:
    # Preflop the small blind faces the big blind as a bet; postflop the round opens checked.
    lhe = BettingState.initial(load_game("holdem.limit.2p.reverse_blinds.game"))
    assert perft(lhe, only_round=0) == heads_up_limit_round(3, True, False)
    leduc_round = heads_up_limit_round(2, False, False)
    assert leduc_round == (6, 9)
    folds = 4  # in a Leduc round: rf, crf, rrf, crrf
    d, e = leduc_round
    calls = e - folds
    assert perft(BettingState.initial(load_game("leduc.limit.2p.game"))) == (
        d + calls * d, folds + calls * e)


# --------------------------------------------------------------------------- rules


def test_turns_and_reverse_blinds(nl2: Game) -> None:
    s = BettingState.initial(nl2)
    assert s.spent == (100, 50) and s.player == 1 and s.min_raise_to == 200
    s = s.apply(CALL)
    assert s.player == 0 and s.round == 0
    s = s.apply(CALL)
    assert s.round == 1 and s.player == 0 and s.betting == "cc/"
    assert s.min_raise_to == 200  # max spent 100 + big blind 100


def test_min_raise_rule(nl2: Game) -> None:
    s = play(nl2, "r300")
    assert s.raise_bounds() == (500, 20000)
    s = s.apply(r(500))
    assert s.raise_bounds() == (700, 20000)
    with pytest.raises(IllegalActionError, match="between 700 and 20000"):
        s.apply(r(699))


def test_all_in_run_out_shows_empty_rounds(nl2: Game) -> None:
    s = play(nl2, "r200r20000c")
    assert s.finished and s.round == 3 and s.betting == "r200r20000c///"
    assert s.is_showdown


def test_short_all_in_does_not_rebase_and_others_may_reraise() -> None:
    game = load_game("nl3p_uneven.game")  # stacks 500 1000 2000, blinds 50 100 0
    s = BettingState.initial(game)
    assert s.player == 2
    s = s.apply(r(400))
    assert s.min_raise_to == 700
    assert s.raise_bounds() == (500, 500)  # position 0 can only shove: a short all-in
    s = s.apply(r(500))
    assert s.max_spent == 500 and s.min_raise_to == 700
    assert s.player == 1 and s.raise_bounds() == (700, 1000)
    s = s.apply(CALL)
    assert s.player == 2
    assert s.raise_bounds() == (700, 2000)  # the short all-in did not close the action


def test_max_raises_and_fold_rules(leduc: Game) -> None:
    s = play(leduc, "rr")
    assert s.raise_bounds() is None
    assert s.legal_actions() == (ActionKind.FOLD, ActionKind.CALL)
    with pytest.raises(IllegalActionError, match="maximum of 2 raises"):
        s.apply(LIMIT_RAISE)
    s = play(leduc, "cc/")
    with pytest.raises(IllegalActionError, match="fold is not legal"):
        s.apply(FOLD)


def test_64_action_cap() -> None:
    game = nl_game(2, "1000000 1000000", "1 1", "1")
    s = BettingState.initial(game)
    size = 2
    while len(s.actions[0]) < 62:
        s = s.apply(r(size))
        size += 1
    assert s.raise_bounds() is not None  # 62 actions + 2 players = 64: still room
    s = s.apply(r(size))
    assert s.raise_bounds() is None  # 63 + 2 > 64
    fixed, warnings = fix_action(s, r(size + 1))
    assert fixed == CALL
    assert warnings == (
        "WARNING: #actions in round is too close to MAX_NUM_ACTIONS, forcing call/fold",
        "WARNING: invalid action, changed to call",
    )


def test_limit_stack_caps_raise_and_call() -> None:
    game = load_game("lim4p_stack.game")  # stacks 35 60 200 90, blinds 5 10 0 0
    s = play(game, "rr")  # positions 2 and 3 raise: to 20, to 30
    assert s.player == 0 and s.max_spent == 30
    assert s.raise_bounds() == (35, 35)  # the third raise is capped: all-in for 35
    s = s.apply(LIMIT_RAISE)
    assert s.spent[0] == 35 and not s.can_act(0)
    assert s.raise_bounds() is None  # maxRaises 3 reached
    s = s.apply(CALL).apply(CALL).apply(CALL)
    assert s.round == 1 and s.spent == (35, 35, 35, 35)
    assert s.player == 1  # position 0 is all-in and is skipped


def test_limit_raise_below_the_bet_is_never_offered_but_the_wire_takes_it() -> None:
    game = load_game("lim4p_stack.game")
    s = play(game, "cccc/rrrc")  # flop: 20, 30, 40, call; position 0 (stack 35) to act
    assert s.player == 0 and s.max_spent == 40 and s.num_raises() == 3
    assert s.raise_bounds() is None
    assert s.legal_actions() == (ActionKind.FOLD, ActionKind.CALL)
    # the reference accepts it and lowers the bet (tests/agent/acpc/test_limit_short_raise.py)
    assert fix_action(s, LIMIT_RAISE) == (LIMIT_RAISE, ())
    assert s.apply(LIMIT_RAISE).max_spent == 35
    s = s.apply(CALL)
    assert s.spent[0] == 35


def test_fix_action_reference_warnings(nl2: Game) -> None:
    s = play(nl2, "r300")
    assert fix_action(s, r(301)) == (r(500), ("WARNING: raise of 301 increased to 500",))
    assert fix_action(s, r(99999)) == (
        r(20000), ("WARNING: raise of 99999 decreased to 20000",))
    assert fix_action(s, FOLD) == (FOLD, ())
    s = play(nl2, "cc/")
    assert fix_action(s, FOLD) == (CALL, ("WARNING: invalid action, changed to call",))
    leduc = load_game("leduc.limit.2p.game")
    s = play(leduc, "rr")
    assert fix_action(s, LIMIT_RAISE) == (CALL, ("WARNING: invalid action, changed to call",))


def test_parse_action_forms(nl2: Game, leduc: Game) -> None:
    assert parse_action("k", nl2) == CALL
    assert parse_action("B500", nl2) == r(500)
    assert parse_action("r", leduc) == LIMIT_RAISE
    assert format_action(r(300), nl2) == "r300"
    assert format_action(LIMIT_RAISE, leduc) == "r"
    for bad in ("", "x", "r", "r5x", "cc"):
        with pytest.raises(ValueError):
            parse_action(bad, nl2)


def test_parse_betting_rejects_illegal(nl2: Game) -> None:
    with pytest.raises(RemoteProtocolError, match="illegal action 'r150'"):
        parse_betting(nl2, "r150")
    with pytest.raises(RemoteProtocolError, match="expected an action"):
        parse_betting(nl2, "cx")
    # '/' is skipped wherever it stands, as the reference reader does.
    assert parse_betting(nl2, "c/c").betting == "cc/"


# --------------------------------------------------------------------------- payoffs


def test_fold_payoffs(nl2: Game) -> None:
    s = play(nl2, "f")
    assert s.finished and not s.is_showdown
    assert s.payoffs() == (50.0, -50.0)


def test_side_pots() -> None:
    game = nl_game(3, "100 200 300", "0 0 0", "1")
    s = parse_betting(game, "r100r200c")
    assert s.finished and s.round == 0 and s.spent == (100, 200, 200)
    # Best hand all-in for 100 takes the main pot; the side pot goes to the next best.
    assert s.payoffs([3, 2, 1]) == (200.0, 0.0, -200.0)
    assert s.payoffs([1, 2, 3]) == (-100.0, -200.0, 300.0)
    assert s.payoffs([1, 3, 2]) == (-100.0, 300.0, -200.0)
    # A tie for the main pot, the side pot to the sole best of the other two.
    assert s.payoffs([3, 3, 1]) == (50.0, 150.0, -200.0)
    with pytest.raises(ValueError, match="expected 3 hand ranks"):
        s.payoffs()


def test_fractional_split_with_folded_money() -> None:
    game = nl_game(4, "1000 1000 1000 1000", "0 1 0 0", "1")
    s = parse_betting(game, "r2fcc")  # position 1 folds its 1-chip blind
    assert s.finished and s.spent == (2, 1, 2, 2)
    values = s.payoffs([7, 0, 7, 7])
    assert values == (1 / 3, -1.0, 1 / 3, 1 / 3)
    assert sum(values) == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(games(), st.integers(0, 2**32 - 1))
def test_random_playouts_terminate_and_conserve_chips(game: Game, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3):
        s, _ = random_playout(game, rng)
        ranks = [rng.randint(0, 3) for _ in range(game.num_players)]
        values = s.payoffs(ranks)
        assert sum(values) == pytest.approx(0.0, abs=1e-6 * max(1, s.pot))
        for p in range(game.num_players):
            assert values[p] >= -s.spent[p] - 1e-9
            if s.folded[p]:
                assert values[p] == -s.spent[p]
        # The wire text replays to the same state.
        again = parse_betting(game, s.betting)
        assert again == s


@pytest.mark.parametrize("players", range(2, 11))
@pytest.mark.parametrize("nolimit", [False, True])
def test_many_players_playouts(players: int, nolimit: bool) -> None:
    stacks = " ".join(str(100 * (p + 1)) for p in range(players))
    blinds = " ".join(["5", "10"] + ["0"] * (players - 2))
    text = (
        f"{'nolimit' if nolimit else 'limit'}\nnumPlayers = {players}\nnumRounds = 4\n"
        f"stack = {stacks}\nblind = {blinds}\nraiseSize = 10 10 20 20\n"
        f"firstPlayer = {min(3, players)} 1 1 1\nnumSuits = 4\nnumRanks = 13\n"
        "numHoleCards = 2\nnumBoardCards = 0 3 1 1\n"
    )
    game = parse_gamedef(text)
    rng = random.Random(players * 2 + nolimit)
    for _ in range(300):
        s, _ = random_playout(game, rng)
        values = s.payoffs([rng.randint(0, 5) for _ in range(players)])
        assert sum(values) == pytest.approx(0.0, abs=1e-6)


def test_raise_size_reads_like_glibc_scanf(nl2: Game) -> None:
    # %d goes through a saturating 64-bit strtol and keeps the low 32 bits.
    assert parse_action("r4294967496", nl2) == r(200)
    assert parse_action("r-5", nl2) == r(-5)
    assert parse_action("r 300", nl2) == r(300)
    assert parse_action("r99999999999999999999", nl2) == r(-1)
    # thousands of digits saturate the same way (no int() of them: the interpreter's
    # 4,300-digit conversion limit raised ValueError), leading zeros do not count
    assert parse_action("r" + "9" * 5000, nl2) == r(-1)
    assert parse_action("r-" + "9" * 5000, nl2) == r(0)
    assert parse_action("r" + "0" * 5000 + "300", nl2) == r(300)
    assert scan_c_int("1" + "0" * 5000, 0, unsigned=True) == (0xFFFFFFFF, 5001)
    assert scan_c_int("-" + "7" * 5000, 0, unsigned=True) == (0xFFFFFFFF, 5001)
    with pytest.raises(RemoteProtocolError) as info:
        parse_betting(nl2, "r" + "9" * 5000)
    assert str(info.value).startswith("illegal action 'r99999")
    assert "(5,001 characters) at offset 0 of the betting" in str(info.value)
    assert len(str(info.value)) < 300


@given(st.sampled_from("fFcCkKrRbB"), st.integers(-(2**31), 2**31 - 1), st.booleans())
def test_action_round_trip_property(ch: str, size: int, nolimit: bool) -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds.game" if nolimit else "leduc.limit.2p.game")
    text = ch + (str(size) if nolimit and ch in "rRbB" else "")
    action = parse_action(text, game)
    canonical = format_action(action, game)
    assert parse_action(canonical, game) == action
    assert format_action(parse_action(canonical, game), game) == canonical
    # whole, byte by byte (every strict prefix is no action or a shorter one), trailing data
    for cut in range(1, len(text)):
        with contextlib.suppress(ValueError):
            assert parse_action(text[:cut], game) != action
    assert parse_action_prefix(text + ":junk\r\n", 0, game) == (action, len(text))
